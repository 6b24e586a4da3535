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
template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(256) void rope_kernel(gpu::bf16* __restrict__ x, std::int64_t rows,
                                                       int seq, int heads, int head_dim,
                                                       const float* __restrict__ cos_table,
                                                       const float* __restrict__ sin_table,
                                                       float sign) {
  const int half = head_dim / 2;
  const int per_head = half / V;
  const std::int64_t per_row = std::int64_t{heads} * per_head;
  const std::int64_t i = global_thread();
  if (i >= rows * per_row) return;
  const std::int64_t t = i / per_row;
  const std::int64_t in_row = i - t * per_row;
  const std::int64_t head = in_row / per_head;
  const int j = static_cast<int>(in_row - head * per_head) * V;
  gpu::bf16* v = x + (t * heads + head) * head_dim;
  const std::int64_t angle = (t % seq) * half + j;
  const Pack<float, V> c = load_pack<V>(cos_table + angle);
  const Pack<float, V> s = load_pack<V>(sin_table + angle);
  Pack<gpu::bf16, V> lo = load_pack<V>(v + j);
  Pack<gpu::bf16, V> hi = load_pack<V>(v + j + half);
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
