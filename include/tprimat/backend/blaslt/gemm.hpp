// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Gpu's GEMM through cuBLASLt (CUDA) or hipBLASLt (HIP), one source over blaslt/api.hpp's
// names: one plan (descriptors + algorithm) per shape, cached; the algorithm the fastest of the
// heuristic's candidates on the shape's first call (blaslt/tuning.hpp).
//
// The operand swap that makes the column-major library write our row-major C in place, the plan
// key and the shape checks are backend/blaslt/plan.hpp's. What differs between the libraries is
// api.hpp's, and one preference: cuBLASLt takes the operands' minimum alignments (hipBLASLt has
// no such attribute; the alignments stay in the key either way, so a view that starts mid-buffer
// gets its own plan).
//
// Capture: gemm allocates nothing and creates no descriptor once a shape was seen, so a step is
// graph-capturable after the engine's first, eager step (which also runs gemm_prepare). A shape
// first seen inside capture still works (plan creation is host-only), but a device that was never
// prepared cannot be prepared there: its workspace would become a graph allocation.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tprimat/backend/blaslt/api.hpp"
#include "tprimat/backend/blaslt/plan.hpp"
#include "tprimat/backend/blaslt/tuning.hpp"
#include "tprimat/backend/gpu.hpp"
#include "tprimat/core/error.hpp"

namespace tprimat::backend {
namespace detail::blaslt {

[[noreturn]] inline void fail(ltStatus_t status, const char* call, const std::string& context) {
  throw core::RunError(std::string(call_prefix) + call + " failed for " + context + ": " +
                       status_text(status));
}
/// `call`: the library call without its prefix ("Matmul": cublasLtMatmul or hipblasLtMatmul).
/// The shape is formatted only on failure: no string work on the hot path. Any plan key with a
/// describe() overload (GemmKey, Fp8Key).
template <class AnyKey>
void check(ltStatus_t status, const char* call, const AnyKey& key) {
  if (status != LT_STATUS_SUCCESS) fail(status, call, describe(key));
}

/// A shape's descriptors and algorithm (a GEMM's, or an FP8 GEMM's: blaslt/fp8_gemm.hpp):
/// created once, read-only afterwards except for the pointers that live in the matmul descriptor
/// and are set per call under call_mutex (a GEMM's bias, an FP8 GEMM's scales).
struct Plan {
  ltMatmulDesc_t op = nullptr;
  ltMatrixLayout_t layout_a = nullptr;  // the library's A: our B
  ltMatrixLayout_t layout_b = nullptr;  // the library's B: our A
  ltMatrixLayout_t layout_c = nullptr;  // C and D: our C (or D), [n rows, m cols]
  ltMatmulAlgo_t algo{};
  int heuristic_rank = -1;  ///< algo's place in the heuristic's order when timed (tune), else -1
  int timed_candidates = 0;  ///< how many candidates tune() timed (0: not timed)
  std::mutex call_mutex;

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (layout_c) ltMatrixLayoutDestroy(layout_c);
    if (layout_b) ltMatrixLayoutDestroy(layout_b);
    if (layout_a) ltMatrixLayoutDestroy(layout_a);
    if (op) ltMatmulDescDestroy(op);
  }
};

struct Preference {
  ltMatmulPreference_t p = nullptr;
  ~Preference() {
    if (p) ltMatmulPreferenceDestroy(p);
  }
};

/// One handle and one workspace per device, and its architecture (api.hpp's device_arch: on AMD
/// it decides the FP8 formats). GEMMs on one device share the workspace, so they must be ordered
/// (one stream, or streams joined by events), which is how the engine runs.
struct DeviceGemm {
  ltHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::string arch;
};

struct Cache {
  std::mutex mutex;
  std::unordered_map<int, DeviceGemm> devices;
  std::unordered_map<GemmKey, std::unique_ptr<Plan>, GemmKeyHash> plans;
};

/// Never destroyed: a GEMM enqueued from another static's destructor must still find its handle,
/// and destroying handles after the GPU runtime shut down is undefined.
inline Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

template <class T, class AnyKey>
void set(ltMatmulDesc_t desc, ltMatmulDescAttributes_t attr, const T& value, const AnyKey& key) {
  check(ltMatmulDescSetAttribute(desc, attr, &value, sizeof(value)), "MatmulDescSetAttribute",
        key);
}
template <class T, class AnyKey>
void set(ltMatmulPreference_t pref, ltMatmulPreferenceAttributes_t attr, const T& value,
         const AnyKey& key) {
  check(ltMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value)),
        "MatmulPreferenceSetAttribute", key);
}

/// The heuristic's algorithms for `plan`'s descriptors that fit the workspace, best first, given
/// the alignments of the library's A, B and C/D: up to gemm_candidate_count() with tuning,
/// else its first. Empty when the library has none (the caller names why).
template <class AnyKey>
Candidates fitting_algorithms(const Plan& plan, ltHandle_t handle,
                              [[maybe_unused]] std::uint32_t align_a,
                              [[maybe_unused]] std::uint32_t align_b,
                              [[maybe_unused]] std::uint32_t align_c, const AnyKey& key) {
  Preference pref;
  check(ltMatmulPreferenceCreate(&pref.p), "MatmulPreferenceCreate", key);
  const std::uint64_t workspace = Gpu::gemm_workspace_bytes;
  set(pref.p, LT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace, key);
#if !TPRIMAT_GPU_HIP
  set(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_a, key);
  set(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_b, key);
  set(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_c, key);
  set(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_c, key);
#endif

  std::array<ltMatmulHeuristicResult_t, max_gemm_candidates> results{};
  int returned = 0;
  const ltStatus_t status = ltMatmulAlgoGetHeuristic(
      handle, plan.op, plan.layout_a, plan.layout_b, plan.layout_c, plan.layout_c, pref.p,
      gemm_candidate_count(), results.data(), &returned);
  Candidates fitting;
  if (no_candidate(status)) return fitting;  // the caller answers with the likely cause
  check(status, "MatmulAlgoGetHeuristic", key);
  for (int i = 0; i < returned; ++i)
    if (results[i].state == LT_STATUS_SUCCESS && results[i].workspaceSize <= workspace) {
      fitting.algos[fitting.count++] = results[i].algo;
      if (!gemm_tuning_enabled()) break;
    }
  return fitting;
}

/// A plan's operation and layouts for `key` before its algorithm, shared by the bf16 and FP8
/// plans: fp32 compute, the operand swap's transposes, the bf16 bias epilogue, our A and B (of
/// types a_type and b_type) in the library's swapped order, and C/D.
template <class AnyKey>
std::unique_ptr<Plan> describe_plan(const AnyKey& key, ltDataType_t a_type, ltDataType_t b_type) {
  auto plan = std::make_unique<Plan>();
  check(ltMatmulDescCreate(&plan->op, LT_COMPUTE_32F, LT_R_32F), "MatmulDescCreate", key);
  const LibraryOperands o = library_operands(key);
  set(plan->op, LT_MATMUL_DESC_TRANSA, o.trans_a ? LT_OP_T : LT_OP_N, key);
  set(plan->op, LT_MATMUL_DESC_TRANSB, o.trans_b ? LT_OP_T : LT_OP_N, key);
  if (epilogue(key.bias) == Epilogue::bias) {
    set(plan->op, LT_MATMUL_DESC_EPILOGUE, LT_EPILOGUE_BIAS, key);
    set(plan->op, LT_MATMUL_DESC_BIAS_DATA_TYPE, std::int32_t(LT_R_16BF), key);
  }
  check(ltMatrixLayoutCreate(&plan->layout_a, b_type, std::uint64_t(o.a.rows),
                             std::uint64_t(o.a.cols), o.a.ld),
        "MatrixLayoutCreate(B)", key);
  check(ltMatrixLayoutCreate(&plan->layout_b, a_type, std::uint64_t(o.b.rows),
                             std::uint64_t(o.b.cols), o.b.ld),
        "MatrixLayoutCreate(A)", key);
  check(ltMatrixLayoutCreate(&plan->layout_c, data_type(key.out), std::uint64_t(o.c.rows),
                             std::uint64_t(o.c.cols), o.c.ld),
        "MatrixLayoutCreate(C)", key);
  return plan;
}

/// `key`'s plan with the heuristic's first algorithm; `candidates` gets every fitting one.
inline std::unique_ptr<Plan> make_plan(const GemmKey& key, ltHandle_t handle,
                                       Candidates& candidates) {
  auto plan = describe_plan(key, LT_R_16BF, LT_R_16BF);
  // Operands swapped: the library's A is our B.
  candidates = fitting_algorithms(*plan, handle, key.align_b, key.align_a, key.align_c, key);
  if (candidates.count > 0) {
    plan->algo = candidates.algos[0];
    return plan;
  }
  throw core::RunError(std::string(library_name) + " has no algorithm for " + describe(key) +
                       " (bf16 operands, fp32 compute" +
                       std::string(key.bias ? ", bf16 bias epilogue" : "") + ")" +
                       no_algorithm_hint);
}

/// A new plan's algorithm: the fastest of `candidates` on this call's operands, `run(algo)`
/// enqueuing the call (its bias already set). An output the runs accumulate into (`in_place`:
/// beta != 0 with C read from D) is saved and restored around them.
template <class Run>
void tune(Plan& plan, std::span<const ltMatmulAlgo_t> candidates, Run&& run, bool in_place,
          void* d, std::size_t d_bytes, gpuStream_t stream) {
  if (candidates.size() < 2 || !can_time_on(stream)) return;
  gpu_check(gpuStreamSynchronize(stream), "GEMM tuning");  // the output is final before saving
  std::optional<SavedOutput> saved;
  if (in_place) saved.emplace(d, d_bytes, stream);
  const std::size_t best = fastest(candidates, run, stream);
  plan.algo = candidates[best];
  plan.heuristic_rank = static_cast<int>(best);
  plan.timed_candidates = static_cast<int>(candidates.size());
  if (saved) saved->restore();
}

/// The plan of `key` in `plans` (guarded by `mutex`): found, or made by `make(candidates)`, its
/// bias pointer set where `bias` is given, and tuned on this call (tune(): `run(plan, algo)`
/// enqueues it) before any other thread can see it, so no one else sets its pointers meanwhile.
template <class Plans, class AnyKey, class Make, class Run>
Plan& cached_plan(std::mutex& mutex, Plans& plans, const AnyKey& key, Make&& make,
                  const void* bias, Run&& run, bool in_place, void* d, std::size_t d_bytes,
                  gpuStream_t stream) {
  std::unique_lock lock(mutex);
  auto p = plans.find(key);
  if (p == plans.end()) {
    lock.unlock();
    Candidates candidates;
    std::unique_ptr<Plan> made = make(candidates);
    if (bias) set(made->op, LT_MATMUL_DESC_BIAS_POINTER, bias, key);
    tune(
        *made, candidates.view(), [&](const ltMatmulAlgo_t& algo) { return run(*made, algo); },
        in_place, d, d_bytes, stream);
    lock.lock();
    p = plans.try_emplace(key, std::move(made)).first;
  }
  return *p->second;
}

}  // namespace detail::blaslt

TPRIMAT_GPU_INLINE std::string_view Gpu::gemm_library() { return detail::blaslt::library_id; }

TPRIMAT_GPU_INLINE void Gpu::gemm_prepare(Stream stream) {
  int device = 0;
  gpu_check(gpuGetDevice(&device), "gpuGetDevice");
  detail::blaslt::Cache& c = detail::blaslt::cache();
  std::lock_guard lock(c.mutex);
  if (c.devices.contains(device)) return;

  gpuStreamCaptureStatus capture = gpuStreamCaptureStatusNone;
  gpu_check(gpuStreamIsCapturing(stream, &capture), "gpuStreamIsCapturing");
  if (capture != gpuStreamCaptureStatusNone)
    throw core::RunError("Gpu::gemm_prepare on device " + std::to_string(device) +
                         " inside graph capture: call it, or run one eager step, before "
                         "capturing");

  detail::blaslt::DeviceGemm d;
  gpuDeviceProp_t prop{};
  gpu_check(gpuGetDeviceProperties(&prop, device), "gpuGetDeviceProperties");
  d.arch = detail::blaslt::device_arch(prop);
  if (const ltStatus_t status = ltCreate(&d.handle); status != LT_STATUS_SUCCESS)
    detail::blaslt::fail(status, "Create", "gemm_prepare on device " + std::to_string(device));
  try {
    d.workspace = Gpu::allocate(gemm_workspace_bytes, stream);
    // Pool memory is stream-ordered: once the allocation completed, any stream may use it.
    gpu_check(gpuStreamSynchronize(stream), "gpuStreamSynchronize (gemm workspace)");
  } catch (...) {
    ltDestroy(d.handle);
    throw;
  }
  c.devices.emplace(device, d);
}

namespace detail::blaslt {

/// `device`'s handle, workspace and architecture, prepared at first use (Gpu::gemm_prepare).
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

/// D = op(A) op(B) + beta C (+ bias): Gpu::gemm (C is D) and Gpu::gemm_add (C read from another
/// buffer of D's layout) share it.
template <class Out>
void run_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
              const Gpu::bf16* a, std::int64_t lda, const Gpu::bf16* b, std::int64_t ldb,
              float beta, const Out* c_in, Out* c, std::int64_t ldc, const Gpu::bf16* bias,
              Gpu::Stream stream) {
  static_assert(is_gemm_output<Out>, "tprimat: a GEMM writes bf16 or fp32");
  int device = 0;
  gpu_check(gpuGetDevice(&device), "gpuGetDevice");
  const GemmKey key{m,
                    n,
                    k,
                    lda,
                    ldb,
                    ldc,
                    trans_a,
                    trans_b,
                    beta != 0.0f,
                    bias != nullptr,
                    out_type_of<Out>,
                    alignment(a),
                    alignment(b),
                    std::min(alignment(c), alignment(c_in)),
                    device};
  check_gemm_shape(key);

  const DeviceGemm dev = device_gemm(device, stream);
  const float alpha = 1.0f;
  const auto run_with = [&](const Plan& plan, const ltMatmulAlgo_t& algo) {
    return ltMatmul(dev.handle, plan.op, &alpha, b, plan.layout_a, a, plan.layout_b, &beta, c_in,
                    plan.layout_c, c, plan.layout_c, &algo, dev.workspace,
                    Gpu::gemm_workspace_bytes, stream);
  };
  Cache& cc = cache();
  Plan& plan = cached_plan(
      cc.mutex, cc.plans, key,
      [&](Candidates& candidates) { return make_plan(key, dev.handle, candidates); },
      static_cast<const void*>(bias), run_with, beta != 0.0f && c_in == c, c,
      output_bytes(m, n, ldc, sizeof(Out)), stream);

  auto launch = [&] { check(run_with(plan, plan.algo), "Matmul", key); };
  if (bias) {
    std::lock_guard bias_lock(plan.call_mutex);
    set(plan.op, LT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias), key);
    launch();
  } else {
    launch();
  }
}

}  // namespace detail::blaslt

template <class Out>
void Gpu::gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
               const bf16* a, std::int64_t lda, const bf16* b, std::int64_t ldb, float beta, Out* c,
               std::int64_t ldc, const bf16* bias, Stream stream) {
  detail::blaslt::run_gemm<Out>(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, c, ldc, bias,
                                stream);
}

template <class Out>
void Gpu::gemm_add(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                   const bf16* a, std::int64_t lda, const bf16* b, std::int64_t ldb, const Out* c,
                   Out* d, std::int64_t ldc, Stream stream) {
  detail::blaslt::run_gemm<Out>(trans_a, trans_b, m, n, k, a, lda, b, ldb, 1.0f, c, d, ldc,
                                nullptr, stream);
}

}  // namespace tprimat::backend
