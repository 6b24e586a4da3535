// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Causal GQA attention at Llama 3.1 8B's shape, forward and backward at seq 2048/4096/8192 and
// 8192 tokens a call: the project's flash kernels beside cuDNN's fused SDPA; and the blocks a
// context-parallel rank runs instead (2048-row chunks over the keys up to theirs).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "cuda_timing.hpp"
#include "tprimat/backend/gpu/attention.hpp"
#include "tprimat/model/llama31_8b.hpp"

namespace tprimat::gpu_bench {
namespace {

using backend::AttentionShape;
using backend::CudnnAttention;
using backend::FlashAttention;
using Llama = model::Llama31_8B;

enum class Pass { fwd, bwd };

/// Llama 3.1 8B: 32 query heads, 8 KV heads, head_dim 128.
AttentionShape llama_shape(int batch, int seq) {
  return {.batch = batch,
          .seq = seq,
          .heads = Llama::heads,
          .kv_heads = Llama::kv_heads,
          .head_dim = Llama::head_dim};
}

/// Matrix FLOPs of attention, the usual count: forward 4 b h s^2 d (Q K^T, P V), backward
/// 10 b h s^2 d (Q K^T again, dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q), over the scores
/// the mask keeps: half of them causal, every one unmasked (context parallelism's prefix), about
/// s (t - s / 2) causal at the keys' end. Work a kernel repeats (FlashAttention's dQ pass
/// recomputes P) is not counted. Bytes: forward reads q, k, v and writes o and lse; backward reads
/// q, k, v, o, dO and lse and writes dq, dk, dv.
Work attention_work(const AttentionShape& s, Pass pass) {
  const double kept = s.mask == AttentionShape::Mask::causal      ? double(s.seq) * s.seq / 2.0
                      : s.mask == AttentionShape::Mask::causal_end
                          ? double(s.seq) * (s.keys() - s.seq / 2.0)
                          : double(s.seq) * s.keys();
  const double per = double(s.batch) * s.heads * kept * s.head_dim;
  const double rows = double(s.batch) * s.seq;
  const double q = rows * s.heads * s.head_dim * sizeof(bf16);
  const double kv = double(s.batch) * s.keys() * s.kv_heads * s.head_dim * sizeof(bf16);
  const double lse = rows * s.heads * sizeof(float);
  if (pass == Pass::fwd) return {2 * q + 2 * kv + lse, 4.0 * per};
  return {3 * q + 2 * kv + lse + q + 2 * kv, 10.0 * per};
}

/// One input set of an attention call, inputs filled with unit normals on the device; o and lse
/// from a real forward, so the backward sees consistent statistics.
struct Tensors {
  DeviceBuffer<bf16> q, k, v, o, dout, dq, dk, dv;
  DeviceBuffer<float> lse;
  template <class Policy>
  Tensors(const AttentionShape& s, cudaStream_t stream, std::uint64_t seed, Policy)
      : q(rows(s) * s.heads * s.head_dim, stream),
        k(keys(s) * s.kv_heads * s.head_dim, stream),
        v(keys(s) * s.kv_heads * s.head_dim, stream),
        o(rows(s) * s.heads * s.head_dim, stream),
        dout(rows(s) * s.heads * s.head_dim, stream),
        dq(rows(s) * s.heads * s.head_dim, stream),
        dk(keys(s) * s.kv_heads * s.head_dim, stream),
        dv(keys(s) * s.kv_heads * s.head_dim, stream),
        lse(std::size_t(s.batch) * s.heads * s.seq, stream) {
    fill_normal(q.data(), q.size(), seed, stream);
    fill_normal(k.data(), k.size(), seed + 1, stream);
    fill_normal(v.data(), v.size(), seed + 2, stream);
    fill_normal(dout.data(), dout.size(), seed + 3, stream);
    Policy::forward(q.data(), k.data(), v.data(), o.data(), lse.data(), s, stream);
  }
  static std::size_t rows(const AttentionShape& s) { return std::size_t(s.batch) * s.seq; }
  static std::size_t keys(const AttentionShape& s) { return std::size_t(s.batch) * s.keys(); }
};

/// The fixture both passes share: skips with the reason where the GPU or the policy cannot run
/// the shape, prepares the policy (cuDNN builds its plans), builds the rotated input sets and the
/// backward's workspace, then times `pass` through time_calls.
template <class Policy>
void BM_Attention(benchmark::State& state, AttentionShape s, Pass pass) {
  if (skip_without_gpu(state)) return;
  try {
    if (!Policy::supports(s))
      return state.SkipWithError(
          (std::string(Policy::name) + " attention does not support this shape").c_str());
    Stream stream;
    if constexpr (requires { Policy::prepare(s, stream); }) Policy::prepare(s, stream);
    const Work work = attention_work(s, pass);
    const int sets = rotation_sets(work.bytes);
    std::vector<Tensors> t;
    for (int i = 0; i < sets; ++i) t.emplace_back(s, stream, 10 * i + 1, Policy{});
    DeviceBuffer<std::byte> workspace(std::max<std::size_t>(Policy::backward_workspace_bytes(s), 1),
                                      stream);
    gpu_check(cudaStreamSynchronize(stream), "set-up");
    const Timing timing = time_calls(state, stream, sets, [&](int i) {
      Tensors& x = t[i % sets];
      if (pass == Pass::fwd)
        Policy::forward(x.q.data(), x.k.data(), x.v.data(), x.o.data(), x.lse.data(), s, stream);
      else
        Policy::backward(x.q.data(), x.k.data(), x.v.data(), x.o.data(), x.lse.data(),
                         x.dout.data(), x.dq.data(), x.dk.data(), x.dv.data(), s, workspace.data(),
                         stream);
    });
    report(state, timing, work);
    state.counters["FLOP"] = work.flops;
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

/// Attention/<policy>/<fwd|bwd>/seq:S/batch:B, B = 8192 / S: the same tokens per call at every
/// length, so the time grows with S (the s^2 term), not with the batch.
template <class Policy>
void add_policy() {
  for (Pass pass : {Pass::fwd, Pass::bwd})
    for (int seq : {2048, 4096, 8192}) {
      const int batch = 8192 / seq;
      const std::string name = "Attention/" + std::string(Policy::name) + "/" +
                               (pass == Pass::fwd ? "fwd" : "bwd") + "/seq:" + std::to_string(seq) +
                               "/batch:" + std::to_string(batch);
      benchmark::RegisterBenchmark(name.c_str(), BM_Attention<Policy>, llama_shape(batch, seq),
                                   pass)
          ->UseManualTime()
          ->Iterations(20)
          ->Unit(benchmark::kMicrosecond);
    }
}

/// AttentionBlock/<policy>/<fwd|bwd>/q:2048/keys:K/<causal|none|causal_end>: what a CP 2 rank runs
/// at seq 8192 (chunks of 2048; rank 0 holds chunks 0 and 3, rank 1 chunks 1 and 2): chunk 0
/// causal over its own keys, every later chunk in one call through its own keys (causal_end: the
/// flash kernels' way) or split into the causal diagonal and the earlier keys unmasked (none:
/// cuDNN's).
template <class Policy>
void add_context_parallel_blocks() {
  using Mask = AttentionShape::Mask;
  for (Pass pass : {Pass::fwd, Pass::bwd})
    for (int keys : {2048, 4096, 6144, 8192})
      for (Mask mask : {Mask::causal, Mask::none, Mask::causal_end}) {
        if ((mask == Mask::causal) != (keys == 2048) && mask != Mask::none) continue;
        if (mask == Mask::none && keys == 8192) continue;
        AttentionShape s = llama_shape(1, 2048);
        s.kv_seq = keys;
        s.mask = mask;
        const std::string name = "AttentionBlock/" + std::string(Policy::name) + "/" +
                                 (pass == Pass::fwd ? "fwd" : "bwd") + "/q:2048/keys:" +
                                 std::to_string(keys) +
                                 (mask == Mask::causal ? "/causal"
                                  : mask == Mask::none ? "/none"
                                                       : "/causal_end");
        benchmark::RegisterBenchmark(name.c_str(), BM_Attention<Policy>, s, pass)
            ->UseManualTime()
            ->Iterations(20)
            ->Unit(benchmark::kMicrosecond);
      }
}

const bool registered = (add_policy<CudnnAttention>(), add_policy<FlashAttention>(),
                         add_context_parallel_blocks<CudnnAttention>(),
                         add_context_parallel_blocks<FlashAttention>(), true);

}  // namespace
}  // namespace tprimat::gpu_bench
