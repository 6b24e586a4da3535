// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Bias gradient: deterministic fp32 column sums of a bf16 [rows, cols] gradient.
#pragma once

#include <cstdint>

#include "tprimat/kernels/convert.cuh"
#include "tprimat/kernels/gpu.cuh"
#include "tprimat/kernels/reduce.cuh"

namespace tprimat::kernels {

/// Row chunks (grid.y) of the first pass: enough blocks to fill the GPU even for a narrow bias
/// (Qwen's 512-wide k/v biases), few enough that the partials' column sum stays cheap.
inline constexpr std::int64_t bias_chunks = 512;

/// Floats of `partials` bias_backward needs.
inline std::int64_t bias_partials(std::int64_t rows, std::int64_t cols) {
  return (rows < bias_chunks ? rows : bias_chunks) * cols;
}

/// partials[y, c] = sum of dy[r, c] over rows r = y, y + gridDim.y, ... in order.
template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(256) void bias_partials_kernel(const gpu::bf16* __restrict__ dy,
                                                                std::int64_t rows,
                                                                std::int64_t cols,
                                                                float* __restrict__ partials) {
  const std::int64_t c = global_thread() * V;
  if (c >= cols) return;
  float s[V] = {};
  for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const Pack<gpu::bf16, V> p = load_pack<V>(dy + r * cols + c);
#pragma unroll
    for (int k = 0; k < V; ++k) s[k] += gpu::to_float(p.v[k]);
  }
#pragma unroll
  for (int k = 0; k < V; ++k) partials[std::int64_t{blockIdx.y} * cols + c + k] = s[k];
}

/// dbias[cols] += column sums of dy [rows, cols]; `partials` holds bias_partials(rows, cols).
inline void bias_backward(const gpu::bf16* dy, std::int64_t rows, std::int64_t cols, float* dbias,
                          float* partials, gpu::Stream stream) {
  if (rows <= 0 || cols <= 0) return;
  constexpr int threads = 256;
  const std::int64_t chunks = rows < bias_chunks ? rows : bias_chunks;
  if (cols % 2 == 0 && aligned_to(dy, 4)) {
    const dim3 grid(gpu::blocks_for(cols / 2, threads), static_cast<unsigned>(chunks));
    bias_partials_kernel<2><<<grid, threads, 0, stream>>>(dy, rows, cols, partials);
  } else {
    const dim3 grid(gpu::blocks_for(cols, threads), static_cast<unsigned>(chunks));
    bias_partials_kernel<1><<<grid, threads, 0, stream>>>(dy, rows, cols, partials);
  }
  add_column_sums(partials, chunks, cols, dbias, stream);
}

}  // namespace tprimat::kernels
