// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Portable tiled GEMM: the fallback where no vendor BLAS is available. bf16 in, fp32 accumulate.
#pragma once

// Row-major C[m, n] = op(A) op(B) + beta C_in (+ bias[n] broadcast over rows), the contract of
// backend::Cuda::gemm/gemm_add (include/tprimat/backend/gpu.hpp): op(A) [m, k], stored [k, m]
// when trans_a; op(B) [k, n], stored [n, k] when trans_b; C_in may be C itself.
//
// Written for correctness on every GPU we compile for rather than speed: plain shared-memory
// tiles and fp32 FMAs (no mma.sync, no MFMA), no warp-level operations at all, so nothing
// depends on 32- or 64-wide waves; any m, n, k and any leading dimension (no alignment needs),
// ragged edges zero-filled in shared memory. Each output is one thread's fixed-order sum over k,
// so results are deterministic.

#include <cstdint>
#include <type_traits>

#include "tprimat/kernels/gpu.cuh"

namespace tprimat::kernels {

/// Block tile of C and the k-depth of one shared-memory stage. Each thread owns a
/// per_thread_rows x per_thread_cols grid of outputs, strided by the thread grid so that a row of
/// threads stores consecutive columns (coalesced) and reads consecutive shared-memory words.
struct GemmTile {
  static constexpr int rows = 64;      // of C per block
  static constexpr int cols = 64;      // of C per block
  static constexpr int depth = 16;     // k per stage
  static constexpr int threads = 256;  // 4 waves of 64, 8 warps of 32
  static constexpr int thread_cols = 16;
  static constexpr int thread_rows = threads / thread_cols;   // 16
  static constexpr int per_thread_rows = rows / thread_rows;  // 4
  static constexpr int per_thread_cols = cols / thread_cols;  // 4
  static_assert(rows % thread_rows == 0 && cols % thread_cols == 0,
                "tprimat: GemmTile's thread grid must divide its tile");
  static_assert(rows * depth % threads == 0 && cols * depth % threads == 0,
                "tprimat: GemmTile's loads must spread evenly over its threads");
};

/// One operand as the kernel reads it: element (r, kk) of op(X), r a row of C (for A) or a column
/// of C (for B), lies at data[r * row_stride + kk * k_stride]. One of the strides is 1.
struct GemmOperand {
  const gpu::bf16* data;
  std::int64_t row_stride;
  std::int64_t k_stride;
};

namespace gemm_detail {

/// Stages op(X)[r0 .. r0 + Rows, k0 .. k0 + Depth) into tile[kk][r] as fp32, zeros outside the
/// matrix. Consecutive threads walk the operand's contiguous dimension, so reads coalesce
/// whichever way it is stored; the branch is uniform over the block.
template <int Rows, int Depth, int Threads>
__device__ __forceinline__ void stage(const GemmOperand& x, std::int64_t r0, std::int64_t rows,
                                      std::int64_t k0, std::int64_t k, float (*tile)[Rows + 1]) {
  const bool k_contiguous = x.k_stride == 1;
#pragma unroll
  for (int s = 0; s < Rows * Depth / Threads; ++s) {
    const int e = static_cast<int>(threadIdx.x) + s * Threads;
    const int r = k_contiguous ? e / Depth : e % Rows;
    const int kk = k_contiguous ? e % Depth : e / Rows;
    const std::int64_t gr = r0 + r, gk = k0 + kk;
    tile[kk][r] =
        gr < rows && gk < k ? gpu::to_float(x.data[gr * x.row_stride + gk * x.k_stride]) : 0.0f;
  }
}

template <class Out>
__device__ __forceinline__ Out from_float(float v) {
  if constexpr (std::is_same_v<Out, float>)
    return v;
  else
    return gpu::to_bf16(v);
}

}  // namespace gemm_detail

/// One block per Tile::rows x Tile::cols tile of C. C_in and C may alias (gemm's in-place beta),
/// hence no __restrict__ on them: each element is read and then written by the same thread.
template <class Out, class Tile>
__global__ TPRIMAT_LAUNCH_BOUNDS(Tile::threads) void gemm_tiled_kernel(
    GemmOperand a, GemmOperand b, std::int64_t m, std::int64_t n, std::int64_t k, float beta,
    const Out* c_in, Out* c, std::int64_t ldc, const gpu::bf16* __restrict__ bias) {
  // +1 column: the stage writes walk kk fastest when k is contiguous; the odd row length spreads
  // them over the banks.
  __shared__ float a_tile[Tile::depth][Tile::rows + 1];
  __shared__ float b_tile[Tile::depth][Tile::cols + 1];
  constexpr int tr = Tile::per_thread_rows, tc = Tile::per_thread_cols;
  const int tx = threadIdx.x % Tile::thread_cols, ty = threadIdx.x / Tile::thread_cols;
  const std::int64_t row0 = std::int64_t{blockIdx.y} * Tile::rows;
  const std::int64_t col0 = std::int64_t{blockIdx.x} * Tile::cols;

  float acc[tr][tc] = {};
  for (std::int64_t k0 = 0; k0 < k; k0 += Tile::depth) {
    gemm_detail::stage<Tile::rows, Tile::depth, Tile::threads>(a, row0, m, k0, k, a_tile);
    gemm_detail::stage<Tile::cols, Tile::depth, Tile::threads>(b, col0, n, k0, k, b_tile);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < Tile::depth; ++kk) {
      float av[tr], bv[tc];
#pragma unroll
      for (int i = 0; i < tr; ++i) av[i] = a_tile[kk][ty + i * Tile::thread_rows];
#pragma unroll
      for (int j = 0; j < tc; ++j) bv[j] = b_tile[kk][tx + j * Tile::thread_cols];
#pragma unroll
      for (int i = 0; i < tr; ++i)
#pragma unroll
        for (int j = 0; j < tc; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();  // the next stage overwrites the tiles
  }

#pragma unroll
  for (int i = 0; i < tr; ++i) {
    const std::int64_t r = row0 + ty + i * Tile::thread_rows;
    if (r >= m) break;
#pragma unroll
    for (int j = 0; j < tc; ++j) {
      const std::int64_t col = col0 + tx + j * Tile::thread_cols;
      if (col >= n) break;
      const std::int64_t at = r * ldc + col;
      float v = acc[i][j];
      // beta 0 never reads C_in: it may be uninitialised (or NaN-poisoned by a test).
      if (beta != 0.0f) v += beta * gpu::to_float(c_in[at]);
      if (bias) v += gpu::to_float(bias[col]);
      c[at] = gemm_detail::from_float<Out>(v);
    }
  }
}

/// C = op(A) op(B) + beta C_in (+ bias): see the top of the file. Sizes and leading dimensions
/// are the caller's to check (the backends do, with their error types); m <= 0 or n <= 0 is a
/// no-op and k = 0 gives beta C_in (+ bias). m is at most 65535 * Tile::rows (grid.y).
template <class Out, class Tile = GemmTile>
inline void gemm_tiled(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                       const gpu::bf16* a, std::int64_t lda, const gpu::bf16* b, std::int64_t ldb,
                       float beta, const Out* c_in, Out* c, std::int64_t ldc, const gpu::bf16* bias,
                       gpu::Stream stream) {
  static_assert(std::is_same_v<Out, float> || std::is_same_v<Out, gpu::bf16>,
                "tprimat: gemm_tiled writes fp32 or bf16");
  if (m <= 0 || n <= 0) return;
  // op(A)[i, kk]: A[i * lda + kk], or A[kk * lda + i] when stored [k, m].
  const GemmOperand op_a = trans_a ? GemmOperand{a, 1, lda} : GemmOperand{a, lda, 1};
  // op(B)[kk, j] read as (j, kk): B[kk * ldb + j], or B[j * ldb + kk] when stored [n, k].
  const GemmOperand op_b = trans_b ? GemmOperand{b, ldb, 1} : GemmOperand{b, 1, ldb};
  const dim3 grid(gpu::blocks_for(n, Tile::cols), gpu::blocks_for(m, Tile::rows));
  gemm_tiled_kernel<Out, Tile>
      <<<grid, Tile::threads, 0, stream>>>(op_a, op_b, m, n, k, beta, c_in, c, ldc, bias);
}

}  // namespace tprimat::kernels
