// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Gpu's initialisation ops: counter-based normal draws, constant fills, zeroed rows.
#pragma once

#include <cstdint>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/kernels/init.cuh"

namespace tprimat::backend {
namespace detail {

/// Grid of a grid-stride loop over n elements: one thread each up to 2^26, then 65536 blocks.
inline unsigned init_blocks(std::int64_t n) {
  return n < (std::int64_t{1} << 26) ? gpu::blocks_for(n, 256) : 65536u;
}

}  // namespace detail

TPRIMAT_GPU_INLINE void Gpu::init_normal(float* p, std::int64_t n, float stddev, std::uint64_t seed,
                                         std::uint64_t first, Stream stream) {
  init_normal_block(p, 1, n, n, stddev, seed, first, stream);
}

TPRIMAT_GPU_INLINE void Gpu::init_normal_block(float* p, std::int64_t rows, std::int64_t cols,
                                               std::int64_t stride, float stddev,
                                               std::uint64_t seed, std::uint64_t first,
                                               Stream stream) {
  const std::int64_t n = rows * cols;
  if (n <= 0) return;
  kernels::init_normal_kernel<<<detail::init_blocks(n), 256, 0, stream>>>(p, n, cols, stride,
                                                                          stddev, seed, first);
  gpu_check(gpuGetLastError(), "init_normal_kernel");
}

TPRIMAT_GPU_INLINE void Gpu::fill(float* p, std::int64_t n, float value, Stream stream) {
  if (n <= 0) return;
  kernels::fill_kernel<<<detail::init_blocks(n), 256, 0, stream>>>(p, n, value);
  gpu_check(gpuGetLastError(), "fill_kernel");
}

TPRIMAT_GPU_INLINE void Gpu::zero_rows(const std::int32_t* rows, const std::int32_t* count,
                                       std::int64_t max_rows, int hidden, float* table,
                                       Stream stream) {
  if (max_rows <= 0) return;
  kernels::zero_rows_kernel<<<static_cast<unsigned>(max_rows), 256, 0, stream>>>(rows, count,
                                                                                 hidden, table);
  gpu_check(gpuGetLastError(), "zero_rows_kernel");
}

}  // namespace tprimat::backend
