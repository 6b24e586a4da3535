// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::fp8_gemm through cuBLASLt or hipBLASLt (one source, blaslt/api.hpp's names): FP8
// operands with per-tensor device scales, cached plans.
//
// Row-major D[m, n] = A[m, k] B[n, k]^T is, read column-major, D^T[n, m] = B^T A: the library's
// A is our B ([k rows, n cols], TRANSA = T), its B our A ([k rows, m cols], TRANSB = N): the
// "TN" layout Hopper's FP8 kernels require, with no copy. The scale pointers follow the swap
// (device pointers, read when the GEMM runs, so a captured graph picks up scales the device
// updated); they live in the matmul descriptor and are set per call under the plan's mutex (one
// plan serves every layer of a shape). The handle and workspace are Gpu::gemm's
// (blaslt/gemm.hpp); the plans are cached apart, keyed by everything that selects them.
//
// The formats are the library's on the device (api.hpp's fp8_formats): OCP on NVIDIA and gfx950,
// fnuz on gfx942 (MI300X); any other is refused by name before the library is asked
// (blaslt_plan.hpp). Fp8Accumulation::fast is cuBLASLt's FAST_ACCUM; gfx942's and gfx950's FP8
// matrix instructions accumulate in fp32 with no such switch, so on HIP both values share a plan.
// The HIP side is compiled against ROCm 7's headers (Debian's libhipblaslt-dev), never run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "tprimat/backend/blaslt/api.hpp"
#include "tprimat/backend/blaslt/gemm.hpp"
#include "tprimat/backend/blaslt/plan.hpp"
#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/fp8_gemm.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/kernels/fp8_format.hpp"

namespace tprimat::backend::detail::blaslt {

struct Fp8Cache {
  std::mutex mutex;
  std::unordered_map<Fp8Key, std::unique_ptr<Plan>, Fp8KeyHash> plans;
};

/// Never destroyed, as cache() (blaslt/gemm.hpp).
inline Fp8Cache& fp8_cache() {
  static Fp8Cache* c = new Fp8Cache;
  return *c;
}

/// The scale pointers, set on the plan's descriptor before its heuristic runs (the heuristic then
/// sees the call as it will run) and repointed on every later call.
inline void set_scales(ltMatmulDesc_t op, const Fp8Matrix& a, const Fp8Matrix& b,
                       const Fp8Key& key) {
  // Swapped with the operands: the library's A is our B.
  set(op, LT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(b.scale_inv), key);
  set(op, LT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(a.scale_inv), key);
}

/// `key`'s plan with the heuristic's first algorithm; `candidates` gets every fitting one.
inline std::unique_ptr<Plan> make_fp8_plan(const Fp8Key& key, const Fp8Matrix& a,
                                           const Fp8Matrix& b, ltHandle_t handle,
                                           Candidates& candidates) {
  auto plan = describe_plan(key, fp8_type(key.format_a), fp8_type(key.format_b));
#if !TPRIMAT_GPU_HIP
  set(plan->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, std::int8_t(key.fast ? 1 : 0), key);
#endif
  set_scales(plan->op, a, b, key);
  // Operands swapped: the library's A is our B.
  candidates = fitting_algorithms(*plan, handle, key.align_b, key.align_a, key.align_d, key);
  if (candidates.count > 0) {
    plan->algo = candidates.algos[0];
    return plan;
  }
  throw core::RunError(std::string(library_name) + " has no FP8 algorithm for " + describe(key) +
                       no_fp8_algorithm_hint);
}

}  // namespace tprimat::backend::detail::blaslt

namespace tprimat::backend {

TPRIMAT_GPU_INLINE Fp8GemmFormats fp8_gemm_formats() {
  std::string arch;
  if constexpr (detail::blaslt::fp8_formats_need_device) {
    int device = 0;
    gpu_check(gpuGetDevice(&device), "gpuGetDevice");
    gpuDeviceProp_t prop{};
    gpu_check(gpuGetDeviceProperties(&prop, device), "gpuGetDeviceProperties");
    arch = detail::blaslt::device_arch(prop);
  }
  const detail::blaslt::Fp8Formats f = detail::blaslt::fp8_formats(arch);
  return {f.e4m3, f.e5m2};
}

template <class Out>
void fp8_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const Fp8Matrix& a,
              const Fp8Matrix& b, float alpha, float beta, Out* d, std::int64_t ldd,
              Fp8Accumulation accumulation, gpu::Stream stream, const Out* c,
              const gpu::bf16* bias) {
  static_assert(detail::blaslt::is_gemm_output<Out>, "tprimat: an FP8 GEMM writes bf16 or fp32");
  namespace lt = detail::blaslt;
  if (c == nullptr) c = d;
  lt::Fp8Key key{m,
                 n,
                 k,
                 a.ld,
                 b.ld,
                 ldd,
                 a.format,
                 b.format,
                 lt::out_type_of<Out>,
                 beta != 0.0f,
                 !TPRIMAT_GPU_HIP && accumulation == Fp8Accumulation::fast,
                 bias != nullptr,
                 lt::alignment(a.data),
                 lt::alignment(b.data),
                 std::min(lt::alignment(d), lt::alignment(c)),
                 0};
  // Checked before the device is asked where the formats do not depend on it: a refused shape is
  // then refused the same with no GPU.
  if constexpr (!lt::fp8_formats_need_device)
    lt::check_fp8_shape(key, sizeof(Out), lt::fp8_formats({}));
  if (!a.data || !b.data || !d)
    throw core::InputError("tprimat: " + lt::describe(key) + ": A, B and D must be set");
  lt::check_fp8_scales(key, a.scale_inv, b.scale_inv);
  gpu_check(gpuGetDevice(&key.device), "gpuGetDevice");
  const int device = key.device;
  const lt::DeviceGemm dev = lt::device_gemm(device, stream);
  if constexpr (lt::fp8_formats_need_device)
    lt::check_fp8_shape(key, sizeof(Out), lt::fp8_formats(dev.arch));

  const auto run_with = [&](const lt::Plan& plan, const ltMatmulAlgo_t& algo) {
    return ltMatmul(dev.handle, plan.op, &alpha, b.data, plan.layout_a, a.data, plan.layout_b,
                    &beta, c, plan.layout_c, d, plan.layout_c, &algo, dev.workspace,
                    Gpu::gemm_workspace_bytes, stream);
  };
  lt::Fp8Cache& cc = lt::fp8_cache();
  // A new plan's scales are set by make_fp8_plan, before anyone else can see it.
  lt::Plan& plan = lt::cached_plan(
      cc.mutex, cc.plans, key,
      [&](lt::Candidates& candidates) {
        return lt::make_fp8_plan(key, a, b, dev.handle, candidates);
      },
      static_cast<const void*>(bias), run_with, beta != 0.0f && c == d, d,
      lt::output_bytes(m, n, ldd, sizeof(Out)), stream);

  std::lock_guard scale_lock(plan.call_mutex);
  lt::set_scales(plan.op, a, b, key);
  if (bias) lt::set(plan.op, LT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias), key);
  lt::check(run_with(plan, plan.algo), "Matmul", key);
}

}  // namespace tprimat::backend
