// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The portability layer of device code: one kernel source for nvcc and hipcc (see HIP.md).
#pragma once

// Kernels use only what this header names (gpu::Stream, gpu::bf16, gpu::warp_size, the shuffle
// and bf16 helpers), never cuda*/hip* spellings, so the same .cuh compiles with both compilers.
#include <cstdint>

#include "tprimat/kernels/gpu_types.hpp"

namespace tprimat::gpu {

#if TPRIMAT_GPU_HIP
// CDNA (gfx9) runs 64-wide wavefronts; RDNA would be 32 but is not a target. The host pass has
// no target, so it takes 64 too. warp_size stays defined after the error so that the guard's
// message is the only diagnostic (tests/hip checks it fires).
#if defined(__HIP_DEVICE_COMPILE__) && !defined(__GFX9__)
#error "tprimat: HIP device pass for an architecture other than gfx9: check warp_size"
#endif
inline constexpr int warp_size = 64;
#else
inline constexpr int warp_size = 32;
#endif

/// Sum/max of `v` over the whole warp (every lane gets the result).
template <class T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
  for (int off = warp_size / 2; off > 0; off /= 2) {
#if TPRIMAT_GPU_HIP
    v += __shfl_xor(v, off, warp_size);
#else
    v += __shfl_xor_sync(0xffffffffu, v, off, warp_size);
#endif
  }
  return v;
}

template <class T>
__device__ __forceinline__ T warp_max(T v) {
#pragma unroll
  for (int off = warp_size / 2; off > 0; off /= 2) {
#if TPRIMAT_GPU_HIP
    const T o = __shfl_xor(v, off, warp_size);
#else
    const T o = __shfl_xor_sync(0xffffffffu, v, off, warp_size);
#endif
    v = o > v ? o : v;
  }
  return v;
}

/// Sum of `v` over each aligned group of `width` adjacent lanes (every lane of the group gets the
/// same bits: each step adds two values, and addition commutes). width is a power of two up to
/// 32, so a group never straddles a warp of either vendor. Only the group's lanes need to be
/// active, and all of them must call it; the block must be one-dimensional (lanes from
/// threadIdx.x, which names the group for CUDA's mask).
template <int width, class T>
__device__ __forceinline__ T lane_group_sum(T v) {
  static_assert(width >= 1 && width <= 32 && (width & (width - 1)) == 0,
                "tprimat: a lane group is a power of two of at most 32 lanes");
#if !TPRIMAT_GPU_HIP
  constexpr unsigned group_bits = width == 32 ? 0xffffffffu : (1u << width) - 1;
  const unsigned mask = group_bits << (threadIdx.x % warp_size / width * width);
#endif
#pragma unroll
  for (int off = width / 2; off > 0; off /= 2) {
#if TPRIMAT_GPU_HIP
    v += __shfl_xor(v, off, width);
#else
    v += __shfl_xor_sync(mask, v, off, width);
#endif
  }
  return v;
}

/// bf16 <-> float through one set of helpers (the three bf16 types spell these differently).
__device__ __host__ __forceinline__ float to_float(bf16 x) {
#if TPRIMAT_GPU_HIP && !defined(TPRIMAT_HIP_BF16)
  return static_cast<float>(x);
#else
  return __bfloat162float(x);
#endif
}
__device__ __host__ __forceinline__ bf16 to_bf16(float x) {
#if TPRIMAT_GPU_HIP && !defined(TPRIMAT_HIP_BF16)
  return bf16(x);
#else
  return __float2bfloat16(x);  // round to nearest even
#endif
}
__device__ __forceinline__ float to_float(float x) { return x; }

/// Blocks of `threads` threads covering n items.
inline unsigned blocks_for(std::int64_t n, int threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

}  // namespace tprimat::gpu

/// Only the max-threads bound travels: the second __launch_bounds__ argument means different
/// things on CUDA (min blocks per SM) and HIP (min waves per EU).
#define TPRIMAT_LAUNCH_BOUNDS(max_threads) __launch_bounds__(max_threads)
