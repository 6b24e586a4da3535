// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Combining attention computed in key blocks (context parallelism): the softmax over all keys from
// the blocks' outputs and log-sum-exps, and the sum of the blocks' query gradients.
#pragma once

#include <cmath>
#include <cstdint>

#include "tprimat/kernels/convert.cuh"
#include "tprimat/kernels/gpu.cuh"

namespace tprimat::kernels {

// Static, as init.cuh's: a header-only consumer compiles these in every TU that includes them.

/// One query row's attention over keys A and B from its attention over each: with l = log(e^la +
/// e^lb), o = o_a e^(la - l) + o_b e^(lb - l). In place on (o, lse) = A; o, o_part [rows, heads *
/// head_dim] token-major, lse, lse_part [heads, rows] (one sequence's chunk). One block per row;
/// the block's threads read every lse of its row before one thread a head writes the merged one.
static __global__ TPRIMAT_LAUNCH_BOUNDS(256) void attention_merge_kernel(
    gpu::bf16* __restrict__ o, float* __restrict__ lse, const gpu::bf16* __restrict__ o_part,
    const float* __restrict__ lse_part, std::int64_t rows, int heads, int head_dim) {
  const std::int64_t row = blockIdx.x;
  const int width = heads * head_dim;
  gpu::bf16* out = o + row * width;
  const gpu::bf16* part = o_part + row * width;
  for (int e = threadIdx.x; e < width; e += blockDim.x) {
    const int h = e / head_dim;
    const float la = lse[h * rows + row], lb = lse_part[h * rows + row];
    const float m = fmaxf(la, lb);
    if (m == -INFINITY) continue;  // no visible key in either block: o stays as it is
    const float wa = expf(la - m), wb = expf(lb - m);
    out[e] = gpu::to_bf16((gpu::to_float(out[e]) * wa + gpu::to_float(part[e]) * wb) / (wa + wb));
  }
  __syncthreads();
  for (int h = threadIdx.x; h < heads; h += blockDim.x) {
    const float la = lse[h * rows + row], lb = lse_part[h * rows + row];
    const float m = fmaxf(la, lb);
    if (m != -INFINITY) lse[h * rows + row] = m + logf(expf(la - m) + expf(lb - m));
  }
}

/// x += y in fp32, rounded once to bf16 (a query gradient's second block's share).
static __global__ TPRIMAT_LAUNCH_BOUNDS(256) void accumulate_bf16_kernel(gpu::bf16* __restrict__ x,
                                                                  const gpu::bf16* __restrict__ y,
                                                                  std::int64_t n) {
  const std::int64_t i = global_thread();
  if (i < n) x[i] = gpu::to_bf16(gpu::to_float(x[i]) + gpu::to_float(y[i]));
}

}  // namespace tprimat::kernels
