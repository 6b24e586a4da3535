// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Gpu's FP8 ops: the scaled cast, the tile pass (cast_transpose, SwiGLU's output or
// gradients cast where they are computed) and the scale updates, each choosing its kernel's
// format instantiation, pack width and grid (kernels/tprimat/kernels/fp8_cast.cuh).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/kernels/fp8_cast.cuh"
#include "tprimat/kernels/fp8_format.hpp"
#include "tprimat/kernels/swiglu.cuh"

namespace tprimat::backend {
namespace detail {

/// Calls launch(std::integral_constant<Fp8Format, f>{}) for the run-time format `f`, so each
/// kernel is compiled once per format with its constants folded.
template <class Launch>
void with_fp8_format(kernels::Fp8Format f, Launch&& launch) {
  using kernels::Fp8Format;
  switch (f) {
    case Fp8Format::e4m3:
      launch(std::integral_constant<Fp8Format, Fp8Format::e4m3>{});
      return;
    case Fp8Format::e5m2:
      launch(std::integral_constant<Fp8Format, Fp8Format::e5m2>{});
      return;
    case Fp8Format::e4m3_fnuz:
      launch(std::integral_constant<Fp8Format, Fp8Format::e4m3_fnuz>{});
      return;
    case Fp8Format::e5m2_fnuz:
      launch(std::integral_constant<Fp8Format, Fp8Format::e5m2_fnuz>{});
      return;
  }
}

/// Which outputs of its targets a pass writes: the elementwise pass never writes `out_t`, so an
/// `out_t` there must not narrow its packs; the tile pass writes both.
enum class Fp8Writes { rows, rows_and_transposes };

/// Whether a pass may move whole packs: the values' `inputs` on 16-byte boundaries (one load)
/// and each output it writes on `out_bytes` (one store of a pack's FP8 bytes). A null output is
/// aligned, so amax-only targets narrow nothing.
template <int N>
bool aligned_for_packs(std::initializer_list<const void*> inputs,
                       const kernels::Fp8Targets<N>& targets, std::size_t out_bytes,
                       Fp8Writes writes) {
  using kernels::aligned_to;
  for (const void* p : inputs)
    if (!aligned_to(p, 16)) return false;
  for (const kernels::Fp8Target& t : targets.t) {
    if (!aligned_to(t.out, out_bytes)) return false;
    if (writes == Fp8Writes::rows_and_transposes && !aligned_to(t.out_t, out_bytes)) return false;
  }
  return true;
}

/// The elementwise pass over n of `values` into `targets` (kernels::fp8_cast_kernel: the rows and
/// the amaxes, no transposes): Values::pack elements a thread (16-byte loads) where `pointers`
/// (the values' inputs) and the outputs allow them, else one. The grid stops at a few blocks per
/// SM's worth (grid-stride loops): fewer blocks, fewer amax atomics.
template <class Values>
void fp8_elementwise_cast(const Values& values, std::initializer_list<const void*> pointers,
                          std::int64_t n, kernels::Fp8Format format,
                          const kernels::Fp8Targets<Values::outputs>& targets, const char* what,
                          Gpu::Stream stream) {
  if (n <= 0) return;
  constexpr int threads = kernels::fp8_cast_threads, v = Values::pack;
  constexpr unsigned max_blocks = 2048;
  const bool packs = aligned_for_packs(pointers, targets, v, Fp8Writes::rows);
  with_fp8_format(format, [&](auto f) {
    if (packs) {
      const unsigned grid = std::min(gpu::blocks_for((n + v - 1) / v, threads), max_blocks);
      kernels::fp8_cast_kernel<decltype(f)::value, Values, v>
          <<<grid, threads, 0, stream>>>(values, n, targets);
    } else {
      const unsigned grid = std::min(gpu::blocks_for(n, threads), max_blocks);
      kernels::fp8_cast_kernel<decltype(f)::value, Values, 1>
          <<<grid, threads, 0, stream>>>(values, n, targets);
    }
  });
  gpu_check(gpuGetLastError(), what);
}

/// The tile pass over [rows, cols] of `values` into `targets` (kernels::fp8_tile_cast_kernel);
/// `pointers` are the values' inputs, whose alignment (with the targets') allows whole chunks.
/// Targets that take the amaxes alone need no tile: the elementwise pass reads the values once,
/// without the tile's shared memory.
template <class Values>
void fp8_tile_cast(const Values& values, std::initializer_list<const void*> pointers,
                   std::int64_t rows, std::int64_t cols, kernels::Fp8Format format,
                   const kernels::Fp8Targets<Values::outputs>& targets, const char* what,
                   Gpu::Stream stream) {
  if (rows <= 0 || cols <= 0) return;
  bool amax_only = true;
  for (const kernels::Fp8Target& t : targets.t)
    amax_only = amax_only && t.out == nullptr && t.out_t == nullptr;
  if (amax_only)
    return fp8_elementwise_cast(values, pointers, rows * cols, format, targets, what, stream);
  constexpr int tile = kernels::fp8_tile, chunk = kernels::fp8_chunk;
  const bool vectors = rows % chunk == 0 && cols % chunk == 0 &&
                       aligned_for_packs(pointers, targets, chunk, Fp8Writes::rows_and_transposes);
  const dim3 grid(static_cast<unsigned>((cols + tile - 1) / tile),
                  static_cast<unsigned>((rows + tile - 1) / tile));
  with_fp8_format(format, [&](auto f) {
    using kernels::TileAccess;
    constexpr unsigned threads = kernels::fp8_tile_threads;
    if (vectors)
      kernels::fp8_tile_cast_kernel<decltype(f)::value, Values, TileAccess::chunks>
          <<<grid, threads, 0, stream>>>(values, rows, cols, targets);
    else
      kernels::fp8_tile_cast_kernel<decltype(f)::value, Values, TileAccess::elements>
          <<<grid, threads, 0, stream>>>(values, rows, cols, targets);
  });
  gpu_check(gpuGetLastError(), what);
}

}  // namespace detail

TPRIMAT_GPU_INLINE void Gpu::fp8_cast(const bf16* x, std::int64_t n, kernels::Fp8Format format,
                                      const float* scale, std::uint8_t* out, float* amax,
                                      Stream stream) {
  const kernels::Bf16Values values{reinterpret_cast<const std::uint16_t*>(x)};
  detail::fp8_elementwise_cast(values, {x}, n, format, {{{scale, out, nullptr, amax}}}, "fp8_cast",
                               stream);
}

TPRIMAT_GPU_INLINE void Gpu::fp8_cast(const float* x, std::int64_t n, kernels::Fp8Format format,
                                      const float* scale, std::uint8_t* out, float* amax,
                                      Stream stream) {
  detail::fp8_elementwise_cast(kernels::FloatValues{x}, {x}, n, format,
                               {{{scale, out, nullptr, amax}}}, "fp8_cast", stream);
}

TPRIMAT_GPU_INLINE void Gpu::fp8_amax(const bf16* x, std::int64_t n, float* amax, Stream stream) {
  // The cast without an output; its format is irrelevant then.
  fp8_cast(x, n, kernels::Fp8Format::e4m3, nullptr, nullptr, amax, stream);
}

TPRIMAT_GPU_INLINE void Gpu::fp8_cast_transpose(const bf16* x, std::int64_t rows, std::int64_t cols,
                                                kernels::Fp8Format format, const float* scale,
                                                std::uint8_t* out, std::uint8_t* out_t, float* amax,
                                                Stream stream) {
  const kernels::Bf16Values values{reinterpret_cast<const std::uint16_t*>(x)};
  detail::fp8_tile_cast(values, {x}, rows, cols, format, {{{scale, out, out_t, amax}}},
                        "fp8_cast_transpose", stream);
}

TPRIMAT_GPU_INLINE void Gpu::fp8_swiglu_cast(const bf16* gate, const bf16* up, std::int64_t rows,
                                             std::int64_t cols, kernels::Fp8Format format,
                                             const kernels::Fp8Target& h, Stream stream) {
  detail::fp8_tile_cast(kernels::SwigluValues{gate, up}, {gate, up}, rows, cols, format, {{h}},
                        "fp8_swiglu_cast", stream);
}

TPRIMAT_GPU_INLINE void Gpu::fp8_swiglu_grad_cast(const bf16* gate, const bf16* up, const bf16* dh,
                                                  std::int64_t rows, std::int64_t cols,
                                                  kernels::Fp8Format format,
                                                  const kernels::Fp8Target& dgate,
                                                  const kernels::Fp8Target& dup, Stream stream) {
  detail::fp8_tile_cast(kernels::SwigluGradValues{gate, up, dh}, {gate, up, dh}, rows, cols, format,
                        {{dgate, dup}}, "fp8_swiglu_grad_cast", stream);
}

TPRIMAT_GPU_INLINE void Gpu::fp8_delayed_scale_update(float* amax_history, int history, float* amax,
                                                      int count, kernels::Fp8Format format,
                                                      int margin, float* scale, float* scale_inv,
                                                      Stream stream, int scale_inv_stride) {
  if (count <= 0 || history <= 0) return;
  const std::size_t window = sizeof(float) * static_cast<std::size_t>(history);
  detail::with_fp8_format(format, [&](auto f) {
    kernels::fp8_delayed_scale_kernel<decltype(f)::value>
        <<<static_cast<unsigned>(count), kernels::fp8_scale_threads, window, stream>>>(
            amax_history, history, amax, margin, scale, scale_inv, scale_inv_stride);
  });
  gpu_check(gpuGetLastError(), "fp8_delayed_scale_update");
}

TPRIMAT_GPU_INLINE void Gpu::fp8_current_scale_update(float* amax, int count,
                                                      kernels::Fp8Format format, int margin,
                                                      float* scale, float* scale_inv,
                                                      Stream stream, int scale_inv_stride) {
  if (count <= 0) return;
  constexpr int threads = kernels::fp8_scale_threads;
  detail::with_fp8_format(format, [&](auto f) {
    kernels::fp8_current_scale_kernel<decltype(f)::value>
        <<<gpu::blocks_for(count, threads), threads, 0, stream>>>(amax, count, margin, scale,
                                                                  scale_inv, scale_inv_stride);
  });
  gpu_check(gpuGetLastError(), "fp8_current_scale_update");
}

}  // namespace tprimat::backend
