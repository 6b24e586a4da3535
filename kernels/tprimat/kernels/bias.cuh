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

}  // namespace tprimat::kernels
