// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Gpu's GEMM: hipBLASLt where the build found it, else the portable tiled kernel.
//
// TPRIMAT_HAVE_HIPBLASLT (set by tprimat::hip when CMake finds hipBLASLt, cmake/hip.cmake) picks
// hipBLASLt (blaslt/gemm.hpp: cached plans, the heuristic's algorithm: one source with cuBLASLt's
// wrapper). Without it every HIP GEMM runs the tiled kernel (kernels/tprimat/kernels/gemm_tiled.cuh,
// checked against cuBLASLt on NVIDIA): correct and slow, named as such in the result JSON
// (gpu_info.gemm "fallback") and by the configure step's notice.
#pragma once

#include <string_view>

#include "tprimat/backend/gpu.hpp"

#if defined(TPRIMAT_HAVE_HIPBLASLT)
#include "tprimat/backend/blaslt/gemm.hpp"
#else
#include "tprimat/backend/gpu/fp8_gemm.hpp"
#include "tprimat/backend/gpu/gemm_tiled.cuh"
#include "tprimat/core/error.hpp"

namespace tprimat::backend {

TPRIMAT_GPU_INLINE std::string_view Gpu::gemm_library() { return "fallback"; }

// No FP8 GEMM without hipBLASLt: fp8_gemm is not defined, and the formats question is answered
// with the reason (backend::has_fp8_gemm is false).
TPRIMAT_GPU_INLINE Fp8GemmFormats fp8_gemm_formats() {
  throw core::SettingError(
      "precision",
      "FP8 on the HIP backend needs hipBLASLt's FP8 GEMM, and this tprimat was built without "
      "hipBLASLt (install hipBLASLt, ROCm 6.2 or later, and rebuild with -DTPRIMAT_HIPBLASLT=ON)",
      "bf16");
}

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
#endif
