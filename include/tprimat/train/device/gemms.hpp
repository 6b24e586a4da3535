// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Gemms: the engine's GEMM calls on its stream, each in a profile range with its FLOPs and charged
// to the "gemm" phase.
#pragma once

#include <cstdint>

#include "tprimat/backend/gpu.hpp"
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
};

}  // namespace tprimat::train::device
