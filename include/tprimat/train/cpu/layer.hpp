// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The CPU engine's decoder layer, forward and backward over one micro-batch: RMSNorm, QKV (+bias),
// RoPE, GQA causal attention, O, residual, RMSNorm, gate/up, SwiGLU, down, residual.
#pragma once

#include <algorithm>
#include <cstdint>

#include "tprimat/train/cpu/activations.hpp"
#include "tprimat/train/cpu/context_parallel.hpp"
#include "tprimat/train/cpu/fp8_emulation.hpp"
#include "tprimat/train/cpu/tensor_parallel.hpp"
#include "tprimat/train/parameters.hpp"
#include "tprimat/train/rank_plan.hpp"

namespace tprimat::train::cpu {

/// What a decoder layer reads besides its activations, the same for every layer of the stage:
/// the rank's plan (its share of the heads and the FFN), the flat weights and gradients, the
/// RoPE tables, attention's workspace, the TP and CP groups, the FP8 state and backward's
/// scratch. The transformer lends them for one pass; the layer owns nothing.
template <class Backend, class T>
struct LayerResources {
  const RankPlan& plan;
  T* params;
  T* grads;
  const T* rope_cos;  // [local_seq, head_dim / 2], at each local token's position
  const T* rope_sin;
  T* attention_workspace;
  TensorParallel<Backend, T>& tp;
  ContextParallel<Backend, T>& cp;
  Fp8Emulation<T>& fp8;
  BackwardScratch<T>& scratch;
};

/// The decoder layer of the stage, forward and backward over one micro-batch, in its two
/// halves: attention (x_mid = x + attention(rope(xn1 Wq + bq), rope(xn1 Wk + bk), xn1 Wv + bv)
/// Wo) and MLP (x_next = x_mid + swiglu(xn2 Wg, xn2 Wu) Wd), each norm on the residual stream.
/// FP8 (docs/fp8.md): the GEMMs read Q(activation) and Q(weight), and in the backward
/// Q(gradient). xn1 and xn2 are replaced by their quantised values (their norms' backward reads x
/// and rstd); the attention output is quantised into a copy, since attention's backward reads it
/// as it is; h and the attention output are quantised again in the backward with the scales the
/// forward used. The residual stream's gradient dx stays unquantised; its Q goes to
/// scratch.fp8_grad.
template <class Backend, class T>
class DecoderLayer {
 public:
  using enum Projection;
  explicit DecoderLayer(const LayerResources<Backend, T>& resources)
      : r(resources),
        d(resources.plan.d),
        s(resources.scratch),
        n(resources.plan.n),
        h(d.hidden),
        qd(d.q_dim()),
        kvd(d.kv_dim()),
        f(d.ffn),
        mbs(resources.plan.shape.mbs),
        seq(resources.plan.local_seq) {}

  /// Forward of local layer `l` of micro-batch slot `slot` on `a` (whose x holds the layer's
  /// input), leaving its output in `next` [rows, hidden] (the next layer's x, or the stage's).
  void forward(int l, int slot, LayerActivations<T>& a, T* next) {
    attention_forward(l, slot, a);
    mlp_forward(l, slot, a, next);
  }

  /// Backward of local layer `l` of micro-batch slot `slot`: the residual stream's gradient in
  /// scratch.dx (that of the layer's output) becomes that of its input; the weights' gradients
  /// are ADDED to grads.
  void backward(int l, int slot, const LayerActivations<T>& a) {
    mlp_backward(l, slot, a);
    attention_backward(l, slot, a);
  }

 private:
  using B = Backend;
  using F = Fp8Tensor;

  T* p(std::int64_t offset) const { return r.params + offset; }
  T* g(std::int64_t offset) const { return r.grads + offset; }
  /// The weight the forward and input-gradient GEMMs of local layer `l` read: its FP8 copy in an
  /// FP8 layer, the master otherwise (the weight gradient always goes to the master's).
  /// Projection w of local layer l as its GEMMs read it: FP8-quantised in an FP8 layer.
  const T* weight(int l, const LayerParams& lp, Projection w) const {
    return r.fp8.layer_in_fp8(l) ? r.fp8.weight(l, fp8_weight(w)) : p(lp[w]);
  }

  void attention_forward(int l, int slot, LayerActivations<T>& a) {
    const LayerParams& lp = r.plan.table.layers[l];
    const bool q8 = r.fp8.layer_in_fp8(l);
    r.tp.norm_forward(a.x.data(), p(lp.attn_norm), a.xn1.data(), a.rstd1.data());
    if (q8) r.fp8.cast_activation(l, F::x_qkv, slot, a.xn1.data(), a.xn1.data(), n * h);
    B::gemm(false, false, n, qd, h, T(1), a.xn1.data(), h, weight(l, lp, wq), qd, T(0),
            a.q.data(), qd);
    B::gemm(false, false, n, kvd, h, T(1), a.xn1.data(), h, weight(l, lp, wk), kvd, T(0),
            a.k.data(), kvd);
    B::gemm(false, false, n, kvd, h, T(1), a.xn1.data(), h, weight(l, lp, wv), kvd, T(0),
            a.v.data(), kvd);
    if (d.qkv_bias) {
      B::add_bias(a.q.data(), p(lp.bq), n, qd);
      B::add_bias(a.k.data(), p(lp.bk), n, kvd);
      B::add_bias(a.v.data(), p(lp.bv), n, kvd);
    }
    B::rope_forward(a.q.data(), n, seq, d.heads, d.head_dim, r.rope_cos, r.rope_sin);
    B::rope_forward(a.k.data(), n, seq, d.kv_heads, d.head_dim, r.rope_cos, r.rope_sin);
    if (r.cp.on())
      r.cp.attention_forward(a.q.data(), a.k.data(), a.v.data(), a.attn.data(), a.lse.data());
    else
      B::attention_forward(a.q.data(), a.k.data(), a.v.data(), a.attn.data(), a.lse.data(), mbs,
                           seq, d.heads, d.kv_heads, d.head_dim, r.attention_workspace);
    const T* attn = a.attn.data();
    if (q8) {
      r.fp8.cast_activation(l, F::x_o, slot, a.attn.data(), s.fp8_attn.data(), n * qd);
      attn = s.fp8_attn.data();
    }
    const T* o_weight = weight(l, lp, wo);
    if (!r.tp.splits()) {
      std::copy(a.x.begin(), a.x.end(), a.x_mid.begin());  // residual
      B::gemm(false, false, n, h, qd, T(1), attn, qd, o_weight, h, T(1), a.x_mid.data(), h);
    } else {  // row-parallel O: partial products summed over TP, then the residual
      T* partial = r.tp.partial_buffer(a.x_mid.data());
      B::gemm(false, false, n, h, qd, T(1), attn, qd, o_weight, h, T(0), partial, h);
      r.tp.row_parallel_sum(partial, a.x.data(), a.x_mid.data());
    }
  }

  void mlp_forward(int l, int slot, LayerActivations<T>& a, T* next) {
    const LayerParams& lp = r.plan.table.layers[l];
    const bool q8 = r.fp8.layer_in_fp8(l);
    r.tp.norm_forward(a.x_mid.data(), p(lp.mlp_norm), a.xn2.data(), a.rstd2.data());
    if (q8) r.fp8.cast_activation(l, F::x_mlp, slot, a.xn2.data(), a.xn2.data(), n * h);
    B::gemm(false, false, n, f, h, T(1), a.xn2.data(), h, weight(l, lp, w_gate), f, T(0),
            a.gate.data(), f);
    B::gemm(false, false, n, f, h, T(1), a.xn2.data(), h, weight(l, lp, w_up), f, T(0),
            a.up.data(), f);
    B::swiglu_forward(a.gate.data(), a.up.data(), s.h.data(), n * f);
    if (q8) r.fp8.cast_activation(l, F::x_down, slot, s.h.data(), s.h.data(), n * f);
    const T* down_weight = weight(l, lp, w_down);
    if (!r.tp.splits()) {
      std::copy(a.x_mid.begin(), a.x_mid.end(), next);  // residual
      B::gemm(false, false, n, h, f, T(1), s.h.data(), f, down_weight, h, T(1), next, h);
    } else {  // row-parallel down: as O
      T* partial = r.tp.partial_buffer(next);
      B::gemm(false, false, n, h, f, T(1), s.h.data(), f, down_weight, h, T(0), partial, h);
      r.tp.row_parallel_sum(partial, a.x_mid.data(), next);
    }
  }

  void mlp_backward(int l, int slot, const LayerActivations<T>& a) {
    const LayerParams& lp = r.plan.table.layers[l];
    const bool q8 = r.fp8.layer_in_fp8(l);
    B::swiglu_forward(a.gate.data(), a.up.data(), s.h.data(), n * f);  // recompute, not stored
    const T* d_next = r.tp.full_residual_grad(s.dx.data());
    if (q8) {
      r.fp8.recast_activation(l, F::x_down, slot, s.h.data(), s.h.data(), n * f);
      r.fp8.cast_gradient(l, F::g_down, d_next, s.fp8_grad.data(), n * h);
      d_next = s.fp8_grad.data();
    }
    B::gemm(true, false, f, h, n, T(1), s.h.data(), f, d_next, h, T(1), g(lp[w_down]), h);
    B::gemm(false, true, n, f, h, T(1), d_next, h, weight(l, lp, w_down), h, T(0),
            s.dh.data(), f);
    B::swiglu_backward(a.gate.data(), a.up.data(), s.dh.data(), s.dgate.data(), s.dup.data(), n * f);
    if (q8) {
      r.fp8.cast_gradient(l, F::g_gate, s.dgate.data(), s.dgate.data(), n * f);
      r.fp8.cast_gradient(l, F::g_up, s.dup.data(), s.dup.data(), n * f);
    }
    B::gemm(true, false, h, f, n, T(1), a.xn2.data(), h, s.dgate.data(), f, T(1), g(lp[w_gate]), f);
    B::gemm(true, false, h, f, n, T(1), a.xn2.data(), h, s.dup.data(), f, T(1), g(lp[w_up]), f);
    B::gemm(false, true, n, h, f, T(1), s.dgate.data(), f, weight(l, lp, w_gate), f, T(0),
            s.dxn.data(), h);
    B::gemm(false, true, n, h, f, T(1), s.dup.data(), f, weight(l, lp, w_up), f, T(1),
            s.dxn.data(), h);
    r.tp.norm_backward(s.dxn.data(), a.x_mid.data(), p(lp.mlp_norm), a.rstd2.data(), s.dx.data(),
                       g(lp.mlp_norm));
  }

  void attention_backward(int l, int slot, const LayerActivations<T>& a) {
    const LayerParams& lp = r.plan.table.layers[l];
    const bool q8 = r.fp8.layer_in_fp8(l);
    const T* attn = a.attn.data();
    const T* d_mid = r.tp.full_residual_grad(s.dx.data());
    if (q8) {
      r.fp8.recast_activation(l, F::x_o, slot, a.attn.data(), s.fp8_attn.data(), n * qd);
      r.fp8.cast_gradient(l, F::g_o, d_mid, s.fp8_grad.data(), n * h);
      attn = s.fp8_attn.data();
      d_mid = s.fp8_grad.data();
    }
    B::gemm(true, false, qd, h, n, T(1), attn, qd, d_mid, h, T(1), g(lp[wo]), h);
    B::gemm(false, true, n, qd, h, T(1), d_mid, h, weight(l, lp, wo), h, T(0), s.dattn.data(),
            qd);
    if (r.cp.on())
      r.cp.attention_backward(a.q.data(), a.k.data(), a.v.data(), a.attn.data(), a.lse.data(),
                              s.dattn.data(), s.dq.data(), s.dk.data(), s.dv.data());
    else
      B::attention_backward(a.q.data(), a.k.data(), a.v.data(), a.attn.data(), a.lse.data(),
                            s.dattn.data(), s.dq.data(), s.dk.data(), s.dv.data(), mbs, seq,
                            d.heads, d.kv_heads, d.head_dim, r.attention_workspace);
    B::rope_backward(s.dq.data(), n, seq, d.heads, d.head_dim, r.rope_cos, r.rope_sin);
    B::rope_backward(s.dk.data(), n, seq, d.kv_heads, d.head_dim, r.rope_cos, r.rope_sin);
    if (d.qkv_bias) {
      B::bias_backward(s.dq.data(), n, qd, g(lp.bq));
      B::bias_backward(s.dk.data(), n, kvd, g(lp.bk));
      B::bias_backward(s.dv.data(), n, kvd, g(lp.bv));
    }
    if (q8) {  // after the biases' gradients, which sum the unquantised ones
      r.fp8.cast_gradient(l, F::g_q, s.dq.data(), s.dq.data(), n * qd);
      r.fp8.cast_gradient(l, F::g_k, s.dk.data(), s.dk.data(), n * kvd);
      r.fp8.cast_gradient(l, F::g_v, s.dv.data(), s.dv.data(), n * kvd);
    }
    B::gemm(true, false, h, qd, n, T(1), a.xn1.data(), h, s.dq.data(), qd, T(1), g(lp[wq]), qd);
    B::gemm(true, false, h, kvd, n, T(1), a.xn1.data(), h, s.dk.data(), kvd, T(1), g(lp[wk]), kvd);
    B::gemm(true, false, h, kvd, n, T(1), a.xn1.data(), h, s.dv.data(), kvd, T(1), g(lp[wv]), kvd);
    B::gemm(false, true, n, h, qd, T(1), s.dq.data(), qd, weight(l, lp, wq), qd, T(0),
            s.dxn.data(), h);
    B::gemm(false, true, n, h, kvd, T(1), s.dk.data(), kvd, weight(l, lp, wk), kvd, T(1),
            s.dxn.data(), h);
    B::gemm(false, true, n, h, kvd, T(1), s.dv.data(), kvd, weight(l, lp, wv), kvd, T(1),
            s.dxn.data(), h);
    r.tp.norm_backward(s.dxn.data(), a.x.data(), p(lp.attn_norm), a.rstd1.data(), s.dx.data(),
                       g(lp.attn_norm));
  }

  const LayerResources<Backend, T> r;
  const model::Dims& d;  // this rank's share of the model
  BackwardScratch<T>& s;
  const std::int64_t n, h, qd, kvd, f;  // tokens; hidden, q, kv and FFN widths on this rank
  const int mbs, seq;  // seq: the tokens of each sequence on this rank (seq / CP)
};

}  // namespace tprimat::train::cpu
