// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Token embedding: the fp32 row gather, and its deterministic scatter-add backward.
#pragma once

#include <cstdint>

#include "tprimat/kernels/convert.cuh"
#include "tprimat/kernels/gpu.cuh"

namespace tprimat::kernels {

template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(256) void embedding_forward_kernel(
    const std::int32_t* __restrict__ ids, std::int64_t n, const std::uint16_t* __restrict__ hi,
    const std::uint16_t* __restrict__ lo, int hidden, float* __restrict__ out) {
  const std::int64_t per_row = hidden / V;
  const std::int64_t i = global_thread();
  if (i >= n * per_row) return;
  const std::int64_t t = i / per_row, c = (i % per_row) * V;
  const std::int32_t id = ids[t];
  if (id < 0) {  // another TP rank's vocabulary slice holds this token: it contributes zeros
    store_pack<V>(out + t * hidden + c, Pack<float, V>{});
    return;
  }
  store_pack<V>(out + t * hidden + c, load_joined<V>(hi, lo, std::int64_t{id} * hidden + c));
}

/// One block per token group: the group owns its dtable row outright, so no atomics are needed
/// and the sum runs in position order, starting from the row's old value exactly as the CPU
/// reference's `dtable += dout[t]` loop does (same additions, same order: bit-identical).
template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(256) void embedding_backward_kernel(
    const std::int32_t* __restrict__ group_ids, const std::int32_t* __restrict__ offsets,
    const std::int32_t* __restrict__ positions, const std::int32_t* __restrict__ group_count,
    const float* __restrict__ dout, int hidden, float* __restrict__ dtable) {
  const std::int64_t u = blockIdx.x;
  // The grid covers max_groups so a captured graph fits any batch; the real count is data.
  if (u >= *group_count) return;
  const std::int32_t begin = offsets[u], end = offsets[u + 1];
  float* row = dtable + std::int64_t{group_ids[u]} * hidden;
  for (int c = threadIdx.x * V; c < hidden; c += blockDim.x * V) {
    Pack<float, V> acc = load_pack<V>(row + c);
    for (std::int32_t p = begin; p < end; ++p) {
      const Pack<float, V> d = load_pack<V>(dout + std::int64_t{positions[p]} * hidden + c);
#pragma unroll
      for (int k = 0; k < V; ++k) acc.v[k] += d.v[k];
    }
    store_pack<V>(row + c, acc);
  }
}

}  // namespace tprimat::kernels
