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

/// Packs of a row each thread of rmsnorm_forward_held_kernel holds: rows up to 4096 columns at
/// 256 threads of 4 floats (Llama, Qwen, Mistral).
inline constexpr int rmsnorm_forward_held_packs = 4;

/// rmsnorm_forward_kernel for rows of at most P packs a thread: all of a thread's loads are issued
/// before the row's sum (P 16-byte loads in flight, not one) and the row is held in registers for
/// the output, not read again. Same columns per thread, same sums in the same order: the same
/// bits.
template <int V, int P>
__global__ TPRIMAT_LAUNCH_BOUNDS(256) void rmsnorm_forward_held_kernel(
    const float* __restrict__ x, const std::uint16_t* __restrict__ g_hi,
    const std::uint16_t* __restrict__ g_lo, int h, float eps, gpu::bf16* __restrict__ y,
    float* __restrict__ rstd) {
  __shared__ float scratch[gpu::warp_size];
  const std::int64_t row = std::int64_t{blockIdx.x} * h;
  const int first = static_cast<int>(threadIdx.x) * V, stride = static_cast<int>(blockDim.x) * V;
  Pack<float, V> xp[P], gp[P];
#pragma unroll
  for (int p = 0; p < P; ++p)
    if (first + p * stride < h) xp[p] = load_pack<V>(x + row + first + p * stride);
#pragma unroll
  for (int p = 0; p < P; ++p)
    if (first + p * stride < h) gp[p] = load_joined<V>(g_hi, g_lo, first + p * stride);
  float ss = 0;
#pragma unroll
  for (int p = 0; p < P; ++p) {
    if (first + p * stride >= h) continue;
#pragma unroll
    for (int k = 0; k < V; ++k) ss += xp[p].v[k] * xp[p].v[k];
  }
  ss = block_sum(ss, scratch);
  const float r = rsqrtf(ss / h + eps);
  if (threadIdx.x == 0) rstd[blockIdx.x] = r;
#pragma unroll
  for (int p = 0; p < P; ++p) {
    if (first + p * stride >= h) continue;
    Pack<gpu::bf16, V> yp;
#pragma unroll
    for (int k = 0; k < V; ++k) yp.v[k] = gpu::to_bf16(xp[p].v[k] * r * gp[p].v[k]);
    store_pack<V>(y + row + first + p * stride, yp);
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

/// Threads of rmsnorm_backward_held_kernel: a row of up to 4096 columns is one pack of 4 floats a
/// thread (Llama, Qwen, Mistral).
inline constexpr int rmsnorm_held_threads = 1024;

/// rmsnorm_backward_kernel for rows of at most one pack a thread: each thread keeps its columns'
/// gains and dg accumulators in registers for the whole launch, and its x, dy and dx between the
/// row's two halves, so a row is read from memory once; the next row's loads are issued before
/// this row's sum, so a block always has a row in flight while it waits on the sum's barriers
/// (one block of 1024 threads an SM, 64 registers a thread). Same columns per thread, sums in the
/// same order as rmsnorm_backward_kernel's.
template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(rmsnorm_held_threads) void rmsnorm_backward_held_kernel(
    const float* __restrict__ x, const std::uint16_t* __restrict__ g_hi,
    const std::uint16_t* __restrict__ g_lo, const float* __restrict__ rstd,
    const float* __restrict__ dy, std::int64_t n, int h, float* __restrict__ dx,
    gpu::bf16* __restrict__ dx_bf16, float* __restrict__ partials) {
  __shared__ float scratch[gpu::warp_size];
  const int c = static_cast<int>(threadIdx.x) * V;
  const bool active = c < h;
  struct Row {
    Pack<float, V> x, dy, dx;
    float r;
  };
  const auto load_row = [&](std::int64_t t, Row& w) {
    w.r = rstd[t];
    if (!active) return;
    w.x = load_pack<V>(x + t * h + c);
    w.dy = load_pack<V>(dy + t * h + c);
    w.dx = load_pack<V>(dx + t * h + c);
  };
  Pack<float, V> g{}, dg{};
  if (active) g = load_joined<V>(g_hi, g_lo, c);
  Row cur{}, next{};
  if (blockIdx.x < n) load_row(blockIdx.x, cur);
  for (std::int64_t t = blockIdx.x; t < n; t += gridDim.x) {
    if (t + gridDim.x < n) load_row(t + gridDim.x, next);
    float dot = 0;
    if (active) {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        dot += cur.dy.v[k] * g.v[k] * cur.x.v[k];
        dg.v[k] += cur.dy.v[k] * cur.x.v[k] * cur.r;
      }
    }
    dot = block_sum(dot, scratch);
    const float coef = dot / h * cur.r * cur.r * cur.r;
    if (active) {
      Pack<gpu::bf16, V> dxb;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        cur.dx.v[k] += cur.r * cur.dy.v[k] * g.v[k] - cur.x.v[k] * coef;
        dxb.v[k] = gpu::to_bf16(cur.dx.v[k]);
      }
      store_pack<V>(dx + t * h + c, cur.dx);
      store_pack<V>(dx_bf16 + t * h + c, dxb);
    }
    cur = next;
  }
  if (active) store_pack<V>(partials + std::int64_t{blockIdx.x} * h + c, dg);
}

}  // namespace tprimat::kernels
