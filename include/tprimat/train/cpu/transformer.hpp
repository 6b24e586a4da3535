// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The decoder-only transformer (forward, backward, parameters) at run-time dims.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/validate.hpp"
#include "tprimat/train/cpu/fp8_emulation.hpp"
#include "tprimat/train/parameters.hpp"
#include "tprimat/train/precision.hpp"

namespace tprimat::train {

/// The tensor-parallel collectives the model calls inside forward and backward. Type-erased
/// (std::function) so the engine compiles once per element type whatever the communicator; one
/// call per block half is nothing next to the GEMMs it follows. Unset means TP = 1.
/// Sequence parallelism also needs the last two: reduce_scatter_sum(in, out), `in` holding TP
/// chunks of out.size() of which rank r gets chunk r summed over TP, and all_gather(in, out),
/// `out` holding TP chunks of in.size() of which chunk r is rank r's `in` (Communicator's).
template <class T>
struct TensorParallelOps {
  std::function<void(std::span<T>)> all_reduce_sum;
  std::function<void(std::span<T>)> all_reduce_max;
  std::function<void(std::span<const T>, std::span<T>)> reduce_scatter_sum;
  std::function<void(std::span<const T>, std::span<T>)> all_gather;
};

/// Llama-style decoder: embedding -> L x [RMSNorm, QKV (+bias), RoPE, GQA causal attention, O,
/// residual, RMSNorm, gate/up, SwiGLU, down, residual] -> RMSNorm -> LM head -> cross-entropy.
/// All sizes are run-time (model::Dims), so the class is compiled once per (Backend, T) — see
/// src/ — and TrainingStep<Backend, Model, Layout> stays a thin typed wrapper.
/// Parameters and gradients live in one flat buffer each (one all-reduce, one optimizer loop);
/// activations are sized for one micro-batch of `mbs` sequences of `seq` tokens.
/// Precision: T throughout (the CPU's "bf16" run is fp32); with FP8 the decoder layers' linear
/// projections read quantise-dequantised operands exactly where docs/fp8.md casts them
/// (Fp8Emulation), so this model is the reference of the device engine's FP8 step.
/// Buffers start on Eigen's vector alignment: Eigen peels unaligned heads off its vectorised
/// reductions, so a base address that varied from run to run would vary the summation order and
/// break bit-for-bit reproducibility between two identical runs.
template <class T>
using AlignedVector = std::vector<T, Eigen::aligned_allocator<T>>;

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
  Transformer(const model::Dims& d, int mbs, int seq, double init_std, std::uint64_t seed,
              Shard shard, TensorParallelOps<T> ops, PrecisionConfig precision = {});

  const model::Dims& dims() const { return dims_; }
  const Shard& shard() const { return shard_; }
  int mbs() const { return mbs_; }
  int seq() const { return seq_; }
  std::span<T> params() { return params_; }
  std::span<const T> params() const { return params_; }
  std::span<T> grads() { return grads_; }
  std::span<const T> grads() const { return grads_; }
  const std::vector<ParamTensor>& tensors() const { return table_.tensors; }
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
  void sum_sequence_parallel_grads();
  /// Token rows of the residual stream on this rank: mbs x seq, or that / TP under sequence
  /// parallelism (the rows of the stage's input and output activations).
  std::int64_t residual_rows() const { return rows_; }

  // ---- FP8 (docs/fp8.md); no-ops without it ----------------------------------------------
  /// Before an optimizer step's first micro-batch: casts the weights as they are now.
  void begin_step() { fp8_.begin_step(params_.data(), layer_params_); }
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
  std::span<T> output_grad() { return dx_; }
  std::span<const T> input_grad() const { return dx_; }

 private:
  // What backward needs of one layer, for one micro-batch of n tokens; `rows` is n, or n / TP
  // under sequence parallelism (this rank's token rows of the residual stream and the norms).
  struct LayerActs {
    AlignedVector<T> x;      // [rows, hidden]  layer input (residual stream)
    AlignedVector<T> xn1;    // [n, hidden]  attention RMSNorm output (gathered over TP under SP)
    AlignedVector<T> rstd1;  // [rows]
    AlignedVector<T> q;      // [n, q_dim]   after RoPE
    AlignedVector<T> k;      // [n, kv_dim]  after RoPE
    AlignedVector<T> v;      // [n, kv_dim]
    AlignedVector<T> attn;   // [n, q_dim]   attention output before O
    AlignedVector<T> lse;    // [mbs, heads, seq] softmax log-sum-exp per query row
    AlignedVector<T> x_mid;  // [rows, hidden]  after the attention residual
    AlignedVector<T> xn2;    // [n, hidden]  MLP RMSNorm output (gathered over TP under SP)
    AlignedVector<T> rstd2;  // [rows]
    AlignedVector<T> gate;   // [n, ffn]
    AlignedVector<T> up;     // [n, ffn]
  };

  void tp_sum(T* x, std::int64_t n) {
    if (shard_.tp_size > 1) ops_.all_reduce_sum(std::span<T>(x, n));
  }
  /// RMSNorm of this rank's residual rows `x` into `xn` [n, hidden]: under sequence
  /// parallelism the norm runs on the slice and its output is all-gathered over TP (the
  /// column-parallel GEMMs read every row).
  void norm_forward(const T* x, const T* weight, T* xn, T* rstd);
  /// The row-parallel GEMM's partial product `partial` [n, hidden], summed over TP, plus the
  /// residual `residual` (nullptr: none) into `out` [rows, hidden]: an all-reduce in place
  /// (out == partial), or under sequence parallelism a reduce-scatter to this rank's rows.
  void row_parallel_sum(T* partial, const T* residual, T* out);
  /// Backward of norm_forward: dxn_ [n, hidden] holds this rank's partial input gradient of the
  /// column-parallel GEMMs; summed over TP (all-reduce, or reduce-scatter to this rank's rows)
  /// and taken through the norm, ADDING to `dx` [rows, hidden] and to the gain's gradient.
  void norm_backward(const T* x, const T* weight, const T* rstd, T* dx, T* dweight);
  /// The residual gradient dx_ [rows, hidden] as the row-parallel GEMMs' backward reads it,
  /// [n, hidden]: dx_ itself, or under sequence parallelism its all-gather over TP.
  const T* full_residual_grad();
  double vocab_parallel_cross_entropy(T grad_scale, bool with_grad);
  void load_tokens(std::span<const std::int32_t> tokens, int slot = 0);
  double run_forward(bool with_grad, double grad_scale);
  void run_backward();
  T* p(std::int64_t offset) { return params_.data() + offset; }
  T* g(std::int64_t offset) { return grads_.data() + offset; }
  /// The weight the forward and input-gradient GEMMs of local layer `l` read: its FP8 copy in an
  /// FP8 layer, the master otherwise (the weight gradient always goes to the master's).
  const T* gemm_weight(int l, std::int64_t offset, Fp8Tensor w) const {
    return fp8_.layer_in_fp8(l) ? fp8_.weight(l, w) : params_.data() + offset;
  }
  int slot_index() const { return static_cast<int>(cur_ - slots_.data()); }

  model::Dims dims_;
  int mbs_, seq_;
  std::int64_t n_;     // tokens per micro-batch
  std::int64_t rows_;  // of them, the residual stream's rows on this rank (n_ / TP under SP)
  bool sp_ = false;    // sequence parallelism (TP > 1)
  Shard shard_;
  TensorParallelOps<T> ops_;
  // This rank's share of the split dimensions (the full sizes when TP = 1).
  int heads_l_, kv_heads_l_;
  std::int64_t qd_l_, kvd_l_, ffn_l_, vocab_l_, vocab_begin_;
  ParameterTable table_;
  std::vector<LayerParams> layer_params_;  // this stage's layers (table_.layers)
  std::int64_t embedding_ = 0, final_norm_ = 0, head_ = 0;
  AlignedVector<T> params_, grads_;
  /// What backward needs of one micro-batch in flight.
  struct MicroActs {
    std::vector<LayerActs> layers;                           // this stage's layers
    AlignedVector<T> x_final, xn_final, rstd_final, logits;  // [rows,h] [n,h] [rows] [n,v/TP]
    std::vector<std::int32_t> inputs, targets;               // [n]
  };
  std::vector<MicroActs> slots_;
  MicroActs* cur_ = nullptr;  // the slot forward/backward work on
  int local_layers_ = 0;
  AlignedVector<T> rope_cos_, rope_sin_;  // [seq, head_dim/2]
  AlignedVector<T> attn_workspace_;
  // Backward scratch, shared by all layers. dx_: [rows, h] the residual stream's gradient.
  AlignedVector<T> dx_, dxn_, dq_, dk_, dv_, dattn_, h_, dh_, dgate_, dup_;
  // Sequence parallelism only: [n, h] a row-parallel GEMM's partial product, the embedding's
  // rows, the gathered residual gradient; [rows, h] a norm's output or input gradient on this
  // rank's rows; the norm gains' gradients packed for their sum over TP.
  AlignedVector<T> sp_full_, sp_rows_, sp_norm_grads_;
  AlignedVector<T> ce_max_, ce_sums_;  // [n], [2n]: vocab-parallel cross-entropy row statistics
  Fp8Emulation<T> fp8_;
  // FP8 only: Q(attention output) for O (it stays unquantised for attention's backward), and
  // Q(residual-stream gradient) for down and O (the residual path keeps the unquantised one).
  AlignedVector<T> fp8_attn_, fp8_grad_;  // [n, q_dim/TP], [n, hidden]
};

// ---- definitions (compiled once per (Backend, T) in src/ when extern templates are on) ------

template <class Backend, class T>
Transformer<Backend, T>::Transformer(const model::Dims& d, int mbs, int seq, double init_std,
                                     std::uint64_t seed, Shard shard, TensorParallelOps<T> ops,
                                     PrecisionConfig precision)
    : dims_(d),
      mbs_(mbs),
      seq_(seq),
      n_(std::int64_t{mbs} * seq),
      rows_(n_),
      shard_(shard),
      ops_(std::move(ops)) {
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
  if (tp > 1 && !(ops_.all_reduce_sum && ops_.all_reduce_max))
    throw core::InputError("a TP shard needs its tensor-parallel collectives");
  sp_ = shard.sequence_parallel && tp > 1;
  if (sp_) {
    parallel::check_sequence_parallel_rows(mbs, seq, tp);
    if (!(ops_.reduce_scatter_sum && ops_.all_gather))
      throw core::InputError("a sequence-parallel TP shard needs reduce-scatter and all-gather");
    rows_ = n_ / tp;
  }
  heads_l_ = d.heads / tp;
  kv_heads_l_ = d.kv_heads / tp;
  qd_l_ = std::int64_t{heads_l_} * d.head_dim;
  kvd_l_ = std::int64_t{kv_heads_l_} * d.head_dim;
  ffn_l_ = d.ffn / tp;
  vocab_l_ = d.vocab / tp;
  vocab_begin_ = vocab_l_ * shard.tp_rank;
  local_layers_ = shard.layer_count < 0 ? d.layers : shard.layer_count;
  if (shard.layer_begin < 0 || shard.layer_begin + local_layers_ > d.layers || shard.slots < 1 ||
      (local_layers_ < 1 && !(shard.first_stage && shard.last_stage)))
    throw core::InputError("pipeline stage of layers [" + std::to_string(shard.layer_begin) + ", " +
                           std::to_string(shard.layer_begin + local_layers_) + ") of " +
                           std::to_string(d.layers) + " is empty or out of range");
  const std::int64_t h = d.hidden;
  table_ = make_parameter_table(d, shard);
  layer_params_ = table_.layers;
  embedding_ = table_.embedding;
  final_norm_ = table_.final_norm;
  head_ = table_.head;
  const std::int64_t total = table_.total();
  try {
    params_.assign(total, T(0));
    grads_.assign(total, T(0));
    slots_.resize(shard.slots);
    for (auto& slot : slots_) {
      slot.layers.resize(local_layers_);
      slot.x_final.resize(rows_ * h);
      if (shard.last_stage) {
        slot.xn_final.resize(n_ * h);
        slot.rstd_final.resize(rows_);
        slot.logits.resize(n_ * vocab_l_);
      }
      slot.inputs.resize(n_);
      slot.targets.resize(n_);
    }
    cur_ = &slots_[0];
    for (auto& slot : slots_)
      for (auto& a : slot.layers) {
        a.x.resize(rows_ * h);
        a.xn1.resize(n_ * h);
        a.rstd1.resize(rows_);
        a.q.resize(n_ * qd_l_);
        a.k.resize(n_ * kvd_l_);
        a.v.resize(n_ * kvd_l_);
        a.attn.resize(n_ * qd_l_);
        a.lse.resize(std::int64_t{mbs} * heads_l_ * seq);
        a.x_mid.resize(rows_ * h);
        a.xn2.resize(n_ * h);
        a.rstd2.resize(rows_);
        a.gate.resize(n_ * ffn_l_);
        a.up.resize(n_ * ffn_l_);
      }
    rope_cos_.resize(std::int64_t{seq} * (d.head_dim / 2));
    rope_sin_.resize(rope_cos_.size());
    attn_workspace_.resize(Backend::attention_workspace(seq));
    dx_.resize(rows_ * h);
    dxn_.resize(n_ * h);
    if (sp_) {
      sp_full_.resize(n_ * h);
      sp_rows_.resize(rows_ * h);
      std::int64_t norm_elems = 0;
      for (const auto& t : table_.tensors) norm_elems += t.split == Split::none ? t.size() : 0;
      sp_norm_grads_.resize(norm_elems);
    }
    for (auto* buf : {&dq_, &dattn_}) buf->resize(n_ * qd_l_);
    for (auto* buf : {&dk_, &dv_}) buf->resize(n_ * kvd_l_);
    for (auto* buf : {&h_, &dh_, &dgate_, &dup_}) buf->resize(n_ * ffn_l_);
    if (tp > 1) {
      ce_max_.resize(n_);
      ce_sums_.resize(2 * n_);
    }
    if (precision.is_fp8()) {
      fp8_ = Fp8Emulation<T>(
          precision, shard.layer_begin, local_layers_, d.layers, shard.slots,
          {h * qd_l_, h * kvd_l_, h * kvd_l_, qd_l_ * h, h * ffn_l_, h * ffn_l_, ffn_l_ * h},
          tp > 1 ? ops_.all_reduce_max : nullptr);
      fp8_attn_.resize(n_ * qd_l_);
      fp8_grad_.resize(n_ * h);
    }
  } catch (const std::bad_alloc&) {
    throw core::InputError(std::string(d.name) + " with " + std::to_string(d.layers) +
                               " layers at mbs " + std::to_string(mbs) + ", seq " +
                               std::to_string(seq) + " does not fit in host memory",
                           "run fewer layers (--layers), a shorter sequence or a smaller model");
  }
  Backend::rope_tables(d, seq, rope_cos_.data(), rope_sin_.data());
  init_parameters(table_, init_std, seed, params_.data());
}

template <class Backend, class T>
void Transformer<Backend, T>::zero_grads() {
  std::fill(grads_.begin(), grads_.end(), T(0));
}

template <class Backend, class T>
std::size_t Transformer<Backend, T>::bytes() const {
  std::size_t elems =
      params_.size() + grads_.size() + rope_cos_.size() + rope_sin_.size() + attn_workspace_.size();
  std::size_t ids = 0;
  for (const auto& slot : slots_) {
    elems +=
        slot.x_final.size() + slot.xn_final.size() + slot.rstd_final.size() + slot.logits.size();
    ids += slot.inputs.size() + slot.targets.size();
    for (const auto& a : slot.layers)
      elems += a.x.size() + a.xn1.size() + a.rstd1.size() + a.q.size() + a.k.size() + a.v.size() +
               a.attn.size() + a.lse.size() + a.x_mid.size() + a.xn2.size() + a.rstd2.size() +
               a.gate.size() + a.up.size();
  }
  for (const auto* buf :
       {&dx_, &dxn_, &dq_, &dk_, &dv_, &dattn_, &h_, &dh_, &dgate_, &dup_, &ce_max_, &ce_sums_,
        &fp8_attn_, &fp8_grad_, &sp_full_, &sp_rows_, &sp_norm_grads_})
    elems += buf->size();
  return elems * sizeof(T) + ids * sizeof(std::int32_t) + fp8_.bytes();
}

template <class Backend, class T>
void Transformer<Backend, T>::sum_sequence_parallel_grads() {
  if (!sp_) return;
  T* packed = sp_norm_grads_.data();
  for (const auto& t : table_.tensors)
    if (t.split == Split::none) packed = std::copy_n(g(t.offset), t.size(), packed);
  ops_.all_reduce_sum(std::span<T>(sp_norm_grads_));
  const T* summed = sp_norm_grads_.data();
  for (const auto& t : table_.tensors)
    if (t.split == Split::none) {
      std::copy_n(summed, t.size(), g(t.offset));
      summed += t.size();
    }
}

template <class Backend, class T>
void Transformer<Backend, T>::norm_forward(const T* x, const T* weight, T* xn, T* rstd) {
  const std::int64_t h = dims_.hidden;
  if (!sp_) {
    Backend::rmsnorm_forward(x, weight, n_, h, dims_.norm_eps, xn, rstd);
    return;
  }
  Backend::rmsnorm_forward(x, weight, rows_, h, dims_.norm_eps, sp_rows_.data(), rstd);
  ops_.all_gather(std::span<const T>(sp_rows_), std::span<T>(xn, n_ * h));
}

template <class Backend, class T>
void Transformer<Backend, T>::row_parallel_sum(T* partial, const T* residual, T* out) {
  const std::int64_t h = dims_.hidden;
  if (sp_)
    ops_.reduce_scatter_sum(std::span<const T>(partial, n_ * h), std::span<T>(out, rows_ * h));
  else
    tp_sum(partial, n_ * h);  // out == partial
  if (residual != nullptr) Backend::add(out, residual, rows_ * h);
}

template <class Backend, class T>
void Transformer<Backend, T>::norm_backward(const T* x, const T* weight, const T* rstd, T* dx,
                                            T* dweight) {
  const std::int64_t h = dims_.hidden;
  if (!sp_) {
    tp_sum(dxn_.data(), n_ * h);
    Backend::rmsnorm_backward(x, weight, rstd, dxn_.data(), n_, h, dx, dweight);
    return;
  }
  ops_.reduce_scatter_sum(std::span<const T>(dxn_), std::span<T>(sp_rows_));
  Backend::rmsnorm_backward(x, weight, rstd, sp_rows_.data(), rows_, h, dx, dweight);
}

template <class Backend, class T>
const T* Transformer<Backend, T>::full_residual_grad() {
  if (!sp_) return dx_.data();
  ops_.all_gather(std::span<const T>(dx_), std::span<T>(sp_full_));
  return sp_full_.data();
}

template <class Backend, class T>
void Transformer<Backend, T>::load_tokens(std::span<const std::int32_t> tokens, int slot) {
  if (slot < 0 || slot >= static_cast<int>(slots_.size()))
    throw core::InputError("activation slot " + std::to_string(slot) + " of " +
                           std::to_string(slots_.size()));
  cur_ = &slots_[slot];
  const std::int64_t expected = std::int64_t{mbs_} * (seq_ + 1);
  if (static_cast<std::int64_t>(tokens.size()) != expected)
    throw core::InputError("a micro-batch needs mbs x (seq + 1) = " + std::to_string(expected) +
                           " token ids, got " + std::to_string(tokens.size()));
  for (int b = 0; b < mbs_; ++b)
    for (int t = 0; t < seq_; ++t) {
      const std::int32_t in = tokens[std::int64_t{b} * (seq_ + 1) + t];
      const std::int32_t out = tokens[std::int64_t{b} * (seq_ + 1) + t + 1];
      for (std::int32_t id : {in, out})
        if (id < 0 || id >= dims_.vocab)
          throw core::InputError("token id " + std::to_string(id) +
                                 " is outside the vocabulary [0, " + std::to_string(dims_.vocab) +
                                 ") of " + std::string(dims_.name));
      cur_->inputs[std::int64_t{b} * seq_ + t] = in;
      cur_->targets[std::int64_t{b} * seq_ + t] = out;
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
  return local_layers_ > 0 ? std::span<T>(s.layers[0].x) : std::span<T>(s.x_final);
}

template <class Backend, class T>
double Transformer<Backend, T>::run_forward(bool with_grad, double grad_scale) {
  using B = Backend;
  const auto& d = dims_;
  const std::int64_t n = n_, h = d.hidden, qd = qd_l_, kvd = kvd_l_, f = ffn_l_;
  const bool tp = shard_.tp_size > 1;
  const int layers = local_layers_;
  MicroActs& m = *cur_;
  const int slot = slot_index();
  if (fp8_.enabled() && !fp8_.step_open())
    throw core::RunError(
        "FP8: the weights of this optimizer step were not cast: call begin_step() before its "
        "first micro-batch and end_step() after its last (TrainingStep::run does)");
  T* x = layers > 0 ? m.layers[0].x.data() : m.x_final.data();
  if (!shard_.first_stage) {
    // the caller received this stage's input into input_activation()
  } else if (!tp) {
    B::embedding_forward(m.inputs.data(), n, p(embedding_), d.hidden, x);
  } else {  // vocab-parallel: the rank owning a token's row contributes it, the others zeros
    T* rows = sp_ ? sp_full_.data() : x;  // all n rows, summed to this rank's
    for (std::int64_t t = 0; t < n; ++t) {
      const std::int64_t row = m.inputs[t] - vocab_begin_;
      if (row >= 0 && row < vocab_l_)
        std::copy_n(p(embedding_) + row * h, h, rows + t * h);
      else
        std::fill_n(rows + t * h, h, T(0));
    }
    row_parallel_sum(rows, nullptr, x);
  }
  for (int l = 0; l < layers; ++l) {
    const LayerParams& lp = layer_params_[l];
    LayerActs& a = m.layers[l];
    // FP8 (docs/fp8.md): the GEMMs read Q(activation) and Q(weight). xn1 and xn2 are replaced
    // by their quantised values (their norms' backward reads x and rstd); the attention output
    // is quantised into a copy, since attention's backward reads it as it is.
    const bool q8 = fp8_.layer_in_fp8(l);
    using F = Fp8Tensor;
    norm_forward(a.x.data(), p(lp.attn_norm), a.xn1.data(), a.rstd1.data());
    if (q8) fp8_.cast_activation(l, F::x_qkv, slot, a.xn1.data(), a.xn1.data(), n * h);
    B::gemm(false, false, n, qd, h, T(1), a.xn1.data(), h, gemm_weight(l, lp.wq, F::w_q), qd, T(0),
            a.q.data(), qd);
    B::gemm(false, false, n, kvd, h, T(1), a.xn1.data(), h, gemm_weight(l, lp.wk, F::w_k), kvd,
            T(0), a.k.data(), kvd);
    B::gemm(false, false, n, kvd, h, T(1), a.xn1.data(), h, gemm_weight(l, lp.wv, F::w_v), kvd,
            T(0), a.v.data(), kvd);
    if (d.qkv_bias) {
      B::add_bias(a.q.data(), p(lp.bq), n, qd);
      B::add_bias(a.k.data(), p(lp.bk), n, kvd);
      B::add_bias(a.v.data(), p(lp.bv), n, kvd);
    }
    B::rope_forward(a.q.data(), n, seq_, heads_l_, d.head_dim, rope_cos_.data(), rope_sin_.data());
    B::rope_forward(a.k.data(), n, seq_, kv_heads_l_, d.head_dim, rope_cos_.data(),
                    rope_sin_.data());
    B::attention_forward(a.q.data(), a.k.data(), a.v.data(), a.attn.data(), a.lse.data(), mbs_,
                         seq_, heads_l_, kv_heads_l_, d.head_dim, attn_workspace_.data());
    const T* attn = a.attn.data();
    if (q8) {
      fp8_.cast_activation(l, F::x_o, slot, a.attn.data(), fp8_attn_.data(), n * qd);
      attn = fp8_attn_.data();
    }
    const T* wo = gemm_weight(l, lp.wo, F::w_o);
    if (!tp) {
      std::copy(a.x.begin(), a.x.end(), a.x_mid.begin());  // residual
      B::gemm(false, false, n, h, qd, T(1), attn, qd, wo, h, T(1), a.x_mid.data(), h);
    } else {  // row-parallel O: partial products summed over TP, then the residual
      T* partial = sp_ ? sp_full_.data() : a.x_mid.data();
      B::gemm(false, false, n, h, qd, T(1), attn, qd, wo, h, T(0), partial, h);
      row_parallel_sum(partial, a.x.data(), a.x_mid.data());
    }
    norm_forward(a.x_mid.data(), p(lp.mlp_norm), a.xn2.data(), a.rstd2.data());
    if (q8) fp8_.cast_activation(l, F::x_mlp, slot, a.xn2.data(), a.xn2.data(), n * h);
    B::gemm(false, false, n, f, h, T(1), a.xn2.data(), h, gemm_weight(l, lp.w_gate, F::w_gate), f,
            T(0), a.gate.data(), f);
    B::gemm(false, false, n, f, h, T(1), a.xn2.data(), h, gemm_weight(l, lp.w_up, F::w_up), f, T(0),
            a.up.data(), f);
    B::swiglu_forward(a.gate.data(), a.up.data(), h_.data(), n * f);
    if (q8) fp8_.cast_activation(l, F::x_down, slot, h_.data(), h_.data(), n * f);
    const T* w_down = gemm_weight(l, lp.w_down, F::w_down);
    T* next = l + 1 < layers ? m.layers[l + 1].x.data() : m.x_final.data();
    if (!tp) {
      std::copy(a.x_mid.begin(), a.x_mid.end(), next);  // residual
      B::gemm(false, false, n, h, f, T(1), h_.data(), f, w_down, h, T(1), next, h);
    } else {  // row-parallel down: as O
      T* partial = sp_ ? sp_full_.data() : next;
      B::gemm(false, false, n, h, f, T(1), h_.data(), f, w_down, h, T(0), partial, h);
      row_parallel_sum(partial, a.x_mid.data(), next);
    }
  }
  if (!shard_.last_stage) return 0.0;  // the caller sends output_activation() on
  norm_forward(m.x_final.data(), p(final_norm_), m.xn_final.data(), m.rstd_final.data());
  const std::int64_t v = vocab_l_;  // column-parallel head: this rank's vocabulary slice
  if (d.tied_embeddings)            // logits = xn E^T, E [vocab, hidden]
    B::gemm(false, true, n, v, h, T(1), m.xn_final.data(), h, p(embedding_), h, T(0),
            m.logits.data(), v);
  else
    B::gemm(false, false, n, v, h, T(1), m.xn_final.data(), h, p(head_), v, T(0), m.logits.data(),
            v);
  if (tp) return vocab_parallel_cross_entropy(static_cast<T>(grad_scale), with_grad);
  return B::cross_entropy(m.logits.data(), m.targets.data(), n, d.vocab, static_cast<T>(grad_scale),
                          with_grad);
}

/// Megatron's vocab-parallel cross-entropy: each rank holds logits [n, vocab / TP]; the row max,
/// the softmax denominator and the target logit are reduced over TP ([n] and [2n] numbers per
/// micro-batch), so the full [n, vocab] logits never exist on one rank.
template <class Backend, class T>
double Transformer<Backend, T>::vocab_parallel_cross_entropy(T grad_scale, bool with_grad) {
  const std::int64_t n = n_, v = vocab_l_;
  using Row = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
  T* logits = cur_->logits.data();
  const std::int32_t* targets = cur_->targets.data();
  for (std::int64_t t = 0; t < n; ++t) ce_max_[t] = Row(logits + t * v, v).maxCoeff();
  ops_.all_reduce_max(std::span<T>(ce_max_.data(), n));
  for (std::int64_t t = 0; t < n; ++t) {
    Row row(logits + t * v, v);
    const std::int64_t target = targets[t] - vocab_begin_;
    const bool mine = target >= 0 && target < v;
    ce_sums_[2 * t + 1] = mine ? row[target] : T(0);
    if (with_grad) {
      row = (row - ce_max_[t]).exp();
      ce_sums_[2 * t] = row.sum();
    } else {
      ce_sums_[2 * t] = (row - ce_max_[t]).exp().sum();
    }
  }
  ops_.all_reduce_sum(std::span<T>(ce_sums_.data(), 2 * n));
  double total = 0;
  for (std::int64_t t = 0; t < n; ++t) {
    const T sum = ce_sums_[2 * t];
    total +=
        static_cast<double>(ce_max_[t]) + std::log(static_cast<double>(sum)) - ce_sums_[2 * t + 1];
    if (!with_grad) continue;
    Row row(logits + t * v, v);
    row *= grad_scale / sum;
    const std::int64_t target = targets[t] - vocab_begin_;
    if (target >= 0 && target < v) row[target] -= grad_scale;
  }
  return total;
}

template <class Backend, class T>
void Transformer<Backend, T>::run_backward() {
  using B = Backend;
  const auto& d = dims_;
  const std::int64_t n = n_, h = d.hidden, qd = qd_l_, kvd = kvd_l_, f = ffn_l_, v = vocab_l_;
  const bool tp = shard_.tp_size > 1;
  MicroActs& m = *cur_;
  const int slot = slot_index();
  if (shard_.last_stage) {
    const T* dlogits = m.logits.data();  // cross_entropy left grad_scale * dloss/dlogits here
    if (d.tied_embeddings) {
      B::gemm(true, false, v, h, n, T(1), dlogits, v, m.xn_final.data(), h, T(1), g(embedding_), h);
      B::gemm(false, false, n, h, v, T(1), dlogits, v, p(embedding_), h, T(0), dxn_.data(), h);
    } else {
      B::gemm(true, false, h, v, n, T(1), m.xn_final.data(), h, dlogits, v, T(1), g(head_), v);
      B::gemm(false, true, n, h, v, T(1), dlogits, v, p(head_), v, T(0), dxn_.data(), h);
    }
    // Conjugate of each column-parallel layer: its input gradient is a partial sum over TP.
    std::fill(dx_.begin(), dx_.end(), T(0));
    norm_backward(m.x_final.data(), p(final_norm_), m.rstd_final.data(), dx_.data(),
                  g(final_norm_));
  }  // else: the caller received the gradient of this stage's output into output_grad() (dx_)
  for (int l = local_layers_ - 1; l >= 0; --l) {
    const LayerParams& lp = layer_params_[l];
    LayerActs& a = m.layers[l];
    // FP8: the GEMMs read the forward's Q(activations) (xn1, xn2 hold theirs; h and the attention
    // output are quantised again with the scales the forward used), Q(weights) and Q(gradients).
    // The residual stream's gradient dx_ stays unquantised; its Q goes to fp8_grad_.
    const bool q8 = fp8_.layer_in_fp8(l);
    using F = Fp8Tensor;
    // MLP half: x_next = x_mid + swiglu(xn2 Wg, xn2 Wu) Wd; dx_ holds d x_next.
    B::swiglu_forward(a.gate.data(), a.up.data(), h_.data(), n * f);  // recompute, not stored
    const T* d_next = full_residual_grad();
    if (q8) {
      fp8_.recast_activation(l, F::x_down, slot, h_.data(), h_.data(), n * f);
      fp8_.cast_gradient(l, F::g_down, d_next, fp8_grad_.data(), n * h);
      d_next = fp8_grad_.data();
    }
    B::gemm(true, false, f, h, n, T(1), h_.data(), f, d_next, h, T(1), g(lp.w_down), h);
    B::gemm(false, true, n, f, h, T(1), d_next, h, gemm_weight(l, lp.w_down, F::w_down), h, T(0),
            dh_.data(), f);
    B::swiglu_backward(a.gate.data(), a.up.data(), dh_.data(), dgate_.data(), dup_.data(), n * f);
    if (q8) {
      fp8_.cast_gradient(l, F::g_gate, dgate_.data(), dgate_.data(), n * f);
      fp8_.cast_gradient(l, F::g_up, dup_.data(), dup_.data(), n * f);
    }
    B::gemm(true, false, h, f, n, T(1), a.xn2.data(), h, dgate_.data(), f, T(1), g(lp.w_gate), f);
    B::gemm(true, false, h, f, n, T(1), a.xn2.data(), h, dup_.data(), f, T(1), g(lp.w_up), f);
    B::gemm(false, true, n, h, f, T(1), dgate_.data(), f, gemm_weight(l, lp.w_gate, F::w_gate), f,
            T(0), dxn_.data(), h);
    B::gemm(false, true, n, h, f, T(1), dup_.data(), f, gemm_weight(l, lp.w_up, F::w_up), f, T(1),
            dxn_.data(), h);
    norm_backward(a.x_mid.data(), p(lp.mlp_norm), a.rstd2.data(), dx_.data(), g(lp.mlp_norm));
    // Attention half: x_mid = x + attention(rope(xn1 Wq + bq), rope(xn1 Wk + bk), xn1 Wv + bv) Wo.
    const T* attn = a.attn.data();
    const T* d_mid = full_residual_grad();
    if (q8) {
      fp8_.recast_activation(l, F::x_o, slot, a.attn.data(), fp8_attn_.data(), n * qd);
      fp8_.cast_gradient(l, F::g_o, d_mid, fp8_grad_.data(), n * h);
      attn = fp8_attn_.data();
      d_mid = fp8_grad_.data();
    }
    B::gemm(true, false, qd, h, n, T(1), attn, qd, d_mid, h, T(1), g(lp.wo), h);
    B::gemm(false, true, n, qd, h, T(1), d_mid, h, gemm_weight(l, lp.wo, F::w_o), h, T(0),
            dattn_.data(), qd);
    B::attention_backward(a.q.data(), a.k.data(), a.v.data(), a.attn.data(), a.lse.data(),
                          dattn_.data(), dq_.data(), dk_.data(), dv_.data(), mbs_, seq_, heads_l_,
                          kv_heads_l_, d.head_dim, attn_workspace_.data());
    B::rope_backward(dq_.data(), n, seq_, heads_l_, d.head_dim, rope_cos_.data(), rope_sin_.data());
    B::rope_backward(dk_.data(), n, seq_, kv_heads_l_, d.head_dim, rope_cos_.data(),
                     rope_sin_.data());
    if (d.qkv_bias) {
      B::bias_backward(dq_.data(), n, qd, g(lp.bq));
      B::bias_backward(dk_.data(), n, kvd, g(lp.bk));
      B::bias_backward(dv_.data(), n, kvd, g(lp.bv));
    }
    if (q8) {  // after the biases' gradients, which sum the unquantised ones
      fp8_.cast_gradient(l, F::g_q, dq_.data(), dq_.data(), n * qd);
      fp8_.cast_gradient(l, F::g_k, dk_.data(), dk_.data(), n * kvd);
      fp8_.cast_gradient(l, F::g_v, dv_.data(), dv_.data(), n * kvd);
    }
    B::gemm(true, false, h, qd, n, T(1), a.xn1.data(), h, dq_.data(), qd, T(1), g(lp.wq), qd);
    B::gemm(true, false, h, kvd, n, T(1), a.xn1.data(), h, dk_.data(), kvd, T(1), g(lp.wk), kvd);
    B::gemm(true, false, h, kvd, n, T(1), a.xn1.data(), h, dv_.data(), kvd, T(1), g(lp.wv), kvd);
    B::gemm(false, true, n, h, qd, T(1), dq_.data(), qd, gemm_weight(l, lp.wq, F::w_q), qd, T(0),
            dxn_.data(), h);
    B::gemm(false, true, n, h, kvd, T(1), dk_.data(), kvd, gemm_weight(l, lp.wk, F::w_k), kvd, T(1),
            dxn_.data(), h);
    B::gemm(false, true, n, h, kvd, T(1), dv_.data(), kvd, gemm_weight(l, lp.wv, F::w_v), kvd, T(1),
            dxn_.data(), h);
    norm_backward(a.x.data(), p(lp.attn_norm), a.rstd1.data(), dx_.data(), g(lp.attn_norm));
  }
  if (!shard_.first_stage) {
    // dx_ holds the gradient of this stage's input: the caller sends input_grad() back
  } else if (!tp) {
    B::embedding_backward(m.inputs.data(), n, dx_.data(), d.hidden, g(embedding_));
  } else {  // vocab-parallel: only the rows this rank owns, of every token (gathered under SP)
    const T* dx = full_residual_grad();
    for (std::int64_t t = 0; t < n; ++t) {
      const std::int64_t row = m.inputs[t] - vocab_begin_;
      if (row >= 0 && row < vocab_l_) B::add(g(embedding_) + row * h, dx + t * h, h);
    }
  }
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
