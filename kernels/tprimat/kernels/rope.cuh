// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Rotary position embedding on bf16 heads in place (HF rotate_half), forward and its inverse.
#pragma once

#include <cstdint>

#include "tprimat/kernels/convert.cuh"
#include "tprimat/kernels/gpu.cuh"

namespace tprimat::kernels {

/// Each thread rotates V consecutive pairs (i, i + half) of one head; the angle math is fp32 on
/// the fp32 tables, rounded to bf16 once. `sign` -1 applies the transpose rotation (backward).
/// Grid x over rows (tokens), y over blocks of the row's heads x half / V items: a thread finds
/// its head with one 32-bit division, not three 64-bit ones (which made the kernel issue-bound).
template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(256) void rope_kernel(gpu::bf16* __restrict__ x, int seq,
                                                       int heads, int head_dim,
                                                       const float* __restrict__ cos_table,
                                                       const float* __restrict__ sin_table,
                                                       float sign) {
  const int half = head_dim / 2;
  const int per_head = half / V;
  const int item = static_cast<int>(blockIdx.y * blockDim.x + threadIdx.x);
  if (item >= heads * per_head) return;
  const std::int64_t t = blockIdx.x;
  const int head = item / per_head;
  const int j = (item - head * per_head) * V;
  gpu::bf16* v = x + (t * heads + head) * head_dim;
  const std::int64_t angle = (t % seq) * half + j;
  Pack<gpu::bf16, V> lo = load_pack<V>(v + j);
  Pack<gpu::bf16, V> hi = load_pack<V>(v + j + half);
  const Pack<float, V> c = load_pack<V>(cos_table + angle);
  const Pack<float, V> s = load_pack<V>(sin_table + angle);
#pragma unroll
  for (int k = 0; k < V; ++k) {
    const float x1 = gpu::to_float(lo.v[k]), x2 = gpu::to_float(hi.v[k]), sn = sign * s.v[k];
    lo.v[k] = gpu::to_bf16(x1 * c.v[k] - x2 * sn);
    hi.v[k] = gpu::to_bf16(x2 * c.v[k] + x1 * sn);
  }
  store_pack<V>(v + j, lo);
  store_pack<V>(v + j + half, hi);
}

}  // namespace tprimat::kernels
