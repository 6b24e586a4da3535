// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// What the device engine's forward pass keeps for the backward pass (per activation slot and
// layer), and the scratch every layer shares.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/buffer.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/train/buffer_table.hpp"
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

  /// The table's Activations buffers (train/buffer_table.hpp), allocated in its order.
  void allocate(BufferAllocator& a, const RankPlan& p, const BufferTable& table) {
    local_layers = p.local_layers;
    recompute = p.shape.recompute;
    slot_stride = p.rows * p.d.hidden;
    layers.resize(static_cast<std::size_t>(p.slots) * p.local_layers);
    if (recompute.full() && local_layers > 0)
      recomputed.resize(static_cast<std::size_t>(std::min(recompute.group_layers(), local_layers)));
    for (const BufferEntry& e : table) {
      if (owner_of(e.buffer) != BufferOwner::activations) continue;
      if (e.holder == BufferHolder::stage)
        allocate_stage_buffer(a, e);
      else
        allocate_layer_buffer(a, e, e.holder == BufferHolder::kept_layer
                                        ? layers.at(static_cast<std::size_t>(e.index))
                                        : recomputed.at(static_cast<std::size_t>(e.index)));
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
  /// The stage's buffers of the table; scratch entries are Scratch's.
  void allocate_stage_buffer(BufferAllocator& a, const BufferEntry& e) {
    using B = BufferId;
    switch (e.buffer) {
      case B::rerun_xn1: rerun_xn1 = a.take<bf16>(e); break;
      case B::rerun_xn2: rerun_xn2 = a.take<bf16>(e); break;
      case B::rerun_gate: rerun_gate = a.take<bf16>(e); break;
      case B::rerun_up: rerun_up = a.take<bf16>(e); break;
      case B::recomputed_output: recomputed_output = a.take<float>(e); break;
      case B::x_final: x_final = a.take<float>(e); break;
      case B::xn_final: xn_final = a.take<bf16>(e); break;
      case B::rstd_final: rstd_final = a.take<float>(e); break;
      case B::logits: logits = a.take<bf16>(e); break;
      case B::head_dxn: head_dxn = a.take<float>(e); break;
      case B::row_loss: row_loss = a.take<float>(e); break;
      default: break;
    }
  }
  /// The stage's buffer a rerun module writes (BufferEntry::storage).
  bf16* rerun_buffer(BufferId storage) {
    using B = BufferId;
    switch (storage) {
      case B::rerun_xn1: return rerun_xn1.data();
      case B::rerun_xn2: return rerun_xn2.data();
      case B::rerun_gate: return rerun_gate.data();
      case B::rerun_up: return rerun_up.data();
      default: throw core::RunError("buffer table: " + std::string(name_of(storage)) +
                                    " is no rerun buffer");
    }
  }
  /// One of a layer's buffers; a module selective recomputation reruns points at the stage's.
  void allocate_layer_buffer(BufferAllocator& a, const BufferEntry& e, LayerActivations& l) {
    using B = BufferId;
    const bool own = e.storage == e.buffer;
    const auto own_or_rerun = [&](DeviceBuffer<bf16>& mine) {
      return own ? (mine = a.take<bf16>(e)).data() : rerun_buffer(e.storage);
    };
    switch (e.buffer) {
      case B::x: l.x = a.take<float>(e); break;
      case B::x_mid: l.x_mid = a.take<float>(e); break;
      case B::xn1: l.xn1 = own_or_rerun(l.own_xn1); break;
      case B::xn2: l.xn2 = own_or_rerun(l.own_xn2); break;
      case B::rstd1: l.rstd1 = a.take<float>(e); break;
      case B::rstd2: l.rstd2 = a.take<float>(e); break;
      case B::q: l.q = a.take<bf16>(e); break;
      case B::k: l.k = a.take<bf16>(e); break;
      case B::v: l.v = a.take<bf16>(e); break;
      case B::attn: l.attn = a.take<bf16>(e); break;
      case B::lse: l.lse = a.take<float>(e); break;
      case B::gate: l.gate = own_or_rerun(l.own_gate); break;
      case B::up: l.up = own_or_rerun(l.own_up); break;
      default:
        throw core::RunError("buffer table: " + std::string(name_of(e.buffer)) +
                             " is no layer buffer");
    }
  }
};

/// Buffers every layer's pass overwrites: the SwiGLU output, the backward's gradients, the
/// kernels' partials and the attention backward's workspace.
struct Scratch {
  DeviceBuffer<bf16> hidden, dhidden, dgate, dup;  // [n, ffn]; all but dhidden: bf16 layers only
  DeviceBuffer<bf16> xn;       // [n, h] an FP8 layer's norm output, until its cast (FP8 runs only)
  DeviceBuffer<float> dres;    // [rows, h] gradient of the residual stream
  DeviceBuffer<float> dxn;     // [n, h] gradient of a norm's output, summed over its GEMMs
  DeviceBuffer<bf16> dres_bf;  // [n, h] dres in bf16, the GEMMs' operand (gathered under SP)
  DeviceBuffer<bf16> dattn, dq, dk, dv;  // [n, qd] [n, qd] [n, kvd] [n, kvd]
  DeviceBuffer<float> norm_partials, bias_partials;
  DeviceBuffer<std::uint8_t> attn_workspace;

  /// The table's Scratch buffers (BufferOwner scratch: the backward's scratch, FP8's cast_input and
  /// the attention backward's workspace).
  void allocate(BufferAllocator& a, const BufferTable& table) {
    using B = BufferId;
    for (const BufferEntry& e : table) {
      if (owner_of(e.buffer) != BufferOwner::scratch) continue;
      switch (e.buffer) {
        case B::hidden: hidden = a.take<bf16>(e); break;
        case B::dhidden: dhidden = a.take<bf16>(e); break;
        case B::dgate: dgate = a.take<bf16>(e); break;
        case B::dup: dup = a.take<bf16>(e); break;
        case B::cast_input: xn = a.take<bf16>(e); break;
        case B::dres: dres = a.take<float>(e); break;
        case B::dxn: dxn = a.take<float>(e); break;
        case B::dres_bf: dres_bf = a.take<bf16>(e); break;
        case B::dattn: dattn = a.take<bf16>(e); break;
        case B::dq: dq = a.take<bf16>(e); break;
        case B::dk: dk = a.take<bf16>(e); break;
        case B::dv: dv = a.take<bf16>(e); break;
        case B::norm_partials: norm_partials = a.take<float>(e); break;
        case B::bias_partials: bias_partials = a.take<float>(e); break;
        case B::attention_workspace: attn_workspace = a.take<std::uint8_t>(e); break;
        default: break;
      }
    }
  }
};

}  // namespace tprimat::train::device
