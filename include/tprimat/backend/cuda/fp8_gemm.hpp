// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::fp8_gemm through cuBLASLt: FP8 operands with per-tensor device scales, cached plans.
//
// Row-major D[m, n] = A[m, k] B[n, k]^T is, read column-major, D^T[n, m] = B^T A: cuBLASLt's A is
// our B ([k rows, n cols], TRANSA = T), its B our A ([k rows, m cols], TRANSB = N): the "TN"
// layout Hopper's FP8 kernels require, with no copy. The scale pointers follow the swap.
// The handle and workspace are Cuda::gemm's (cuda/gemm.hpp); the plans are cached apart, keyed by
// everything that selects them. The scale pointers live in the matmul descriptor and are set per
// call under the plan's mutex (one plan serves every layer of a shape).
#pragma once

#include <cublasLt.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "tprimat/backend/blaslt_plan.hpp"
#include "tprimat/backend/cuda/gemm.hpp"
#include "tprimat/backend/cuda_fp8_gemm.hpp"
#include "tprimat/backend/gpu.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/kernels/fp8_format.hpp"

namespace tprimat::backend::detail::cublaslt {

using blaslt::check_fp8_scales;
using blaslt::Fp8Key;
using blaslt::Fp8KeyHash;

/// The cuBLASLt type of an FP8 format; the fnuz formats have none (hipBLASLt's).
inline cudaDataType_t fp8_type(kernels::Fp8Format f) {
  return f == kernels::Fp8Format::e5m2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3;
}

/// An FP8 shape's plan is a GEMM's (cuda/gemm.hpp's Plan: cuBLASLt's A is our B [k rows, n
/// cols], its B our A [k rows, m cols], C and D our D [n rows, m cols]); the scale pointers are
/// set per call under its call_mutex. Cached apart, under their own key.
struct Fp8Cache {
  std::mutex mutex;
  std::unordered_map<Fp8Key, std::unique_ptr<Plan>, Fp8KeyHash> plans;
};

/// Never destroyed, as cache() (cuda/gemm.hpp).
inline Fp8Cache& fp8_cache() {
  static Fp8Cache* c = new Fp8Cache;
  return *c;
}

/// The scale pointers, set on the plan's descriptor before its heuristic runs (the heuristic then
/// sees the call as it will run) and repointed on every later call.
inline void set_scales(cublasLtMatmulDesc_t op, const Fp8Matrix& a, const Fp8Matrix& b,
                       const Fp8Key& key) {
  // Swapped with the operands: cuBLASLt's A is our B.
  set(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(b.scale_inv), key);
  set(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(a.scale_inv), key);
}

inline std::unique_ptr<Plan> make_fp8_plan(const Fp8Key& key, const Fp8Matrix& a,
                                              const Fp8Matrix& b, cublasLtHandle_t handle) {
  auto plan = std::make_unique<Plan>();
  check(cublasLtMatmulDescCreate(&plan->op, CUBLAS_COMPUTE_32F, CUDA_R_32F),
        "cublasLtMatmulDescCreate", key);
  set(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T, key);
  set(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N, key);
  set(plan->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, std::int8_t(key.fast ? 1 : 0), key);
  set_scales(plan->op, a, b, key);
  if (key.bias) {
    set(plan->op, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS, key);
    set(plan->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, std::int32_t(CUDA_R_16BF), key);
  }
  const blaslt::LibraryOperands o = blaslt::library_operands(key);
  check(cublasLtMatrixLayoutCreate(&plan->layout_a, fp8_type(key.format_b), o.a.rows, o.a.cols,
                                   o.a.ld),
        "cublasLtMatrixLayoutCreate(B)", key);
  check(cublasLtMatrixLayoutCreate(&plan->layout_b, fp8_type(key.format_a), o.b.rows, o.b.cols,
                                   o.b.ld),
        "cublasLtMatrixLayoutCreate(A)", key);
  check(cublasLtMatrixLayoutCreate(&plan->layout_c, data_type(key.out), o.c.rows, o.c.cols,
                                   o.c.ld),
        "cublasLtMatrixLayoutCreate(D)", key);

  // Operands swapped: cuBLASLt's A is our B.
  if (const auto algo = best_algorithm(*plan, handle, key.align_b, key.align_a, key.align_d, key)) {
    plan->algo = *algo;
    return plan;
  }
  throw core::RunError("cuBLASLt has no FP8 algorithm for " + describe(key) +
                       " (FP8 GEMMs need compute capability 8.9 or later)");
}

}  // namespace tprimat::backend::detail::cublaslt

namespace tprimat::backend {

TPRIMAT_GPU_INLINE Fp8GemmFormats fp8_gemm_formats() {
  return {kernels::Fp8Format::e4m3, kernels::Fp8Format::e5m2};
}

template <class Out>
void fp8_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const Fp8Matrix& a,
              const Fp8Matrix& b, float alpha, float beta, Out* d, std::int64_t ldd,
              Fp8Accumulation accumulation, gpu::Stream stream, const Out* c,
              const gpu::bf16* bias) {
  namespace lt = detail::cublaslt;
  if (c == nullptr) c = d;
  lt::Fp8Key key{m,
                 n,
                 k,
                 a.ld,
                 b.ld,
                 ldd,
                 a.format,
                 b.format,
                 detail::blaslt::out_type_of<Out>,
                 beta != 0.0f,
                 accumulation == Fp8Accumulation::fast,
                 bias != nullptr,
                 lt::alignment(a.data),
                 lt::alignment(b.data),
                 std::min(lt::alignment(d), lt::alignment(c)),
                 0};
  // Checked before the device is asked: a refused shape is refused the same with no GPU.
  detail::blaslt::check_fp8_shape(key, sizeof(Out), detail::blaslt::cublaslt_fp8_formats);
  if (!a.data || !b.data || !d)
    throw core::InputError("tprimat: " + lt::describe(key) + ": A, B and D must be set");
  lt::check_fp8_scales(key, a.scale_inv, b.scale_inv);
  gpu_check(cudaGetDevice(&key.device), "cudaGetDevice");
  const int device = key.device;

  const lt::DeviceGemm dev = lt::device_gemm(device, stream);
  lt::Fp8Cache& cc = lt::fp8_cache();
  std::unique_lock lock(cc.mutex);
  auto p = cc.plans.find(key);
  if (p == cc.plans.end())
    p = cc.plans.emplace(key, lt::make_fp8_plan(key, a, b, dev.handle)).first;
  lt::Plan& plan = *p->second;
  lock.unlock();

  std::lock_guard scale_lock(plan.call_mutex);
  lt::set_scales(plan.op, a, b, key);
  if (bias)
    lt::set(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias), key);
  lt::check(cublasLtMatmul(dev.handle, plan.op, &alpha, b.data, plan.layout_a, a.data,
                           plan.layout_b, &beta, c, plan.layout_c, d, plan.layout_c, &plan.algo,
                           dev.workspace, Cuda::gemm_workspace_bytes, stream),
            "cublasLtMatmul", key);
}

}  // namespace tprimat::backend
