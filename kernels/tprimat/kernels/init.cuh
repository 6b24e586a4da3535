// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Parameter initialisation on the device: counter-based normal draws and constant fills.
#pragma once

#include <cstdint>

#include "tprimat/kernels/gpu.cuh"

namespace tprimat::kernels {

/// splitmix64: a counter hashed into 64 well-mixed bits, so element i's draw depends only on
/// (seed, i) — no generator state, any grid, same weights every run.
__device__ __forceinline__ std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// p [rows, cols] = stddev * N(0, 1) by Box-Muller, element (r, c) drawn from
/// (seed, first + r * stride + c): a block of columns of a [*, stride] tensor gets the very
/// values the whole tensor would (a tensor-parallel shard starts from one GPU's weights).
static __global__ void init_normal_kernel(float* p, std::int64_t n, std::int64_t cols,
                                          std::int64_t stride, float stddev, std::uint64_t seed,
                                          std::uint64_t first) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t at = (i / cols) * stride + i % cols;
    const std::uint64_t bits = mix64(seed ^ mix64(first + static_cast<std::uint64_t>(at)));
    // Two 32-bit uniforms in (0, 1]: log never sees 0.
    const float u1 = (static_cast<float>(bits >> 40) + 1.0f) * (1.0f / 16777216.0f);
    const float u2 = static_cast<float>((bits >> 8) & 0xFFFFFFu) * (1.0f / 16777216.0f);
    p[i] = stddev * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
  }
}

static __global__ void fill_kernel(float* p, std::int64_t n, float value) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    p[i] = value;
}

/// Zeroes rows rows[r] (r < *count) of table [*, hidden]: one block per row, the grid sized by
/// max_rows so that a captured graph stays valid whatever the count.
static __global__ void zero_rows_kernel(const std::int32_t* rows, const std::int32_t* count,
                                        int hidden, float* table) {
  if (static_cast<int>(blockIdx.x) >= *count) return;
  float* row = table + static_cast<std::int64_t>(rows[blockIdx.x]) * hidden;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) row[i] = 0.0f;
}

}  // namespace tprimat::kernels
