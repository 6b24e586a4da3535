// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Cuda's GEMM through cuBLASLt: one plan (descriptors + heuristic algorithm) per shape,
// cached.
//
// The operand swap that makes cuBLASLt (column-major) write our row-major C in place, the plan
// key and the shape checks are backend/blaslt_plan.hpp's, shared with hipBLASLt's wrapper.
//
// Capture: gemm allocates nothing and creates no descriptor once a shape was seen, so a step is
// graph-capturable after the engine's first, eager step (which also runs gemm_prepare). A shape
// first seen inside capture still works (plan creation is host-only), but a device that was never
// prepared cannot be prepared there: its workspace would become a graph allocation.
#pragma once

#include <cublasLt.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "tprimat/backend/blaslt_plan.hpp"
#include "tprimat/backend/cuda_gemm.hpp"
#include "tprimat/backend/gpu.hpp"
#include "tprimat/core/error.hpp"

namespace tprimat::backend {
namespace detail::cublaslt {

using blaslt::alignment;
using blaslt::describe;
using Key = blaslt::GemmKey;
using KeyHash = blaslt::GemmKeyHash;

/// cuBLASLt's type of a GEMM's C/D.
inline cudaDataType_t data_type(blaslt::OutType out) {
  return out == blaslt::OutType::bf16 ? CUDA_R_16BF : CUDA_R_32F;
}

[[noreturn]] inline void fail(cublasStatus_t status, const char* call, const std::string& context) {
  throw core::RunError(std::string(call) + " failed for " + context + ": " +
                       cublasLtGetStatusName(status) + " (" + cublasLtGetStatusString(status) +
                       ")");
}
/// The shape is formatted only on failure: no string work on the hot path. Any plan key with a
/// describe() overload (Key here, Fp8Key in cuda/fp8_gemm.hpp).
template <class AnyKey>
void check(cublasStatus_t status, const char* call, const AnyKey& key) {
  if (status != CUBLAS_STATUS_SUCCESS) fail(status, call, describe(key));
}

/// A shape's cuBLASLt descriptors and algorithm (a GEMM's, or an FP8 GEMM's: cuda/fp8_gemm.hpp):
/// created once, read-only afterwards except for the pointers that live in the matmul descriptor
/// and are set per call under call_mutex (a GEMM's bias, an FP8 GEMM's scales).
struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t layout_a = nullptr;  // cuBLASLt's A: our B
  cublasLtMatrixLayout_t layout_b = nullptr;  // cuBLASLt's B: our A
  cublasLtMatrixLayout_t layout_c = nullptr;  // C and D: our C (or D), [n rows, m cols]
  cublasLtMatmulAlgo_t algo{};
  std::mutex call_mutex;

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (layout_c) cublasLtMatrixLayoutDestroy(layout_c);
    if (layout_b) cublasLtMatrixLayoutDestroy(layout_b);
    if (layout_a) cublasLtMatrixLayoutDestroy(layout_a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

struct Preference {
  cublasLtMatmulPreference_t p = nullptr;
  ~Preference() {
    if (p) cublasLtMatmulPreferenceDestroy(p);
  }
};

/// One handle and one workspace per device. GEMMs on one device share the workspace, so they
/// must be ordered (one stream, or streams joined by events), which is how the engine runs.
struct DeviceGemm {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
};

struct Cache {
  std::mutex mutex;
  std::unordered_map<int, DeviceGemm> devices;
  std::unordered_map<Key, std::unique_ptr<Plan>, KeyHash> plans;
};

/// Never destroyed: a GEMM enqueued from another static's destructor must still find its handle,
/// and destroying handles after the CUDA runtime shut down is undefined.
inline Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

template <class T, class AnyKey>
void set(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value,
         const AnyKey& key) {
  check(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)),
        "cublasLtMatmulDescSetAttribute", key);
}
template <class T, class AnyKey>
void set(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const T& value,
         const AnyKey& key) {
  check(cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value)),
        "cublasLtMatmulPreferenceSetAttribute", key);
}

/// The heuristic's best algorithm for `plan`'s descriptors that fits the workspace, given the
/// alignments of cuBLASLt's A, B and C/D; nullopt when cuBLASLt has none (the caller names why).
template <class AnyKey>
std::optional<cublasLtMatmulAlgo_t> best_algorithm(const Plan& plan, cublasLtHandle_t handle,
                                                   std::uint32_t align_a, std::uint32_t align_b,
                                                   std::uint32_t align_c, const AnyKey& key) {
  Preference pref;
  check(cublasLtMatmulPreferenceCreate(&pref.p), "cublasLtMatmulPreferenceCreate", key);
  const std::uint64_t workspace = Cuda::gemm_workspace_bytes;
  set(pref.p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace, key);
  set(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_a, key);
  set(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_b, key);
  set(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_c, key);
  set(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_c, key);

  // A few candidates: the first that fits the workspace is the heuristic's best that can run.
  std::array<cublasLtMatmulHeuristicResult_t, 8> results{};
  int returned = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      handle, plan.op, plan.layout_a, plan.layout_b, plan.layout_c, plan.layout_c, pref.p,
      int(results.size()), results.data(), &returned);
  // NOT_SUPPORTED means no candidate: the caller answers with the likely cause.
  if (status != CUBLAS_STATUS_NOT_SUPPORTED) check(status, "cublasLtMatmulAlgoGetHeuristic", key);
  for (int i = 0; i < returned; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS && results[i].workspaceSize <= workspace)
      return results[i].algo;
  return std::nullopt;
}

inline std::unique_ptr<Plan> make_plan(const Key& key, cublasLtHandle_t handle) {
  auto plan = std::make_unique<Plan>();
  check(cublasLtMatmulDescCreate(&plan->op, CUBLAS_COMPUTE_32F, CUDA_R_32F),
        "cublasLtMatmulDescCreate", key);
  const blaslt::LibraryOperands o = blaslt::library_operands(key);
  set(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, o.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, key);
  set(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, o.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, key);
  if (blaslt::epilogue(key.bias) == blaslt::Epilogue::bias) {
    set(plan->op, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS, key);
    set(plan->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, std::int32_t(CUDA_R_16BF), key);
  }
  check(cublasLtMatrixLayoutCreate(&plan->layout_a, CUDA_R_16BF, o.a.rows, o.a.cols, o.a.ld),
        "cublasLtMatrixLayoutCreate(B)", key);
  check(cublasLtMatrixLayoutCreate(&plan->layout_b, CUDA_R_16BF, o.b.rows, o.b.cols, o.b.ld),
        "cublasLtMatrixLayoutCreate(A)", key);
  check(cublasLtMatrixLayoutCreate(&plan->layout_c, data_type(key.out), o.c.rows, o.c.cols,
                                   o.c.ld),
        "cublasLtMatrixLayoutCreate(C)", key);

  // Operands swapped: cuBLASLt's A is our B.
  if (const auto algo = best_algorithm(*plan, handle, key.align_b, key.align_a, key.align_c, key)) {
    plan->algo = *algo;
    return plan;
  }
  throw core::RunError("cuBLASLt has no algorithm for " + describe(key) +
                       " (bf16 operands, fp32 compute" +
                       std::string(key.bias ? ", bf16 bias epilogue" : "") +
                       "); leading dimensions and pointers must be multiples of 16 bytes");
}

}  // namespace detail::cublaslt

TPRIMAT_GPU_INLINE std::string_view Gpu::gemm_library() { return "cublaslt"; }

TPRIMAT_GPU_INLINE void Cuda::gemm_prepare(Stream stream) {
  int device = 0;
  gpu_check(cudaGetDevice(&device), "cudaGetDevice");
  detail::cublaslt::Cache& c = detail::cublaslt::cache();
  std::lock_guard lock(c.mutex);
  if (c.devices.contains(device)) return;

  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  gpu_check(cudaStreamIsCapturing(stream, &capture), "cudaStreamIsCapturing");
  if (capture != cudaStreamCaptureStatusNone)
    throw core::RunError("Cuda::gemm_prepare on device " + std::to_string(device) +
                         " inside CUDA graph capture: call it, or run one eager step, before "
                         "capturing");

  detail::cublaslt::DeviceGemm d;
  if (const cublasStatus_t status = cublasLtCreate(&d.handle); status != CUBLAS_STATUS_SUCCESS)
    detail::cublaslt::fail(status, "cublasLtCreate",
                           "gemm_prepare on device " + std::to_string(device));
  try {
    d.workspace = Cuda::allocate(gemm_workspace_bytes, stream);
    // Pool memory is stream-ordered: once the allocation completed, any stream may use it.
    gpu_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (gemm workspace)");
  } catch (...) {
    cublasLtDestroy(d.handle);
    throw;
  }
  c.devices.emplace(device, d);
}

namespace detail::cublaslt {

/// `device`'s handle and workspace, prepared at first use (Cuda::gemm_prepare).
inline DeviceGemm device_gemm(int device, Cuda::Stream stream) {
  Cache& cc = cache();
  {
    std::lock_guard lock(cc.mutex);
    if (auto d = cc.devices.find(device); d != cc.devices.end()) return d->second;
  }
  Cuda::gemm_prepare(stream);  // throws, with the fix, when the stream is being captured
  std::lock_guard lock(cc.mutex);
  return cc.devices.at(device);
}

/// D = op(A) op(B) + beta C (+ bias): Cuda::gemm (C is D) and Cuda::gemm_add (C read from
/// another buffer of D's layout) share it.
template <class Out>
void run_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
              const Cuda::bf16* a, std::int64_t lda, const Cuda::bf16* b, std::int64_t ldb,
              float beta, const Out* c_in, Out* c, std::int64_t ldc, const Cuda::bf16* bias,
              Cuda::Stream stream) {
  int device = 0;
  gpu_check(cudaGetDevice(&device), "cudaGetDevice");
  const Key key{m,
                n,
                k,
                lda,
                ldb,
                ldc,
                trans_a,
                trans_b,
                beta != 0.0f,
                bias != nullptr,
                blaslt::out_type_of<Out>,
                alignment(a),
                alignment(b),
                std::min(alignment(c), alignment(c_in)),
                device};
  blaslt::check_gemm_shape(key);

  const DeviceGemm dev = device_gemm(device, stream);
  Cache& cc = cache();
  std::unique_lock lock(cc.mutex);
  auto p = cc.plans.find(key);
  if (p == cc.plans.end()) p = cc.plans.emplace(key, make_plan(key, dev.handle)).first;
  Plan& plan = *p->second;
  lock.unlock();

  const float alpha = 1.0f;
  auto launch = [&] {
    check(cublasLtMatmul(dev.handle, plan.op, &alpha, b, plan.layout_a, a, plan.layout_b, &beta,
                         c_in, plan.layout_c, c, plan.layout_c, &plan.algo, dev.workspace,
                         Cuda::gemm_workspace_bytes, stream),
          "cublasLtMatmul", key);
  };
  if (bias) {
    std::lock_guard bias_lock(plan.call_mutex);
    set(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias), key);
    launch();
  } else {
    launch();
  }
}

}  // namespace detail::cublaslt

template <class Out>
void Cuda::gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                const bf16* a, std::int64_t lda, const bf16* b, std::int64_t ldb, float beta,
                Out* c, std::int64_t ldc, const bf16* bias, Stream stream) {
  detail::cublaslt::run_gemm<Out>(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, c, ldc, bias,
                                  stream);
}

template <class Out>
void Cuda::gemm_add(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                    const bf16* a, std::int64_t lda, const bf16* b, std::int64_t ldb, const Out* c,
                    Out* d, std::int64_t ldc, Stream stream) {
  detail::cublaslt::run_gemm<Out>(trans_a, trans_b, m, n, k, a, lda, b, ldb, 1.0f, c, d, ldc,
                                  nullptr, stream);
}

TPRIMAT_GPU_INLINE std::size_t gemm_cached_plans() {
  detail::cublaslt::Cache& c = detail::cublaslt::cache();
  std::lock_guard lock(c.mutex);
  return c.plans.size();
}

TPRIMAT_GPU_INLINE std::string gemm_algorithm(const GemmQuery& q) {
  int device = 0;
  gpu_check(cudaGetDevice(&device), "cudaGetDevice");
  using detail::blaslt::OutType;
  const OutType out = q.fp32_out ? OutType::fp32 : OutType::bf16;
  detail::cublaslt::Cache& c = detail::cublaslt::cache();
  std::lock_guard lock(c.mutex);
  const detail::cublaslt::Plan* best = nullptr;
  std::uint32_t best_align = 0;
  for (const auto& [key, plan] : c.plans) {
    if (key.m != q.m || key.n != q.n || key.k != q.k || key.lda != q.lda || key.ldb != q.ldb ||
        key.ldc != q.ldc || key.trans_a != q.trans_a || key.trans_b != q.trans_b ||
        key.accumulate != q.accumulate || key.bias != q.bias || key.out != out ||
        key.device != device)
      continue;
    const std::uint32_t align = std::min({key.align_a, key.align_b, key.align_c});
    if (!best || align > best_align) {
      best = plan.get();
      best_align = align;
    }
  }
  if (!best) return {};
  // Each attribute's type as cublasLt.h documents it; one that cannot be read shows as 0.
  auto get = [&]<class T>(cublasLtMatmulAlgoConfigAttributes_t attr, T) {
    T value{};
    std::size_t written = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&best->algo, attr, &value, sizeof(value), &written);
    return std::to_string(value);
  };
  return "algo=" + get(CUBLASLT_ALGO_CONFIG_ID, std::int32_t{}) +
         " tile=" + get(CUBLASLT_ALGO_CONFIG_TILE_ID, std::uint32_t{}) +
         " stages=" + get(CUBLASLT_ALGO_CONFIG_STAGES_ID, std::uint32_t{}) +
         " splitk=" + get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, std::int32_t{}) +
         " reduction=" + get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, std::uint32_t{}) +
         " swizzle=" + get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, std::uint32_t{}) +
         " custom=" + get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, std::uint32_t{}) +
         " cluster=" + get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, std::uint16_t{});
}

}  // namespace tprimat::backend
