// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Gpu::init_normal, fill and zero_rows: the device engine initialises and clears its buffers.
#include "tprimat/backend/gpu.hpp"
#include "tprimat/kernels/init.cuh"

namespace tprimat::backend {

void Gpu::init_normal(float* p, std::int64_t n, float stddev, std::uint64_t seed,
                       std::uint64_t first, Stream stream) {
  init_normal_block(p, 1, n, n, stddev, seed, first, stream);
}

void Gpu::init_normal_block(float* p, std::int64_t rows, std::int64_t cols, std::int64_t stride,
                            float stddev, std::uint64_t seed, std::uint64_t first,
                            Stream stream) {
  kernels::launch_init_normal(p, rows, cols, stride, stddev, seed, first, stream);
  gpu_check(gpuGetLastError(), "init_normal_kernel");
}

void Gpu::fill(float* p, std::int64_t n, float value, Stream stream) {
  kernels::launch_fill(p, n, value, stream);
  gpu_check(gpuGetLastError(), "fill_kernel");
}

void Gpu::zero_rows(const std::int32_t* rows, const std::int32_t* count, std::int64_t max_rows,
                     int hidden, float* table, Stream stream) {
  kernels::launch_zero_rows(rows, count, max_rows, hidden, table, stream);
  gpu_check(gpuGetLastError(), "zero_rows_kernel");
}

}  // namespace tprimat::backend
