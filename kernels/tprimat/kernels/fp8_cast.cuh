// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// FP8 casts with per-tensor scales: scaled cast + amax, the tile pass (cast + transpose + amax of
// a bf16 tensor, Transformer Engine's cast_transpose, or of a producer's outputs computed in the
// same pass), and the delayed/current scale updates, one source for CUDA and HIP.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>

#include "tprimat/kernels/convert.cuh"
#include "tprimat/kernels/fp8_convert.hpp"
#include "tprimat/kernels/fp8_format.hpp"
#include "tprimat/kernels/fp8_target.hpp"
#include "tprimat/kernels/gpu.cuh"
#include "tprimat/kernels/reduce.cuh"

#if !TPRIMAT_GPU_HIP
#include <cuda_fp8.h>
#endif

namespace tprimat::kernels {

/// x cast to format F (saturating, nearest even), bit for bit fp8_cast_reference.hpp's byte.
/// Hopper converts the OCP formats in hardware (cvt.rn.satfinite, which maps infinities to
/// +-max and NaN to 0x7f as the reference does; the GPU tests compare every bf16 pattern);
/// everything else, fnuz on gfx942 included, takes the portable bit arithmetic.
template <Fp8Format F>
__device__ __forceinline__ std::uint8_t fp8_cast_value(float x) {
#if !TPRIMAT_GPU_HIP && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  if constexpr (F == Fp8Format::e4m3) {
    return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
  } else if constexpr (F == Fp8Format::e5m2) {
    return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
  }
#endif
  return fp8_from_float<F>(x);
}

/// Max-reduces a non-negative float into *amax: non-negative floats order as their bits do.
/// *amax must start non-negative (the caller zeroes it; the delayed update does after reading).
__device__ __forceinline__ void atomic_amax(float* amax, float v) {
  atomicMax(reinterpret_cast<int*>(amax), __float_as_int(v));
}

/// One element of a cast pass: |v| into the thread's running `thread_amax` (before scaling, so
/// the amax is the tensor's own), then v * scale cast into out[i]; a null `out` (an amax-only
/// target) skips the cast. Both passes take every element through here, so their amaxes and
/// bytes cannot drift apart.
template <Fp8Format F>
__device__ __forceinline__ void fp8_amax_and_cast(float v, float scale, float& thread_amax,
                                                  std::uint8_t* out, std::int64_t i) {
  thread_amax = fmaxf(thread_amax, fabsf(v));
  if (out != nullptr) out[i] = fp8_cast_value<F>(v * scale);
}

/// A target's amax = max(*amax, the block's max of each thread's `thread_amax`); a target
/// without an amax is skipped. Called by every thread of the block, for each target in turn:
/// block_max synchronizes the block, and the skip agrees across threads (a kernel argument).
/// One target, by value, with the loop over targets left to each kernel: a helper over
/// Fp8Targets<N> compiled differently on ROCm 7.2 (by reference: 4 more SGPRs in the tile
/// element pass; by value: another branch layout).
__device__ __forceinline__ void fp8_reduce_amax(Fp8Target target, float thread_amax,
                                                float* scratch) {
  if (target.amax == nullptr) return;
  const float m = block_max(thread_amax, scratch);
  if (threadIdx.x == 0) atomic_amax(target.amax, m);
}

inline constexpr int fp8_cast_threads = 256;

/// The values of a plain cast: a bf16 tensor's elements (as bits).
struct Bf16Values {
  static constexpr int outputs = 1;
  static constexpr int pack = 8;  ///< elements a 16-byte load holds
  const std::uint16_t* x;
  /// Elements [i, i + V) as floats (i a multiple of V when V > 1).
  template <int V>
  __device__ __forceinline__ void operator()(std::int64_t i, float (&v)[1][V]) const {
    const Pack<std::uint16_t, V> p = load_pack<V>(x + i);
#pragma unroll
    for (int k = 0; k < V; ++k) v[0][k] = join_float(p.v[k], 0);
  }
};

/// The values of a cast of an fp32 tensor.
struct FloatValues {
  static constexpr int outputs = 1;
  static constexpr int pack = 4;
  const float* x;
  template <int V>
  __device__ __forceinline__ void operator()(std::int64_t i, float (&v)[1][V]) const {
    const Pack<float, V> p = load_pack<V>(x + i);
#pragma unroll
    for (int k = 0; k < V; ++k) v[0][k] = p.v[k];
  }
};

/// Each of Values' n elements (a tensor's, or a producer's computed in the pass: kernels/
/// swiglu.cuh) cast into its target's `out` (may be null: amax only; out_t is not written) and
/// its amax = max(*amax, max |v|), |v| before scaling. NaNs are left out of the amax (fmaxf), as
/// Transformer Engine's are; an infinity is kept, so the scale update sees it and keeps the old
/// scale. V elements a thread (16-byte loads where the caller checked alignment; V = 1 takes the
/// rest), a grid-stride loop over a grid the caller caps: fewer blocks, fewer amax atomics.
template <Fp8Format F, class Values, int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(fp8_cast_threads) void fp8_cast_kernel(
    Values values, std::int64_t n, Fp8Targets<Values::outputs> targets) {
  constexpr int outputs = Values::outputs;
  __shared__ float scratch[gpu::warp_size];
  float s[outputs], local[outputs];
#pragma unroll
  for (int o = 0; o < outputs; ++o) {
    s[o] = targets.t[o].scale != nullptr ? *targets.t[o].scale : 1.0f;
    local[o] = 0.0f;
  }
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x * V;
  for (std::int64_t i = global_thread() * V; i < n; i += stride) {
    if (i + V <= n) {
      float v[outputs][V];
      values.template operator()<V>(i, v);
#pragma unroll
      for (int o = 0; o < outputs; ++o) {
        Pack<std::uint8_t, V> q;
#pragma unroll
        for (int k = 0; k < V; ++k) fp8_amax_and_cast<F>(v[o][k], s[o], local[o], q.v, k);
        if (targets.t[o].out != nullptr) store_pack<V>(targets.t[o].out + i, q);
      }
    } else {
      for (std::int64_t j = i; j < n; ++j) {
        float v[outputs][1];
        values.template operator()<1>(j, v);
#pragma unroll
        for (int o = 0; o < outputs; ++o)
          fp8_amax_and_cast<F>(v[o][0], s[o], local[o], targets.t[o].out, j);
      }
    }
  }
#pragma unroll
  for (int o = 0; o < outputs; ++o) fp8_reduce_amax(targets.t[o], local[o], scratch);
}

/// The tile cast_transpose moves through shared memory: 64 x 64 elements by 256 threads, each
/// taking chunks of 8 (16 bytes of bf16 in, 8 bytes of FP8 out) in both directions.
inline constexpr int fp8_tile = 64;
inline constexpr int fp8_tile_threads = 256;
inline constexpr int fp8_chunk = 8;
// Row stride of the shared tile in bytes: 68 keeps 4-byte alignment for the row-wise stores and
// spreads the column-wise gathers (8 rows apart) over 4 banks instead of 1.
inline constexpr int fp8_tile_stride = fp8_tile + 4;

/// How a tile pass moves its elements: whole chunks of 8 (every dimension a multiple of 8, every
/// pointer aligned), or one at a time.
enum class TileAccess : bool { elements, chunks };

/// The tile pass: Values gives `outputs` tensors [rows, cols] (each element the bf16 value a
/// producer kernel would write, as a float), and each is cast with its target's scale, written
/// row-major and transposed, its amax taken. With Bf16Values this is Transformer Engine's
/// cast_transpose (one read of x, one write of each output); with a producer that computes its
/// output from its own inputs (kernels/swiglu.cuh) the output is never written in bf16 nor read
/// back: the producer and the cast are one pass. One block per 64 x 64 tile (grid x over column
/// tiles, y over row tiles). TileAccess::chunks: cols and rows are multiples of 8 and the
/// pointers aligned, so every chunk in the tensor is whole and moves as 16/8-byte accesses;
/// TileAccess::elements goes element by element. Two instantiations, not a run-time flag: the
/// element path beside the chunked one cost gfx90a two spilled SGPRs (ROCm 7.2) in the
/// two-output pass.
template <Fp8Format F, class Values, TileAccess A>
__global__ TPRIMAT_LAUNCH_BOUNDS(fp8_tile_threads) void fp8_tile_cast_kernel(
    Values values, std::int64_t rows, std::int64_t cols, Fp8Targets<Values::outputs> targets) {
  constexpr int outputs = Values::outputs;
  // Words, for the 4-byte stores (an alignas on a __shared__ array does not compile on HIP).
  __shared__ std::uint32_t tile_words[outputs][fp8_tile * fp8_tile_stride / 4];
  __shared__ float scratch[gpu::warp_size];
  float s[outputs];
#pragma unroll
  for (int o = 0; o < outputs; ++o)
    s[o] = targets.t[o].scale != nullptr ? *targets.t[o].scale : 1.0f;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.y) * fp8_tile;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * fp8_tile;
  constexpr int chunks = fp8_tile / fp8_chunk;           // 8 chunks a tile row
  constexpr int lines = fp8_tile_threads / chunks;       // 32 tile rows a pass
  const int chunk = (threadIdx.x % chunks) * fp8_chunk;  // first column (row) in the tile
  const int line = threadIdx.x / chunks;
  float local[outputs] = {};

  // A chunk of values at tile row r, cast: written to each `out` row-major, kept in the tiles for
  // the transposes.
  const auto put_chunk = [&](int r, std::int64_t row, std::int64_t col,
                             const float(&v)[outputs][fp8_chunk]) {
#pragma unroll
    for (int o = 0; o < outputs; ++o) {
      Pack<std::uint8_t, fp8_chunk> q;
#pragma unroll
      for (int k = 0; k < fp8_chunk; ++k) fp8_amax_and_cast<F>(v[o][k], s[o], local[o], q.v, k);
      const Fp8Target& t = targets.t[o];
      if (t.out != nullptr) store_pack<fp8_chunk>(t.out + row * cols + col, q);
      if (t.out_t == nullptr) continue;
      const Pack<std::uint32_t, 2> words = *reinterpret_cast<const Pack<std::uint32_t, 2>*>(&q);
      std::uint32_t* tile = reinterpret_cast<std::uint32_t*>(
          reinterpret_cast<std::uint8_t*>(tile_words[o]) + r * fp8_tile_stride + chunk);
      tile[0] = words.v[0];
      tile[1] = words.v[1];
    }
  };
  constexpr int passes = fp8_tile / lines;  // tile rows a thread takes
  if (A == TileAccess::chunks && r0 + fp8_tile <= rows && c0 + fp8_tile <= cols) {
    // A tile inside the tensor: every row's values first, so all their loads are in flight
    // before the first store (the values' pointers may alias the outputs as far as the
    // compiler knows, so it would not hoist them itself).
    float v[passes][outputs][fp8_chunk];
#pragma unroll
    for (int p = 0; p < passes; ++p)
      values.template operator()<fp8_chunk>((r0 + line + p * lines) * cols + c0 + chunk, v[p]);
#pragma unroll
    for (int p = 0; p < passes; ++p)
      put_chunk(line + p * lines, r0 + line + p * lines, c0 + chunk, v[p]);
  } else {
    // Row by row: an edge tile's chunks in the tensor, or every element one at a time.
    for (int r = line; r < fp8_tile; r += lines) {
      const std::int64_t row = r0 + r, col = c0 + chunk;
      if (row >= rows || col >= cols) continue;
      if constexpr (A == TileAccess::chunks) {
        float v[outputs][fp8_chunk];
        values.template operator()<fp8_chunk>(row * cols + col, v);
        put_chunk(r, row, col, v);
      } else {
        for (int k = 0; k < fp8_chunk && col + k < cols; ++k) {
          float v[outputs][1];
          values.template operator()<1>(row * cols + col + k, v);
#pragma unroll
          for (int o = 0; o < outputs; ++o) {
            std::uint8_t q;  // one byte for both the tile and `out`
            fp8_amax_and_cast<F>(v[o][0], s[o], local[o], &q, 0);
            reinterpret_cast<std::uint8_t*>(tile_words[o])[r * fp8_tile_stride + chunk + k] = q;
            if (targets.t[o].out != nullptr) targets.t[o].out[row * cols + col + k] = q;
          }
        }
      }
    }
  }
  __syncthreads();

  // Columns of each tile: rows of its out_t, gathered from the tile's bytes.
#pragma unroll
  for (int o = 0; o < outputs; ++o) {
    std::uint8_t* out_t = targets.t[o].out_t;
    if (out_t == nullptr) continue;
    const std::uint8_t* tile = reinterpret_cast<const std::uint8_t*>(tile_words[o]);
    for (int c = line; c < fp8_tile; c += lines) {
      const std::int64_t row_t = c0 + c, col_t = r0 + chunk;  // out_t[row_t, col_t]
      if (row_t >= cols || col_t >= rows) continue;
      if constexpr (A == TileAccess::chunks) {
        Pack<std::uint8_t, fp8_chunk> q;
#pragma unroll
        for (int k = 0; k < fp8_chunk; ++k) q.v[k] = tile[(chunk + k) * fp8_tile_stride + c];
        store_pack<fp8_chunk>(out_t + row_t * rows + col_t, q);
      } else {
        for (int k = 0; k < fp8_chunk && col_t + k < rows; ++k)
          out_t[row_t * rows + col_t + k] = tile[(chunk + k) * fp8_tile_stride + c];
      }
    }
  }

#pragma unroll
  for (int o = 0; o < outputs; ++o) fp8_reduce_amax(targets.t[o], local[o], scratch);
}

/// The scale a tensor of this amax gets: max_finite / amax / 2^margin; `previous` where amax is 0
/// or not finite, FLT_MAX where the quotient overflows (fp8_reference_scale is the CPU model).
template <Fp8Format F>
__device__ __forceinline__ float fp8_scale_from_amax(float amax, float previous, int margin) {
  if (!(amax > 0.0f) || !isfinite(amax)) return previous;
  const float scale = ldexpf(fp8_spec(F).max_finite / amax, -margin);
  return isfinite(scale) ? scale : FLT_MAX;
}

inline constexpr int fp8_scale_threads = 256;

/// Delayed scaling, one block per tensor: history [count, h] rolls by one (entry 0 takes this
/// step's amax, the oldest drops out), the scale follows from the history's max, scale_inv =
/// 1 / scale, and the step's amax is zeroed for the next step's casts to reduce into.
/// `window` (h floats of dynamic shared memory) holds the old history while it is rewritten.
/// Tensor t's scale_inv is scale_inv[t * inv_stride]: cuBLASLt takes a scale pointer only on a
/// 16-byte boundary, so each tensor's gets its own 16 bytes (stride 4).
template <Fp8Format F>
__global__ TPRIMAT_LAUNCH_BOUNDS(fp8_scale_threads) void fp8_delayed_scale_kernel(
    float* __restrict__ history, int h, float* __restrict__ amax, int margin,
    float* __restrict__ scale, float* __restrict__ scale_inv, int inv_stride) {
  extern __shared__ float window[];
  __shared__ float scratch[gpu::warp_size];
  const int tensor = blockIdx.x;
  float* hist = history + static_cast<std::int64_t>(tensor) * h;
  for (int i = threadIdx.x; i < h; i += blockDim.x) window[i] = hist[i];
  __syncthreads();
  float m = 0.0f;
  for (int i = threadIdx.x; i < h; i += blockDim.x) {
    const float v = i == 0 ? amax[tensor] : window[i - 1];
    hist[i] = v;
    m = fmaxf(m, v);
  }
  m = block_max(m, scratch);
  if (threadIdx.x == 0) {
    const float next = fp8_scale_from_amax<F>(m, scale[tensor], margin);
    scale[tensor] = next;
    scale_inv[static_cast<std::int64_t>(tensor) * inv_stride] = 1.0f / next;
    amax[tensor] = 0.0f;
  }
}

/// Current scaling: each tensor's scale from this step's amax (computed by a cast or amax pass
/// before the cast that uses it), one thread per tensor; the amax is zeroed for the next pass
/// to reduce into. scale_inv strided as the delayed kernel's.
template <Fp8Format F>
__global__ TPRIMAT_LAUNCH_BOUNDS(fp8_scale_threads) void fp8_current_scale_kernel(
    float* __restrict__ amax, int count, int margin, float* __restrict__ scale,
    float* __restrict__ scale_inv, int inv_stride) {
  const int tensor = static_cast<int>(global_thread());
  if (tensor >= count) return;
  const float next = fp8_scale_from_amax<F>(amax[tensor], scale[tensor], margin);
  scale[tensor] = next;
  scale_inv[static_cast<std::int64_t>(tensor) * inv_stride] = 1.0f / next;
  amax[tensor] = 0.0f;
}

}  // namespace tprimat::kernels
