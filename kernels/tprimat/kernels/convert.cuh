// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// fp32 -> bf16 copies, plus the pack loads/stores and launch helpers the other kernels share.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tprimat/kernels/gpu.cuh"
#include "tprimat/kernels/split_float.hpp"

namespace tprimat::kernels {

/// N elements moved as one aligned access (up to 16 bytes: 4 floats or 8 bf16), so each thread
/// issues one wide load instead of N narrow ones. A plain aligned struct rather than float4/int4
/// because CUDA's and HIP's vector types differ in what they can be constructed from.
template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <int N, class T>
__device__ __forceinline__ Pack<T, N> load_pack(const T* p) {
  return *reinterpret_cast<const Pack<T, N>*>(p);
}
template <int N, class T>
__device__ __forceinline__ void store_pack(T* p, const Pack<T, N>& x) {
  *reinterpret_cast<Pack<T, N>*>(p) = x;
}

/// Elements [i, i + V) of a split fp32 master (split_float.hpp) joined to fp32; without the
/// remainders (lo == nullptr) the bf16 high halves alone, as the step's forward reads them.
template <int V>
__device__ __forceinline__ Pack<float, V> load_joined(const std::uint16_t* __restrict__ hi,
                                                      const std::uint16_t* __restrict__ lo,
                                                      std::int64_t i) {
  const Pack<std::uint16_t, V> hp = load_pack<V>(hi + i);
  Pack<std::uint16_t, V> lp{};
  if (lo != nullptr) lp = load_pack<V>(lo + i);
  Pack<float, V> w;
#pragma unroll
  for (int k = 0; k < V; ++k) w.v[k] = join_float(hp.v[k], lp.v[k]);
  return w;
}

/// Whether `p` may be accessed in packs of `bytes` (callers then also need row strides that keep
/// every row start aligned, which they check on the sizes).
inline bool aligned_to(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

/// The global index of this thread, in 64 bits: grids over n * hidden elements pass 2^31.
__device__ __forceinline__ std::int64_t global_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

/// Threads per block for a row of `items` packs: enough whole warps to cover it, at most `cap`.
inline int row_threads(std::int64_t items, int cap) {
  const std::int64_t warps = (items + gpu::warp_size - 1) / gpu::warp_size;
  const std::int64_t t = warps * gpu::warp_size;
  return static_cast<int>(t < cap ? (t > 0 ? t : gpu::warp_size) : cap);
}

template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(256) void to_bf16_kernel(const float* __restrict__ src,
                                                          gpu::bf16* __restrict__ dst,
                                                          std::int64_t n) {
  const std::int64_t i = global_thread() * V;
  if (i + V <= n) {
    const Pack<float, V> x = load_pack<V>(src + i);
    Pack<gpu::bf16, V> y;
#pragma unroll
    for (int k = 0; k < V; ++k) y.v[k] = gpu::to_bf16(x.v[k]);
    store_pack<V>(dst + i, y);
  } else {
    for (std::int64_t j = i; j < n; ++j) dst[j] = gpu::to_bf16(src[j]);
  }
}

/// out = residual + float(y): a reduce-scattered bf16 row-parallel sum onto the fp32 residual
/// stream (sequence parallelism). out may be residual.
template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(256) void add_bf16_kernel(const float* residual,
                                                           const gpu::bf16* __restrict__ y,
                                                           float* out, std::int64_t n) {
  const std::int64_t i = global_thread() * V;
  if (i + V <= n) {
    const Pack<float, V> r = load_pack<V>(residual + i);
    const Pack<gpu::bf16, V> b = load_pack<V>(y + i);
    Pack<float, V> o;
#pragma unroll
    for (int k = 0; k < V; ++k) o.v[k] = r.v[k] + gpu::to_float(b.v[k]);
    store_pack<V>(out + i, o);
  } else {
    for (std::int64_t j = i; j < n; ++j) out[j] = residual[j] + gpu::to_float(y[j]);
  }
}

/// x += y in fp32 (ZeRO-2: a micro-batch's reduced gradient slice into its sum).
template <int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(256) void accumulate_kernel(float* __restrict__ x,
                                                             const float* __restrict__ y,
                                                             std::int64_t n) {
  const std::int64_t i = global_thread() * V;
  if (i + V <= n) {
    Pack<float, V> a = load_pack<V>(x + i);
    const Pack<float, V> b = load_pack<V>(y + i);
#pragma unroll
    for (int k = 0; k < V; ++k) a.v[k] += b.v[k];
    store_pack<V>(x + i, a);
  } else {
    for (std::int64_t j = i; j < n; ++j) x[j] += y[j];
  }
}

// maybe_unused: TUs that include this header for its helpers (fp8_cast.cuh) launch no split.
[[maybe_unused]] static __global__ TPRIMAT_LAUNCH_BOUNDS(256) void split_kernel(
    const float* __restrict__ src, std::uint16_t* __restrict__ hi, std::uint16_t* __restrict__ lo,
    std::int64_t n) {
  const std::int64_t i = global_thread();
  if (i < n) split_float(src[i], hi[i], lo[i]);
}

}  // namespace tprimat::kernels
