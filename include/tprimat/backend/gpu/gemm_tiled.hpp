// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::TiledGemm: the portable tiled GEMM kernel run on NVIDIA under Gpu::gemm's contract.
#pragma once

#include <cstdint>
#include <string_view>

#include "tprimat/backend/gpu.hpp"

namespace tprimat::backend {

/// kernels/tprimat/kernels/gemm_tiled.cuh behind the same calls as Gpu::gemm and Gpu::gemm_add
/// (same operands, transposes, leading dimensions, beta, bias; same argument checks). It is what
/// a backend without a vendor BLAS falls back to (HIP without hipBLASLt); built here so that the
/// kernel is checked against cuBLASLt on the GPUs we can run. Correct for any shape and leading
/// dimension, with no alignment requirement; slow (fp32 FMAs from shared memory, no tensor
/// cores): not what backend::Gpu uses. Needs no gemm_prepare, allocates nothing.
struct TiledGemm {
  static constexpr std::string_view name = "tiled";

  /// Row-major C[m, n] = op(A) op(B) + beta C (+ bias[n] over rows); see Gpu::gemm.
  /// Throws core::RunError for non-positive sizes or a leading dimension below its row length.
  template <class Out>
  static void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                   const Gpu::bf16* a, std::int64_t lda, const Gpu::bf16* b, std::int64_t ldb,
                   float beta, Out* c, std::int64_t ldc, const Gpu::bf16* bias,
                   Gpu::Stream stream);
  /// D = op(A) op(B) + C, C and D distinct buffers of one layout; see Gpu::gemm_add.
  template <class Out>
  static void gemm_add(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                       const Gpu::bf16* a, std::int64_t lda, const Gpu::bf16* b, std::int64_t ldb,
                       const Out* c, Out* d, std::int64_t ldc, Gpu::Stream stream);
};

}  // namespace tprimat::backend
