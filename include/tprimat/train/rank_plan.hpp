// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// RankPlan: what one rank of a TP x CP x PP x DP layout computes, decided once at construction, for
// the CPU engine and the device engine alike.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "tprimat/core/error.hpp"
#include "tprimat/model/projection.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/groups.hpp"
#include "tprimat/parallel/pipeline_split.hpp"
#include "tprimat/parallel/validate.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/parameters.hpp"
#include "tprimat/train/pipeline_bubble.hpp"

namespace tprimat::train {

/// A rank's place in its TP, CP, PP and DP groups, its share of the model and its buffers' sizes.
/// Every concern of an engine reads it; none changes it.
struct RankPlan {
  model::Dims full;  ///< the whole model (layers: those run)
  model::Dims d;     ///< this TP rank's share: heads, KV heads, FFN and vocabulary / TP
  StepShape shape;
  std::int64_t n = 0;  ///< tokens of one micro-batch on this rank, mbs x local_seq
  /// Context parallelism: CP ranks share each sequence (parallel::ContextSplit), this one
  /// holding local_seq = seq / CP of its tokens.
  int cp = 1, cp_rank = 0;
  int local_seq = 0;
  /// Megatron's sequence parallelism (TP > 1): the residual stream, its gradient and the norms
  /// hold `rows` = n / TP token rows, this TP rank's [tp_rank rows, +rows) of the n.
  bool sequence_parallel = false;
  std::int64_t rows = 0;  ///< token rows of the residual stream on this rank: n, or n / TP
  int tp = 1, tp_rank = 0;
  int stages = 1, stage = 0;
  int dp = 1, dp_rank = 0;
  bool first_stage = true, last_stage = true;
  int local_layers = 0;          ///< this stage's layers
  int layer_begin = 0;           ///< the model's index of this stage's first layer
  int slots = 1;                 ///< micro-batches in flight under 1F1B, each with its activations
  std::int64_t vocab_begin = 0;  ///< first token id of this TP rank's vocabulary slice
  bool zero = false;             ///< ZeRO-1 and up: the optimizer state sharded over `shards` ranks
  /// The ranks what the strategy shards is split over, and this rank's place among them: the
  /// replicas (dp, dp_rank), or under hybrid sharding one of `instances` groups of dp / instances
  /// consecutive replicas, each holding every shard, this rank's the `instance`th. Without ZeRO
  /// (groups of one rank shard nothing) the replicas, one instance: the gradients all-reduced.
  int shards = 1, shard_rank = 0;
  int instances = 1, instance = 0;
  /// ZeRO-2 and FSDP: each micro-batch's gradients reduce-scattered, only this rank's fp32 shard
  /// kept
  bool sharded_grads = false;
  /// FSDP: the bf16 weights sharded too, each segment's gathered before its use
  bool sharded_weights = false;
  /// An untied embedding's gradient is cleared row by row (the rows the step's tokens touched)
  /// on one GPU; under DP other ranks' rows arrive by the reduction, so the whole tensor is.
  bool sparse_embedding_zeroing = false;
  ParameterTable table;  ///< this rank's shard of the parameters
  std::int64_t params = 0;

  /// The first of this rank's residual rows in a full [n, h] buffer's element `x` (x itself
  /// without sequence parallelism): where a norm writes its slice before the all-gather, and
  /// where a reduce-scatter leaves this rank's sum.
  template <class T>
  T* own_rows(T* x) const {
    return sequence_parallel ? x + std::int64_t{tp_rank} * rows * d.hidden : x;
  }

  /// The gradient segment of local layer l (segments: [embedding], layers..., [final norm, head]).
  std::size_t layer_segment(int l) const { return (first_stage ? 1 : 0) + std::size_t(l); }
};

/// FSDP casts each FP8 weight after its gather, just before the GEMM that reads it (recast
/// copies): copies of every weight kept for the step would hold more than the bf16 weights it
/// shards.
inline Fp8Copies fp8_copies_under(ShardingStrategy sharding, Fp8Copies wanted) {
  OptimizerConfig opt;
  opt.sharding = sharding;
  return opt.shards_weights() ? Fp8Copies::recast : wanted;
}

/// Refuses what the engines do not run under a sharding strategy: FSDP with kept FP8 copies (no
/// rank holds a whole weight to cast once a step; fp8_copies_under says what it runs).
inline void check_sharding_built(const OptimizerConfig& opt, const PrecisionConfig& precision) {
  if (precision.is_fp8() &&
      precision.fp8.copies != fp8_copies_under(opt.sharding, precision.fp8.copies))
    throw core::InputError(
        "FP8 under sharding strategy optim_grads_params (FSDP: the weights sharded too) with kept "
        "FP8 weight copies: no rank holds a whole weight to cast once a step",
        "set the FP8 copies to recast (each weight cast after its gather; "
        "train::fp8_copies_under)");
}

/// What is wrong with a hybrid sharding over the `replicas` ranks holding the same weights (DP x
/// CP), or nullopt: instances must divide them, and only a strategy that shards has groups to
/// split. The problem alone, for a caller to name its own fix (check_optimizer_instances).
inline std::optional<std::string> optimizer_instances_error(const OptimizerConfig& opt,
                                                            int replicas) {
  const int n = opt.optimizer_instances;
  const std::string what = std::to_string(n) + " distributed optimizer instances (hybrid sharding)";
  if (n < 1) return what + " is not a count of groups";
  if (n == 1) return std::nullopt;
  if (!opt.shards_optimizer())
    return what + " split the sharding over groups, and sharding strategy no_shard shards nothing";
  if (replicas % n != 0)
    return what + " do not divide DP x CP = " + std::to_string(replicas) +
           ", the ranks holding the same weights";
  return std::nullopt;
}

/// Throws core::InputError where optimizer_instances_error finds a problem.
inline void check_optimizer_instances(const OptimizerConfig& opt, int replicas) {
  if (auto err = optimizer_instances_error(opt, replicas))
    throw core::InputError(*err, "ask for 1 instance, or a divisor of " + std::to_string(replicas) +
                                     " with a strategy that shards");
}

/// Size and rank of one group, or (1, 0) without one.
struct GroupPlace {
  int size = 1, rank = 0;
};

/// The plan of a rank whose part of the model is `shard` (its TP block and pipeline stage),
/// running micro-batches of `shape`: what the CPU engine builds from its Shard, and the device
/// engine through plan_rank. Alone in DP (plan_rank sets the DP fields).
inline RankPlan plan_shard(const model::Dims& dims, const StepShape& shape, const Shard& shard) {
  RankPlan p;
  p.full = dims;
  p.shape = shape;
  p.cp = shard.cp_size;
  p.cp_rank = shard.cp_rank;
  p.local_seq = shape.seq / shard.cp_size;
  p.n = std::int64_t{shape.mbs} * p.local_seq;
  p.tp = shard.tp_size;
  p.tp_rank = shard.tp_rank;
  p.sequence_parallel = shard.sequence_parallel && p.tp > 1;
  p.rows = p.sequence_parallel ? p.n / p.tp : p.n;
  p.stages = shard.stages;
  p.stage = shard.stage;
  p.first_stage = shard.first_stage;
  p.last_stage = shard.last_stage;
  p.local_layers = shard.layer_count < 0 ? dims.layers : shard.layer_count;
  p.layer_begin = shard.layer_begin;
  p.slots = shard.slots;
  p.d = model::tp_share(dims, p.tp);
  p.vocab_begin = std::int64_t{p.d.vocab} * p.tp_rank;
  p.table = make_parameter_table(dims, shard);
  p.params = p.table.total();
  return p;
}

/// The part of the model the rank at places tp, pp, cp of its groups holds, running micro-batches
/// of `shape` (unchecked: plan_rank checks the layout first).
inline Shard shard_at(const model::Dims& dims, const StepShape& shape, GroupPlace tp,
                      GroupPlace pp, GroupPlace cp) {
  const auto stage = parallel::stage_range(dims.layers, pp.size, shape.stage_layers, pp.rank);
  Shard shard;
  shard.tp_rank = tp.rank;
  shard.tp_size = tp.size;
  shard.stages = pp.size;
  shard.stage = pp.rank;
  shard.layer_begin = stage.begin;
  shard.layer_count = stage.count;
  shard.first_stage = pp.rank == 0;
  shard.last_stage = pp.rank == pp.size - 1;
  shard.slots = pipeline_slots(pp.size, pp.rank, shape.grad_accum);
  shard.sequence_parallel = shape.sequence_parallel && tp.size > 1;
  shard.cp_rank = cp.rank;
  shard.cp_size = cp.size;
  return shard;
}

/// plan_rank without its layout checks, for a memory plan that may be asked of any layout.
inline RankPlan plan_rank_unchecked(const model::Dims& dims, const StepShape& shape,
                                    const OptimizerConfig& opt, GroupPlace tp, GroupPlace pp,
                                    GroupPlace dp, GroupPlace cp) {
  RankPlan p = plan_shard(dims, shape, shard_at(dims, shape, tp, pp, cp));
  p.dp = dp.size;
  p.dp_rank = dp.rank;
  // Unchecked: instances that cannot split the replicas plan one group (plan_rank refuses them).
  const int instances = std::max(opt.optimizer_instances, 1);
  const parallel::ShardPlace shard =
      parallel::shard_place(dp.rank, dp.size, dp.size % instances == 0 ? instances : 1);
  p.zero = shard.size > 1 && opt.shards_optimizer();
  p.shards = p.zero ? shard.size : dp.size;
  p.shard_rank = p.zero ? shard.rank : dp.rank;
  p.instances = p.zero ? dp.size / shard.size : 1;
  p.instance = p.zero ? shard.instance : 0;
  p.sharded_grads = p.zero && opt.shards_gradients();
  p.sharded_weights = p.zero && opt.shards_weights();
  p.sparse_embedding_zeroing = !dims.tied_embeddings && p.dp == 1 && p.first_stage;
  return p;
}

/// The plan of a rank at places tp, pp, dp, cp of its groups; `dp` holds the replicas of the
/// weights (the device engine's DP x CP group: gradients, ZeRO-1 and the loss go over it). Throws
/// core::InputError when the layout breaks a rule of parallel/validate.hpp for these dims (and
/// shape.stage_layers' split).
inline RankPlan plan_rank(const model::Dims& dims, const StepShape& shape,
                          const OptimizerConfig& opt, GroupPlace tp, GroupPlace pp, GroupPlace dp,
                          GroupPlace cp = {}) {
  parallel::check_layout(dims, tp.size, pp.size, shape.stage_layers);
  parallel::check_context_parallel(shape.seq, cp.size);
  check_optimizer_instances(opt, dp.size);
  const bool sequence_parallel = shape.sequence_parallel && tp.size > 1;
  if (sequence_parallel)
    parallel::check_sequence_parallel_rows(shape.mbs, shape.seq, tp.size, cp.size);
  return plan_rank_unchecked(dims, shape, opt, tp, pp, dp, cp);
}

}  // namespace tprimat::train
