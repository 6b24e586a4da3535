// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Hip's GEMM: the portable tiled kernel under Gpu::gemm's contract (the fallback).
//
// hipBLASLt and rocBLAS are the GEMMs an AMD GPU should run; neither exists where this is built
// and checked (Debian ships no ROCm math libraries), so no vendor path is written yet: code that
// no compiler here has seen would be a claim nobody checked. Until one is, every HIP GEMM runs
// the tiled kernel (kernels/tprimat/kernels/gemm_tiled.cuh, checked against cuBLASLt on NVIDIA)
// and the result JSON says so ("gemm": "fallback").
#pragma once

#include <string_view>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/gemm_tiled.cuh"

namespace tprimat::backend {

TPRIMAT_GPU_INLINE std::string_view Gpu::gemm_library() { return "fallback"; }

// The tiled kernel needs no handle, workspace or per-shape plan.
TPRIMAT_GPU_INLINE void Gpu::gemm_prepare(Stream) {}

template <class Out>
void Gpu::gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
               const bf16* a, std::int64_t lda, const bf16* b, std::int64_t ldb, float beta, Out* c,
               std::int64_t ldc, const bf16* bias, Stream stream) {
  TiledGemm::gemm<Out>(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc, bias, stream);
}

template <class Out>
void Gpu::gemm_add(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                   const bf16* a, std::int64_t lda, const bf16* b, std::int64_t ldb, const Out* c,
                   Out* d, std::int64_t ldc, Stream stream) {
  TiledGemm::gemm_add<Out>(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, d, ldc, stream);
}

}  // namespace tprimat::backend
