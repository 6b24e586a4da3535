// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// RMSNorm over fp32 rows with a split-master gain: bf16 output and fp32 rstd forward; dx, dx_bf16
// and a deterministic dg.
#pragma once

#include <cstdint>

#include "tprimat/kernels/convert.cuh"
#include "tprimat/kernels/gpu.cuh"
#include "tprimat/kernels/reduce.cuh"
#include "tprimat/kernels/reduction_chunks.hpp"
#include "tprimat/kernels/split_float.hpp"

namespace tprimat::kernels {

/// dg accumulators above this many columns no longer fit the default 48 KiB of shared memory and
/// live in the block's partial row in global memory instead.
inline constexpr int rmsnorm_shared_columns = 12288;


/// One block per row. The whole tree of block_sum is fixed by h, so rstd is reproducible.
template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(256) void rmsnorm_forward_kernel(
    const float* __restrict__ x, const std::uint16_t* __restrict__ g_hi,
    const std::uint16_t* __restrict__ g_lo, int h, float eps, gpu::bf16* __restrict__ y,
    float* __restrict__ rstd) {
  __shared__ float scratch[gpu::warp_size];
  const std::int64_t row = std::int64_t{blockIdx.x} * h;
  float ss = 0;
  for (int c = threadIdx.x * V; c < h; c += blockDim.x * V) {
    const Pack<float, V> xp = load_pack<V>(x + row + c);
#pragma unroll
    for (int k = 0; k < V; ++k) ss += xp.v[k] * xp.v[k];
  }
  ss = block_sum(ss, scratch);
  const float r = rsqrtf(ss / h + eps);
  if (threadIdx.x == 0) rstd[blockIdx.x] = r;
  // Second read of the row: it is at most 32 KiB and still in L1/L2, cheaper than holding
  // h / blockDim floats per thread in registers for every h.
  for (int c = threadIdx.x * V; c < h; c += blockDim.x * V) {
    const Pack<float, V> xp = load_pack<V>(x + row + c);
    const Pack<float, V> gp = load_joined<V>(g_hi, g_lo, c);
    Pack<gpu::bf16, V> yp;
#pragma unroll
    for (int k = 0; k < V; ++k) yp.v[k] = gpu::to_bf16(xp.v[k] * r * gp.v[k]);
    store_pack<V>(y + row + c, yp);
  }
}

/// Block b takes rows b, b + gridDim.x, ...; each thread always handles the same columns, so its
/// dg accumulators are private (no atomics, no ordering question) and the block's partial row is
/// a fixed-order sum. add_column_sums then folds the partial rows into dg in index order.
template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(256) void rmsnorm_backward_kernel(
    const float* __restrict__ x, const std::uint16_t* __restrict__ g_hi,
    const std::uint16_t* __restrict__ g_lo, const float* __restrict__ rstd,
    const float* __restrict__ dy, std::int64_t n, int h, float* __restrict__ dx,
    gpu::bf16* __restrict__ dx_bf16, float* __restrict__ partials) {
  extern __shared__ float dg_shared[];
  __shared__ float scratch[gpu::warp_size];
  float* partial = partials + std::int64_t{blockIdx.x} * h;
  float* dg_acc = h <= rmsnorm_shared_columns ? dg_shared : partial;
  for (int c = threadIdx.x * V; c < h; c += blockDim.x * V) {
#pragma unroll
    for (int k = 0; k < V; ++k) dg_acc[c + k] = 0;
  }

  for (std::int64_t t = blockIdx.x; t < n; t += gridDim.x) {
    const std::int64_t row = t * h;
    const float r = rstd[t];
    float dot = 0;
    for (int c = threadIdx.x * V; c < h; c += blockDim.x * V) {
      const Pack<float, V> xp = load_pack<V>(x + row + c);
      const Pack<float, V> dyp = load_pack<V>(dy + row + c);
      const Pack<float, V> gp = load_joined<V>(g_hi, g_lo, c);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        dot += dyp.v[k] * gp.v[k] * xp.v[k];
        dg_acc[c + k] += dyp.v[k] * xp.v[k] * r;
      }
    }
    dot = block_sum(dot, scratch);
    const float coef = dot / h * r * r * r;
    for (int c = threadIdx.x * V; c < h; c += blockDim.x * V) {
      const Pack<float, V> xp = load_pack<V>(x + row + c);
      const Pack<float, V> dyp = load_pack<V>(dy + row + c);
      const Pack<float, V> gp = load_joined<V>(g_hi, g_lo, c);
      Pack<float, V> dxp = load_pack<V>(dx + row + c);
      Pack<gpu::bf16, V> dxb;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        dxp.v[k] += r * dyp.v[k] * gp.v[k] - xp.v[k] * coef;
        dxb.v[k] = gpu::to_bf16(dxp.v[k]);
      }
      store_pack<V>(dx + row + c, dxp);
      store_pack<V>(dx_bf16 + row + c, dxb);
    }
  }
  if (dg_acc == partial) return;
  for (int c = threadIdx.x * V; c < h; c += blockDim.x * V) {
#pragma unroll
    for (int k = 0; k < V; ++k) partial[c + k] = dg_acc[c + k];
  }
}

/// Packs of a row each thread of rmsnorm_backward_held_kernel holds: rows up to 4096 columns at
/// 256 threads of 4 floats (Llama, Qwen, Mistral), about 110 registers a thread.
inline constexpr int rmsnorm_held_packs = 4;

/// rmsnorm_backward_kernel for rows of at most P packs a thread: each thread keeps its columns' x,
/// dy and dx in registers between the two passes, and its gains and dg accumulators for the whole
/// launch, so a row is read from memory once, in one round trip (dx is loaded beside x and dy,
/// not after the row's sum), and no shared memory is touched. Same columns per thread, same sums
/// in the same order.
template <int V, int P>
__global__ TPRIMAT_LAUNCH_BOUNDS(256) void rmsnorm_backward_held_kernel(
    const float* __restrict__ x, const std::uint16_t* __restrict__ g_hi,
    const std::uint16_t* __restrict__ g_lo, const float* __restrict__ rstd,
    const float* __restrict__ dy, std::int64_t n, int h, float* __restrict__ dx,
    gpu::bf16* __restrict__ dx_bf16, float* __restrict__ partials) {
  __shared__ float scratch[gpu::warp_size];
  const int first = static_cast<int>(threadIdx.x) * V, stride = static_cast<int>(blockDim.x) * V;
  Pack<float, V> g[P], dg[P], xp[P], dyp[P], dxp[P];
#pragma unroll
  for (int p = 0; p < P; ++p) {
    dg[p] = {};
    if (first + p * stride < h) g[p] = load_joined<V>(g_hi, g_lo, first + p * stride);
  }
  for (std::int64_t t = blockIdx.x; t < n; t += gridDim.x) {
    const std::int64_t row = t * h;
    const float r = rstd[t];
    float dot = 0;
#pragma unroll
    for (int p = 0; p < P; ++p) {
      if (first + p * stride >= h) continue;
      xp[p] = load_pack<V>(x + row + first + p * stride);
      dyp[p] = load_pack<V>(dy + row + first + p * stride);
      dxp[p] = load_pack<V>(dx + row + first + p * stride);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        dot += dyp[p].v[k] * g[p].v[k] * xp[p].v[k];
        dg[p].v[k] += dyp[p].v[k] * xp[p].v[k] * r;
      }
    }
    dot = block_sum(dot, scratch);
    const float coef = dot / h * r * r * r;
#pragma unroll
    for (int p = 0; p < P; ++p) {
      const std::int64_t at = row + first + p * stride;
      if (first + p * stride >= h) continue;
      Pack<gpu::bf16, V> dxb;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        dxp[p].v[k] += r * dyp[p].v[k] * g[p].v[k] - xp[p].v[k] * coef;
        dxb.v[k] = gpu::to_bf16(dxp[p].v[k]);
      }
      store_pack<V>(dx + at, dxp[p]);
      store_pack<V>(dx_bf16 + at, dxb);
    }
  }
  float* partial = partials + std::int64_t{blockIdx.x} * h;
#pragma unroll
  for (int p = 0; p < P; ++p)
    if (first + p * stride < h) store_pack<V>(partial + first + p * stride, dg[p]);
}

}  // namespace tprimat::kernels
