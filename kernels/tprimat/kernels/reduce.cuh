// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Deterministic reductions: block-wide sum/max, the global (squared) sum, column sums of partials.
#pragma once

#include <cmath>
#include <cstdint>

#include "tprimat/kernels/convert.cuh"
#include "tprimat/kernels/gpu.cuh"

namespace tprimat::kernels {

/// Sum over the block; every thread gets the result. blockDim.x must be a multiple of warp_size
/// (so at most warp_size warps) and `scratch` shared memory of warp_size values. The tree is
/// fixed by the block size alone, so a sum is bit-identical run to run.
template <class T>
__device__ __forceinline__ T block_sum(T v, T* scratch) {
  v = gpu::warp_sum(v);
  const int lane = threadIdx.x % gpu::warp_size, warp = threadIdx.x / gpu::warp_size;
  const int warps = blockDim.x / gpu::warp_size;
  __syncthreads();  // an earlier call's readers may still be reading scratch
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : T(0);
  return gpu::warp_sum(v);
}

template <class T>
__device__ __forceinline__ T block_max(T v, T* scratch) {
  v = gpu::warp_max(v);
  const int lane = threadIdx.x % gpu::warp_size, warp = threadIdx.x / gpu::warp_size;
  const int warps = blockDim.x / gpu::warp_size;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : T(-INFINITY);
  return gpu::warp_max(v);
}

inline constexpr int reduce_threads = 256;

template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(reduce_threads) void reduce_sum_partials_kernel(
    const float* __restrict__ x, std::int64_t n, bool squares, double* __restrict__ partials) {
  __shared__ double scratch[gpu::warp_size];
  double s = 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x * V;
  for (std::int64_t i = global_thread() * V; i < n; i += stride) {
    if (i + V <= n) {
      const Pack<float, V> p = load_pack<V>(x + i);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const double d = p.v[k];
        s += squares ? d * d : d;
      }
    } else {
      for (std::int64_t j = i; j < n; ++j) {
        const double d = x[j];
        s += squares ? d * d : d;
      }
    }
  }
  s = block_sum(s, scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

template <class T>
__global__ TPRIMAT_LAUNCH_BOUNDS(reduce_threads) void reduce_sum_final_kernel(
    const T* __restrict__ partials, int count, bool accumulate, T* __restrict__ out) {
  __shared__ T scratch[gpu::warp_size];
  T s = 0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) s += partials[i];
  s = block_sum(s, scratch);
  if (threadIdx.x == 0) *out = accumulate ? *out + s : s;
}

/// out[c] += sum over r of partials[r, c], r in a fixed order: blocks of warp_size columns, each
/// column's rows split over reduce_threads / warp_size lanes' worth of strided groups that are
/// then added group by group. Shared by every op that reduces over rows through partials.
template <class T>
__global__ TPRIMAT_LAUNCH_BOUNDS(reduce_threads) void add_column_sums_kernel(
    const T* __restrict__ partials, std::int64_t rows, std::int64_t cols, T* __restrict__ out) {
  constexpr int groups = reduce_threads / gpu::warp_size;
  __shared__ T group_sums[groups][gpu::warp_size];
  const int lane = threadIdx.x % gpu::warp_size, group = threadIdx.x / gpu::warp_size;
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * gpu::warp_size + lane;
  T s = 0;
  if (c < cols)
    for (std::int64_t r = group; r < rows; r += groups) s += partials[r * cols + c];
  group_sums[group][lane] = s;
  __syncthreads();
  if (group == 0 && c < cols) {
    T total = group_sums[0][lane];
#pragma unroll
    for (int g = 1; g < groups; ++g) total += group_sums[g][lane];
    out[c] += total;
  }
}

inline void add_column_sums(const float* partials, std::int64_t rows, std::int64_t cols, float* out,
                            gpu::Stream stream) {
  if (rows <= 0 || cols <= 0) return;
  add_column_sums_kernel<float>
      <<<gpu::blocks_for(cols, gpu::warp_size), reduce_threads, 0, stream>>>(partials, rows, cols,
                                                                             out);
}

}  // namespace tprimat::kernels
