// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Predicted memory per GPU for a model x layout x batch x optimizer sharding, before running.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "tprimat/model/counts.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/pipeline_split.hpp"
#include "tprimat/train/attention_workspace.hpp"
#include "tprimat/train/buffer_table.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/pipeline_bubble.hpp"
#include "tprimat/train/precision.hpp"
#include "tprimat/train/rank_plan.hpp"

namespace tprimat::bench {

/// What the plan depends on: the model as run (`dims.layers`: the layers that run), the layout's
/// degrees, the step a rank runs (the StepShape the engine is given: micro-batch, sequence,
/// accumulation, pipeline split, sequence and context parallelism, recomputation; its `layers`
/// is not read, `dims.layers` are), and what the engine holds them in.
struct MemoryPlanInput {
  model::Dims dims;
  int tp = 1;
  int pp = 1;
  int dp = 1;
  /// Context parallelism (shape.context_parallel): each sequence split over CP ranks, every
  /// token-sized buffer holding seq / CP tokens; gradients reduced and ZeRO-1 sharded over
  /// DP x CP. Sequence parallelism (shape.sequence_parallel, TP > 1): the residual stream, its
  /// gradient and the norms' statistics split over TP along the tokens. The pipeline's stages
  /// hold shape.stage_layers (empty: layers / PP each) and keep up to shape.grad_accum
  /// micro-batches in flight under 1F1B.
  train::StepShape shape = {};
  /// What DP x CP shards (train::ShardingStrategy): optim (ZeRO-1) the fp32 master's
  /// remainders and Adam moments, optim_grads (ZeRO-2) the fp32 gradients too,
  /// optim_grads_params (FSDP) the bf16 weights as well (on the GPU; the CPU engine keeps them).
  train::ShardingStrategy sharding = train::ShardingStrategy::no_shard;
  /// Hybrid sharding (train::OptimizerConfig::optimizer_instances): the strategy shards over
  /// DP x CP / instances ranks, each shard held by every instance.
  int optimizer_instances = 1;
  int compute_bytes = 2;            ///< bytes of a weight/activation: 2 (bf16 on GPU), 4 (fp32 CPU)
  /// Rows of logits the head holds at once: train::loss_chunk_rows on the GPU (its bf16 logits,
  /// overwritten by their gradient), 0 for every row (the CPU engine).
  std::int64_t logits_rows = train::loss_chunk_rows;
  double workspace_bytes = 64.0 * (1 << 20);  ///< GEMM workspace and allocator slack
  /// The GPU engine's attention backward, whose workspace the plan counts (cuDNN's is larger:
  /// its fp32 dQ accumulator and its graph's own tensor over the keys).
  train::AttentionKernel attention_kernel = train::AttentionKernel::cudnn;
  /// FP8 (GPU only): the decoder layers' FP8 buffers (docs/fp8.md) on top of the bf16 ones.
  train::PrecisionConfig precision;
};

/// Bytes per GPU, for one pipeline stage or the busiest (the first holds the embedding and the
/// most in-flight micro-batches, the last the LM head and the logits).
struct MemoryPlan {
  double weights = 0;       ///< compute copy of this rank's parameters
  double gradients = 0;     ///< fp32 gradient accumulators
  /// The rest of the fp32 master: on the GPU the bf16 weights are its high half and this is the
  /// 16-bit remainder (2 bytes a weight); none when compute is already fp32 (the CPU).
  double master = 0;
  double adam_moments = 0;  ///< fp32 first and second moments
  /// Saved for backward, all in-flight micro-batches (an FP8 layer keeps its norms' outputs in
  /// the fp8 term instead, as FP8 transposes).
  double activations = 0;
  double logits = 0;        ///< vocab-parallel logits and their gradient
  /// FP8 runs (the buffer table's fp8_buffers): the weights' FP8 copies (kept: each FP8 layer's
  /// cast and transposed, 2 bytes a projection weight; recast: the largest one weight's), the
  /// transposed inputs kept for the weight gradients (per in-flight micro-batch; recast keeps the
  /// norm outputs' only), the casts' scratch, a norm's bf16 output until its cast, the scales.
  double fp8 = 0;
  /// The GPU engine's scratch for one micro-batch's backward (train/device/activations.hpp's
  /// Scratch): the MLP's four [tokens, ffn] bf16 tensors, the attention's input gradients, the
  /// residual's gradient and its bf16 copy, a norm output's fp32 gradient; and the context- and
  /// tensor-parallel exchanges' buffers (the gathered keys and values, their fp32 gradients, the
  /// loss's statistics, sequence parallelism's partial products).
  double scratch = 0;
  /// The GEMM workspace and allocator slack (MemoryPlanInput::workspace_bytes); on the GPU the
  /// attention backward's workspace and the step's small buffers (token ids, RoPE's tables, the
  /// optimizer's and the norm's arrays), on the CPU its attention tiles and context parallelism's
  /// ring.
  double workspace = 0;
  double total = 0;
  std::int64_t params = 0;  ///< parameters held by this rank
};

namespace detail {

/// The CPU engine's context-parallel ring (fp32) on a rank holding `tokens` tokens
/// (mbs x seq / CP): the K/V block held and the one arriving, their gradients (4 x [K | V]), one
/// block's partial output and log-sum-exp. (The device engine's are its buffer table's.)
constexpr double cpu_context_parallel_bytes(const MemoryPlanInput& in, double tokens) {
  if (in.shape.context_parallel <= 1) return 0.0;
  const model::Dims& d = in.dims;
  const double kv = double(d.kv_dim()) / in.tp, q = double(d.q_dim()) / in.tp,
               heads = double(d.heads) / in.tp;
  return tokens * (4.0 * 2 * kv + q) * in.compute_bytes + tokens * 4.0 * heads;
}

/// Tokens of one micro-batch on a rank: mbs x seq / CP.
constexpr double rank_tokens(const MemoryPlanInput& in) {
  return double(in.shape.mbs) * in.shape.seq / in.shape.context_parallel;
}

/// The TP ranks the residual stream's token rows split over: TP under sequence parallelism,
/// else 1.
constexpr double residual_split(const MemoryPlanInput& in) {
  return in.shape.sequence_parallel && in.tp > 1 ? in.tp : 1;
}

/// Activation bytes one layer of the CPU engine saves per token (no recomputation), this rank's
/// TP share (the GPU engine's are its buffer table's). Sequence parallelism splits the norms'
/// inputs (the residual stream) and statistics over TP; their outputs, gathered for the
/// column-parallel GEMMs, stay whole.
constexpr double layer_activation_bytes_per_token(const MemoryPlanInput& in) {
  const auto& d = in.dims;
  const double h = d.hidden, q = double(d.q_dim()) / in.tp, kv = double(d.kv_dim()) / in.tp,
               f = double(d.ffn) / in.tp, b = in.compute_bytes, split = residual_split(in);
  // inputs and outputs of both norms + residual, q k v, attention output, gate/up/SwiGLU out.
  const double saved = b * (2 * h / split + 2 * h + 2 * q + 2 * kv + 3 * f);
  // fp32 logsumexp and norm rstd
  const double stats = 4.0 * (double(d.heads) / in.tp + 2 / split);
  return saved + stats;
}

/// The CPU engine's saved activations on a stage of `layers_here` layers, with
/// `in_flight` micro-batches of `tokens` tokens: each kept layer's, a recomputed group's input per
/// micro-batch and one group's activations and output once, and the stage's output.
inline double cpu_activation_bytes(const MemoryPlanInput& in, int layers_here, int in_flight,
                                   double tokens) {
  const auto& d = in.dims;
  const train::Recompute& r = in.shape.recompute;
  int kept = 0, group_inputs = 0;
  for (int l = 0; l < layers_here; ++l) {
    if (!r.recomputed(l, layers_here))
      kept += 1;
    else if (r.group_begin(l) == l)
      group_inputs += 1;
  }
  const double residual = d.hidden * double(in.compute_bytes) / residual_split(in);
  const int group = r.full() ? std::min(r.group_layers(), layers_here) : 0;
  return tokens * in_flight *
             (kept * layer_activation_bytes_per_token(in) + group_inputs * residual + residual) +
         tokens * (group > 0 ? group * layer_activation_bytes_per_token(in) + residual : 0.0);
}

/// What rank 0 of the TP, DP and CP groups on pipeline stage `stage` runs: the plan the device
/// engine makes of that rank (train::plan_rank_unchecked), from which its buffer table follows.
inline train::RankPlan stage_rank_plan(const MemoryPlanInput& in, int stage) {
  train::StepShape shape = in.shape;
  shape.grad_accum = std::max(shape.grad_accum, 1);
  shape.layers = in.dims.layers;
  const int cp = shape.context_parallel;
  train::OptimizerConfig opt;
  opt.sharding = in.sharding;
  opt.optimizer_instances = in.optimizer_instances;
  // The weights' replicas are the DP x CP group, over which ZeRO shards (hybrid sharding: over
  // each of its instances).
  return train::plan_rank_unchecked(in.dims, shape, opt, {in.tp, 0}, {in.pp, stage},
                                    {in.dp * cp, 0}, {cp, 0});
}

inline MemoryPlan plan_stage(const MemoryPlanInput& in, int stage) {
  const auto& d = in.dims;
  const bool first = stage == 0, last = stage == in.pp - 1;
  const auto range = parallel::stage_range(d.layers, in.pp, in.shape.stage_layers, stage);
  const int layers_here = range.count;
  std::int64_t p = layers_here * model::layer_params(d) / in.tp;
  if (first) p += model::embedding_params(d) / in.tp;
  if (last) p += model::head_params(d) / in.tp + d.hidden;
  MemoryPlan m;
  m.params = p;
  const double tokens = rank_tokens(in);
  const double vocab_here = double(d.vocab) / in.tp;
  // Every row of logits and its fp32 gradient: the CPU engine, and the other frameworks' runs an
  // imported log plans.
  const double every_row_logits = last ? tokens * vocab_here * (in.compute_bytes + 4.0) : 0.0;
  if (in.compute_bytes == 2) {
    // The GPU engine: every buffer it holds is the buffer table's, byte for byte; the attention
    // backward's workspace, which the kernel states at run time, as train/attention_workspace.hpp
    // counts it.
    const train::RankPlan rank = stage_rank_plan(in, stage);
    const train::BufferTable table =
        train::engine_buffers(rank, in.precision, train::plan_gradient_sync(rank),
                              train::attention_workspace_bytes(rank, in.attention_kernel));
    m.weights = double(train::table_bytes(table, train::BufferTerm::weights));
    m.gradients = double(train::table_bytes(table, train::BufferTerm::gradients));
    m.master = double(train::table_bytes(table, train::BufferTerm::master));
    m.adam_moments = double(train::table_bytes(table, train::BufferTerm::adam_moments));
    m.activations = double(train::table_bytes(table, train::BufferTerm::activations));
    m.logits = in.logits_rows > 0 ? double(train::table_bytes(table, train::BufferTerm::logits))
                                  : every_row_logits;
    m.scratch = double(train::table_bytes(table, train::BufferTerm::scratch));
    m.fp8 = double(train::table_bytes(table, train::BufferTerm::fp8));
    m.workspace =
        in.workspace_bytes + double(train::table_bytes(table, train::BufferTerm::workspace));
  } else {
    // The CPU engine: fp32 weights (its own master) and gradients, AdamW's moments sharded with
    // ZeRO-1 over the engines' shard group (DP x CP, or one hybrid sharding instance); under
    // ZeRO-2 it also accumulates its fp32 shard of the gradients (its model keeps a whole
    // gradient buffer: memory is not what the reference is for).
    const train::RankPlan rank = stage_rank_plan(in, stage);
    const double shard = rank.zero ? rank.shards : 1;
    const bool grad_shard = rank.sharded_grads;
    m.weights = double(p) * in.compute_bytes;
    m.gradients = double(p) * 4 * (grad_shard ? 1 + 1 / shard : 1);
    m.master = double(p) * (4 - in.compute_bytes) / shard;
    m.adam_moments = double(p) * 8 / shard;
    // 1F1B: stage s keeps up to (pp - s) micro-batches' activations; the first keeps the most.
    const int in_flight = train::pipeline_slots(in.pp, stage, std::max(in.shape.grad_accum, 1));
    m.activations = cpu_activation_bytes(in, layers_here, in_flight, tokens);
    m.logits = every_row_logits;
    m.workspace = in.workspace_bytes + cpu_context_parallel_bytes(in, tokens);
  }
  m.total = m.weights + m.gradients + m.master + m.adam_moments + m.activations + m.logits +
            m.fp8 + m.scratch + m.workspace;
  return m;
}

}  // namespace detail

/// Each pipeline stage's plan, first to last (one for PP 1).
inline std::vector<MemoryPlan> plan_stages(const MemoryPlanInput& in) {
  std::vector<MemoryPlan> out;
  for (int stage = 0; stage < std::max(in.pp, 1); ++stage)
    out.push_back(detail::plan_stage(in, stage));
  return out;
}

/// The busiest of the stages' plans (plan_stages): what every GPU must hold room for. Of equal
/// totals, the earlier.
inline MemoryPlan busiest_stage(const std::vector<MemoryPlan>& stages) {
  MemoryPlan busiest = stages.front();
  for (const MemoryPlan& m : stages)
    if (m.total > busiest.total) busiest = m;
  return busiest;
}

/// The busiest stage's plan of `in`.
inline MemoryPlan plan_memory(const MemoryPlanInput& in) { return busiest_stage(plan_stages(in)); }

/// An FP8 run's copies (docs/fp8.md): kept when the plan with them, times `margin`, fits
/// `capacity_bytes` (or the capacity is unknown: 0), else recast, which holds one weight's copy
/// instead of every layer's; under FSDP always recast (train::fp8_copies_under). Not an FP8 run:
/// kept (unused).
inline train::Fp8Copies fp8_copies_that_fit(MemoryPlanInput in, double capacity_bytes,
                                               double margin) {
  in.precision.fp8.copies = train::fp8_copies_under(in.sharding, train::Fp8Copies::kept);
  if (!in.precision.is_fp8() || capacity_bytes <= 0 ||
      plan_memory(in).total * margin <= capacity_bytes)
    return in.precision.fp8.copies;
  return train::Fp8Copies::recast;
}

/// A plan above this fraction of the device fits with little room for the allocator's
/// fragmentation: `tprimat plan` says so.
inline constexpr double nearly_full = 0.95;

/// The safety margin `--layers auto` keeps: the plan times this must fit the device.
inline constexpr double fit_margin = 1.10;

/// Largest layer count (a multiple of pp, at most the model's depth in `in.dims.layers`) whose
/// plan, with a 10% margin, fits `capacity_bytes`; 0 when not even `pp` layers fit.
inline int max_layers_that_fit(MemoryPlanInput in, double capacity_bytes) {
  const int full = in.dims.layers;
  in.shape.stage_layers.clear();  // the even split of each count
  for (int n = full - full % in.pp; n >= in.pp; n -= in.pp) {
    in.dims = in.dims.with_layers(n);
    if (plan_memory(in).total * fit_margin <= capacity_bytes) return n;
  }
  return 0;
}

/// The same under an uneven split: `split_of(n)` gives the stages' layer counts for n layers, or
/// nullopt where n cannot be split so (std::optional<std::vector<int>>).
template <class SplitOf>
int max_layers_that_fit(MemoryPlanInput in, double capacity_bytes, SplitOf&& split_of) {
  for (int n = in.dims.layers; n >= std::max(in.pp, 1); --n) {
    const std::optional<std::vector<int>> split = split_of(n);
    if (!split) continue;
    in.dims = in.dims.with_layers(n);
    in.shape.stage_layers = *split;
    if (plan_memory(in).total * fit_margin <= capacity_bytes) return n;
  }
  return 0;
}

}  // namespace tprimat::bench
