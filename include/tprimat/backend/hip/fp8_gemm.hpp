// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::fp8_gemm through hipBLASLt: FP8 operands with per-tensor device scales, cached plans.
//
// The same call as on CUDA (backend/cuda_fp8_gemm.hpp declares it; backend/cuda/fp8_gemm.hpp is
// cuBLASLt's): both operands K-major, hipBLASLt's A our B (TRANSA = T), its B our A (TRANSB =
// N), D our D, the scale pointers swapped with the operands (HIPBLASLT_MATMUL_DESC_A/B_SCALE_
// POINTER: device pointers, read when the GEMM runs). The formats are the device's: gfx942
// (MI300X) computes in the fnuz formats (HIP_R_8F_E4M3_FNUZ / HIP_R_8F_E5M2_FNUZ), gfx950 in the
// OCP ones (HIP_R_8F_E4M3 / HIP_R_8F_E5M2); any other format is refused by name before hipBLASLt
// is asked (backend/blaslt_plan.hpp). The handle and workspace are Hip::gemm's
// (hip/hipblaslt_gemm.hpp); the plans are cached apart, keyed by everything that selects them.
//
// Fp8Accumulation has no meaning here: gfx942's and gfx950's FP8 matrix instructions accumulate
// in fp32 (there is no cuBLASLt FAST_ACCUM counterpart), so both values share one plan.
// Compiled against ROCm 7's headers (Debian's libhipblaslt-dev); not run: no AMD GPU here.
#pragma once

#include <hipblaslt/hipblaslt.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "tprimat/backend/blaslt_plan.hpp"
#include "tprimat/backend/cuda_fp8_gemm.hpp"
#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/hip/hipblaslt_gemm.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/kernels/fp8_format.hpp"

namespace tprimat::backend::detail::hipblaslt {

using blaslt::Fp8Key;
using blaslt::Fp8KeyHash;

/// hipBLASLt's type of an FP8 format.
inline hipDataType fp8_type(kernels::Fp8Format f) {
  switch (f) {
    case kernels::Fp8Format::e4m3:
      return HIP_R_8F_E4M3;
    case kernels::Fp8Format::e5m2:
      return HIP_R_8F_E5M2;
    case kernels::Fp8Format::e4m3_fnuz:
      return HIP_R_8F_E4M3_FNUZ;
    case kernels::Fp8Format::e5m2_fnuz:
      return HIP_R_8F_E5M2_FNUZ;
  }
  return HIP_R_8F_E4M3_FNUZ;
}

struct Fp8Cache {
  std::mutex mutex;
  std::unordered_map<Fp8Key, std::unique_ptr<Plan>, Fp8KeyHash> plans;
};

/// Never destroyed, as cache() (hip/hipblaslt_gemm.hpp).
inline Fp8Cache& fp8_cache() {
  static Fp8Cache* c = new Fp8Cache;
  return *c;
}

/// The scale pointers, set on the plan's descriptor before its heuristic runs (the heuristic then
/// sees the call as it will run) and repointed on every later call.
inline void set_scales(hipblasLtMatmulDesc_t op, const Fp8Matrix& a, const Fp8Matrix& b,
                       const Fp8Key& key) {
  // Swapped with the operands: hipBLASLt's A is our B.
  set(op, HIPBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(b.scale_inv), key);
  set(op, HIPBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(a.scale_inv), key);
}

inline std::unique_ptr<Plan> make_fp8_plan(const Fp8Key& key, const Fp8Matrix& a,
                                           const Fp8Matrix& b, hipblasLtHandle_t handle) {
  auto plan = describe_plan(key, fp8_type(key.format_a), fp8_type(key.format_b));
  set_scales(plan->op, a, b, key);
  if (const auto algo = best_algorithm(*plan, handle, key)) {
    plan->algo = *algo;
    return plan;
  }
  throw core::RunError("hipBLASLt has no FP8 algorithm for " + describe(key) +
                       " on this GPU (HIPBLASLT_LOG_MASK=32 HIPBLASLT_LOG_LEVEL=5 prints why)");
}

}  // namespace tprimat::backend::detail::hipblaslt

namespace tprimat::backend {

TPRIMAT_GPU_INLINE Fp8GemmFormats fp8_gemm_formats() {
  int device = 0;
  gpu_check(hipGetDevice(&device), "hipGetDevice");
  hipDeviceProp_t prop{};
  gpu_check(hipGetDeviceProperties(&prop, device), "hipGetDeviceProperties");
  const detail::blaslt::Fp8Formats f = detail::blaslt::hipblaslt_fp8_formats(prop.gcnArchName);
  return {f.e4m3, f.e5m2};
}

template <class Out>
void fp8_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const Fp8Matrix& a,
              const Fp8Matrix& b, float alpha, float beta, Out* d, std::int64_t ldd,
              Fp8Accumulation, gpu::Stream stream, const Out* c, const gpu::bf16* bias) {
  static_assert(detail::blaslt::is_gemm_output<Out>, "tprimat: an FP8 GEMM writes bf16 or fp32");
  namespace lt = detail::hipblaslt;
  namespace bl = detail::blaslt;
  if (c == nullptr) c = d;
  bl::Fp8Key key{m,
                 n,
                 k,
                 a.ld,
                 b.ld,
                 ldd,
                 a.format,
                 b.format,
                 bl::out_type_of<Out>,
                 beta != 0.0f,
                 false,  // no fast accumulation on AMD: one plan for both
                 bias != nullptr,
                 bl::alignment(a.data),
                 bl::alignment(b.data),
                 std::min(bl::alignment(d), bl::alignment(c)),
                 0};
  if (!a.data || !b.data || !d)
    throw core::InputError("tprimat: " + bl::describe(key) + ": A, B and D must be set");
  bl::check_fp8_scales(key, a.scale_inv, b.scale_inv);
  gpu_check(hipGetDevice(&key.device), "hipGetDevice");
  const int device = key.device;
  const lt::DeviceGemm dev = lt::device_gemm(device, stream);
  // The formats are the device's: checked once its architecture is known.
  bl::check_fp8_shape(key, sizeof(Out), bl::hipblaslt_fp8_formats(dev.arch));

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
    lt::set(plan.op, HIPBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias), key);
  lt::check(hipblasLtMatmul(dev.handle, plan.op, &alpha, b.data, plan.layout_a, a.data,
                            plan.layout_b, &beta, c, plan.layout_c, d, plan.layout_c, &plan.algo,
                            dev.workspace, Gpu::gemm_workspace_bytes, stream),
            "hipblasLtMatmul", key);
}

}  // namespace tprimat::backend
