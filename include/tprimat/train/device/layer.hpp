// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// DecoderLayer: one decoder layer's forward and backward on the device (RMSNorm, QKV, RoPE,
// attention, O, RMSNorm, SwiGLU MLP), in bf16 GEMMs on an fp32 residual stream.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tprimat/backend/cpu.hpp"  // rope tables, computed on the host in double
#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/buffer.hpp"
#include "tprimat/profile/nvtx.hpp"
#include "tprimat/train/device/activations.hpp"
#include "tprimat/train/device/attention.hpp"
#include "tprimat/train/device/context_parallel_attention.hpp"
#include "tprimat/train/device/fp8_linears.hpp"
#include "tprimat/train/device/gemms.hpp"
#include "tprimat/train/device/parameters.hpp"
#include "tprimat/train/device/phase_timer.hpp"
#include "tprimat/train/rank_plan.hpp"
#include "tprimat/train/device/tensor_parallel.hpp"

namespace tprimat::train::device {

/// RoPE's cos and sin [local_seq, head_dim / 2], fp32, shared by every layer: the rows of this
/// rank's tokens' positions (all of them without context parallelism).
struct RopeTables {
  backend::DeviceBuffer<float> cos, sin;

  /// The table's rope_cos and rope_sin (train/buffer_table.hpp's step_buffers).
  void allocate(BufferAllocator& a, const BufferTable& table) {
    for (const BufferEntry& e : table) {
      if (e.buffer == BufferId::rope_cos) cos = a.take<float>(e);
      if (e.buffer == BufferId::rope_sin) sin = a.take<float>(e);
    }
  }
  void upload(const RankPlan& p) {
    const std::int64_t half = p.d.head_dim / 2;
    std::vector<float> cos_t(p.local_seq * half), sin_t(p.local_seq * half);
    const std::vector<int> positions =
        parallel::ContextSplit{p.shape.seq, p.cp, p.cp_rank}.positions();
    backend::Cpu::rope_tables_at(p.d, std::span<const int>(positions), cos_t.data(), sin_t.data());
    cos.upload(cos_t);
    sin.upload(sin_t);
  }
};

/// The attention a layer runs: over its whole sequences, or context-parallel (one of the two).
struct LayerAttention {
  using bf16 = backend::Gpu::bf16;
  const DeviceAttention* whole = nullptr;
  ContextParallelAttention* context_parallel = nullptr;

  /// Context parallelism: starts gathering the keys and values beside what `stream` runs next.
  void begin_gather(const bf16* k, const bf16* v, gpuStream_t stream) const {
    if (context_parallel) context_parallel->begin_gather(k, v, stream);
  }
  void forward(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse,
               gpuStream_t stream) const {
    if (context_parallel) return context_parallel->forward(q, k, v, o, lse, stream);
    whole->forward(q, k, v, o, lse, stream);
  }
  void backward(const bf16* q, const bf16* k, const bf16* v, const bf16* o, const float* lse,
                const bf16* dout, bf16* dq, bf16* dk, bf16* dv, void* workspace,
                gpuStream_t stream) const {
    if (context_parallel)
      return context_parallel->backward(q, k, v, o, lse, dout, dq, dk, dv, workspace, stream);
    whole->backward(q, k, v, o, lse, dout, dq, dk, dv, workspace, stream);
  }
};

/// A layer's passes over what the engine owns: its weights and gradients (DeviceParameters at
/// the layer's LayerParams offsets), its activations, the shared scratch. Under TP the O and
/// down projections are row-parallel (their sums all-reduced) and the input gradients are
/// all-reduced before each RMSNorm backward; under sequence parallelism the norms run on this
/// rank's RankPlan::rows, with TensorParallel's gathers and scatters around the GEMMs. In a
/// layer Fp8Linears::on(), the projections run in FP8 (docs/fp8.md); everything else is the same.
struct DecoderLayer {
  using Gpu = backend::Gpu;
  using enum Projection;
  const RankPlan& plan;
  DeviceParameters& params;
  Scratch& scratch;
  const RopeTables& rope;
  LayerAttention attention;
  TensorParallel& tp;
  PhaseTimer& timer;
  Fp8Linears& fp8;
  Gemms gemm;

  /// a.x -> `next` (the next layer's input or the stage's output); keeps what backward needs in a
  /// (local layer l, activation slot `slot`).
  void forward(const LayerParams& lp, LayerActivations& a, float* next, int l, int slot) {
    const model::Dims& d = plan.d;
    const std::int64_t n = plan.n, h = d.hidden, qd = d.q_dim(), kvd = d.kv_dim(), f = d.ffn;
    const gpuStream_t stream = gemm.stream;
    const bool bias = d.qkv_bias;
    const bool f8 = fp8.on(l);
    // An FP8 layer keeps its norms' outputs only as FP8 transposes (Fp8Linears).
    bf16* xn1 = f8 ? scratch.xn.data() : a.xn1;
    norm_output(a.x.data(), params.w(lp.attn_norm), xn1, a.rstd1.data());
    // K and V first: under context parallelism their gather runs beside Q's projection.
    if (f8) {
      tp.gather_rows(xn1, stream, timer);
      const Fp8Cast x = fp8.cast_input(slot, l, x_qkv, xn1, stream);
      fp8.forward<bf16>(gemm, x, fp8.forward_weight(lp, l, wk, stream), h, kvd, a.k.data(),
                        nullptr, bias ? params.w(lp.bk) : nullptr);
      fp8.forward<bf16>(gemm, x, fp8.forward_weight(lp, l, wv, stream), h, kvd, a.v.data(),
                        nullptr, bias ? params.w(lp.bv) : nullptr);
      rope_keys_then_gather(a);
      fp8.forward<bf16>(gemm, x, fp8.forward_weight(lp, l, wq, stream), h, qd, a.q.data(), nullptr,
                        bias ? params.w(lp.bq) : nullptr);
    } else {
      // Q with K and V where no gather waits for the keys: under sequence parallelism all three
      // hide the TP all-gather of the norm's rows.
      const bool keys_first = attention.context_parallel != nullptr;
      const auto q_rows = [&](std::int64_t r, std::int64_t m) {
        gemm(false, false, m, qd, h, xn1 + r * h, h, params.w(lp[wq]), qd, 0.f,
             a.q.data() + r * qd, qd, bias ? params.w(lp.bq) : nullptr);
      };
      tp.gather_rows_then(xn1, stream, timer, [&](std::int64_t r, std::int64_t m) {
        const bf16* x = xn1 + r * h;
        if (!keys_first) q_rows(r, m);
        gemm(false, false, m, kvd, h, x, h, params.w(lp[wk]), kvd, 0.f, a.k.data() + r * kvd, kvd,
             bias ? params.w(lp.bk) : nullptr);
        gemm(false, false, m, kvd, h, x, h, params.w(lp[wv]), kvd, 0.f, a.v.data() + r * kvd, kvd,
             bias ? params.w(lp.bv) : nullptr);
      });
      rope_keys_then_gather(a);
      if (keys_first) q_rows(0, n);
    }
    Gpu::rope_forward(a.q.data(), n, plan.local_seq, d.heads, d.head_dim, rope.cos.data(),
                      rope.sin.data(), stream);
    timer.mark("attention");
    attention.forward(a.q.data(), a.k.data(), a.v.data(), a.attn.data(), a.lse.data(), stream);
    timer.mark("elementwise");
    if (f8)
      fp8_row_parallel_add(fp8.cast_input(slot, l, x_o, a.attn.data(), stream),
                           fp8.forward_weight(lp, l, wo, stream), qd, a.x.data(), a.x_mid.data());
    else
      tp.row_parallel_add(gemm, n, h, qd, a.attn.data(), params.w(lp[wo]), a.x.data(),
                          a.x_mid.data(), timer);
    mlp_inputs(lp, a, l, slot);
    // An FP8 layer computes SwiGLU's output where it casts it (never in bf16).
    if (f8) {
      fp8_row_parallel_add(fp8.cast_input(slot, l, x_down, Fp8Source::swiglu(a.gate, a.up), stream),
                           fp8.forward_weight(lp, l, w_down, stream), f, a.x_mid.data(), next);
    } else {
      Gpu::swiglu_forward(a.gate, a.up, scratch.hidden.data(), n * f, stream);
      tp.row_parallel_add(gemm, n, h, f, scratch.hidden.data(), params.w(lp[w_down]), a.x_mid.data(),
                          next, timer);
    }
  }

  /// RoPE on the keys, then (context parallelism) their and the values' gather started.
  void rope_keys_then_gather(LayerActivations& a) {
    const model::Dims& d = plan.d;
    Gpu::rope_forward(a.k.data(), plan.n, plan.local_seq, d.kv_heads, d.head_dim,
                      rope.cos.data(), rope.sin.data(), gemm.stream);
    attention.begin_gather(a.k.data(), a.v.data(), gemm.stream);
  }

  /// The MLP's inputs from a.x_mid: its norm's output (a.xn2, or an FP8 layer's cast) and the
  /// gate and up projections (a.gate, a.up). The forward's, and selective recomputation's again.
  void mlp_inputs(const LayerParams& lp, LayerActivations& a, int l, int slot) {
    const model::Dims& d = plan.d;
    const std::int64_t h = d.hidden, f = d.ffn;
    const gpuStream_t stream = gemm.stream;
    const bool f8 = fp8.on(l);
    bf16* xn2 = f8 ? scratch.xn.data() : a.xn2;
    norm_output(a.x_mid.data(), params.w(lp.mlp_norm), xn2, a.rstd2.data());
    if (f8) {
      tp.gather_rows(xn2, stream, timer);
      const Fp8Cast x = fp8.cast_input(slot, l, x_mlp, xn2, stream);
      fp8.forward<bf16>(gemm, x, fp8.forward_weight(lp, l, w_gate, stream), h, f, a.gate);
      fp8.forward<bf16>(gemm, x, fp8.forward_weight(lp, l, w_up, stream), h, f, a.up);
    } else {
      tp.gather_rows_then(xn2, stream, timer, [&](std::int64_t r, std::int64_t m) {
        const bf16* x = xn2 + r * h;
        gemm(false, false, m, f, h, x, h, params.w(lp[w_gate]), f, 0.f, a.gate + r * f, f);
        gemm(false, false, m, f, h, x, h, params.w(lp[w_up]), f, 0.f, a.up + r * f, f);
      });
    }
  }

  /// out = RMSNorm(x) (this rank's rows under sequence parallelism), rstd its statistics.
  void norm_output(const float* x, const bf16* weight, bf16* out, float* rstd) {
    backend::Gpu::rmsnorm_forward(x, weight, nullptr, plan.rows, plan.d.hidden,
                                  static_cast<float>(plan.d.norm_eps), plan.own_rows(out), rstd,
                                  gemm.stream);
  }

  /// Selective recomputation's reruns, first in a layer's backward: the same kernels on the same
  /// inputs as its forward (FP8: the same scales), so the gradients do not change.
  void rerun_selected(const LayerParams& lp, LayerActivations& a, int l, int slot) {
    using train::RecomputeModule;
    const train::Recompute& r = plan.shape.recompute;
    if (!r.on() || r.full()) return;
    const profile::Range range("recompute selective", l);
    if (r.reruns(RecomputeModule::mlp)) mlp_inputs(lp, a, l, slot);
    if (!r.reruns(RecomputeModule::layernorm) || fp8.on(l)) return;  // FP8: casts kept
    norm_output(a.x.data(), params.w(lp.attn_norm), a.xn1, a.rstd1.data());
    tp.gather_rows(a.xn1, gemm.stream, timer);
    if (r.reruns(RecomputeModule::mlp)) return;  // xn2 rewritten with gate and up
    norm_output(a.x_mid.data(), params.w(lp.mlp_norm), a.xn2, a.rstd2.data());
    tp.gather_rows(a.xn2, gemm.stream, timer);
  }

  /// scratch.dres (and dres_bf) hold d next on entry, d a.x on return; the weight gradients are
  /// written (acc 0: the step's first micro-batch) or added (acc 1). Under sequence parallelism
  /// dres and dres_bf hold this rank's rows: dres_bf's are gathered first, for the row-parallel
  /// down projection's GEMMs.
  void backward(const LayerParams& lp, LayerActivations& a, float acc, int l, int slot) {
    rerun_selected(lp, a, l, slot);
    // Context parallelism: the attention backward's gather runs beside the MLP's backward.
    attention.begin_gather(a.k.data(), a.v.data(), gemm.stream);
    if (fp8.on(l)) {
      tp.gather_rows(scratch.dres_bf.data(), gemm.stream, timer);
      return backward_fp8(lp, a, acc, l, slot);
    }
    const model::Dims& d = plan.d;
    const std::int64_t n = plan.n, h = d.hidden, qd = d.q_dim(), kvd = d.kv_dim(), f = d.ffn;
    const gpuStream_t stream = gemm.stream;
    Scratch& s = scratch;
    // MLP half: x_next = x_mid + swiglu(xn2 Wg, xn2 Wu) Wd; dres holds d x_next.
    // The input gradient first: the SwiGLU backward then recomputes the forward's h (not kept)
    // in the same pass over gate and up, for the down projection's weight gradient.
    tp.gather_rows_then(s.dres_bf.data(), stream, timer, [&](std::int64_t r, std::int64_t m) {
      gemm(false, true, m, f, h, s.dres_bf.data() + r * h, h, params.w(lp[w_down]), h, 0.f,
           s.dhidden.data() + r * f, f);
    });
    Gpu::swiglu_backward(a.gate, a.up, s.dhidden.data(), s.dgate.data(), s.dup.data(),
                         s.hidden.data(), n * f, stream);
    // The input gradient before the weight gradients: its TP all-reduce runs beside them.
    gemm(false, true, n, h, f, s.dgate.data(), f, params.w(lp[w_gate]), f, 0.f, s.dxn.data(), h);
    gemm(false, true, n, h, f, s.dup.data(), f, params.w(lp[w_up]), f, 1.f, s.dxn.data(), h);
    tp.begin_all_reduce(s.dxn.data(), stream, timer);
    gemm(true, false, f, h, n, s.hidden.data(), f, s.dres_bf.data(), h, acc, params.g(lp[w_down]),
         h);
    // Under sequence parallelism with overlap the gate and up weight gradients wait until the
    // norm's backward is done: they hide the attention half's all-gather instead, the down
    // projection's alone the reduce-scatter (each about the size of what it hides).
    const bool gather_beside = tp.gathers_beside();
    const auto gate_up_weight_grads = [&] {
      gemm(true, false, h, f, n, a.xn2, h, s.dgate.data(), f, acc, params.g(lp[w_gate]), f);
      gemm(true, false, h, f, n, a.xn2, h, s.dup.data(), f, acc, params.g(lp[w_up]), f);
    };
    if (!gather_beside) gate_up_weight_grads();
    tp.end_all_reduce(stream);
    Gpu::rmsnorm_backward(a.x_mid.data(), params.w(lp.mlp_norm), nullptr, a.rstd2.data(),
                          plan.own_rows(s.dxn.data()), plan.rows, d.hidden, s.dres.data(),
                          plan.own_rows(s.dres_bf.data()), params.g(lp.mlp_norm),
                          s.norm_partials.data(), stream);
    // Attention half: x_mid = x + attention(rope(xn1 Wq + bq), rope(xn1 Wk + bk), xn1 Wv + bv)Wo.
    // The row-parallel O's input gradient needs every row of dres_bf (gathered).
    const auto o_input_grad = [&](std::int64_t r, std::int64_t m) {
      gemm(false, true, m, qd, h, s.dres_bf.data() + r * h, h, params.w(lp[wo]), h, 0.f,
           s.dattn.data() + r * qd, qd);
    };
    if (gather_beside) {
      tp.begin_gather(s.dres_bf.data(), stream);
      gate_up_weight_grads();
      tp.end_side(stream);
      o_input_grad(0, n);
    } else {
      tp.gather_rows_then(s.dres_bf.data(), stream, timer, o_input_grad);
    }
    attention_backward(lp, a);
    gemm(false, true, n, h, qd, s.dq.data(), qd, params.w(lp[wq]), qd, 0.f, s.dxn.data(), h);
    gemm(false, true, n, h, kvd, s.dk.data(), kvd, params.w(lp[wk]), kvd, 1.f, s.dxn.data(), h);
    gemm(false, true, n, h, kvd, s.dv.data(), kvd, params.w(lp[wv]), kvd, 1.f, s.dxn.data(), h);
    // O's weight gradient here (dres_bf and attn are unchanged since): with Q, K and V's it
    // runs beside the input gradient's reduction.
    tp.begin_all_reduce(s.dxn.data(), stream, timer);
    gemm(true, false, qd, h, n, a.attn.data(), qd, s.dres_bf.data(), h, acc, params.g(lp[wo]), h);
    gemm(true, false, h, qd, n, a.xn1, h, s.dq.data(), qd, acc, params.g(lp[wq]), qd);
    gemm(true, false, h, kvd, n, a.xn1, h, s.dk.data(), kvd, acc, params.g(lp[wk]), kvd);
    gemm(true, false, h, kvd, n, a.xn1, h, s.dv.data(), kvd, acc, params.g(lp[wv]), kvd);
    tp.end_all_reduce(stream);
    Gpu::rmsnorm_backward(a.x.data(), params.w(lp.attn_norm), nullptr, a.rstd1.data(),
                          plan.own_rows(s.dxn.data()), plan.rows, d.hidden, s.dres.data(),
                          plan.own_rows(s.dres_bf.data()), params.g(lp.attn_norm),
                          s.norm_partials.data(), stream);
  }

  /// scratch.dattn (the gradient of the attention output) -> scratch.dq, dk, dv (of q, k, v
  /// before RoPE) and the QKV biases' gradients: the same in bf16 and FP8 layers.
  void attention_backward(const LayerParams& lp, LayerActivations& a) {
    const model::Dims& d = plan.d;
    const std::int64_t n = plan.n, qd = d.q_dim(), kvd = d.kv_dim();
    const gpuStream_t stream = gemm.stream;
    Scratch& s = scratch;
    timer.mark("attention");
    attention.backward(a.q.data(), a.k.data(), a.v.data(), a.attn.data(), a.lse.data(),
                       s.dattn.data(), s.dq.data(), s.dk.data(), s.dv.data(),
                       s.attn_workspace.data(), stream);
    timer.mark("elementwise");
    Gpu::rope_backward(s.dq.data(), n, plan.local_seq, d.heads, d.head_dim, rope.cos.data(),
                       rope.sin.data(), stream);
    Gpu::rope_backward(s.dk.data(), n, plan.local_seq, d.kv_heads, d.head_dim, rope.cos.data(),
                       rope.sin.data(), stream);
    if (d.qkv_bias) {
      Gpu::bias_backward(s.dq.data(), n, qd, params.g(lp.bq), s.bias_partials.data(), stream);
      Gpu::bias_backward(s.dk.data(), n, kvd, params.g(lp.bk), s.bias_partials.data(), stream);
      Gpu::bias_backward(s.dv.data(), n, kvd, params.g(lp.bv), s.bias_partials.data(), stream);
    }
  }

  /// out[n, h] = residual + x w in FP8, w this rank's rows of a row-parallel weight (O, down):
  /// as TensorParallel::row_parallel_add, the residual added by TP rank 0 alone; under sequence
  /// parallelism the GEMM writes the bf16 partial product that TensorParallel::scatter_add sums.
  void fp8_row_parallel_add(const Fp8Cast& x, const Fp8Cast& w, std::int64_t in,
                            const float* residual, float* out) {
    if (tp.sequence_parallel()) {
      fp8.forward<bf16>(gemm, x, w, in, plan.d.hidden, tp.partial());
      return tp.scatter_add(residual, out, gemm.stream, timer);
    }
    fp8.forward<float>(gemm, x, w, in, plan.d.hidden, out, plan.tp_rank == 0 ? residual : nullptr);
    tp.all_reduce(out, plan.n * plan.d.hidden, gemm.stream, timer);
  }

  /// backward() of an FP8 layer: each projection's gradient cast once (E5M2, rows and transpose)
  /// for its input-gradient and weight-gradient GEMMs; the inputs' transposes are the forward's
  /// (x_o's and x_down's cast again when the copies are recast). Two scratch pairs hold the
  /// gradients' casts in flight. SwiGLU's output and gradients are computed where they are cast
  /// (never in bf16), so the down projection's weight gradient comes before SwiGLU's backward,
  /// which takes its gradient's pair.
  void backward_fp8(const LayerParams& lp, LayerActivations& a, float acc, int l, int slot) {
    const model::Dims& d = plan.d;
    const std::int64_t n = plan.n, h = d.hidden, qd = d.q_dim(), kvd = d.kv_dim(), f = d.ffn;
    const gpuStream_t stream = gemm.stream;
    Scratch& s = scratch;
    // MLP half.
    const Fp8Cast gd = fp8.cast_grad(l, g_down, s.dres_bf.data(), h, 0, 0, stream);
    fp8.input_grad<bf16>(gemm, gd, fp8.backward_weight(lp, l, w_down, stream), f, h, 0.f,
                         s.dhidden.data());
    fp8.weight_grad(gemm, fp8.saved_input(slot, l, x_down, Fp8Source::swiglu(a.gate, a.up), stream),
                    gd, f, h, acc, params.g(lp[w_down]));
    const auto [gg, gu] = fp8.cast_swiglu_grads(l, a.gate, a.up, s.dhidden.data(), stream);
    fp8.input_grad<float>(gemm, gg, fp8.backward_weight(lp, l, w_gate, stream), h, f, 0.f,
                          s.dxn.data());
    fp8.input_grad<float>(gemm, gu, fp8.backward_weight(lp, l, w_up, stream), h, f, 1.f,
                          s.dxn.data());
    tp.begin_all_reduce(s.dxn.data(), stream, timer);
    const Fp8Cast xm = fp8.saved_input(slot, l, x_mlp, nullptr, stream);
    fp8.weight_grad(gemm, xm, gg, h, f, acc, params.g(lp[w_gate]));
    fp8.weight_grad(gemm, xm, gu, h, f, acc, params.g(lp[w_up]));
    tp.end_all_reduce(stream);
    Gpu::rmsnorm_backward(a.x_mid.data(), params.w(lp.mlp_norm), nullptr, a.rstd2.data(),
                          plan.own_rows(s.dxn.data()), plan.rows, d.hidden, s.dres.data(),
                          plan.own_rows(s.dres_bf.data()), params.g(lp.mlp_norm),
                          s.norm_partials.data(), stream);
    tp.gather_rows(s.dres_bf.data(), stream, timer);  // the attention half's row-parallel O
    // Attention half.
    const Fp8Cast go = fp8.cast_grad(l, g_o, s.dres_bf.data(), h, 0, 0, stream);
    fp8.weight_grad(gemm, fp8.saved_input(slot, l, x_o, a.attn.data(), stream), go, qd, h, acc,
                    params.g(lp[wo]));
    fp8.input_grad<bf16>(gemm, go, fp8.backward_weight(lp, l, wo, stream), qd, h, 0.f,
                         s.dattn.data());
    attention_backward(lp, a);
    const Fp8Cast gq = fp8.cast_grad(l, g_q, s.dq.data(), qd, 0, 0, stream);
    const Fp8Cast gk = fp8.cast_grad(l, g_k, s.dk.data(), kvd, 1, 0, stream);
    const Fp8Cast gv = fp8.cast_grad(l, g_v, s.dv.data(), kvd, 1, n * kvd, stream);
    fp8.input_grad<float>(gemm, gq, fp8.backward_weight(lp, l, wq, stream), h, qd, 0.f,
                          s.dxn.data());
    fp8.input_grad<float>(gemm, gk, fp8.backward_weight(lp, l, wk, stream), h, kvd, 1.f,
                          s.dxn.data());
    fp8.input_grad<float>(gemm, gv, fp8.backward_weight(lp, l, wv, stream), h, kvd, 1.f,
                          s.dxn.data());
    tp.begin_all_reduce(s.dxn.data(), stream, timer);
    const Fp8Cast xq = fp8.saved_input(slot, l, x_qkv, nullptr, stream);
    fp8.weight_grad(gemm, xq, gq, h, qd, acc, params.g(lp[wq]));
    fp8.weight_grad(gemm, xq, gk, h, kvd, acc, params.g(lp[wk]));
    fp8.weight_grad(gemm, xq, gv, h, kvd, acc, params.g(lp[wv]));
    tp.end_all_reduce(stream);
    Gpu::rmsnorm_backward(a.x.data(), params.w(lp.attn_norm), nullptr, a.rstd1.data(),
                          plan.own_rows(s.dxn.data()), plan.rows, d.hidden, s.dres.data(),
                          plan.own_rows(s.dres_bf.data()), params.g(lp.attn_norm),
                          s.norm_partials.data(), stream);
  }
};

}  // namespace tprimat::train::device
