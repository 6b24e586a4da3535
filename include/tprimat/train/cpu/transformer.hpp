// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The decoder-only transformer (forward, backward, parameters) at run-time dims: the CPU engine,
// composed of its plan (RankPlan), activations, decoder layer, embedding and head, and tensor
// parallelism (train/cpu/).
#pragma once

#include <cstdint>
#include <new>
#include <span>
#include <string>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/context_parallel.hpp"
#include "tprimat/parallel/validate.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/cpu/activations.hpp"
#include "tprimat/train/cpu/aligned_vector.hpp"
#include "tprimat/train/cpu/context_parallel.hpp"
#include "tprimat/train/cpu/fp8_emulation.hpp"
#include "tprimat/train/cpu/head.hpp"
#include "tprimat/train/cpu/layer.hpp"
#include "tprimat/train/cpu/tensor_parallel.hpp"
#include "tprimat/train/parameters.hpp"
#include "tprimat/train/precision.hpp"
#include "tprimat/train/rank_plan.hpp"

namespace tprimat::train {

/// Llama-style decoder: embedding -> L x [RMSNorm, QKV (+bias), RoPE, GQA causal attention, O,
/// residual, RMSNorm, gate/up, SwiGLU, down, residual] -> RMSNorm -> LM head -> cross-entropy.
/// All sizes are run-time (model::Dims), so the class is compiled once per (Backend, T) — see
/// src/ — and TrainingStep<Backend, Model, Layout> stays a thin typed wrapper.
/// Parameters and gradients live in one flat buffer each (one all-reduce, one optimizer loop);
/// activations are sized for one micro-batch of `mbs` sequences of `seq` tokens.
/// Precision: T throughout (the CPU's "bf16" run is fp32); with FP8 the decoder layers' linear
/// projections read quantise-dequantised operands exactly where docs/fp8.md casts them
/// (Fp8Emulation), so this model is the reference of the device engine's FP8 step.
/// What this rank computes is its RankPlan, as the device engine's: the layer (cpu/layer.hpp),
/// the embedding and head (cpu/head.hpp) and TP (cpu/tensor_parallel.hpp) read it.
template <class Backend, class T>
class Transformer {
 public:
  Transformer(const model::Dims& d, int mbs, int seq, double init_std = 0.02,
              std::uint64_t seed = 42)
      : Transformer(d, mbs, seq, init_std, seed, Shard{}, {}) {}
  /// The part `shard` of the model (TP block, pipeline stage): its weights are the matching
  /// blocks of the single-process model's weights for the same seed, so a parallel run and one
  /// process start identical. `ops` are the TP group's collectives (unused when TP = 1).
  /// `precision` FP8 emulates its recipe; then every optimizer step is bracketed by
  /// begin_step() and end_step().
  /// `recompute`: the layers whose activations are recomputed in the backward pass instead of
  /// kept (the same numbers, less memory). Under context parallelism (shard.cp_size > 1) the
  /// rank runs its share of each sequence's tokens (parallel::ContextSplit) and `cp_ops` are its
  /// CP group's collectives; weights are whole on every CP rank.
  Transformer(const model::Dims& d, int mbs, int seq, double init_std, std::uint64_t seed,
              Shard shard, TensorParallelOps<T> ops, PrecisionConfig precision = {},
              Recompute recompute = {}, ContextParallelOps<T> cp_ops = {});

  const model::Dims& dims() const { return plan_.full; }
  const Shard& shard() const { return shard_; }
  /// What this rank computes: its share of the model, its micro-batch, its parameter table.
  const RankPlan& plan() const { return plan_; }
  int mbs() const { return plan_.shape.mbs; }
  int seq() const { return plan_.shape.seq; }
  std::span<T> params() { return params_; }
  std::span<const T> params() const { return params_; }
  std::span<T> grads() { return grads_; }
  std::span<const T> grads() const { return grads_; }
  const std::vector<ParamTensor>& tensors() const { return plan_.table.tensors; }
  std::int64_t parameter_count() const { return static_cast<std::int64_t>(params_.size()); }

  void zero_grads();
  /// Forward over one micro-batch: `tokens` holds mbs sequences of seq + 1 ids (inputs
  /// [0, seq), targets [1, seq + 1)). Returns the SUM of the mbs * seq token losses.
  double forward(std::span<const std::int32_t> tokens);
  /// Forward and backward: returns the loss sum as forward() does and ADDS grad_scale times the
  /// gradient of that sum to grads() (so micro-batches accumulate).
  double forward_backward(std::span<const std::int32_t> tokens, double grad_scale);
  /// Bytes held by parameters, gradients and activation/workspace buffers.
  std::size_t bytes() const;
  /// Sequence parallelism: each TP rank's norm gains got the gradient of its own token rows
  /// only. Sums them over TP, as Megatron all-reduces its sequence-parallel parameters'
  /// gradients, so that every TP rank holds the whole gradient before the norm and the clip.
  /// Once per optimizer step after its last backward, on every TP rank; nothing without it.
  void sum_sequence_parallel_grads() { tp_.sum_replicated_grads(plan_.table, grads_.data()); }
  /// Token rows of the residual stream on this rank: mbs x seq, or that / TP under sequence
  /// parallelism (the rows of the stage's input and output activations).
  std::int64_t residual_rows() const { return plan_.rows; }

  // ---- FP8 (docs/fp8.md); no-ops without it ----------------------------------------------
  /// Before an optimizer step's first micro-batch: casts the weights as they are now.
  void begin_step() { fp8_.begin_step(params_.data(), plan_.table.layers); }
  /// After its last backward pass: the delayed recipe's amax histories and scales move on.
  void end_step() { fp8_.end_step(); }
  /// The FP8 state: scales, amaxes, histories (local layer indices).
  const Fp8Emulation<T>& fp8() const { return fp8_; }

  // ---- pipeline stages: one micro-batch at a time per activation slot --------------------
  /// Forward of this stage over one micro-batch into activation slot `slot`. A stage other than
  /// the first reads its input from input_activation(slot), written by the caller; a stage
  /// other than the last leaves its output in output_activation(slot). Returns the loss sum on
  /// the last stage, 0 elsewhere.
  double forward_micro(std::span<const std::int32_t> tokens, int slot, bool with_grad,
                       double grad_scale);
  /// Backward of the micro-batch in `slot` (ADDS to grads()). A stage other than the last first
  /// receives the gradient of its output into output_grad(); a stage other than the first then
  /// finds the gradient of its input in input_grad().
  void backward_micro(int slot);
  std::span<T> input_activation(int slot);
  std::span<const T> output_activation(int slot) const { return slots_[slot].x_final; }
  std::span<T> output_grad() { return scratch_.dx; }
  std::span<const T> input_grad() const { return scratch_.dx; }

 private:
  /// The construction's input checks, before anything is planned or allocated.
  static const model::Dims& checked(const model::Dims& d, int mbs, int seq, const Shard& shard,
                                    const TensorParallelOps<T>& ops,
                                    const ContextParallelOps<T>& cp_ops);

  void load_tokens(std::span<const std::int32_t> tokens, int slot = 0);
  double run_forward(bool with_grad, double grad_scale);
  void run_backward();
  /// Layer l's activations in micro-batch m: its own, or its place in the recomputation buffers.
  cpu::LayerActivations<T>& layer_activations(cpu::MicroBatchActivations<T>& m, int l);
  /// Where layer l writes its output: the next layer's input (or the stage's output).
  T* layer_output(cpu::MicroBatchActivations<T>& m, int l);
  /// Reruns the forward of recomputed layer l's group from its kept input, for its backward.
  void recompute_group(cpu::MicroBatchActivations<T>& m, int l, int slot);
  cpu::LayerResources<Backend, T> layer_resources() {
    return {plan_, params_.data(), grads_.data(), rope_cos_.data(), rope_sin_.data(),
            attn_workspace_.data(), tp_, cp_, fp8_, scratch_};
  }
  cpu::HeadResources<Backend, T> head_resources() {
    return {plan_, params_.data(), grads_.data(), tp_, loss_, scratch_};
  }
  int slot_index() const { return static_cast<int>(cur_ - slots_.data()); }

  Shard shard_;    // the part of the model asked for
  RankPlan plan_;  // what it means for this rank: its share, its micro-batch, its parameters
  cpu::TensorParallel<Backend, T> tp_;
  cpu::ContextParallel<Backend, T> cp_;
  AlignedVector<T> params_, grads_;
  std::vector<cpu::MicroBatchActivations<T>> slots_;  // one per micro-batch in flight
  cpu::MicroBatchActivations<T>* cur_ = nullptr;       // the slot forward/backward work on
  /// Recomputation: one group's activations, shared by every group and micro-batch, and where
  /// the group's last layer writes its output again (the next layer's input is already kept).
  std::vector<cpu::LayerActivations<T>> recomputed_;
  AlignedVector<T> recomputed_output_;
  AlignedVector<T> rope_cos_, rope_sin_;  // [local_seq, head_dim/2], at the local positions
  AlignedVector<T> attn_workspace_;
  cpu::BackwardScratch<T> scratch_;
  cpu::LossScratch<T> loss_;
  Fp8Emulation<T> fp8_;
};

// ---- definitions (compiled once per (Backend, T) in src/ when extern templates are on) ------

template <class Backend, class T>
const model::Dims& Transformer<Backend, T>::checked(const model::Dims& d, int mbs, int seq,
                                                    const Shard& shard,
                                                    const TensorParallelOps<T>& ops,
                                                    const ContextParallelOps<T>& cp_ops) {
  if (mbs < 1 || seq < 1)
    throw core::InputError("micro-batch size and sequence length must be at least 1 (got mbs " +
                           std::to_string(mbs) + ", seq " + std::to_string(seq) + ")");
  if (d.layers < 0 || d.hidden < 1 || d.vocab < 1 || d.heads < 1 || d.kv_heads < 1 ||
      d.head_dim < 2 || d.head_dim % 2 != 0 || d.heads % d.kv_heads != 0 || d.ffn < 1)
    throw core::InputError("model " + std::string(d.name) +
                           " has inconsistent dimensions (heads must be a multiple of KV heads, "
                           "head_dim even, all sizes positive)");
  const int tp = shard.tp_size;
  // Whether the stages split the layers evenly is their owner's rule (TrainingStep, plan_rank):
  // a stage checks its own range below.
  if (auto err = parallel::layout_error(d, tp, shard.stages, parallel::PipelineSplit::given))
    throw core::InputError(*err);
  if (shard.tp_rank < 0 || shard.tp_rank >= tp)
    throw core::InputError("TP rank " + std::to_string(shard.tp_rank) + " is outside TP=" +
                           std::to_string(tp));
  if (tp > 1 && !(ops.all_reduce_sum && ops.all_reduce_max))
    throw core::InputError("a TP shard needs its tensor-parallel collectives");
  const int cp = shard.cp_size;
  parallel::check_context_parallel(seq, cp);
  if (shard.cp_rank < 0 || shard.cp_rank >= cp)
    throw core::InputError("CP rank " + std::to_string(shard.cp_rank) + " is outside CP=" +
                           std::to_string(cp));
  if (cp > 1 && !(cp_ops.ring_shift && cp_ops.all_reduce_max))
    throw core::InputError("a context-parallel rank needs its CP group's collectives");
  if (shard.sequence_parallel && tp > 1) {
    parallel::check_sequence_parallel_rows(mbs, seq, tp, cp);
    if (!(ops.reduce_scatter_sum && ops.all_gather))
      throw core::InputError("a sequence-parallel TP shard needs reduce-scatter and all-gather");
  }
  const int local_layers = shard.layer_count < 0 ? d.layers : shard.layer_count;
  if (shard.layer_begin < 0 || shard.layer_begin + local_layers > d.layers || shard.slots < 1 ||
      (local_layers < 1 && !(shard.first_stage && shard.last_stage)))
    throw core::InputError("pipeline stage of layers [" + std::to_string(shard.layer_begin) + ", " +
                           std::to_string(shard.layer_begin + local_layers) + ") of " +
                           std::to_string(d.layers) + " is empty or out of range");
  return d;
}

template <class Backend, class T>
Transformer<Backend, T>::Transformer(const model::Dims& d, int mbs, int seq, double init_std,
                                     std::uint64_t seed, Shard shard, TensorParallelOps<T> ops,
                                     PrecisionConfig precision, Recompute recompute,
                                     ContextParallelOps<T> cp_ops)
    : shard_(shard),
      plan_(plan_shard(checked(d, mbs, seq, shard, ops, cp_ops),
                       StepShape{.mbs = mbs, .seq = seq, .recompute = recompute}, shard)) {
  const RankPlan& p = plan_;
  // Selective recomputation changes what the device keeps, not one number: the reference keeps
  // everything rather than run it as none under its name.
  if (recompute.granularity == RecomputeGranularity::selective)
    throw core::SettingError("recompute_granularity",
                             "the CPU engine does not run selective recomputation",
                             "full, or run selective on a GPU backend");
  try {
    std::int64_t replicated = 0;  // the norm gains: their gradients summed over TP under SP
    for (const auto& t : p.table.tensors) replicated += t.split == Split::none ? t.size() : 0;
    tp_ = cpu::TensorParallel<Backend, T>(std::move(ops), p.tp, p.sequence_parallel, p.n, d,
                                          replicated);
    cp_ = cpu::ContextParallel<Backend, T>(std::move(cp_ops),
                                           parallel::ContextSplit{seq, p.cp, p.cp_rank}, mbs, p.d);
    const std::int64_t total = p.table.total();
    params_.assign(total, T(0));
    grads_.assign(total, T(0));
    slots_.resize(p.slots);
    for (auto& slot : slots_) slot.allocate(p);
    cur_ = &slots_[0];
    if (recompute.full() && p.local_layers > 0) {
      recomputed_.resize(std::min(recompute.group_layers(), p.local_layers));
      for (auto& a : recomputed_) a.allocate(p);
      recomputed_output_.resize(p.rows * p.d.hidden);
    }
    rope_cos_.resize(std::int64_t{p.local_seq} * (d.head_dim / 2));
    rope_sin_.resize(rope_cos_.size());
    attn_workspace_.resize(p.cp > 1 ? 0 : Backend::attention_workspace(seq));  // CP: the ring's
    scratch_.allocate(p, precision.is_fp8());
    loss_.allocate(p.n, p.tp > 1);
    if (precision.is_fp8()) {
      typename Fp8Emulation<T>::WeightSizes sizes{};
      for (Projection w : model::projections)
        sizes[model::index_of(w)] = model::projection_shape(p.d, w).size();
      fp8_ = Fp8Emulation<T>(precision, p.layer_begin, p.local_layers, d.layers, p.slots, sizes,
                             p.tp > 1 ? tp_.ops().all_reduce_max : nullptr,
                             p.cp > 1 ? cp_.ops().all_reduce_max : nullptr);
    }
  } catch (const std::bad_alloc&) {
    throw core::InputError(std::string(d.name) + " with " + std::to_string(d.layers) +
                               " layers at mbs " + std::to_string(mbs) + ", seq " +
                               std::to_string(seq) + " does not fit in host memory",
                           "run fewer layers, a shorter sequence or a smaller model");
  }
  Backend::rope_tables_at(d, std::span<const int>(cp_.positions()), rope_cos_.data(),
                          rope_sin_.data());
  init_parameters(p.table, init_std, seed, params_.data());
}

template <class Backend, class T>
void Transformer<Backend, T>::zero_grads() {
  std::fill(grads_.begin(), grads_.end(), T(0));
}

template <class Backend, class T>
std::size_t Transformer<Backend, T>::bytes() const {
  std::size_t elems = params_.size() + grads_.size() + rope_cos_.size() + rope_sin_.size() +
                      attn_workspace_.size() + scratch_.elements() + loss_.elements() +
                      tp_.elements() + cp_.elements();
  std::size_t ids = 0;
  elems += recomputed_output_.size();
  for (const auto& a : recomputed_) elems += a.elements();
  for (const auto& slot : slots_) {
    elems += slot.elements();
    ids += slot.ids();
  }
  return elems * sizeof(T) + ids * sizeof(std::int32_t) + fp8_.bytes();
}

template <class Backend, class T>
void Transformer<Backend, T>::load_tokens(std::span<const std::int32_t> tokens, int slot) {
  if (slot < 0 || slot >= static_cast<int>(slots_.size()))
    throw core::InputError("activation slot " + std::to_string(slot) + " of " +
                           std::to_string(slots_.size()));
  cur_ = &slots_[slot];
  const int mbs = plan_.shape.mbs, seq = plan_.shape.seq, local_seq = plan_.local_seq;
  const model::Dims& d = plan_.full;
  const auto& positions = cp_.positions();  // 0..seq-1 without CP
  const std::int64_t expected = std::int64_t{mbs} * (seq + 1);
  if (static_cast<std::int64_t>(tokens.size()) != expected)
    throw core::InputError("a micro-batch needs mbs x (seq + 1) = " + std::to_string(expected) +
                           " token ids, got " + std::to_string(tokens.size()));
  for (int b = 0; b < mbs; ++b)
    for (int t = 0; t < local_seq; ++t) {
      const std::int64_t at = std::int64_t{b} * (seq + 1) + positions[t];
      const std::int32_t in = tokens[at];
      const std::int32_t out = tokens[at + 1];
      for (std::int32_t id : {in, out})
        if (id < 0 || id >= d.vocab)
          throw core::InputError("token id " + std::to_string(id) +
                                 " is outside the vocabulary [0, " + std::to_string(d.vocab) +
                                 ") of " + std::string(d.name));
      cur_->inputs[std::int64_t{b} * local_seq + t] = in;
      cur_->targets[std::int64_t{b} * local_seq + t] = out;
    }
}

template <class Backend, class T>
double Transformer<Backend, T>::forward(std::span<const std::int32_t> tokens) {
  load_tokens(tokens);
  return run_forward(false, 0.0);
}

template <class Backend, class T>
double Transformer<Backend, T>::forward_backward(std::span<const std::int32_t> tokens,
                                                 double grad_scale) {
  load_tokens(tokens);
  const double loss = run_forward(true, grad_scale);
  run_backward();
  return loss;
}

template <class Backend, class T>
double Transformer<Backend, T>::forward_micro(std::span<const std::int32_t> tokens, int slot,
                                              bool with_grad, double grad_scale) {
  load_tokens(tokens, slot);
  return run_forward(with_grad, grad_scale);
}

template <class Backend, class T>
void Transformer<Backend, T>::backward_micro(int slot) {
  cur_ = &slots_.at(slot);
  run_backward();
}

template <class Backend, class T>
std::span<T> Transformer<Backend, T>::input_activation(int slot) {
  auto& s = slots_.at(slot);
  return plan_.local_layers > 0 ? std::span<T>(s.layers[0].x) : std::span<T>(s.x_final);
}

template <class Backend, class T>
double Transformer<Backend, T>::run_forward(bool with_grad, double grad_scale) {
  cpu::MicroBatchActivations<T>& m = *cur_;
  const int slot = slot_index();
  const int layers = plan_.local_layers;
  if (fp8_.enabled() && !fp8_.step_open())
    throw core::RunError(
        "FP8: the weights of this optimizer step were not cast: call begin_step() before its "
        "first micro-batch and end_step() after its last (TrainingStep::run does)");
  T* x = layers > 0 ? m.layers[0].x.data() : m.x_final.data();
  // A stage other than the first: the caller received its input into input_activation().
  if (plan_.first_stage) cpu::embedding_forward(head_resources(), m, x);
  cpu::DecoderLayer<Backend, T> layer(layer_resources());
  const Recompute& recompute = plan_.shape.recompute;
  for (int l = 0; l < layers; ++l) {
    cpu::LayerActivations<T>& a = layer_activations(m, l);
    if (recompute.recomputed(l, layers) && recompute.group_begin(l) == l)
      std::copy(m.layers[l].x.begin(), m.layers[l].x.end(), a.x.begin());  // the kept input
    layer.forward(l, slot, a, layer_output(m, l));
  }
  if (!plan_.last_stage) return 0.0;  // the caller sends output_activation() on
  return cpu::head_forward(head_resources(), m, grad_scale, with_grad);
}

template <class Backend, class T>
void Transformer<Backend, T>::run_backward() {
  cpu::MicroBatchActivations<T>& m = *cur_;
  const int slot = slot_index();
  // A stage other than the last: the caller received the gradient of its output into
  // output_grad() (scratch_.dx).
  if (plan_.last_stage) cpu::head_backward(head_resources(), m);
  cpu::DecoderLayer<Backend, T> layer(layer_resources());
  for (int l = plan_.local_layers - 1; l >= 0; --l) {
    if (plan_.shape.recompute.group_end(l, plan_.local_layers)) recompute_group(m, l, slot);
    layer.backward(l, slot, layer_activations(m, l));
  }
  // A stage other than the first: scratch_.dx holds the gradient of its input, which the caller
  // sends back (input_grad()).
  if (plan_.first_stage) cpu::embedding_backward(head_resources(), m);
}

template <class Backend, class T>
cpu::LayerActivations<T>& Transformer<Backend, T>::layer_activations(
    cpu::MicroBatchActivations<T>& m, int l) {
  const Recompute& recompute = plan_.shape.recompute;
  if (!recompute.recomputed(l, plan_.local_layers)) return m.layers[l];
  return recomputed_[static_cast<std::size_t>(l - recompute.group_begin(l))];
}

template <class Backend, class T>
T* Transformer<Backend, T>::layer_output(cpu::MicroBatchActivations<T>& m, int l) {
  if (l + 1 == plan_.local_layers) return m.x_final.data();
  const Recompute& recompute = plan_.shape.recompute;
  // Inside a recomputed group the next layer's input is the group's to hold; a kept input
  // (a group's first layer, or a layer not recomputed) is the micro-batch's.
  const bool inside_group = recompute.recomputed(l + 1, plan_.local_layers) &&
                            recompute.group_begin(l + 1) != l + 1;
  return inside_group ? layer_activations(m, l + 1).x.data() : m.layers[l + 1].x.data();
}

template <class Backend, class T>
void Transformer<Backend, T>::recompute_group(cpu::MicroBatchActivations<T>& m, int l, int slot) {
  const int begin = plan_.shape.recompute.group_begin(l);
  cpu::DecoderLayer<Backend, T> layer(layer_resources());
  std::copy(m.layers[begin].x.begin(), m.layers[begin].x.end(), recomputed_[0].x.begin());
  for (int j = begin; j <= l; ++j)
    layer.forward(j, slot, layer_activations(m, j),
                  j < l ? layer_activations(m, j + 1).x.data() : recomputed_output_.data());
}

}  // namespace tprimat::train

#if defined(TPRIMAT_CPU_EXTERN_TEMPLATES)
#include "tprimat/backend/cpu.hpp"
namespace tprimat::train {
// Compiled once in src/ (target tprimat_cpu); consumers link it instead of re-instantiating.
extern template class Transformer<backend::Cpu, float>;
extern template class Transformer<backend::Cpu, double>;
}  // namespace tprimat::train
#endif
