// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Gemms: the engine's GEMM calls on its stream, each in a profile range with its FLOPs and charged
// to the "gemm" phase.
#pragma once

#include <cstdint>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/fp8_gemm.hpp"  // on HIP: Fp8Matrix, Fp8Accumulation only
#include "tprimat/core/error.hpp"
#include "tprimat/profile/nvtx.hpp"
#include "tprimat/train/device/phase_timer.hpp"

namespace tprimat::train::device {

struct Gemms {
  using bf16 = backend::Gpu::bf16;
  gpuStream_t stream = nullptr;
  PhaseTimer* timer = nullptr;

  /// Row-major C[M, N] = op(A) op(B) + beta C (+ bias): backend::Gpu::gemm.
  template <class Out>
  void operator()(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K, const bf16* a,
                  std::int64_t lda, const bf16* b, std::int64_t ldb, float beta, Out* c,
                  std::int64_t ldc, const bf16* bias = nullptr) const {
    const profile::Range range("gemm", profile::Flops{2.0 * double(M) * double(N) * double(K)});
    timer->mark("gemm");
    backend::Gpu::gemm<Out>(ta, tb, M, N, K, a, lda, b, ldb, beta, c, ldc, bias, stream);
    timer->mark("elementwise");
  }

  /// out[M, N] = residual + a[M, K] w[K, N] (row-major, fp32 residual stream): the residual add
  /// rides in the GEMM, which reads `residual` and writes `out`, with no copy.
  void add(std::int64_t M, std::int64_t N, std::int64_t K, const bf16* a, const bf16* w,
           const float* residual, float* out) const {
    const profile::Range range("gemm", profile::Flops{2.0 * double(M) * double(N) * double(K)});
    timer->mark("gemm");
    backend::Gpu::gemm_add<float>(false, false, M, N, K, a, K, w, N, residual, out, N, stream);
    timer->mark("elementwise");
  }

  /// Row-major D[M, N] = A[M, K] B[N, K]^T, both FP8 K-major with their scales (backend::fp8_gemm),
  /// + beta (c or D) (+ bias). cuBLASLt's, or hipBLASLt's; a HIP build without hipBLASLt has
  /// none (Fp8Linears refuses FP8 there before any GEMM).
  template <class Out>
  void fp8(std::int64_t M, std::int64_t N, std::int64_t K, const backend::Fp8Matrix& a,
           const backend::Fp8Matrix& b, float beta, Out* d, backend::Fp8Accumulation accumulation,
           const Out* c = nullptr, const bf16* bias = nullptr) const {
    const profile::Range range("fp8 gemm", profile::Flops{2.0 * double(M) * double(N) * double(K)});
    timer->mark("gemm");
#if !TPRIMAT_GPU_HIP || defined(TPRIMAT_HAVE_HIPBLASLT)  // backend::has_fp8_gemm
    backend::fp8_gemm<Out>(M, N, K, a, b, 1.0f, beta, d, N, accumulation, stream, c, bias);
#else
    (void)M, (void)N, (void)K, (void)a, (void)b, (void)beta, (void)d, (void)accumulation, (void)c,
        (void)bias;
    (void)backend::fp8_gemm_formats();  // no FP8 GEMM in this build: throws the reason and fix
#endif
    timer->mark("elementwise");
  }
};

}  // namespace tprimat::train::device
