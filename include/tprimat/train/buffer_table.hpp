// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Every buffer the device engine holds, listed once: parameters, optimizer state, activations,
// scratch, FP8 copies and scales, the context- and tensor-parallel exchanges' and the step's own.
// The engine allocates them from this table (each part of train/device/ takes its entries, and
// the engine checks that nothing else was allocated) and the memory plan sums it
// (bench/memory_plan.hpp), so the two cannot disagree. Host code: the plan needs no GPU compiler.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tprimat/kernels/reduction_chunks.hpp"
#include "tprimat/model/projection.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/fp8_tensors.hpp"
#include "tprimat/train/gradient_buckets.hpp"
#include "tprimat/train/precision.hpp"
#include "tprimat/train/rank_plan.hpp"

namespace tprimat::train {

/// The memory plan's term a buffer counts in (bench::MemoryPlan's fields). workspace: the
/// attention backward's, the step's token ids, RoPE's tables, the optimizer's and the gradient
/// norm's small arrays (the GEMM workspace and the allocator's slack are the plan's own).
enum class BufferTerm : std::uint8_t {
  weights, gradients, master, adam_moments, activations, logits, scratch, fp8, workspace
};

/// Every buffer of the device engine, grouped by the part that allocates it (BufferOwner):
/// train::device::DeviceParameters (weights .. weight_staging), Activations (a layer's: x .. up;
/// the stage's: rerun_xn1 .. row_loss), Scratch (hidden .. attention_workspace), Fp8Linears
/// (fp8_weight_rows .. fp8_history: the FP8 copies of a layer's weights, a slot's saved input
/// transposes, the casts' scratch, and each format's scales), ContextParallelAttention (cp_*),
/// TensorParallel (tp_*), StepIO (io_*), RopeTables (rope_*), GradientSync (grad_norm_partials)
/// and DeviceOptimizer (opt_*).
// clang-format off
enum class BufferId : std::uint8_t {
  weights, master_lo, grads, adam_m, adam_v, grad_staging, weight_staging,
  x, x_mid, xn1, xn2, rstd1, rstd2, q, k, v, attn, lse, gate, up,
  rerun_xn1, rerun_xn2, rerun_gate, rerun_up, recomputed_output, x_final, xn_final, rstd_final,
  logits, head_dxn, row_loss,
  hidden, dhidden, dgate, dup, cast_input, dres, dxn, dres_bf, dattn, dq, dk, dv, norm_partials,
  bias_partials, attention_workspace,
  fp8_weight_rows, fp8_weight_cols, fp8_recast_weight, fp8_saved_input, fp8_input_scratch,
  fp8_grad_rows, fp8_grad_cols, fp8_amax, fp8_amax_now, fp8_scale, fp8_scale_inv, fp8_history,
  cp_gathered, cp_keys, cp_values, cp_part_out, cp_part_lse, cp_part_dk, cp_part_dv, cp_key_grads,
  tp_loss_stats, tp_partial,
  io_inputs, io_targets, io_group_ids, io_offsets, io_positions, io_group_count, io_touched_rows,
  io_touched_count, io_results, io_loss_partials,
  rope_cos, rope_sin,
  grad_norm_partials,
  opt_scalars, opt_bucket_tensor_ends, opt_bucket_decay, opt_tensor_ends, opt_decay,
};

inline constexpr std::array<std::string_view, 86> buffer_names = {
    "weights", "master_lo", "grads", "adam_m", "adam_v", "grad_staging", "weight_staging",
    "x", "x_mid", "xn1", "xn2", "rstd1", "rstd2", "q", "k", "v", "attn", "lse", "gate", "up",
    "rerun_xn1", "rerun_xn2", "rerun_gate", "rerun_up", "recomputed_output", "x_final",
    "xn_final", "rstd_final", "logits", "head_dxn", "row_loss",
    "hidden", "dhidden", "dgate", "dup", "cast_input", "dres", "dxn", "dres_bf", "dattn", "dq",
    "dk", "dv", "norm_partials", "bias_partials", "attention_workspace",
    "fp8_weight_rows", "fp8_weight_cols", "fp8_recast_weight", "fp8_saved_input",
    "fp8_input_scratch", "fp8_grad_rows", "fp8_grad_cols", "fp8_amax", "fp8_amax_now",
    "fp8_scale", "fp8_scale_inv", "fp8_history",
    "cp_gathered", "cp_keys", "cp_values", "cp_part_out", "cp_part_lse", "cp_part_dk",
    "cp_part_dv", "cp_key_grads",
    "tp_loss_stats", "tp_partial",
    "io_inputs", "io_targets", "io_group_ids", "io_offsets", "io_positions", "io_group_count",
    "io_touched_rows", "io_touched_count", "io_results", "io_loss_partials",
    "rope_cos", "rope_sin",
    "grad_norm_partials",
    "opt_scalars", "opt_bucket_tensor_ends", "opt_bucket_decay", "opt_tensor_ends", "opt_decay"};
// clang-format on
static_assert(buffer_names.size() == std::size_t(BufferId::opt_decay) + 1);

constexpr std::string_view name_of(BufferId b) { return buffer_names[static_cast<std::size_t>(b)]; }

/// The part of the engine that allocates a buffer (and reads it).
enum class BufferOwner : std::uint8_t {
  parameters, activations, scratch, fp8_linears, context_parallel, tensor_parallel, step_io,
  rope, gradient_sync, optimizer
};

constexpr BufferOwner owner_of(BufferId b) {
  using enum BufferId;
  if (b <= weight_staging) return BufferOwner::parameters;
  if (b <= row_loss) return BufferOwner::activations;
  if (b <= attention_workspace) return BufferOwner::scratch;
  if (b <= fp8_history) return BufferOwner::fp8_linears;
  if (b <= cp_key_grads) return BufferOwner::context_parallel;
  if (b <= tp_partial) return BufferOwner::tensor_parallel;
  if (b <= io_loss_partials) return BufferOwner::step_io;
  if (b <= rope_sin) return BufferOwner::rope;
  if (b <= grad_norm_partials) return BufferOwner::gradient_sync;
  return BufferOwner::optimizer;
}

/// Bytes of backend::OptimizerScalars (the optimizer kernels' learning rate, betas, ...: eight
/// floats), which train/device/optimizer.hpp asserts.
inline constexpr int optimizer_scalars_bytes = 32;

/// Whose buffer it is: the stage's (shared by its layers and slots), a slot's layer
/// (Activations::layers[index] and an FP8 input's transpose: index = slot x local layers +
/// layer), a place in the group full recomputation runs again (Activations::recomputed[index]),
/// or a local layer's whatever the slot (an FP8 weight's copy: index = layer).
enum class BufferHolder : std::uint8_t { stage, kept_layer, recomputed_layer, layer };

/// One buffer: `count` elements of `element_bytes`. A layer's xn1, xn2, gate or up whose module
/// selective recomputation reruns has no memory of its own: `storage` names the stage's buffer
/// it uses (rerun_*) and `count` is 0; otherwise `storage` is `buffer`. `part`: which of a
/// holder's kind (an FP8 weight's projection, an input's Fp8Input, a gradient pair, a scale's
/// format: 0 E4M3, 1 E5M2).
struct BufferEntry {
  BufferId buffer;
  BufferHolder holder = BufferHolder::stage;
  int index = 0;
  int element_bytes = 0;
  std::int64_t count = 0;
  BufferTerm term = BufferTerm::activations;
  BufferId storage = buffer;
  int part = 0;
  constexpr std::int64_t bytes() const { return count * element_bytes; }
};

/// The buffers, grouped by the part of the engine that allocates them (owner_of); each part
/// takes its own in the table's order.
using BufferTable = std::vector<BufferEntry>;

/// Bytes of the table's buffers that count in `term`.
inline std::int64_t table_bytes(const BufferTable& table, BufferTerm term) {
  std::int64_t sum = 0;
  for (const auto& e : table)
    if (e.term == term) sum += e.bytes();
  return sum;
}

namespace detail {

/// Appends one layer's buffers (LayerActivations). `fp8`: its projections run in FP8, whose
/// weight gradients read the norms' outputs as FP8 transposes, so it keeps no bf16 copy of them.
inline void add_layer_buffers(BufferTable& t, const RankPlan& p, BufferHolder holder, int index,
                              bool fp8) {
  using enum BufferId;
  const std::int64_t n = p.n, rows = p.rows, h = p.d.hidden;
  const Recompute& r = p.shape.recompute;
  const bool rerun_norms = r.reruns(RecomputeModule::layernorm),
             rerun_mlp = r.reruns(RecomputeModule::mlp);
  const auto add = [&](BufferId b, int bytes, std::int64_t count) {
    t.push_back({b, holder, index, bytes, count, BufferTerm::activations, b});
  };
  const auto shared = [&](BufferId b, BufferId storage) {
    t.push_back({b, holder, index, 2, 0, BufferTerm::activations, storage});
  };
  add(x, 4, rows * h);
  add(x_mid, 4, rows * h);
  if (!fp8) {
    if (rerun_norms)
      shared(xn1, rerun_xn1);
    else
      add(xn1, 2, n * h);
    if (rerun_norms || rerun_mlp)
      shared(xn2, rerun_xn2);
    else
      add(xn2, 2, n * h);
  }
  add(rstd1, 4, rows);
  add(rstd2, 4, rows);
  add(q, 2, n * p.d.q_dim());
  add(k, 2, n * p.d.kv_dim());
  add(v, 2, n * p.d.kv_dim());
  add(attn, 2, n * p.d.q_dim());
  add(lse, 4, std::int64_t{p.shape.mbs} * p.d.heads * p.local_seq);
  if (rerun_mlp) {
    shared(gate, rerun_gate);
    shared(up, rerun_up);
  } else {
    add(gate, 2, n * p.d.ffn);
    add(up, 2, n * p.d.ffn);
  }
}

}  // namespace detail

/// Whether local layer l of the rank's stage runs its projections in FP8 (the rule Fp8Linears
/// applies: PrecisionConfig::layer_in_fp8 of the model's layer).
inline bool local_layer_in_fp8(const RankPlan& p, const PrecisionConfig& precision, int l) {
  return precision.layer_in_fp8(p.layer_begin + l, p.full.layers);
}

/// Every activation and scratch buffer of the rank `p` runs, in allocation order.
/// `attention_workspace_bytes`: the attention backward's workspace, which the attention policy
/// states at run time (the plan: train/attention_workspace.hpp's count of it).
///
/// Each slot (micro-batch in flight under 1F1B) keeps each layer's activations, except that a
/// layer full recomputation reruns keeps only its group's input (the group's first layer its x,
/// the others nothing) and runs in `recomputed_layer` buffers shared by every group and slot.
/// Under selective recomputation the modules rerun write the stage's rerun_* buffers.
inline BufferTable activation_buffers(const RankPlan& p, const PrecisionConfig& precision,
                                      std::int64_t attention_workspace_bytes) {
  using enum BufferId;
  BufferTable t;
  const std::int64_t n = p.n, rows = p.rows, h = p.d.hidden, f = p.d.ffn, qd = p.d.q_dim(),
                     kvd = p.d.kv_dim();
  const int layers = p.local_layers;
  const Recompute& r = p.shape.recompute;
  const auto stage = [&](BufferId b, int bytes, std::int64_t count,
                         BufferTerm term = BufferTerm::activations) {
    t.push_back({b, BufferHolder::stage, 0, bytes, count, term, b});
  };
  bool any_bf16 = false;
  for (int l = 0; l < layers; ++l) any_bf16 = any_bf16 || !local_layer_in_fp8(p, precision, l);
  const bool rerun_norms = r.reruns(RecomputeModule::layernorm),
             rerun_mlp = r.reruns(RecomputeModule::mlp);
  if (layers > 0) {
    if (any_bf16 && rerun_norms) stage(rerun_xn1, 2, n * h);
    if (any_bf16 && (rerun_norms || rerun_mlp)) stage(rerun_xn2, 2, n * h);
    if (rerun_mlp) {
      stage(rerun_gate, 2, n * f);
      stage(rerun_up, 2, n * f);
    }
  }
  for (int slot = 0; slot < p.slots; ++slot)
    for (int l = 0; l < layers; ++l) {
      const int index = slot * layers + l;
      if (!r.recomputed(l, layers))
        detail::add_layer_buffers(t, p, BufferHolder::kept_layer, index,
                                  local_layer_in_fp8(p, precision, l));
      else if (r.group_begin(l) == l)
        t.push_back({x, BufferHolder::kept_layer, index, 4, rows * h, BufferTerm::activations, x});
    }
  if (r.full() && layers > 0) {
    for (int place = 0; place < std::min(r.group_layers(), layers); ++place)
      detail::add_layer_buffers(t, p, BufferHolder::recomputed_layer, place, !any_bf16);
    stage(recomputed_output, 4, rows * h);
  }
  stage(x_final, 4, p.slots * rows * h);
  if (p.last_stage) {
    stage(xn_final, 2, n * h);
    stage(rstd_final, 4, rows);
    // One chunk of the head's logits at a time (train/device/head.hpp); the gradient overwrites it.
    stage(logits, 2, std::min(n, loss_chunk_rows) * p.d.vocab, BufferTerm::logits);
    stage(head_dxn, 4, n * h, BufferTerm::logits);
    stage(row_loss, 4, n);
  }
  // Scratch, one set for every layer's pass. SwiGLU's bf16 output and gradients exist in bf16
  // layers only: an FP8 layer computes them where it casts them (docs/fp8.md).
  if (any_bf16)
    for (const auto b : {hidden, dgate, dup}) stage(b, 2, n * f, BufferTerm::scratch);
  stage(dhidden, 2, n * f, BufferTerm::scratch);
  // An FP8 layer's norm output, until its cast.
  if (precision.is_fp8()) stage(cast_input, 2, n * h, BufferTerm::fp8);
  stage(dres, 4, rows * h, BufferTerm::scratch);
  stage(dxn, 4, n * h, BufferTerm::scratch);
  stage(dres_bf, 2, n * h, BufferTerm::scratch);
  stage(dattn, 2, n * qd, BufferTerm::scratch);
  stage(dq, 2, n * qd, BufferTerm::scratch);
  stage(dk, 2, n * kvd, BufferTerm::scratch);
  stage(dv, 2, n * kvd, BufferTerm::scratch);
  stage(norm_partials, 4, kernels::rmsnorm_partials(n, h), BufferTerm::scratch);
  stage(bias_partials, 4, p.d.qkv_bias ? kernels::bias_partials(n, qd) : 1, BufferTerm::scratch);
  stage(attention_workspace, 1, std::max<std::int64_t>(attention_workspace_bytes, 1),
        BufferTerm::workspace);
  return t;
}

/// The FP8 scales' buffers of one format (`part` 0: E4M3, 1: E5M2) laid out as `l`.
inline void add_fp8_scale_buffers(BufferTable& t, const Fp8ScaleLayout& l, int part) {
  using enum BufferId;
  const std::int64_t n = std::max(l.count, 1);
  const auto add = [&](BufferId b, std::int64_t count) {
    t.push_back({b, BufferHolder::stage, 0, 4, count, BufferTerm::fp8, b, part});
  };
  add(fp8_amax, n);
  add(fp8_amax_now, n);
  add(fp8_scale, n);
  add(fp8_scale_inv, n * fp8_scale_inv_stride);
  add(fp8_history, std::int64_t{std::max(l.base, 1)} * std::max(l.history, 1));
}

/// The FP8 buffers of the rank `p` runs under `precision` (none without FP8), in allocation
/// order: each FP8 layer's weight copies (kept copies: rows and transpose of every projection;
/// recast: the largest one weight's), each slot's input transposes kept for the weight
/// gradients (recast copies keep x_qkv's and x_mlp's only), the casts' scratch (an input's rows
/// and two gradient pairs) and the two formats' scales.
inline BufferTable fp8_buffers(const RankPlan& p, const PrecisionConfig& precision) {
  using enum BufferId;
  BufferTable t;
  if (!precision.is_fp8()) return t;
  const int layers = p.local_layers;
  const bool kept = precision.fp8.copies == Fp8Copies::kept;
  const auto add = [&](BufferId b, BufferHolder holder, int index, std::int64_t count, int part) {
    t.push_back({b, holder, index, 1, count, BufferTerm::fp8, b, part});
  };
  std::int64_t largest_weight = 0;
  for (const model::Projection w : model::projections)
    largest_weight = std::max(largest_weight, model::projection_shape(p.d, w).size());
  for (int l = 0; l < layers; ++l) {
    if (!kept || !local_layer_in_fp8(p, precision, l)) continue;
    for (const model::Projection w : model::projections) {
      const std::int64_t size = model::projection_shape(p.d, w).size();
      add(fp8_weight_rows, BufferHolder::layer, l, size, model::index_of(w));
      add(fp8_weight_cols, BufferHolder::layer, l, size, model::index_of(w));
    }
  }
  if (!kept) add(fp8_recast_weight, BufferHolder::stage, 0, largest_weight, 0);
  const auto widths = fp8_input_widths(p.d);
  for (int slot = 0; slot < p.slots; ++slot)
    for (int l = 0; l < layers; ++l) {
      if (!local_layer_in_fp8(p, precision, l)) continue;
      for (int i = 0; i < fp8_inputs; ++i)
        if (kept || !recast_input(static_cast<Fp8Input>(i)))
          add(fp8_saved_input, BufferHolder::kept_layer, slot * layers + l,
              widths[static_cast<std::size_t>(i)] * p.n, i);
    }
  const std::int64_t scratch = p.n * fp8_widest(p.d);
  add(fp8_input_scratch, BufferHolder::stage, 0, scratch, 0);
  for (int pair = 0; pair < 2; ++pair) {
    add(fp8_grad_rows, BufferHolder::stage, 0, scratch, pair);
    add(fp8_grad_cols, BufferHolder::stage, 0, scratch, pair);
  }
  add_fp8_scale_buffers(t, fp8_forward_scales(layers, p.slots, precision), 0);
  add_fp8_scale_buffers(t, fp8_backward_scales(layers, precision), 1);
  return t;
}

/// The parameters and optimizer state of rank `p`: the bf16 weights (the fp32 master's high
/// half) of its shard, past its last parameter by the DP buckets' padding; its fp32 gradients,
/// the same size, or under ZeRO-2 the sums of its slices of the buckets `buckets`
/// (train/gradient_buckets.hpp) with one staging buffer of each slot (`index`), where the
/// backward writes a micro-batch's gradients; the master's 16-bit remainders and the two AdamW
/// moments of what it updates: the shard, or under ZeRO-1 and 2 its slices. FSDP holds the
/// weights of its slices only, and gathers each segment's into a staging buffer of its slot
/// (bf16, the gradients' slots) before it is used.
inline BufferTable parameter_buffers(const RankPlan& p, const BucketPlan& buckets) {
  using enum BufferId;
  const std::int64_t held = p.params + buckets.padding, state = p.zero ? buckets.owned : p.params;
  BufferTable t = {
      {weights, BufferHolder::stage, 0, 2, p.sharded_weights ? state : held, BufferTerm::weights,
       weights},
      {master_lo, BufferHolder::stage, 0, 2, state, BufferTerm::master, master_lo},
      {grads, BufferHolder::stage, 0, 4, p.sharded_grads ? state : held, BufferTerm::gradients,
       grads},
      {adam_m, BufferHolder::stage, 0, 4, state, BufferTerm::adam_moments, adam_m},
      {adam_v, BufferHolder::stage, 0, 4, state, BufferTerm::adam_moments, adam_v}};
  for (std::size_t slot = 0; slot < buckets.slot_elements.size(); ++slot)
    t.push_back({grad_staging, BufferHolder::stage, static_cast<int>(slot), 4,
                 buckets.slot_elements[slot], BufferTerm::gradients, grad_staging});
  if (p.sharded_weights)
    for (std::size_t slot = 0; slot < buckets.slot_elements.size(); ++slot)
      t.push_back({weight_staging, BufferHolder::stage, static_cast<int>(slot), 2,
                   buckets.slot_elements[slot], BufferTerm::weights, weight_staging});
  return t;
}

/// Context parallelism's attention buffers on rank `p` (none without CP;
/// train/device/context_parallel_attention.hpp): every rank's K and V as gathered, and in
/// position order (whole sequences); a split block's partial output and statistics; one call's
/// K/V gradients (up to every key of a sequence); the fp32 K/V gradients of every rank's tokens,
/// arranged by owner for the reduce-scatter.
inline BufferTable context_parallel_buffers(const RankPlan& p) {
  using enum BufferId;
  if (p.cp <= 1) return {};
  const std::int64_t kvd = p.d.kv_dim(), kv = p.n * kvd, cp = p.cp,
                     chunk = p.shape.seq / (2 * cp), longest = 2 * cp * chunk;
  const auto add = [](BufferId b, int bytes, std::int64_t count) {
    return BufferEntry{b, BufferHolder::stage, 0, bytes, count, BufferTerm::scratch, b};
  };
  return {add(cp_gathered, 2, 2 * kv * cp),
          add(cp_keys, 2, kv * cp),
          add(cp_values, 2, kv * cp),
          add(cp_part_out, 2, chunk * p.d.q_dim()),
          add(cp_part_lse, 4, chunk * p.d.heads),
          add(cp_part_dk, 2, longest * kvd),
          add(cp_part_dv, 2, longest * kvd),
          add(cp_key_grads, 4, 2 * kv * cp)};
}

/// Tensor parallelism's exchange buffers on rank `p` (train/device/tensor_parallel.hpp): the
/// statistics every TP rank's vocabulary slice contributes to the loss (last stage), and under
/// sequence parallelism the row-parallel GEMMs' bf16 partial products.
inline BufferTable tensor_parallel_buffers(const RankPlan& p) {
  using enum BufferId;
  BufferTable t;
  if (p.tp <= 1) return t;
  if (p.last_stage)
    t.push_back({tp_loss_stats, BufferHolder::stage, 0, 4,
                 p.tp * p.n * kernels::cross_entropy_stats_per_row, BufferTerm::scratch,
                 tp_loss_stats});
  if (p.sequence_parallel)
    t.push_back({tp_partial, BufferHolder::stage, 0, 2, p.n * p.d.hidden, BufferTerm::scratch,
                 tp_partial});
  return t;
}

/// The step's small buffers, in the workspace term: every micro-batch's token ids, targets and
/// their grouping by token id, the loss and norm results (StepIO); RoPE's tables of this rank's
/// positions; the gradient norm's partial sums, kernels::sum_partials doubles a norm range
/// (GradientSync); the optimizer's scalars and each tensor's end and decay flag, and under ZeRO-1
/// the same per bucket slice (DeviceOptimizer).
inline BufferTable step_buffers(const RankPlan& p, const GradientSyncPlan& sync) {
  using enum BufferId;
  BufferTable t;
  const auto add = [&t](BufferId b, int bytes, std::int64_t count) {
    t.push_back({b, BufferHolder::stage, 0, bytes, count, BufferTerm::workspace, b});
  };
  const std::int64_t n = p.n, ga = p.shape.grad_accum;
  for (const auto b : {io_inputs, io_targets, io_group_ids}) add(b, 4, ga * n);
  add(io_offsets, 4, ga * (n + 1));
  add(io_positions, 4, ga * n);
  add(io_group_count, 4, ga);
  add(io_touched_rows, 4, ga * n);
  add(io_touched_count, 4, ga);
  add(io_results, 8, 2);
  add(io_loss_partials, 8, kernels::sum_partials);
  add(rope_cos, 4, std::int64_t{p.local_seq} * (p.d.head_dim / 2));
  add(rope_sin, 4, std::int64_t{p.local_seq} * (p.d.head_dim / 2));
  add(grad_norm_partials, 8, std::int64_t(sync.norm_ranges.size()) * kernels::sum_partials);
  add(opt_scalars, optimizer_scalars_bytes, 1);
  if (p.zero) {
    const auto slices = std::max<std::int64_t>(1, std::int64_t(sync.buckets.tensor_ends.size()));
    add(opt_bucket_tensor_ends, 8, slices);
    add(opt_bucket_decay, 1, slices);
  }
  add(opt_tensor_ends, 8, std::int64_t(p.table.tensors.size()));
  add(opt_decay, 1, std::int64_t(p.table.tensors.size()));
  return t;
}

/// Every buffer of the table for the rank `p`, whose gradient buckets and norm ranges are
/// `sync` (plan_gradient_sync of it): its parameters and optimizer state, its activations and
/// scratch, its FP8 buffers, the context- and tensor-parallel exchanges' and the step's own.
inline BufferTable engine_buffers(const RankPlan& p, const PrecisionConfig& precision,
                                  const GradientSyncPlan& sync,
                                  std::int64_t attention_workspace_bytes) {
  BufferTable t = parameter_buffers(p, sync.buckets);
  for (const BufferTable& more :
       {activation_buffers(p, precision, attention_workspace_bytes), fp8_buffers(p, precision),
        context_parallel_buffers(p), tensor_parallel_buffers(p), step_buffers(p, sync)})
    t.insert(t.end(), more.begin(), more.end());
  return t;
}

}  // namespace tprimat::train
