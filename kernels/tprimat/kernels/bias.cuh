// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Bias gradient: deterministic fp32 column sums of a bf16 [rows, cols] gradient.
#pragma once

#include <cstdint>

#include "tprimat/kernels/convert.cuh"
#include "tprimat/kernels/gpu.cuh"
#include "tprimat/kernels/reduce.cuh"
#include "tprimat/kernels/reduction_chunks.hpp"

namespace tprimat::kernels {

/// Threads of a bias_partials_kernel block: a narrow row (Qwen's 512-wide k/v bias is 64 packs)
/// is read `span` rows at a time, so the whole block loads.
inline constexpr int bias_threads = 1024;

/// How bias_partials_kernel spreads a row of `packs` packs over a block: several rows at once
/// when a row has fewer packs than the block has threads, else one row over several blocks.
struct BiasSpan {
  int rows;      ///< rows a block reads at once (its lanes)
  int x_blocks;  ///< blocks across a row
};
inline BiasSpan bias_span(std::int64_t packs) {
  if (packs >= bias_threads)
    return {1, static_cast<int>((packs + bias_threads - 1) / bias_threads)};
  return {static_cast<int>(bias_threads / packs), 1};
}

/// partials[y, c] = sum of dy[r, c] over the rows r of chunk y (gridDim.y chunks): lane l of the
/// block's `span` sums rows y * span + l, then every gridDim.y * span-th row after, in order (four
/// loads in flight), and the lanes' sums are added in lane order. cols % V == 0, dy aligned to
/// V elements.
template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(bias_threads) void bias_partials_kernel(
    const gpu::bf16* __restrict__ dy, std::int64_t rows, std::int64_t cols, int span,
    float* __restrict__ partials) {
  __shared__ float lane_sums[bias_threads * V];
  const std::int64_t packs = cols / V;
  const int lane = span > 1 ? static_cast<int>(threadIdx.x / packs) : 0;
  const std::int64_t pack = span > 1
                                ? threadIdx.x % packs
                                : static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool active = lane < span && pack < packs;
  const std::int64_t c = pack * V;
  float s[V] = {};
  if (active) {
    const std::int64_t step = static_cast<std::int64_t>(gridDim.y) * span;
    std::int64_t r = static_cast<std::int64_t>(blockIdx.y) * span + lane;
    for (; r + 3 * step < rows; r += 4 * step) {
      Pack<gpu::bf16, V> p[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) p[u] = load_pack<V>(dy + (r + u * step) * cols + c);
#pragma unroll
      for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int k = 0; k < V; ++k) s[k] += gpu::to_float(p[u].v[k]);
    }
    for (; r < rows; r += step) {
      const Pack<gpu::bf16, V> p = load_pack<V>(dy + r * cols + c);
#pragma unroll
      for (int k = 0; k < V; ++k) s[k] += gpu::to_float(p.v[k]);
    }
  }
  if (span > 1) {  // lane 0 adds the other lanes' sums of its columns, in lane order
    if (active && lane > 0)
#pragma unroll
      for (int k = 0; k < V; ++k) lane_sums[threadIdx.x * V + k] = s[k];
    __syncthreads();
    if (active && lane == 0)
      for (int l = 1; l < span; ++l)
#pragma unroll
        for (int k = 0; k < V; ++k) s[k] += lane_sums[(l * packs + pack) * V + k];
  }
  if (active && lane == 0)
#pragma unroll
    for (int k = 0; k < V; ++k)
      partials[static_cast<std::int64_t>(blockIdx.y) * cols + c + k] = s[k];
}

}  // namespace tprimat::kernels
