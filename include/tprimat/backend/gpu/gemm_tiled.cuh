// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::TiledGemm: Gpu::gemm's contract, checked as Gpu::gemm checks it, on gemm_tiled.cuh.
#pragma once

#include <string>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/gemm_tiled.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/kernels/gemm_tiled.cuh"

namespace tprimat::backend {
namespace detail::tiled {

/// Gpu::gemm's argument rule (src/cuda/gemm.cpp), so that either can stand in for the other.
inline void require_valid(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                          std::int64_t k, std::int64_t lda, std::int64_t ldb, std::int64_t ldc) {
  if (m > 0 && n > 0 && k > 0 && lda >= (trans_a ? m : k) && ldb >= (trans_b ? k : n) && ldc >= n)
    return;
  throw core::RunError("invalid tiled gemm m=" + std::to_string(m) + " n=" + std::to_string(n) +
                       " k=" + std::to_string(k) + " trans_a=" + (trans_a ? "1" : "0") +
                       " trans_b=" + (trans_b ? "1" : "0") + " lda=" + std::to_string(lda) +
                       " ldb=" + std::to_string(ldb) + " ldc=" + std::to_string(ldc) +
                       ": sizes must be positive and each leading dimension at least its row "
                       "length");
}

}  // namespace detail::tiled

template <class Out>
void TiledGemm::gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                     const Gpu::bf16* a, std::int64_t lda, const Gpu::bf16* b, std::int64_t ldb,
                     float beta, Out* c, std::int64_t ldc, const Gpu::bf16* bias,
                     Gpu::Stream stream) {
  detail::tiled::require_valid(trans_a, trans_b, m, n, k, lda, ldb, ldc);
  kernels::gemm_tiled<Out>(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, c, ldc, bias,
                           stream);
  gpu_check(gpuGetLastError(), "TiledGemm::gemm launch");
}

template <class Out>
void TiledGemm::gemm_add(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                         const Gpu::bf16* a, std::int64_t lda, const Gpu::bf16* b, std::int64_t ldb,
                         const Out* c, Out* d, std::int64_t ldc, Gpu::Stream stream) {
  detail::tiled::require_valid(trans_a, trans_b, m, n, k, lda, ldb, ldc);
  kernels::gemm_tiled<Out>(trans_a, trans_b, m, n, k, a, lda, b, ldb, 1.0f, c, d, ldc, nullptr,
                           stream);
  gpu_check(gpuGetLastError(), "TiledGemm::gemm_add launch");
}

}  // namespace tprimat::backend
