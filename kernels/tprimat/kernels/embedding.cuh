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

/// out[t, :] = table[ids[t], :]; table [vocab, hidden] a split fp32 master (hi, lo: see
/// split_float.hpp; lo null: the bf16 halves alone), out [n, hidden] fp32. A negative id gives a
/// row of zeros: under TP each rank holds a vocabulary slice, looks up the ids in it (shifted to
/// the slice, the others negative) and the ranks' rows are summed.
inline void embedding_forward(const std::int32_t* ids, std::int64_t n, const std::uint16_t* hi,
                              const std::uint16_t* lo, int hidden, float* out,
                              gpu::Stream stream) {
  if (n <= 0 || hidden <= 0) return;
  constexpr int threads = 256;
  if (hidden % 4 == 0 && aligned_to(hi, 8) && aligned_to(lo, 8) && aligned_to(out, 16)) {
    embedding_forward_kernel<4><<<gpu::blocks_for(n * (hidden / 4), threads), threads, 0, stream>>>(
        ids, n, hi, lo, hidden, out);
  } else {
    embedding_forward_kernel<1><<<gpu::blocks_for(n * hidden, threads), threads, 0, stream>>>(
        ids, n, hi, lo, hidden, out);
  }
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

/// dtable[group_ids[u], :] += dout rows of group u, for u < *group_count (see
/// backend::embedding_groups for the grouping built on the host).
inline void embedding_backward(const std::int32_t* group_ids, const std::int32_t* offsets,
                               const std::int32_t* positions, const std::int32_t* group_count,
                               std::int64_t max_groups, const float* dout, int hidden,
                               float* dtable, gpu::Stream stream) {
  if (max_groups <= 0 || hidden <= 0) return;
  const unsigned grid = static_cast<unsigned>(max_groups);
  if (hidden % 4 == 0 && aligned_to(dout, 16) && aligned_to(dtable, 16)) {
    embedding_backward_kernel<4><<<grid, row_threads(hidden / 4, 256), 0, stream>>>(
        group_ids, offsets, positions, group_count, dout, hidden, dtable);
  } else {
    embedding_backward_kernel<1><<<grid, row_threads(hidden, 256), 0, stream>>>(
        group_ids, offsets, positions, group_count, dout, hidden, dtable);
  }
}

}  // namespace tprimat::kernels
