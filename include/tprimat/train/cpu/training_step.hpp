// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// TrainingStep on a host backend (backend::Cpu): one optimizer step in Transformer<Backend, float>,
// the numerical reference every device step is checked against.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tprimat/backend/concept.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/communicator.hpp"
#include "tprimat/parallel/groups.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/parallel/pipeline_split.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/cpu/optimizer.hpp"
#include "tprimat/train/cpu/pipeline.hpp"
#include "tprimat/train/cpu/transformer.hpp"
#include "tprimat/train/precision.hpp"
#include "tprimat/train/rank_plan.hpp"
#include "tprimat/train/schedule.hpp"
#include "tprimat/train/step_checks.hpp"

namespace tprimat::train {

namespace cpu {

/// The CPU step of any model and layout, what TrainingStep<Backend, M, L, C> runs (its base):
/// written at run-time dims and TP x PP so that it compiles once per backend and communicator,
/// not once per model and layout.
template <class Backend, parallel::Communicator C>
class Step {
 public:
  using Element = float;

  /// Model `full` (layers: those run) under TP x PP = `tp` x `pp` over `groups`, split from the
  /// world in Megatron's order; `shape` already checked against the model and the layout
  /// (check_step_shape). Collective: every rank of the groups constructs its step together.
  Step(const model::Dims& full, int tp, int pp, StepShape shape, OptimizerConfig opt,
       std::uint64_t seed, parallel::Groups<C> groups, PrecisionConfig precision)
      : tp_(tp),
        pp_(pp),
        shape_(std::move(shape)),
        opt_(opt),
        groups_(checked_groups(std::move(groups), tp, pp, shape_.context_parallel)),
        tp_comm_(std::make_shared<C>(groups_.tp)),
        cp_comm_(std::make_shared<C>(groups_.cp)),
        model_(full, shape_.mbs, shape_.seq, opt.init_std, seed, shard_of(shape_, groups_, pp),
               tp_ops(tp_comm_), precision, shape_.recompute, cp_ops(cp_comm_)),
        shards_(checked_shard_groups(groups_.dp_cp, opt)),
        zero_(opt.shards_optimizer() && shards_.shard.size() > 1),
        grad_shard_(zero_ && opt.shards_gradients()),
        chunk_(zero_ ? (model_.parameter_count() + shards_.shard.size() - 1) / shards_.shard.size()
                     : model_.parameter_count()),
        owned_begin_(zero_ ? std::min(chunk_ * shards_.shard.rank(), model_.parameter_count()) : 0),
        owned_size_(std::min(chunk_, model_.parameter_count() - owned_begin_)),
        adam_(opt, owned_size_, owned_begin_) {
    if (zero_) {
      grad_pad_.assign(chunk_ * shards_.shard.size(), Element(0));
      chunk_buf_.assign(chunk_, Element(0));
    }
    if (grad_shard_) grad_shard_sum_.assign(chunk_, Element(0));
  }

  /// One optimizer step over shape.grad_accum micro-batches of shape.mbs sequences of
  /// shape.seq + 1 ids (inputs [0, seq), targets [1, seq + 1)): this DP rank's share of the
  /// global batch (the same on every TP and CP rank of the replica: each CP rank takes its own
  /// tokens of every sequence). Loss and gradients are means over every target token of the
  /// GLOBAL batch, so the returned StepStats (and the update) are identical on every rank.
  StepStats run(std::span<const std::int32_t> tokens) {
    const std::int64_t per_micro = std::int64_t{shape_.mbs} * (shape_.seq + 1);
    check_step_tokens(tokens, shape_, model_.dims().vocab, model_.dims().name);

    // Each rank pre-scales by 1 / (target tokens of the global batch); the sum over DP and CP
    // ranks (each CP rank's loss covers its own tokens) is the global mean.
    const int dp = groups_.shape.dp;
    const double global_tokens =
        static_cast<double>(shape_.grad_accum) * shape_.mbs * shape_.seq * dp;
    const double scale = 1.0 / global_tokens;
    model_.zero_grads();
    model_.begin_step();  // FP8: this step's weight casts
    double loss = 0;
    // ZeRO-2: each micro-batch's gradients, once its backward ends, reduce-scattered over the
    // shard group (DP x CP, or one hybrid sharding instance) and added into this rank's shard (as
    // the device engine does it, segment by segment).
    int reduced = 0;
    const auto reduce_micro_batch = [&] {
      if (!grad_shard_) return;
      model_.sum_sequence_parallel_grads();
      reduce_scatter_grads();
      if (reduced++ == 0)
        std::copy(chunk_buf_.begin(), chunk_buf_.end(), grad_shard_sum_.begin());
      else
        for (std::int64_t i = 0; i < chunk_; ++i) grad_shard_sum_[i] += chunk_buf_[i];
      model_.zero_grads();
    };
    if (pp_ > 1) {
      loss = run_1f1b(model_, groups_.pp, shape_.grad_accum, tokens, per_micro, scale,
                      reduce_micro_batch);
    } else {
      for (int micro = 0; micro < shape_.grad_accum; ++micro) {
        loss +=
            scale * model_.forward_backward(tokens.subspan(micro * per_micro, per_micro), scale);
        reduce_micro_batch();
      }
    }
    model_.end_step();  // FP8 delayed: the next step's scales
    // The norm gains' partial gradients, summed over TP (ZeRO-2: each micro-batch's already).
    if (!grad_shard_) model_.sum_sequence_parallel_grads();

    // Gradient reduction over DP x CP (the ranks holding the same weights, each with the
    // gradient of its own tokens): the elements this rank updates end up in `owned`.
    std::span<Element> grads = model_.grads();
    std::span<Element> owned = grads;
    if (grad_shard_) {
      owned = std::span<Element>(grad_shard_sum_).first(owned_size_);
    } else if (zero_) {
      reduce_scatter_grads();
      owned = std::span<Element>(chunk_buf_).first(owned_size_);
    } else if (groups_.dp_cp_size() > 1) {
      groups_.dp_cp.all_reduce_sum(grads);
    }
    // Hybrid sharding: the instances' sums of the same shard, summed over them once a step (the
    // micro-batches already summed inside each instance).
    if (zero_ && shards_.replicate.size() > 1) shards_.replicate.all_reduce_sum(owned);

    // Loss and squared gradient norm in one world all-reduce. Each element is counted on exactly
    // one rank: TP-replicated tensors (norm gains) on TP rank 0 only; without ZeRO, gradients
    // replicated over DP x CP on its rank 0 only, with it each shard on its first instance; the
    // loss (identical on a replica's TP ranks,
    // each CP rank's its tokens') on TP rank 0 of the last stage. Each stage counts its own
    // layers.
    double sums[2] = {0, 0};
    if (groups_.at.tp == 0 && groups_.last_stage()) sums[0] = loss;
    if (zero_ ? shards_.replicate.rank() == 0 : groups_.dp_cp_rank() == 0)
      sums[1] = owned_sum_squares(owned);
    if (groups_.world.size() > 1) groups_.world.all_reduce_sum(std::span<double>(sums, 2));
    StepStats stats;
    stats.loss = sums[0];
    stats.grad_norm = std::sqrt(sums[1]);
    if (!std::isfinite(stats.loss) || !std::isfinite(stats.grad_norm))
      throw core::RunError("step " + std::to_string(steps_done_) + " diverged: loss " +
                           std::to_string(stats.loss) + ", gradient norm " +
                           std::to_string(stats.grad_norm));
    clip_by_global_norm<Backend, Element>(owned, stats.grad_norm, opt_.clip_norm);
    stats.lr = learning_rate(opt_, steps_done_);
    adam_.update(model_.params(), owned, model_.tensors(), stats.lr);
    if (zero_) {  // every rank of the shard group gets every shard's updated weights
      auto params = model_.params();
      std::fill(chunk_buf_.begin(), chunk_buf_.end(), Element(0));
      std::copy_n(params.begin() + owned_begin_, owned_size_, chunk_buf_.begin());
      // Into the gradient staging, free again: its padding tail receives the zeros past the
      // last shard's owned elements, so it stays zero for the next reduce-scatter.
      shards_.shard.all_gather(chunk_buf_, grad_pad_);
      std::copy_n(grad_pad_.begin(), params.size(), params.begin());
    }
    ++steps_done_;
    return stats;
  }

  const model::Dims& dims() const { return model_.dims(); }
  /// Parameters held by this rank (its TP shard of the model).
  std::int64_t parameter_count() const { return model_.parameter_count(); }
  /// Bytes held by the step's buffers: weights (the fp32 master), gradients, AdamW moments (one
  /// DP shard of them under ZeRO-1), activations, logits, workspace and the distributed
  /// optimizer's staging buffers. All are allocated up front, so peak == held.
  std::size_t peak_bytes() const {
    return model_.bytes() + adam_.bytes() +
           (grad_pad_.size() + chunk_buf_.size() + grad_shard_sum_.size()) * sizeof(Element);
  }
  int steps_done() const { return steps_done_; }
  /// Idle fraction of the 1F1B schedule this step runs (0 without pipelining).
  double pipeline_bubble_fraction() const {
    return train::pipeline_bubble_fraction(pp_, shape_.grad_accum);
  }

  const StepShape& shape() const { return shape_; }
  /// The world communicator (all ranks of the job).
  C& comm() { return groups_.world; }
  const parallel::Groups<C>& groups() const { return groups_; }
  /// The numerics, for tests and tools that inspect weights and gradients.
  Transformer<Backend, Element>& model() { return model_; }
  const Transformer<Backend, Element>& model() const { return model_; }

 private:
  static Shard shard_of(const StepShape& shape, const parallel::Groups<C>& g, int pp) {
    const auto stage = parallel::stage_range(shape.layers, pp, shape.stage_layers, g.at.pp);
    Shard s;
    s.tp_rank = g.at.tp;
    s.tp_size = g.shape.tp;
    s.stages = pp;
    s.layer_begin = stage.begin;
    s.layer_count = stage.count;
    s.first_stage = g.first_stage();
    s.last_stage = g.last_stage();
    s.stage = g.at.pp;
    s.slots = pipeline_slots(pp, g.at.pp, shape.grad_accum);
    s.sequence_parallel = shape.sequence_parallel;
    s.cp_rank = g.at.cp;
    s.cp_size = g.shape.cp;
    return s;
  }
  static parallel::Groups<C> checked_groups(parallel::Groups<C> g, int tp, int pp, int cp) {
    if (g.shape.tp != tp || g.shape.pp != pp || g.shape.cp != cp || g.tp.size() != tp ||
        g.pp.size() != pp || g.cp.size() != cp || g.dp.size() != g.shape.dp ||
        g.dp_cp.size() != g.dp_cp_size())
      throw core::InputError("parallel groups of TP=" + std::to_string(g.tp.size()) +
                             " x PP=" + std::to_string(g.pp.size()) + " x CP=" +
                             std::to_string(g.cp.size()) + " do not match the layout TP=" +
                             std::to_string(tp) + " x PP=" + std::to_string(pp) + " x CP=" +
                             std::to_string(cp));
    return g;
  }
  static ContextParallelOps<Element> cp_ops(const std::shared_ptr<C>& cp) {
    if (cp->size() <= 1) return {};
    const int next = (cp->rank() + 1) % cp->size();
    const int previous = (cp->rank() + cp->size() - 1) % cp->size();
    return {[cp, next, previous](std::span<const Element> to_next,
                                 std::span<Element> from_previous) {
              cp->send_recv(to_next, next, from_previous, previous);
            },
            [cp](std::span<Element> x) { cp->all_reduce_max(x); }};
  }
  static TensorParallelOps<Element> tp_ops(const std::shared_ptr<C>& tp) {
    if (tp->size() <= 1) return {};
    return {[tp](std::span<Element> x) { tp->all_reduce_sum(x); },
            [tp](std::span<Element> x) { tp->all_reduce_max(x); },
            [tp](std::span<const Element> in, std::span<Element> out) {
              tp->reduce_scatter_sum(in, out);
            },
            [tp](std::span<const Element> in, std::span<Element> out) { tp->all_gather(in, out); }};
  }
  /// Hybrid sharding's groups inside the weights' replicas (one instance: the replicas and
  /// groups of one), after the instance count is checked against them.
  static parallel::ShardGroups<C> checked_shard_groups(const C& replicas,
                                                       const OptimizerConfig& opt) {
    check_optimizer_instances(opt, replicas.size());
    return parallel::split_shard_groups(replicas, opt.optimizer_instances);
  }
  /// The model's gradients reduce-scattered over the shard group: this rank's shard into
  /// chunk_buf_.
  void reduce_scatter_grads() {
    const std::span<const Element> grads = model_.grads();
    std::copy(grads.begin(), grads.end(), grad_pad_.begin());
    shards_.shard.reduce_scatter_sum(grad_pad_, chunk_buf_);
  }
  /// Sum of squares of the owned gradient elements (flat range [owned_begin_, +owned.size())),
  /// skipping TP-replicated tensors on TP ranks other than 0.
  double owned_sum_squares(std::span<const Element> owned) const {
    const std::int64_t begin = owned_begin_, end = owned_begin_ + std::int64_t(owned.size());
    double total = 0;
    for (const auto& t : model_.tensors()) {
      if (t.replicated() && groups_.at.tp != 0) continue;
      const std::int64_t lo = std::max(begin, t.offset), hi = std::min(end, t.offset + t.size());
      if (lo < hi) total += Backend::sum_squares(owned.data() + (lo - begin), hi - lo);
    }
    return total;
  }

  int tp_, pp_;
  StepShape shape_;
  OptimizerConfig opt_;
  parallel::Groups<C> groups_;
  std::shared_ptr<C> tp_comm_;  // shared with the model's TP collectives
  std::shared_ptr<C> cp_comm_;  // shared with the model's CP collectives
  Transformer<Backend, Element> model_;
  parallel::ShardGroups<C> shards_;  // what ZeRO shards over, and the instances' replicas
  bool zero_;
  bool grad_shard_;  // ZeRO-2: each micro-batch reduced into grad_shard_sum_
  std::int64_t chunk_;        // elements per shard (ZeRO-1), padded so all are equal
  std::int64_t owned_begin_;  // first flat element this rank updates
  std::int64_t owned_size_;   // elements this rank updates
  AdamW<Backend, Element> adam_;
  AlignedVector<Element> grad_pad_, chunk_buf_;  // ZeRO-1 staging: padded flat buffer, one shard
  AlignedVector<Element> grad_shard_sum_;  // ZeRO-2: this rank's gradient shard, summed
  int steps_done_ = 0;
};


}  // namespace cpu

/// The whole benchmark: model M under layout L on backend Backend, over the ranks of `world`.
/// Model and layout are compile-time (a bad layout does not compile: LayoutFits' static_asserts);
/// the numerics run at run-time dims in Transformer<Backend, float>, compiled once in src/.
/// Weights, gradients and AdamW moments are fp32: on the CPU the weights are the master copy.
/// `precision` bf16 (the default) runs fp32 throughout on the CPU; FP8 emulates its recipe in
/// the decoder layers' projections (Transformer, docs/fp8.md), the reference of the GPU's FP8.
///
/// Parallelism: the world is split into TP x PP x DP groups in Megatron's order
/// (parallel/groups.hpp). TP follows Megatron (Transformer's Shard), with its sequence
/// parallelism where StepShape::sequence_parallel asks for it; PP gives each stage
/// layers / PP consecutive layers, or StepShape::stage_layers' counts (embedding on the first,
/// norm + head + loss on the last) and
/// runs 1F1B over the micro-batches (train/cpu/pipeline.hpp); DP all-reduces gradients,
/// or with OptimizerConfig::sharding optim (ZeRO-1) reduce-scatters them, updates one shard of
/// the fp32 master weights and AdamW state per DP rank and all-gathers the weights; optim_grads
/// (ZeRO-2) reduce-scatters each micro-batch's gradients and sums this rank's shard of them;
/// optim_grads_params (FSDP) runs as ZeRO-2: its weights, gathered whole before each use, are
/// the same numbers (the reference keeps them whole). Hybrid sharding
/// (OptimizerConfig::optimizer_instances) does each of these over one instance's ranks and sums
/// each shard's gradients over the instances once a step.
/// Tokens: every rank of one DP replica (all its TP ranks and PP stages) gets the same DP share;
/// the first stage reads the inputs, the last the targets.
template <class Backend, model::ModelSpec M, parallel::LayoutSpec L,
          parallel::Communicator C = parallel::comm::Single>
class TrainingStep : public cpu::Step<Backend, C> {
  static_assert(parallel::LayoutFits<M, L>::value);
  static_assert(backend::Backend<Backend>, "tprimat: Backend must model backend::Backend");

 public:
  /// What the step runs on, whatever M and L: what a caller that serves every model and layout
  /// takes by reference, so that its code compiles once.
  using Base = cpu::Step<Backend, C>;

  /// `world` holds every rank of the job (one process: comm::Single); its size must be a
  /// multiple of TP x PP, checked before anything is allocated. shape.layers 0 = full depth.
  /// Collective: every rank of `world` constructs its step together.
  TrainingStep(StepShape shape, OptimizerConfig opt, std::uint64_t seed = 42, C world = {},
               PrecisionConfig precision = {})
      : TrainingStep(shape, opt, seed,
                     parallel::make_groups(std::move(world), L::tp, L::pp, shape.context_parallel),
                     precision) {}

  /// The same over groups already split from the world (their shape must match L).
  TrainingStep(StepShape shape, OptimizerConfig opt, std::uint64_t seed, parallel::Groups<C> groups,
               PrecisionConfig precision = {})
      : Base(model::dims<M>().with_layers(check_step_shape<M, L>(shape).layers), L::tp, L::pp,
             check_step_shape<M, L>(shape), opt, seed, std::move(groups), precision) {}
};

}  // namespace tprimat::train
