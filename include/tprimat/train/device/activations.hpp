// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// What the device engine's forward pass keeps for the backward pass (per activation slot and
// layer), and the scratch every layer shares.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/buffer.hpp"
#include "tprimat/train/rank_plan.hpp"
#include "tprimat/train/device/resources.hpp"

namespace tprimat::train::device {

using backend::DeviceBuffer;
using bf16 = backend::Gpu::bf16;

/// One layer's forward of one micro-batch of n tokens, as its backward reads it. `rows`: n, or
/// n / TP under sequence parallelism (RankPlan::rows).
struct LayerActivations {
  DeviceBuffer<float> x, x_mid;      // [rows, h] residual stream in, after attention
  // The two norms' outputs [n, h] (bf16 layers; an FP8 layer's weight gradients read their FP8
  // transposes), all-gathered over TP under sequence parallelism, and the MLP's gate and up
  // [n, ffn]: this layer's own buffers (own_*), or under selective recomputation the shared
  // ones (Activations::rerun_*) its backward writes again.
  bf16 *xn1 = nullptr, *xn2 = nullptr, *gate = nullptr, *up = nullptr;
  DeviceBuffer<float> rstd1, rstd2;  // [rows]
  DeviceBuffer<bf16> q, k, v, attn;  // [n, qd] [n, kvd] [n, kvd] [n, qd]; q, k roped
  DeviceBuffer<float> lse;           // [mbs, heads, local_seq]
  DeviceBuffer<bf16> own_xn1, own_xn2, own_gate, own_up;
};

/// The activations of every slot (micro-batches in flight under 1F1B) and local layer, the
/// stage's outputs, and on the last stage the head's. A recomputed layer (StepShape::recompute
/// full) keeps only its group's input (the group's first layer its x, the others nothing); its
/// forward runs in `recomputed`, shared by every group and slot, once in the forward pass and
/// again just before the group's backward. Under selective recomputation every layer writes
/// what its modules rerun into the shared rerun_* buffers, and its backward writes them again.
struct Activations {
  std::vector<LayerActivations> layers;  // [slot][local layer]
  std::vector<LayerActivations> recomputed;  // [layer's place in its group]
  DeviceBuffer<bf16> rerun_xn1, rerun_xn2;   // [n, h] selective: layernorm (and mlp's xn2)
  DeviceBuffer<bf16> rerun_gate, rerun_up;   // [n, ffn] selective: mlp
  int local_layers = 0;
  Recompute recompute;
  std::int64_t slot_stride = 0;    // rows * h: one slot's stage output
  DeviceBuffer<float> x_final;     // [slot][rows, h]: the stage's output (last: final norm's input)
  DeviceBuffer<float> recomputed_output;  // [rows, h] a group's output, computed again
  DeviceBuffer<bf16> xn_final;     // [n, h] last stage: the final norm's output (gathered)
  DeviceBuffer<float> rstd_final;  // [rows]
  DeviceBuffer<bf16> logits;       // [loss_chunk_rows, vocab / TP]; its gradient overwrites it
  DeviceBuffer<float> head_dxn;    // [n, hidden]: the head's input gradient, forward to backward
  DeviceBuffer<float> row_loss;    // [n]

  /// `fp8_layer[l]`: local layer l runs its projections in FP8 (empty: none does).
  void allocate(BufferAllocator& a, const RankPlan& p, const std::vector<bool>& fp8_layer) {
    const std::int64_t n = p.n, rows = p.rows, h = p.d.hidden;
    local_layers = p.local_layers;
    recompute = p.shape.recompute;
    slot_stride = rows * h;
    auto in_fp8 = [&](int l) { return l < static_cast<int>(fp8_layer.size()) && fp8_layer[l]; };
    bool any_bf16 = false;
    for (int l = 0; l < local_layers; ++l) any_bf16 = any_bf16 || !in_fp8(l);
    using train::RecomputeModule;
    const bool rerun_norms = recompute.reruns(RecomputeModule::layernorm),
               rerun_mlp = recompute.reruns(RecomputeModule::mlp);
    if (local_layers > 0) {
      if (any_bf16 && rerun_norms) rerun_xn1 = a.alloc<bf16>(n * h);
      if (any_bf16 && (rerun_norms || rerun_mlp)) rerun_xn2 = a.alloc<bf16>(n * h);
      if (rerun_mlp) {
        rerun_gate = a.alloc<bf16>(n * p.d.ffn);
        rerun_up = a.alloc<bf16>(n * p.d.ffn);
      }
    }
    layers.resize(static_cast<std::size_t>(p.slots) * p.local_layers);
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const int l = static_cast<int>(i % static_cast<std::size_t>(p.local_layers));
      if (!recompute.recomputed(l, local_layers))
        allocate_layer(a, p, layers[i], in_fp8(l) ? NormOutputs::fp8_only : NormOutputs::kept);
      else if (recompute.group_begin(l) == l)
        layers[i].x = a.alloc<float>(rows * h);
    }
    if (recompute.full() && local_layers > 0) {
      recomputed.resize(static_cast<std::size_t>(std::min(recompute.group_layers(), local_layers)));
      for (auto& r : recomputed)
        allocate_layer(a, p, r, any_bf16 ? NormOutputs::kept : NormOutputs::fp8_only);
      recomputed_output = a.alloc<float>(rows * h);
    }
    x_final = a.alloc<float>(p.slots * rows * h);
    if (p.last_stage) {
      xn_final = a.alloc<bf16>(n * h);
      rstd_final = a.alloc<float>(rows);
      logits = a.alloc<bf16>(std::min(n, loss_chunk_rows) * p.d.vocab);  // head.hpp's chunks
      head_dxn = a.alloc<float>(n * h);
      row_loss = a.alloc<float>(n);
    }
  }

  /// Local layer l's activations in slot `slot`: its own, or its place in `recomputed`.
  LayerActivations& at(int slot, int l) {
    if (recompute.recomputed(l, local_layers))
      return recomputed[static_cast<std::size_t>(l - recompute.group_begin(l))];
    return kept(slot, l);
  }
  /// What slot `slot` keeps of local layer l (of a recomputed layer: its group's input, or none).
  LayerActivations& kept(int slot, int l) {
    return layers[std::size_t(slot) * local_layers + std::size_t(l)];
  }
  /// Where local layer l writes its output: the next layer's input, or the stage's output.
  float* layer_output(int slot, int l) {
    if (l + 1 == local_layers) return stage_output(slot);
    // Inside a recomputed group the next layer's input is the group's; a kept input (a group's
    // first layer, or a layer not recomputed) is the slot's.
    const bool inside_group =
        recompute.recomputed(l + 1, local_layers) && recompute.group_begin(l + 1) != l + 1;
    return inside_group ? at(slot, l + 1).x.data() : kept(slot, l + 1).x.data();
  }
  /// The stage's output in slot `slot`: sent on, or the final norm's input.
  float* stage_output(int slot) { return x_final.data() + slot * slot_stride; }
  /// The stage's input (received from the previous stage, or the embedding's output).
  float* stage_input(int slot) {
    return local_layers == 0 ? stage_output(slot) : kept(slot, 0).x.data();
  }

 private:
  /// An FP8 layer's weight gradients read its norms' outputs as FP8 transposes (Fp8Linears).
  enum class NormOutputs { kept, fp8_only };
  /// A layer's buffers; what selective recomputation reruns points at the shared rerun_* ones.
  void allocate_layer(BufferAllocator& a, const RankPlan& p, LayerActivations& l,
                      NormOutputs norms) {
    const std::int64_t n = p.n, rows = p.rows, h = p.d.hidden, qd = p.d.q_dim(),
                       kvd = p.d.kv_dim();
    using train::RecomputeModule;
    const bool rerun_norms = recompute.reruns(RecomputeModule::layernorm),
               rerun_mlp = recompute.reruns(RecomputeModule::mlp);
    l.x = a.alloc<float>(rows * h);
    l.x_mid = a.alloc<float>(rows * h);
    if (norms == NormOutputs::kept) {
      if (rerun_norms)
        l.xn1 = rerun_xn1.data();
      else
        l.xn1 = (l.own_xn1 = a.alloc<bf16>(n * h)).data();
      if (rerun_norms || rerun_mlp)
        l.xn2 = rerun_xn2.data();
      else
        l.xn2 = (l.own_xn2 = a.alloc<bf16>(n * h)).data();
    }
    l.rstd1 = a.alloc<float>(rows);
    l.rstd2 = a.alloc<float>(rows);
    l.q = a.alloc<bf16>(n * qd);
    l.k = a.alloc<bf16>(n * kvd);
    l.v = a.alloc<bf16>(n * kvd);
    l.attn = a.alloc<bf16>(n * qd);
    l.lse = a.alloc<float>(std::int64_t{p.shape.mbs} * p.d.heads * p.local_seq);
    if (rerun_mlp) {
      l.gate = rerun_gate.data();
      l.up = rerun_up.data();
    } else {
      l.gate = (l.own_gate = a.alloc<bf16>(n * p.d.ffn)).data();
      l.up = (l.own_up = a.alloc<bf16>(n * p.d.ffn)).data();
    }
  }
};

/// Buffers every layer's pass overwrites: the SwiGLU output, the backward's gradients, the
/// kernels' partials and the attention backward's workspace.
struct Scratch {
  DeviceBuffer<bf16> hidden, dhidden, dgate, dup;  // [n, ffn]
  DeviceBuffer<bf16> xn;       // [n, h] an FP8 layer's norm output, until its cast (FP8 runs only)
  DeviceBuffer<float> dres;    // [rows, h] gradient of the residual stream
  DeviceBuffer<float> dxn;     // [n, h] gradient of a norm's output, summed over its GEMMs
  DeviceBuffer<bf16> dres_bf;  // [n, h] dres in bf16, the GEMMs' operand (gathered under SP)
  DeviceBuffer<bf16> dattn, dq, dk, dv;  // [n, qd] [n, qd] [n, kvd] [n, kvd]
  DeviceBuffer<float> norm_partials, bias_partials;
  DeviceBuffer<std::uint8_t> attn_workspace;

  void allocate(BufferAllocator& a, const RankPlan& p, std::size_t attention_workspace, bool fp8) {
    const std::int64_t n = p.n, h = p.d.hidden, qd = p.d.q_dim(), kvd = p.d.kv_dim();
    for (auto* b : {&hidden, &dhidden, &dgate, &dup}) *b = a.alloc<bf16>(n * p.d.ffn);
    if (fp8) xn = a.alloc<bf16>(n * h);
    dres = a.alloc<float>(p.rows * h);
    dxn = a.alloc<float>(n * h);
    dres_bf = a.alloc<bf16>(n * h);
    dattn = a.alloc<bf16>(n * qd);
    dq = a.alloc<bf16>(n * qd);
    dk = a.alloc<bf16>(n * kvd);
    dv = a.alloc<bf16>(n * kvd);
    norm_partials = a.alloc<float>(backend::Gpu::rmsnorm_partials(n, p.d.hidden));
    bias_partials = a.alloc<float>(p.d.qkv_bias ? backend::Gpu::bias_partials(n, qd) : 1);
    attn_workspace = a.alloc<std::uint8_t>(
        static_cast<std::int64_t>(attention_workspace > 0 ? attention_workspace : 1));
  }
};

}  // namespace tprimat::train::device
