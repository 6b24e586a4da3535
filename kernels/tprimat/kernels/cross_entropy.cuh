// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Fused softmax cross-entropy over bf16 logits: per-row fp32 loss, gradient written in place.
#pragma once

#include <cmath>
#include <cstdint>

#include "tprimat/kernels/convert.cuh"
#include "tprimat/kernels/gpu.cuh"
#include "tprimat/kernels/reduce.cuh"

namespace tprimat::kernels {

inline constexpr int cross_entropy_max_threads = 1024;

/// exp through exp2: one multiply and the hardware exp2, and (x - m) is formed first so the
/// argument keeps full precision near the row max, where the probabilities that matter are.
__device__ __forceinline__ float exp_shifted(float x, float m) {
  constexpr float log2e = 1.4426950408889634f;
  return exp2f((x - m) * log2e);
}

/// One block per row. Pass 1 keeps a running (max, sum exp(x - max)) per thread over the bf16
/// row (one read of the logits, never an fp32 copy); the block then agrees on the row max and
/// rescales each thread's sum to it. Pass 2 (with_grad) re-reads the row, typically from L2, and
/// overwrites it with grad_scale * (softmax - onehot).
template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(cross_entropy_max_threads) void cross_entropy_kernel(
    gpu::bf16* __restrict__ logits, const std::int32_t* __restrict__ targets, int vocab,
    float grad_scale, bool with_grad, float* __restrict__ row_loss) {
  __shared__ float scratch[gpu::warp_size];
  gpu::bf16* row = logits + std::int64_t{blockIdx.x} * vocab;
  const std::int32_t target = targets[blockIdx.x];
  // Read before the barriers inside block_max/block_sum: pass 2 may overwrite it.
  const float target_logit = threadIdx.x == 0 ? gpu::to_float(row[target]) : 0.0f;

  float m = -INFINITY, s = 0;
  for (int c = threadIdx.x * V; c < vocab; c += blockDim.x * V) {
    const Pack<gpu::bf16, V> p = load_pack<V>(row + c);
    float xs[V];
    float pm = -INFINITY;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      xs[k] = gpu::to_float(p.v[k]);
      pm = fmaxf(pm, xs[k]);
    }
    if (pm > m) {
      s *= exp_shifted(m, pm);  // 0 on the first pack (m = -inf), as it should be
      m = pm;
    }
#pragma unroll
    for (int k = 0; k < V; ++k) s += exp_shifted(xs[k], m);
  }
  const float row_max = block_max(m, scratch);
  // A thread that saw no element (vocab < threads * V) holds m = -inf and s = 0.
  s = m == -INFINITY ? 0.0f : s * exp_shifted(m, row_max);
  const float sum = block_sum(s, scratch);
  if (threadIdx.x == 0) row_loss[blockIdx.x] = row_max + logf(sum) - target_logit;
  if (!with_grad) return;

  const float scale = grad_scale / sum;
  for (int c = threadIdx.x * V; c < vocab; c += blockDim.x * V) {
    Pack<gpu::bf16, V> p = load_pack<V>(row + c);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      float gv = exp_shifted(gpu::to_float(p.v[k]), row_max) * scale;
      if (c + k == target) gv -= grad_scale;
      p.v[k] = gpu::to_bf16(gv);
    }
    store_pack<V>(row + c, p);
  }
}

/// row_loss[t] = logsumexp(logits[t, :]) - logits[t, targets[t]] (fp32); with_grad overwrites
/// the logits with grad_scale * (softmax - onehot) in bf16.
inline void cross_entropy(gpu::bf16* logits, const std::int32_t* targets, std::int64_t n, int vocab,
                          float grad_scale, bool with_grad, float* row_loss, gpu::Stream stream) {
  if (n <= 0 || vocab <= 0) return;
  const unsigned grid = static_cast<unsigned>(n);
  if (vocab % 8 == 0 && aligned_to(logits, 16)) {
    cross_entropy_kernel<8><<<grid, row_threads(vocab / 8, cross_entropy_max_threads), 0, stream>>>(
        logits, targets, vocab, grad_scale, with_grad, row_loss);
  } else {
    cross_entropy_kernel<1><<<grid, row_threads(vocab, cross_entropy_max_threads), 0, stream>>>(
        logits, targets, vocab, grad_scale, with_grad, row_loss);
  }
}

}  // namespace tprimat::kernels
