// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// What a TrainingStep is built from (shape, optimizer) and what one step reports.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tprimat/train/precision.hpp"

namespace tprimat::train {

/// What data parallelism shards over the DP ranks, by Megatron-FSDP's names
/// (`--data-parallel-sharding-strategy`):
/// - no_shard: gradients all-reduced; every rank holds and updates every weight.
/// - optim (ZeRO-1, Megatron's distributed optimizer): gradients reduce-scattered once a step,
///   after the last micro-batch; each rank updates its shard (fp32 master remainders, AdamW
///   moments) and the updated bf16 weights are all-gathered. Every rank keeps a whole fp32
///   gradient buffer to accumulate the micro-batches in.
/// - optim_grads (ZeRO-2): as optim, but each micro-batch's gradients are reduce-scattered as
///   their layer's backward ends and added into this rank's fp32 shard (DeepSpeed's choice):
///   a reduce-scatter every micro-batch instead of one a step, and no whole fp32 gradient
///   buffer, only a few layers' worth in flight.
/// - optim_grads_params (ZeRO-3 / FSDP): as optim_grads, and the bf16 weights sharded too, each
///   segment's gathered just before the forward or backward reads it. FP8 under it casts each
///   weight after its gather (recast copies: rank_plan.hpp's fp8_copies_under).
enum class ShardingStrategy { no_shard, optim, optim_grads, optim_grads_params };

/// Megatron-FSDP's names of the strategies, in ShardingStrategy's order (results, the CLI).
inline constexpr std::array<std::string_view, 4> sharding_strategy_names = {
    "no_shard", "optim", "optim_grads", "optim_grads_params"};

constexpr std::string_view name_of(ShardingStrategy s) {
  return sharding_strategy_names[static_cast<std::size_t>(s)];
}

/// The strategy Megatron-FSDP's name `name` names; nullopt for any other text.
constexpr std::optional<ShardingStrategy> sharding_strategy_named(std::string_view name) {
  for (std::size_t i = 0; i < sharding_strategy_names.size(); ++i)
    if (name == sharding_strategy_names[i]) return static_cast<ShardingStrategy>(i);
  return std::nullopt;
}

/// The ZeRO stage a strategy is (0 for no_shard).
constexpr int zero_stage(ShardingStrategy s) { return static_cast<int>(s); }

/// "ZeRO-2": the label of a strategy that shards.
inline std::string zero_label(ShardingStrategy s) { return "ZeRO-" + std::to_string(zero_stage(s)); }

/// AdamW, clipping, schedule and init: the seeds' "fair comparison" settings are the defaults.
struct OptimizerConfig {
  double lr_peak = 3e-4;
  double lr_min = 0.0;
  int warmup_steps = 50;   ///< linear warm-up from 0 to lr_peak over these steps
  int decay_steps = 500;   ///< cosine from lr_peak to lr_min ends here (the seeds' train_iters)
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.1;  ///< not applied to norm gains and biases
  double clip_norm = 1.0;     ///< global gradient norm clip; <= 0 disables
  double init_std = 0.02;
  /// What data parallelism shards over the DP ranks (`--data-parallel-sharding-strategy`, as
  /// Megatron-FSDP names it; `--distributed-optimizer` is `optim`). no_shard: gradients
  /// all-reduced, every rank updates every weight.
  ShardingStrategy sharding = ShardingStrategy::no_shard;
  /// Hybrid sharding (HSDP; Megatron's `--num-distributed-optimizer-instances`, torchtitan's
  /// data_parallel_replicate_degree): the ranks holding the same weights split into this many
  /// groups of consecutive ranks, each sharding what `sharding` shards over its own ranks only,
  /// the groups replicas of one another (a shard's gradients summed over them). 1: one group.
  int optimizer_instances = 1;

  /// The fp32 master's remainders and AdamW state sharded (ZeRO-1 and up).
  constexpr bool shards_optimizer() const { return sharding != ShardingStrategy::no_shard; }
  /// Only this rank's shard of the gradients kept (ZeRO-2 and up).
  constexpr bool shards_gradients() const {
    return sharding == ShardingStrategy::optim_grads || shards_weights();
  }
  /// The bf16 weights sharded too (FSDP).
  constexpr bool shards_weights() const {
    return sharding == ShardingStrategy::optim_grads_params;
  }
};

/// Activation recomputation, as Megatron names it (`--recompute-granularity full|selective`,
/// `--recompute-method uniform|block`, `--recompute-num-layers N`, `--recompute-modules`): what
/// is recomputed is not kept, and the backward reruns the forward's kernels on the same inputs
/// first, so the step's numbers do not change. `full`: whole layers, each group keeping only its
/// first layer's input; `selective`: parts of every layer (its `modules`).
enum class RecomputeGranularity { none, full, selective };
/// `uniform`: every layer of the stage, in groups of N consecutive layers, each group keeping
/// its first layer's input only; `block`: the stage's first N layers, each keeping its input.
enum class RecomputeMethod { uniform, block };
/// What selective recomputation reruns in each layer's backward (a bit set; Megatron's module
/// names). `layernorm`: the two RMSNorms' outputs (cheap; FP8 layers keep them only as FP8
/// transposes, which stay); `mlp`: the MLP's RMSNorm and its gate and up GEMMs (the largest
/// tensors a layer keeps, two GEMMs to recompute).
enum class RecomputeModule : unsigned { layernorm = 1u, mlp = 2u };

struct Recompute {
  RecomputeGranularity granularity = RecomputeGranularity::none;
  RecomputeMethod method = RecomputeMethod::uniform;
  int num_layers = 1;  ///< full: layers a group (uniform) or a stage (block)
  unsigned modules = 0;  ///< selective: RecomputeModule bits

  /// Any recomputation.
  constexpr bool on() const { return granularity != RecomputeGranularity::none; }
  /// Whole layers recomputed.
  constexpr bool full() const { return granularity == RecomputeGranularity::full; }
  /// Selective recomputation reruns module m in every layer's backward.
  constexpr bool reruns(RecomputeModule m) const {
    return granularity == RecomputeGranularity::selective &&
           (modules & static_cast<unsigned>(m)) != 0;
  }
  /// Group size: how many layers' activations a backward holds at once.
  constexpr int group_layers() const {
    if (!full()) return 0;
    return method == RecomputeMethod::uniform ? num_layers : 1;
  }
  /// Whether local layer l of a stage of `stage_layers` layers is recomputed whole.
  constexpr bool recomputed(int l, int stage_layers) const {
    if (!full()) return false;
    return method == RecomputeMethod::uniform ? l < stage_layers : l < num_layers;
  }
  /// The first local layer of l's group (l itself when not recomputed).
  constexpr int group_begin(int l) const {
    return full() && method == RecomputeMethod::uniform ? l - l % num_layers : l;
  }
  /// Whether local layer l ends its group (the backward recomputes the group there).
  constexpr bool group_end(int l, int stage_layers) const {
    return recomputed(l, stage_layers) &&
           (l + 1 == stage_layers || group_begin(l + 1) != group_begin(l) ||
            !recomputed(l + 1, stage_layers));
  }
};

/// The modules tprimat reruns, by Megatron's names (`--recompute-modules`, results).
inline constexpr std::array<std::pair<std::string_view, RecomputeModule>, 2> recompute_modules = {
    {{"layernorm", RecomputeModule::layernorm}, {"mlp", RecomputeModule::mlp}}};

/// The names of `modules` (RecomputeModule bits), in recompute_modules' order.
inline std::vector<std::string> recompute_module_names(unsigned modules) {
  std::vector<std::string> out;
  for (const auto& [name, m] : recompute_modules)
    if ((modules & static_cast<unsigned>(m)) != 0) out.emplace_back(name);
  return out;
}

/// The RecomputeModule bit of module `name` (Megatron's name); 0 where tprimat reruns no such
/// module.
constexpr unsigned recompute_module_named(std::string_view name) {
  for (const auto& [n, m] : recompute_modules)
    if (name == n) return static_cast<unsigned>(m);
  return 0;
}

/// Selective recomputation of `modules` (RecomputeModule bits).
constexpr Recompute selective_recompute(unsigned modules) {
  return Recompute{RecomputeGranularity::selective, RecomputeMethod::uniform, 1, modules};
}

/// Rows of logits the GPU engine's head holds at once: the loss and the head's gradients are
/// computed chunk by chunk in the forward (train/device/head.hpp), so the logits of a long
/// sequence (32k tokens x 128k vocab: 8 GiB in bf16) never exist whole. 4,096 rows keep every
/// head GEMM large; at most 1 GiB of bf16 logits for Llama 3's vocabulary.
inline constexpr std::int64_t loss_chunk_rows = 4096;

/// Every layer recomputed, one at a time (uniform, groups of 1): the most memory full
/// recomputation saves, what the program tries when a model does not fit.
inline constexpr Recompute full_recompute_every_layer{RecomputeGranularity::full,
                                                      RecomputeMethod::uniform, 1};

/// Per-rank shape of one optimizer step.
struct StepShape {
  int mbs = 1;         ///< sequences per micro-batch
  int seq = 2048;      ///< tokens per sequence
  int grad_accum = 1;  ///< micro-batches per optimizer step on this DP rank
  int layers = 0;      ///< transformer layers run; 0 means the model's full depth
  /// Layers of each pipeline stage (parallel/pipeline_split.hpp), summing to `layers`; empty:
  /// layers / PP each.
  std::vector<int> stage_layers = {};
  /// Megatron's sequence parallelism (`--sequence-parallel`): under TP > 1 the residual stream
  /// and the norms hold this TP rank's mbs x seq / TP token rows, gathered before each
  /// column-parallel GEMM and reduce-scattered after each row-parallel one. Without TP it
  /// means nothing: check_step_shape turns it off.
  bool sequence_parallel = false;
  Recompute recompute = {};
  /// Context parallelism (`--context-parallel-size`): each sequence of a micro-batch is split
  /// over this many ranks (parallel/context_parallel.hpp's load-balanced split), each running
  /// the layers on its seq / CP tokens and attention over all keys. 1: off.
  int context_parallel = 1;
};

/// Which Attention policy the device engine uses: `automatic` takes cuDNN's fused SDPA when it
/// supports the shape (it is the faster of the two on H100, see benchmarks/RESULTS.md) and the
/// project's flash kernels otherwise.
enum class AttentionChoice { automatic, flash, cudnn };

/// How a device step is run.
struct DeviceOptions {
  AttentionChoice attention = AttentionChoice::automatic;
  /// Capture the whole step (every micro-batch and the optimizer) once as a CUDA graph and
  /// replay it; off (`--no-graph`) enqueues every kernel each step.
  bool graph = true;
  /// Record events between the ops of eager steps to split the step's GPU time by category
  /// (DeviceTransformer::phase_seconds). Perturbs timing slightly: for breakdowns only.
  bool phase_timing = false;
  /// Gradient work alongside the backward pass: each finished bucket is reduced over DP (and
  /// its squares summed for the norm) on a second stream, and under ZeRO-1 each bucket's
  /// all-gather runs while the next is updated; under TP each input gradient's all-reduce runs
  /// beside the layer's weight-gradient GEMMs. Off (`--no-overlap`): the same work on the main
  /// stream, in line, to measure what the overlap buys.
  bool overlap = true;
  /// bf16, or FP8's hybrid recipe for the decoder layers' linear projections (docs/fp8.md);
  /// `--precision` and `--fp8-recipe` set it.
  PrecisionConfig precision;
};

/// What one optimizer step reports.
struct StepStats {
  double loss = 0;       ///< mean cross-entropy over every target token of the global batch
  double grad_norm = 0;  ///< global gradient norm before clipping
  double lr = 0;         ///< learning rate applied by this step
  /// Seconds the device spent on the step, from events recorded before its first and after its
  /// last operation (uploads and the result download included); 0 on the CPU backend, where
  /// the caller's wall clock is the measure.
  double device_seconds = 0;
};

}  // namespace tprimat::train
