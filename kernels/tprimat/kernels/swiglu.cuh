// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// SwiGLU on bf16 activations: h = silu(gate) * up, and dgate, dup with silu recomputed in fp32
// (optionally h again in the same pass).
#pragma once

#include <cstdint>

#include "tprimat/kernels/convert.cuh"
#include "tprimat/kernels/gpu.cuh"

namespace tprimat::kernels {

/// expf rather than __expf: the kernel is bound by memory, and the accurate exp keeps silu
/// within one bf16 rounding of the fp32 reference for large |gate|.
__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

/// h = silu(gate) * up in fp32: one expression for every kernel that computes it, so the FP8
/// tile pass casts the forward's bits.
__device__ __forceinline__ float swiglu_value(float gate, float up) {
  return gate * sigmoid(gate) * up;
}

template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(256) void swiglu_forward_kernel(const gpu::bf16* __restrict__ gate,
                                                                 const gpu::bf16* __restrict__ up,
                                                                 gpu::bf16* __restrict__ h,
                                                                 std::int64_t n) {
  const std::int64_t i = global_thread() * V;
  if (i + V <= n) {
    const Pack<gpu::bf16, V> gp = load_pack<V>(gate + i), up_p = load_pack<V>(up + i);
    Pack<gpu::bf16, V> hp;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      hp.v[k] = gpu::to_bf16(swiglu_value(gpu::to_float(gp.v[k]), gpu::to_float(up_p.v[k])));
    }
    store_pack<V>(h + i, hp);
  } else {
    for (std::int64_t j = i; j < n; ++j) {
      h[j] = gpu::to_bf16(swiglu_value(gpu::to_float(gate[j]), gpu::to_float(up[j])));
    }
  }
}

/// dgate = dh * up * s * (1 + gate * (1 - s)), dup = dh * gate * s, s = sigmoid(gate).
__device__ __forceinline__ void swiglu_grad(float gv, float uv, float dhv, float& dgate,
                                            float& dup) {
  const float s = sigmoid(gv);
  dgate = dhv * uv * s * (1.0f + gv * (1.0f - s));
  dup = dhv * gv * s;
}

/// WithH: also writes h = silu(gate) * up, the forward's output, for a backward pass that
/// recomputes it instead of keeping it: one read of gate and up serves both.
template <int V, bool WithH>
__global__ TPRIMAT_LAUNCH_BOUNDS(256) void swiglu_backward_kernel(
    const gpu::bf16* __restrict__ gate, const gpu::bf16* __restrict__ up,
    const gpu::bf16* __restrict__ dh, gpu::bf16* __restrict__ dgate, gpu::bf16* __restrict__ dup,
    gpu::bf16* __restrict__ h, std::int64_t n) {
  const std::int64_t i = global_thread() * V;
  if (i + V <= n) {
    const Pack<gpu::bf16, V> gp = load_pack<V>(gate + i), up_p = load_pack<V>(up + i),
                             dhp = load_pack<V>(dh + i);
    Pack<gpu::bf16, V> dgp, dup_p, hp;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const float gv = gpu::to_float(gp.v[k]), uv = gpu::to_float(up_p.v[k]);
      float dg, du;
      swiglu_grad(gv, uv, gpu::to_float(dhp.v[k]), dg, du);
      dgp.v[k] = gpu::to_bf16(dg);
      dup_p.v[k] = gpu::to_bf16(du);
      if constexpr (WithH) hp.v[k] = gpu::to_bf16(swiglu_value(gv, uv));
    }
    store_pack<V>(dgate + i, dgp);
    store_pack<V>(dup + i, dup_p);
    if constexpr (WithH) store_pack<V>(h + i, hp);
  } else {
    for (std::int64_t j = i; j < n; ++j) {
      const float gv = gpu::to_float(gate[j]), uv = gpu::to_float(up[j]);
      float dg, du;
      swiglu_grad(gv, uv, gpu::to_float(dh[j]), dg, du);
      dgate[j] = gpu::to_bf16(dg);
      dup[j] = gpu::to_bf16(du);
      if constexpr (WithH) h[j] = gpu::to_bf16(swiglu_value(gv, uv));
    }
  }
}

/// SwiGLU's output h for a tile pass (fp8_tile_cast_kernel): the forward kernel's bf16 values,
/// computed from gate and up where they are cast.
struct SwigluValues {
  static constexpr int outputs = 1;
  static constexpr int pack = 8;  ///< elements a 16-byte load of gate (and up) holds
  const gpu::bf16* gate;
  const gpu::bf16* up;
  template <int V>
  __device__ __forceinline__ void operator()(std::int64_t i, float (&v)[1][V]) const {
    const Pack<gpu::bf16, V> gp = load_pack<V>(gate + i), up_p = load_pack<V>(up + i);
#pragma unroll
    for (int k = 0; k < V; ++k)
      v[0][k] = gpu::to_float(
          gpu::to_bf16(swiglu_value(gpu::to_float(gp.v[k]), gpu::to_float(up_p.v[k]))));
  }
};

/// SwiGLU's gradients dgate (output 0) and dup (output 1) for a tile pass: the backward
/// kernel's bf16 values, computed from gate, up and dh where they are cast.
struct SwigluGradValues {
  static constexpr int outputs = 2;
  static constexpr int pack = 8;
  const gpu::bf16* gate;
  const gpu::bf16* up;
  const gpu::bf16* dh;
  template <int V>
  __device__ __forceinline__ void operator()(std::int64_t i, float (&v)[2][V]) const {
    const Pack<gpu::bf16, V> gp = load_pack<V>(gate + i), up_p = load_pack<V>(up + i),
                             dhp = load_pack<V>(dh + i);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      float dg, du;
      swiglu_grad(gpu::to_float(gp.v[k]), gpu::to_float(up_p.v[k]), gpu::to_float(dhp.v[k]), dg,
                  du);
      v[0][k] = gpu::to_float(gpu::to_bf16(dg));
      v[1][k] = gpu::to_float(gpu::to_bf16(du));
    }
  }
};

}  // namespace tprimat::kernels
