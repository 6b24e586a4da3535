// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The CPU engine's activations: what backward needs of each layer and micro-batch in flight, and
// the scratch every layer's backward shares.
#pragma once

#include <cstdint>
#include <vector>

#include "tprimat/train/cpu/aligned_vector.hpp"
#include "tprimat/train/rank_plan.hpp"

namespace tprimat::train::cpu {

/// What backward needs of one layer, for one micro-batch.
template <class T>
struct LayerActivations {
  AlignedVector<T> x;      // [rows, hidden]  layer input (residual stream)
  AlignedVector<T> xn1;    // [n, hidden]  attention RMSNorm output (gathered over TP under SP)
  AlignedVector<T> rstd1;  // [rows]
  AlignedVector<T> q;      // [n, q_dim]   after RoPE
  AlignedVector<T> k;      // [n, kv_dim]  after RoPE
  AlignedVector<T> v;      // [n, kv_dim]
  AlignedVector<T> attn;   // [n, q_dim]   attention output before O
  AlignedVector<T> lse;    // [mbs, heads, local_seq] softmax log-sum-exp per query row
  AlignedVector<T> x_mid;  // [rows, hidden]  after the attention residual
  AlignedVector<T> xn2;    // [n, hidden]  MLP RMSNorm output (gathered over TP under SP)
  AlignedVector<T> rstd2;  // [rows]
  AlignedVector<T> gate;   // [n, ffn]
  AlignedVector<T> up;     // [n, ffn]

  /// Sized for `s`'s share of the model (RankPlan::d) and micro-batch (n tokens, `rows` of
  /// them the residual stream's on this rank).
  void allocate(const RankPlan& s) {
    const std::int64_t h = s.d.hidden, qd = s.d.q_dim(), kvd = s.d.kv_dim(), f = s.d.ffn;
    x.resize(s.rows * h);
    xn1.resize(s.n * h);
    rstd1.resize(s.rows);
    q.resize(s.n * qd);
    k.resize(s.n * kvd);
    v.resize(s.n * kvd);
    attn.resize(s.n * qd);
    lse.resize(std::int64_t{s.shape.mbs} * s.d.heads * s.local_seq);
    x_mid.resize(s.rows * h);
    xn2.resize(s.n * h);
    rstd2.resize(s.rows);
    gate.resize(s.n * f);
    up.resize(s.n * f);
  }
  std::size_t elements() const {
    return x.size() + xn1.size() + rstd1.size() + q.size() + k.size() + v.size() + attn.size() +
           lse.size() + x_mid.size() + xn2.size() + rstd2.size() + gate.size() + up.size();
  }
};

/// What backward needs of one micro-batch in flight: its layers', the stage's output and, on
/// the last stage, the final norm and the logits (which the loss turns into their gradient).
template <class T>
struct MicroBatchActivations {
  std::vector<LayerActivations<T>> layers;  // this stage's layers
  AlignedVector<T> x_final;                 // [rows, hidden] the stage's output
  AlignedVector<T> xn_final;                // [n, hidden]  (last stage)
  AlignedVector<T> rstd_final;              // [rows]       (last stage)
  AlignedVector<T> logits;                  // [n, vocab / TP] (last stage)
  std::vector<std::int32_t> inputs, targets;  // [n]

  /// A layer recomputed (StepShape::recompute) keeps only its group's input: the group's first
  /// layer its x, the others nothing (the engine's recomputation buffers hold their forward).
  void allocate(const RankPlan& s) {
    const std::int64_t h = s.d.hidden;
    const Recompute& recompute = s.shape.recompute;
    layers.resize(s.local_layers);
    for (int l = 0; l < s.local_layers; ++l) {
      if (!recompute.recomputed(l, s.local_layers))
        layers[l].allocate(s);
      else if (recompute.group_begin(l) == l)
        layers[l].x.resize(s.rows * h);
    }
    x_final.resize(s.rows * h);
    if (s.last_stage) {
      xn_final.resize(s.n * h);
      rstd_final.resize(s.rows);
      logits.resize(s.n * s.d.vocab);
    }
    inputs.resize(s.n);
    targets.resize(s.n);
  }
  std::size_t elements() const {
    std::size_t e = x_final.size() + xn_final.size() + rstd_final.size() + logits.size();
    for (const auto& a : layers) e += a.elements();
    return e;
  }
  std::size_t ids() const { return inputs.size() + targets.size(); }
};

/// Backward's scratch, shared by all layers and micro-batches: dx, the residual stream's
/// gradient [rows, h]; the others [n, width]. FP8 only: Q(attention output) for O (it stays
/// unquantised for attention's backward) and Q(residual-stream gradient) for down and O (the
/// residual path keeps the unquantised one).
template <class T>
struct BackwardScratch {
  AlignedVector<T> dx, dxn;                   // [rows, h], [n, h]
  AlignedVector<T> dq, dattn, dk, dv;         // [n, q_dim] x 2, [n, kv_dim] x 2
  AlignedVector<T> h, dh, dgate, dup;         // [n, ffn]: SwiGLU's output and gradients
  AlignedVector<T> fp8_attn, fp8_grad;        // [n, q_dim], [n, h]  (FP8)

  void allocate(const RankPlan& s, bool fp8) {
    const std::int64_t hidden = s.d.hidden, qd = s.d.q_dim(), kvd = s.d.kv_dim(), f = s.d.ffn;
    dx.resize(s.rows * hidden);
    dxn.resize(s.n * hidden);
    for (auto* buf : {&dq, &dattn}) buf->resize(s.n * qd);
    for (auto* buf : {&dk, &dv}) buf->resize(s.n * kvd);
    for (auto* buf : {&h, &dh, &dgate, &dup}) buf->resize(s.n * f);
    if (fp8) {
      fp8_attn.resize(s.n * qd);
      fp8_grad.resize(s.n * hidden);
    }
  }
  std::size_t elements() const {
    std::size_t e = 0;
    for (const auto* buf : {&dx, &dxn, &dq, &dattn, &dk, &dv, &h, &dh, &dgate, &dup, &fp8_attn,
                            &fp8_grad})
      e += buf->size();
    return e;
  }
};

}  // namespace tprimat::train::cpu
