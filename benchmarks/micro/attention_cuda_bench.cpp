// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// GPU causal GQA attention at Llama 3.1 8B's shape: the project's flash kernels beside cuDNN.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tprimat/backend/cuda.hpp"
#include "tprimat/backend/cuda_attention.hpp"
#include "tprimat/backend/cuda_buffer.hpp"

namespace {

using tprimat::backend::AttentionShape;
using tprimat::backend::Cuda;
using tprimat::backend::cuda_check;
using tprimat::backend::CudnnAttention;
using tprimat::backend::DeviceBuffer;
using tprimat::backend::FlashAttention;
using bf16 = Cuda::bf16;

/// Llama 3.1 8B: 32 query heads, 8 KV heads, head_dim 128, seq 2048; batch from the argument.
AttentionShape llama_shape(std::int64_t batch) {
  return {
      .batch = static_cast<int>(batch), .seq = 2048, .heads = 32, .kv_heads = 8, .head_dim = 128};
}

/// Matrix FLOPs of causal attention, the usual count: forward 4 b h s^2 d (Q K^T, P V), backward
/// 10 b h s^2 d (Q K^T again, dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q), each halved by
/// the causal mask. Work a kernel repeats (FlashAttention's dQ pass recomputes P) is not counted.
double attention_flops(const AttentionShape& s, bool backward) {
  const double per = double(s.batch) * s.heads * double(s.seq) * s.seq * s.head_dim;
  return (backward ? 10.0 : 4.0) * per / 2.0;
}

std::vector<bf16> random_bf16(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<bf16> v(n);
  for (auto& x : v) x = __float2bfloat16(dist(rng));
  return v;
}

/// Inputs, outputs and workspace of one attention call, filled with unit normals.
struct Buffers {
  DeviceBuffer<bf16> q, k, v, o, dout, dq, dk, dv;
  DeviceBuffer<float> lse;
  DeviceBuffer<std::byte> workspace;
  Buffers(const AttentionShape& s, std::size_t workspace_bytes, cudaStream_t stream)
      : q(rows(s) * s.heads * s.head_dim, stream),
        k(rows(s) * s.kv_heads * s.head_dim, stream),
        v(rows(s) * s.kv_heads * s.head_dim, stream),
        o(rows(s) * s.heads * s.head_dim, stream),
        dout(rows(s) * s.heads * s.head_dim, stream),
        dq(rows(s) * s.heads * s.head_dim, stream),
        dk(rows(s) * s.kv_heads * s.head_dim, stream),
        dv(rows(s) * s.kv_heads * s.head_dim, stream),
        lse(std::size_t(s.batch) * s.heads * s.seq, stream),
        workspace(std::max<std::size_t>(workspace_bytes, 1), stream) {
    q.upload(random_bf16(q.size(), 1));
    k.upload(random_bf16(k.size(), 2));
    v.upload(random_bf16(v.size(), 3));
    dout.upload(random_bf16(dout.size(), 4));
  }
  static std::size_t rows(const AttentionShape& s) { return std::size_t(s.batch) * s.seq; }
};

/// Times `call` with CUDA events around each iteration (UseManualTime) and reports TFLOP/s of
/// GPU time. Google Benchmark's rate counters divide by CPU time, so the rate is computed here.
template <class Call>
void time_on_gpu(benchmark::State& state, cudaStream_t stream, double flops, Call&& call) {
  cudaEvent_t start = nullptr, stop = nullptr;
  cuda_check(cudaEventCreate(&start), "cudaEventCreate");
  cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
  call();  // warm-up: first-launch and cache effects stay out of the timings
  cuda_check(cudaStreamSynchronize(stream), "warm-up");
  double seconds = 0;
  for (auto _ : state) {
    cuda_check(cudaEventRecord(start, stream), "cudaEventRecord");
    call();
    cuda_check(cudaEventRecord(stop, stream), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    state.SetIterationTime(ms / 1e3);
    seconds += ms / 1e3;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (seconds > 0) state.counters["TFLOP/s"] = flops * double(state.iterations()) / seconds / 1e12;
  state.counters["FLOP"] = flops;
}

/// Skips with a reason when the policy does not take the shape; else prepares the policy (cuDNN
/// builds its plans) and returns true.
template <class Policy>
bool ready(benchmark::State& state, const AttentionShape& s, cudaStream_t stream) {
  if (!Policy::supports(s)) {
    state.SkipWithError(
        (std::string(Policy::name) + " attention does not support this shape").c_str());
    return false;
  }
  if constexpr (requires { Policy::prepare(s, stream); }) Policy::prepare(s, stream);
  return true;
}

template <class Policy>
void BM_attention_forward(benchmark::State& state) {
  const AttentionShape s = llama_shape(state.range(0));
  if (Cuda::device_count() == 0) {
    state.SkipWithError("no CUDA device (driver or GPU missing)");
    return;
  }
  cudaStream_t stream = nullptr;
  cuda_check(cudaStreamCreate(&stream), "cudaStreamCreate");
  if (ready<Policy>(state, s, stream)) {
    Buffers b(s, 0, stream);
    time_on_gpu(state, stream, attention_flops(s, false), [&] {
      Policy::forward(b.q.data(), b.k.data(), b.v.data(), b.o.data(), b.lse.data(), s, stream);
    });
  }
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
}

template <class Policy>
void BM_attention_backward(benchmark::State& state) {
  const AttentionShape s = llama_shape(state.range(0));
  if (Cuda::device_count() == 0) {
    state.SkipWithError("no CUDA device (driver or GPU missing)");
    return;
  }
  cudaStream_t stream = nullptr;
  cuda_check(cudaStreamCreate(&stream), "cudaStreamCreate");
  if (ready<Policy>(state, s, stream)) {
    Buffers b(s, Policy::backward_workspace_bytes(s), stream);
    // o and lse from a real forward, so the backward sees consistent statistics.
    Policy::forward(b.q.data(), b.k.data(), b.v.data(), b.o.data(), b.lse.data(), s, stream);
    time_on_gpu(state, stream, attention_flops(s, true), [&] {
      Policy::backward(b.q.data(), b.k.data(), b.v.data(), b.o.data(), b.lse.data(), b.dout.data(),
                       b.dq.data(), b.dk.data(), b.dv.data(), s, b.workspace.data(), stream);
    });
  }
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
}

/// Batch 1 and 2 at seq 2048, 32/8 heads, head_dim 128, timed on the GPU.
void llama_batches(benchmark::internal::Benchmark* b) {
  b->ArgName("batch")->Arg(1)->Arg(2)->UseManualTime()->Unit(benchmark::kMillisecond);
}
BENCHMARK_TEMPLATE(BM_attention_forward, FlashAttention)->Apply(llama_batches);
BENCHMARK_TEMPLATE(BM_attention_forward, CudnnAttention)->Apply(llama_batches);
BENCHMARK_TEMPLATE(BM_attention_backward, FlashAttention)->Apply(llama_batches);
BENCHMARK_TEMPLATE(BM_attention_backward, CudnnAttention)->Apply(llama_batches);

}  // namespace
