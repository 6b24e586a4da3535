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

#include "tprimat/backend/cuda/gemm.hpp"
#include "tprimat/backend/cuda_fp8_gemm.hpp"
#include "tprimat/backend/gpu.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/kernels/fp8_format.hpp"

namespace tprimat::backend::detail::cublaslt {

inline const char* fp8_name(kernels::Fp8Format f) {
  switch (f) {
    case kernels::Fp8Format::e4m3:
      return "e4m3";
    case kernels::Fp8Format::e5m2:
      return "e5m2";
    case kernels::Fp8Format::e4m3_fnuz:
      return "e4m3_fnuz";
    case kernels::Fp8Format::e5m2_fnuz:
      return "e5m2_fnuz";
  }
  return "?";
}

/// Everything that selects an FP8 plan; alpha and beta's values and the scale pointers are
/// passed per call, only beta != 0 is fixed (cuBLASLt then reads C).
struct Fp8Key {
  std::int64_t m, n, k, lda, ldb, ldd;
  kernels::Fp8Format format_a, format_b;
  cudaDataType_t out;
  bool accumulate, fast, bias;
  std::uint32_t align_a, align_b, align_d;
  int device;
  bool operator==(const Fp8Key&) const = default;
};

struct Fp8KeyHash {
  std::size_t operator()(const Fp8Key& key) const {
    std::size_t h = 0;
    auto mix = [&h](std::uint64_t v) { hash_mix(h, v); };
    for (std::int64_t v : {key.m, key.n, key.k, key.lda, key.ldb, key.ldd}) mix(std::uint64_t(v));
    mix(std::uint64_t(key.format_a) | std::uint64_t(key.format_b) << 4 |
        std::uint64_t(key.accumulate) << 8 | std::uint64_t(key.fast) << 9 |
        std::uint64_t(key.bias) << 10 |
        std::uint64_t(key.out) << 16 | std::uint64_t(key.device) << 32);
    mix(std::uint64_t(key.align_a) | std::uint64_t(key.align_b) << 16 |
        std::uint64_t(key.align_d) << 32);
    return h;
  }
};

inline std::string describe(const Fp8Key& key) {
  std::string s = "fp8_gemm m=" + std::to_string(key.m) + " n=" + std::to_string(key.n) +
                  " k=" + std::to_string(key.k) + " a=" + fp8_name(key.format_a) +
                  " b=" + fp8_name(key.format_b) + " lda=" + std::to_string(key.lda) +
                  " ldb=" + std::to_string(key.ldb) + " ldd=" + std::to_string(key.ldd) +
                  " out=" + (key.out == CUDA_R_16BF ? "bf16" : "fp32") +
                  (key.fast ? " fast-accumulation" : " split-accumulation");
  if (key.accumulate) s += " beta!=0";
  if (key.bias) s += " bias";
  s += " on device " + std::to_string(key.device);
  return s;
}

/// The cuBLASLt type of an FP8 format; the fnuz formats have none (hipBLASLt's).
inline cudaDataType_t fp8_type(kernels::Fp8Format f) {
  return f == kernels::Fp8Format::e5m2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3;
}

/// cuBLASLt's documented FP8 requirements, each its own message, before any cuBLASLt call (its
/// own answer would be a bare CUBLAS_STATUS_NOT_SUPPORTED).
inline void check_fp8_shape(const Fp8Key& key, std::int64_t out_bytes) {
  auto refuse = [&](const std::string& rule) {
    throw core::InputError("tprimat: " + describe(key) + ": " + rule);
  };
  using kernels::Fp8Format;
  for (Fp8Format f : {key.format_a, key.format_b})
    if (f != Fp8Format::e4m3 && f != Fp8Format::e5m2)
      refuse(std::string("cuBLASLt takes the OCP formats e4m3 and e5m2, not ") + fp8_name(f) +
             " (gfx942's; hipBLASLt's FP8 GEMM is not wired yet)");
  if (key.format_a == Fp8Format::e5m2 && key.format_b == Fp8Format::e5m2)
    refuse("cuBLASLt has no e5m2 x e5m2 FP8 GEMM (it takes e4m3 x e4m3, e4m3 x e5m2, e5m2 x e4m3)");
  if (key.m <= 0 || key.n <= 0 || key.k <= 0) refuse("m, n and k must be positive");
  if (key.m % 16 || key.n % 16 || key.k % 16)
    refuse("cuBLASLt's FP8 GEMM needs m, n and k multiples of 16");
  if (key.lda < key.k || key.ldb < key.k)
    refuse("both operands are K-major: lda and ldb must be at least k");
  if (key.lda % 16 || key.ldb % 16) refuse("lda and ldb must be multiples of 16 (bytes)");
  if (key.ldd < key.n) refuse("ldd must be at least n");
  if ((key.ldd * out_bytes) % 16) refuse("ldd must be a multiple of 16 bytes of the output type");
  if (key.align_a < 16 || key.align_b < 16 || key.align_d < 16)
    refuse("A, B and D (and C when given) must start on 16-byte boundaries");
  if (key.bias && out_bytes != 2) refuse("a bias needs a bf16 D (cuBLASLt's FP8 bias rule)");
}

/// cuBLASLt refuses a scale pointer off a 16-byte boundary at launch with a bare
/// CUBLAS_STATUS_NOT_SUPPORTED (H100, cuBLAS of CUDA 13.0: offsets of 4 and 8 bytes refused, 16
/// and 256 taken), so two scales packed side by side in one float array do not work.
inline void check_fp8_scales(const Fp8Key& key, const void* scale_a, const void* scale_b) {
  if (!scale_a || !scale_b)
    throw core::InputError("tprimat: " + describe(key) + ": both scale_inv pointers must be set");
  if (alignment(scale_a) < 16 || alignment(scale_b) < 16)
    throw core::InputError("tprimat: " + describe(key) +
                           ": each scale_inv must start on a 16-byte boundary (cuBLASLt refuses "
                           "others); give each tensor's scale_inv its own 16-byte slot");
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
  check(cublasLtMatrixLayoutCreate(&plan->layout_a, fp8_type(key.format_b), key.k, key.n, key.ldb),
        "cublasLtMatrixLayoutCreate(B)", key);
  check(cublasLtMatrixLayoutCreate(&plan->layout_b, fp8_type(key.format_a), key.k, key.m, key.lda),
        "cublasLtMatrixLayoutCreate(A)", key);
  check(cublasLtMatrixLayoutCreate(&plan->layout_c, key.out, key.n, key.m, key.ldd),
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
                 lt::out_type<Out>,
                 beta != 0.0f,
                 accumulation == Fp8Accumulation::fast,
                 bias != nullptr,
                 lt::alignment(a.data),
                 lt::alignment(b.data),
                 std::min(lt::alignment(d), lt::alignment(c)),
                 0};
  // Checked before the device is asked: a refused shape is refused the same with no GPU.
  lt::check_fp8_shape(key, sizeof(Out));
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
