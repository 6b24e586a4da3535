// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Hip's GEMM through hipBLASLt: one plan (descriptors + heuristic algorithm) per shape,
// cached, as backend::Cuda's through cuBLASLt (backend/cuda/gemm.hpp), whose design it follows.
//
// hipBLASLt takes cuBLASLt's descriptors under hip names: the operand swap that makes the
// column-major library write our row-major C in place, the plan key and the shape checks are
// backend/blaslt_plan.hpp's, shared with the cuBLASLt wrapper. What differs: hipBLASLt's
// preference has no minimum-alignment attributes (the alignments stay in the key, so a view that
// starts mid-buffer gets its own plan all the same), its status names come from hipblas-common's
// enum (hipblasStatusToString lives in libhipblas, which tprimat does not link), and its
// algorithm is an opaque index with nothing to introspect.
//
// Capture: gemm allocates nothing and creates no descriptor once a shape was seen, so a step is
// graph-capturable after the engine's first, eager step (which also runs gemm_prepare), as on
// CUDA. Compiled against ROCm 7's headers (Debian's libhipblaslt-dev); not run: no AMD GPU here.
#pragma once

#include <hipblaslt/hipblaslt.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tprimat/backend/blaslt_plan.hpp"
#include "tprimat/backend/gpu.hpp"
#include "tprimat/core/error.hpp"

namespace tprimat::backend {
namespace detail::hipblaslt {

using blaslt::alignment;
using blaslt::describe;
using Key = blaslt::GemmKey;
using KeyHash = blaslt::GemmKeyHash;

/// hipBLASLt's type of a GEMM's C/D.
inline hipDataType data_type(blaslt::OutType out) {
  return out == blaslt::OutType::bf16 ? HIP_R_16BF : HIP_R_32F;
}

/// hipblas-common's status names (the enum's own spelling).
inline const char* status_name(hipblasStatus_t status) {
  switch (status) {
    case HIPBLAS_STATUS_SUCCESS:
      return "HIPBLAS_STATUS_SUCCESS";
    case HIPBLAS_STATUS_NOT_INITIALIZED:
      return "HIPBLAS_STATUS_NOT_INITIALIZED";
    case HIPBLAS_STATUS_ALLOC_FAILED:
      return "HIPBLAS_STATUS_ALLOC_FAILED";
    case HIPBLAS_STATUS_INVALID_VALUE:
      return "HIPBLAS_STATUS_INVALID_VALUE";
    case HIPBLAS_STATUS_MAPPING_ERROR:
      return "HIPBLAS_STATUS_MAPPING_ERROR";
    case HIPBLAS_STATUS_EXECUTION_FAILED:
      return "HIPBLAS_STATUS_EXECUTION_FAILED";
    case HIPBLAS_STATUS_INTERNAL_ERROR:
      return "HIPBLAS_STATUS_INTERNAL_ERROR";
    case HIPBLAS_STATUS_NOT_SUPPORTED:
      return "HIPBLAS_STATUS_NOT_SUPPORTED";
    case HIPBLAS_STATUS_ARCH_MISMATCH:
      return "HIPBLAS_STATUS_ARCH_MISMATCH";
    case HIPBLAS_STATUS_HANDLE_IS_NULLPTR:
      return "HIPBLAS_STATUS_HANDLE_IS_NULLPTR";
    case HIPBLAS_STATUS_INVALID_ENUM:
      return "HIPBLAS_STATUS_INVALID_ENUM";
    default:
      return "HIPBLAS_STATUS_UNKNOWN";
  }
}

[[noreturn]] inline void fail(hipblasStatus_t status, const char* call,
                              const std::string& context) {
  throw core::RunError(
      std::string(call) + " failed for " + context + ": " + status_name(status) +
      (status == HIPBLAS_STATUS_NOT_SUPPORTED || status == HIPBLAS_STATUS_INVALID_VALUE
           ? " (HIPBLASLT_LOG_MASK=32 HIPBLASLT_LOG_LEVEL=5 prints why)"
           : ""));
}
/// The shape is formatted only on failure: no string work on the hot path.
template <class AnyKey>
void check(hipblasStatus_t status, const char* call, const AnyKey& key) {
  if (status != HIPBLAS_STATUS_SUCCESS) fail(status, call, describe(key));
}

/// A shape's hipBLASLt descriptors and algorithm (a GEMM's, or an FP8 GEMM's: hip/fp8_gemm.hpp):
/// created once, read-only afterwards except for the pointers that live in the matmul descriptor
/// and are set per call under call_mutex (a GEMM's bias, an FP8 GEMM's scales).
struct Plan {
  hipblasLtMatmulDesc_t op = nullptr;
  hipblasLtMatrixLayout_t layout_a = nullptr;  // hipBLASLt's A: our B
  hipblasLtMatrixLayout_t layout_b = nullptr;  // hipBLASLt's B: our A
  hipblasLtMatrixLayout_t layout_c = nullptr;  // C and D: our C (or D), [n rows, m cols]
  hipblasLtMatmulAlgo_t algo{};
  std::mutex call_mutex;

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (layout_c) hipblasLtMatrixLayoutDestroy(layout_c);
    if (layout_b) hipblasLtMatrixLayoutDestroy(layout_b);
    if (layout_a) hipblasLtMatrixLayoutDestroy(layout_a);
    if (op) hipblasLtMatmulDescDestroy(op);
  }
};

struct Preference {
  hipblasLtMatmulPreference_t p = nullptr;
  ~Preference() {
    if (p) hipblasLtMatmulPreferenceDestroy(p);
  }
};

/// One handle and one workspace per device, and its architecture (gcnArchName: which FP8
/// formats its GEMM takes). GEMMs on one device share the workspace, so they must be ordered
/// (one stream, or streams joined by events), which is how the engine runs.
struct DeviceGemm {
  hipblasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::string arch;
};

struct Cache {
  std::mutex mutex;
  std::unordered_map<int, DeviceGemm> devices;
  std::unordered_map<Key, std::unique_ptr<Plan>, KeyHash> plans;
};

/// Never destroyed: a GEMM enqueued from another static's destructor must still find its handle,
/// and destroying handles after the HIP runtime shut down is undefined.
inline Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

template <class T, class AnyKey>
void set(hipblasLtMatmulDesc_t desc, hipblasLtMatmulDescAttributes_t attr, const T& value,
         const AnyKey& key) {
  check(hipblasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)),
        "hipblasLtMatmulDescSetAttribute", key);
}
template <class T, class AnyKey>
void set(hipblasLtMatmulPreference_t pref, hipblasLtMatmulPreferenceAttributes_t attr,
         const T& value, const AnyKey& key) {
  check(hipblasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value)),
        "hipblasLtMatmulPreferenceSetAttribute", key);
}

/// The heuristic's best algorithm for `plan`'s descriptors that fits the workspace; nullopt when
/// hipBLASLt has none (the caller names why).
template <class AnyKey>
std::optional<hipblasLtMatmulAlgo_t> best_algorithm(const Plan& plan, hipblasLtHandle_t handle,
                                                    const AnyKey& key) {
  Preference pref;
  check(hipblasLtMatmulPreferenceCreate(&pref.p), "hipblasLtMatmulPreferenceCreate", key);
  const std::uint64_t workspace = Gpu::gemm_workspace_bytes;
  set(pref.p, HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace, key);

  // A few candidates: the first that fits the workspace is the heuristic's best that can run.
  std::array<hipblasLtMatmulHeuristicResult_t, 8> results{};
  int returned = 0;
  const hipblasStatus_t status = hipblasLtMatmulAlgoGetHeuristic(
      handle, plan.op, plan.layout_a, plan.layout_b, plan.layout_c, plan.layout_c, pref.p,
      int(results.size()), results.data(), &returned);
  // NOT_SUPPORTED (or INVALID_VALUE, for a type combination it has no kernel for) means no
  // candidate: the caller answers with the likely cause.
  if (status != HIPBLAS_STATUS_NOT_SUPPORTED && status != HIPBLAS_STATUS_INVALID_VALUE)
    check(status, "hipblasLtMatmulAlgoGetHeuristic", key);
  if (status != HIPBLAS_STATUS_SUCCESS) return std::nullopt;
  for (int i = 0; i < returned; ++i)
    if (results[i].state == HIPBLAS_STATUS_SUCCESS && results[i].workspaceSize <= workspace)
      return results[i].algo;
  return std::nullopt;
}

/// A plan's operation and layouts for `key` before its algorithm, shared by the bf16 and FP8
/// plans: fp32 compute, the operand swap's transposes, the bf16 bias epilogue, our A and B (of
/// types a_type and b_type) in hipBLASLt's swapped order, and C/D.
template <class AnyKey>
std::unique_ptr<Plan> describe_plan(const AnyKey& key, hipDataType a_type, hipDataType b_type) {
  auto plan = std::make_unique<Plan>();
  check(hipblasLtMatmulDescCreate(&plan->op, HIPBLAS_COMPUTE_32F, HIP_R_32F),
        "hipblasLtMatmulDescCreate", key);
  const blaslt::LibraryOperands o = blaslt::library_operands(key);
  set(plan->op, HIPBLASLT_MATMUL_DESC_TRANSA, o.trans_a ? HIPBLAS_OP_T : HIPBLAS_OP_N, key);
  set(plan->op, HIPBLASLT_MATMUL_DESC_TRANSB, o.trans_b ? HIPBLAS_OP_T : HIPBLAS_OP_N, key);
  if (blaslt::epilogue(key.bias) == blaslt::Epilogue::bias) {
    set(plan->op, HIPBLASLT_MATMUL_DESC_EPILOGUE, HIPBLASLT_EPILOGUE_BIAS, key);
    set(plan->op, HIPBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, std::int32_t(HIP_R_16BF), key);
  }
  check(hipblasLtMatrixLayoutCreate(&plan->layout_a, b_type, std::uint64_t(o.a.rows),
                                    std::uint64_t(o.a.cols), o.a.ld),
        "hipblasLtMatrixLayoutCreate(B)", key);
  check(hipblasLtMatrixLayoutCreate(&plan->layout_b, a_type, std::uint64_t(o.b.rows),
                                    std::uint64_t(o.b.cols), o.b.ld),
        "hipblasLtMatrixLayoutCreate(A)", key);
  check(hipblasLtMatrixLayoutCreate(&plan->layout_c, data_type(key.out), std::uint64_t(o.c.rows),
                                    std::uint64_t(o.c.cols), o.c.ld),
        "hipblasLtMatrixLayoutCreate(C)", key);
  return plan;
}

inline std::unique_ptr<Plan> make_plan(const Key& key, hipblasLtHandle_t handle) {
  auto plan = describe_plan(key, HIP_R_16BF, HIP_R_16BF);
  if (const auto algo = best_algorithm(*plan, handle, key)) {
    plan->algo = *algo;
    return plan;
  }
  throw core::RunError("hipBLASLt has no algorithm for " + describe(key) +
                       " (bf16 operands, fp32 compute" +
                       std::string(key.bias ? ", bf16 bias epilogue" : "") +
                       ") on this GPU (HIPBLASLT_LOG_MASK=32 HIPBLASLT_LOG_LEVEL=5 prints why)");
}

}  // namespace detail::hipblaslt

TPRIMAT_GPU_INLINE std::string_view Gpu::gemm_library() { return "hipblaslt"; }

TPRIMAT_GPU_INLINE void Gpu::gemm_prepare(Stream stream) {
  int device = 0;
  gpu_check(hipGetDevice(&device), "hipGetDevice");
  detail::hipblaslt::Cache& c = detail::hipblaslt::cache();
  std::lock_guard lock(c.mutex);
  if (c.devices.contains(device)) return;

  hipStreamCaptureStatus capture = hipStreamCaptureStatusNone;
  gpu_check(hipStreamIsCapturing(stream, &capture), "hipStreamIsCapturing");
  if (capture != hipStreamCaptureStatusNone)
    throw core::RunError("Hip::gemm_prepare on device " + std::to_string(device) +
                         " inside HIP graph capture: call it, or run one eager step, before "
                         "capturing");

  detail::hipblaslt::DeviceGemm d;
  hipDeviceProp_t prop{};
  gpu_check(hipGetDeviceProperties(&prop, device), "hipGetDeviceProperties");
  d.arch = prop.gcnArchName;
  if (const hipblasStatus_t status = hipblasLtCreate(&d.handle); status != HIPBLAS_STATUS_SUCCESS)
    detail::hipblaslt::fail(status, "hipblasLtCreate",
                            "gemm_prepare on device " + std::to_string(device));
  try {
    d.workspace = Gpu::allocate(gemm_workspace_bytes, stream);
    // Pool memory is stream-ordered: once the allocation completed, any stream may use it.
    gpu_check(hipStreamSynchronize(stream), "hipStreamSynchronize (gemm workspace)");
  } catch (...) {
    hipblasLtDestroy(d.handle);
    throw;
  }
  c.devices.emplace(device, d);
}

namespace detail::hipblaslt {

/// `device`'s handle, workspace and architecture, prepared at first use (Hip::gemm_prepare).
inline DeviceGemm device_gemm(int device, Gpu::Stream stream) {
  Cache& cc = cache();
  {
    std::lock_guard lock(cc.mutex);
    if (auto d = cc.devices.find(device); d != cc.devices.end()) return d->second;
  }
  Gpu::gemm_prepare(stream);  // throws, with the fix, when the stream is being captured
  std::lock_guard lock(cc.mutex);
  return cc.devices.at(device);
}

/// D = op(A) op(B) + beta C (+ bias): Hip::gemm (C is D) and Hip::gemm_add (C read from another
/// buffer of D's layout) share it.
template <class Out>
void run_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
              const Gpu::bf16* a, std::int64_t lda, const Gpu::bf16* b, std::int64_t ldb,
              float beta, const Out* c_in, Out* c, std::int64_t ldc, const Gpu::bf16* bias,
              Gpu::Stream stream) {
  static_assert(blaslt::is_gemm_output<Out>, "tprimat: a GEMM writes bf16 or fp32");
  int device = 0;
  gpu_check(hipGetDevice(&device), "hipGetDevice");
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
    check(hipblasLtMatmul(dev.handle, plan.op, &alpha, b, plan.layout_a, a, plan.layout_b, &beta,
                          c_in, plan.layout_c, c, plan.layout_c, &plan.algo, dev.workspace,
                          Gpu::gemm_workspace_bytes, stream),
          "hipblasLtMatmul", key);
  };
  if (bias) {
    std::lock_guard bias_lock(plan.call_mutex);
    set(plan.op, HIPBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias), key);
    launch();
  } else {
    launch();
  }
}

}  // namespace detail::hipblaslt

template <class Out>
void Gpu::gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
               const bf16* a, std::int64_t lda, const bf16* b, std::int64_t ldb, float beta, Out* c,
               std::int64_t ldc, const bf16* bias, Stream stream) {
  detail::hipblaslt::run_gemm<Out>(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, c, ldc, bias,
                                   stream);
}

template <class Out>
void Gpu::gemm_add(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                   const bf16* a, std::int64_t lda, const bf16* b, std::int64_t ldb, const Out* c,
                   Out* d, std::int64_t ldc, Stream stream) {
  detail::hipblaslt::run_gemm<Out>(trans_a, trans_b, m, n, k, a, lda, b, ldb, 1.0f, c, d, ldc,
                                   nullptr, stream);
}

}  // namespace tprimat::backend
