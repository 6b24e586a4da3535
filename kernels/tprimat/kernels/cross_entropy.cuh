// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Softmax cross-entropy over bf16 logits (fused, and vocab-parallel in two parts around an
// exchange): per-row fp32 loss, gradient written in place.
#pragma once

#include <cmath>
#include <cstdint>

#include "tprimat/kernels/convert.cuh"
#include "tprimat/kernels/gpu.cuh"
#include "tprimat/kernels/reduce.cuh"
#include "tprimat/kernels/reduction_chunks.hpp"

namespace tprimat::kernels {

inline constexpr int cross_entropy_max_threads = 1024;

/// exp through exp2: one multiply and the hardware exp2, and (x - m) is formed first so the
/// argument keeps full precision near the row max, where the probabilities that matter are.
__device__ __forceinline__ float exp_shifted(float x, float m) {
  constexpr float log2e = 1.4426950408889634f;
  return exp2f((x - m) * log2e);
}

/// Pass 1 over one row of bf16 logits by the whole block: a running (max, sum exp(x - max)) per
/// thread (one read of the row, never an fp32 copy), then the block agrees on the row max and
/// rescales each thread's sum to it. Both results reach every thread.
template <int V>
__device__ __forceinline__ void row_max_and_sum(const gpu::bf16* __restrict__ row, int vocab,
                                                float* scratch, float& row_max, float& sum) {
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
  row_max = block_max(m, scratch);
  // A thread that saw no element (vocab < threads * V) holds m = -inf and s = 0.
  s = m == -INFINITY ? 0.0f : s * exp_shifted(m, row_max);
  sum = block_sum(s, scratch);
}

/// Pass 2 over one row by the whole block: overwrites it with grad_scale * (softmax - onehot),
/// the softmax from the (max, sum) of the whole vocabulary; a `target` outside [0, vocab) (in
/// another rank's slice) subtracts nothing here.
template <int V>
__device__ __forceinline__ void write_softmax_grad(gpu::bf16* __restrict__ row, int vocab,
                                                   float row_max, float sum,
                                                   std::int32_t target, float grad_scale) {
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

/// The launch of the row kernels: one block per row, packs of 8 when the rows allow them.
struct RowLaunch {
  bool packs_of_8;
  unsigned grid, threads;
};
inline RowLaunch row_launch(const gpu::bf16* logits, std::int64_t n, int vocab) {
  const bool packs = vocab % 8 == 0 && aligned_to(logits, 16);
  return {packs, static_cast<unsigned>(n),
          static_cast<unsigned>(row_threads(packs ? vocab / 8 : vocab, cross_entropy_max_threads))};
}

/// One block per row. Pass 1 is row_max_and_sum; pass 2 (with_grad) re-reads the row, typically
/// from L2, and overwrites it with grad_scale * (softmax - onehot).
template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(cross_entropy_max_threads) void cross_entropy_kernel(
    gpu::bf16* __restrict__ logits, const std::int32_t* __restrict__ targets, int vocab,
    float grad_scale, bool with_grad, float* __restrict__ row_loss) {
  __shared__ float scratch[gpu::warp_size];
  gpu::bf16* row = logits + std::int64_t{blockIdx.x} * vocab;
  const std::int32_t target = targets[blockIdx.x];
  // Read before the barriers inside block_max/block_sum: pass 2 may overwrite it.
  const float target_logit = threadIdx.x == 0 ? gpu::to_float(row[target]) : 0.0f;

  float row_max, sum;
  row_max_and_sum<V>(row, vocab, scratch, row_max, sum);
  if (threadIdx.x == 0) row_loss[blockIdx.x] = row_max + logf(sum) - target_logit;
  if (with_grad) write_softmax_grad<V>(row, vocab, row_max, sum, target, grad_scale);
}

// ---- vocab-parallel (TP): each rank holds logits [n, vocab] of the vocabulary slice
// [vocab_begin, vocab_begin + vocab); two kernels around one exchange of per-row statistics ------

/// Part 1: one block per row, row_max_and_sum over the slice.
template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(cross_entropy_max_threads) void cross_entropy_stats_kernel(
    const gpu::bf16* __restrict__ logits, const std::int32_t* __restrict__ targets, int vocab,
    int vocab_begin, float* __restrict__ stats) {
  __shared__ float scratch[gpu::warp_size];
  const gpu::bf16* row = logits + std::int64_t{blockIdx.x} * vocab;
  float row_max, sum;
  row_max_and_sum<V>(row, vocab, scratch, row_max, sum);
  if (threadIdx.x == 0) {
    const std::int32_t local = targets[blockIdx.x] - vocab_begin;
    float* out = stats + std::int64_t{blockIdx.x} * cross_entropy_stats_per_row;
    out[0] = row_max;
    out[1] = sum;
    out[2] = local >= 0 && local < vocab ? gpu::to_float(row[local]) : 0.0f;
  }
}

/// Part 2: `stats` holds every rank's part-1 rows, rank after rank ([ranks][n][3], as an
/// all-gather leaves them). Each row's statistics are combined in rank order, so every rank
/// computes the same loss; with_grad overwrites this rank's logits with
/// grad_scale * (softmax - onehot), the softmax over the whole vocabulary.
template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(cross_entropy_max_threads) void cross_entropy_combine_kernel(
    gpu::bf16* __restrict__ logits, const std::int32_t* __restrict__ targets, std::int64_t n,
    int vocab, int vocab_begin, const float* __restrict__ stats, int ranks, float grad_scale,
    bool with_grad, float* __restrict__ row_loss) {
  const std::int64_t t = blockIdx.x;
  const float* st = stats + t * cross_entropy_stats_per_row;  // rank 0's row t
  const std::int64_t stride = n * cross_entropy_stats_per_row;  // one rank's rows
  float row_max = -INFINITY, sum = 0, target_logit = 0;
  for (int r = 0; r < ranks; ++r) row_max = fmaxf(row_max, st[r * stride]);
  for (int r = 0; r < ranks; ++r) {
    const float m = st[r * stride], s = st[r * stride + 1];
    if (s > 0.0f) sum += s * exp_shifted(m, row_max);
    target_logit += st[r * stride + 2];
  }
  if (threadIdx.x == 0) row_loss[t] = row_max + logf(sum) - target_logit;
  if (with_grad)
    write_softmax_grad<V>(logits + t * vocab, vocab, row_max, sum, targets[t] - vocab_begin,
                          grad_scale);
}

}  // namespace tprimat::kernels
