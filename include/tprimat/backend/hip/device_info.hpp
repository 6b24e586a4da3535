// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Hip::device_info: the current AMD GPU's name, gfx architecture, CUs, memory and ROCm
// versions.
#pragma once

#include <string>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/report/peaks.hpp"

#if defined(TPRIMAT_HAVE_HIPBLASLT)
#include <hipblaslt/hipblaslt-version.h>

#include "tprimat/backend/blaslt_plan.hpp"
#endif

namespace tprimat::backend {
namespace detail::hip_info {

/// HIP encodes its version as 10000000 * major + 100000 * minor + patch: 60241134 -> "6.2.41134".
inline std::string hip_version(int v) {
  return std::to_string(v / 10000000) + "." + std::to_string(v / 100000 % 100) + "." +
         std::to_string(v % 100000);
}

}  // namespace detail::hip_info

TPRIMAT_GPU_INLINE DeviceInfo Gpu::device_info() {
  using namespace detail::hip_info;
  int count = 0;
  if (const hipError_t status = hipGetDeviceCount(&count); status != hipSuccess || count == 0) {
    (void)hipGetLastError();
    throw core::RunError(
        std::string("no HIP device: ") +
        (status != hipSuccess ? hipGetErrorString(status) : "the ROCm runtime reports 0 GPUs") +
        "; run on a machine with an AMD GPU and ROCm, or use the CPU backend");
  }
  int device = 0;
  gpu_check(hipGetDevice(&device), "hipGetDevice");
  hipDeviceProp_t prop{};
  gpu_check(hipGetDeviceProperties(&prop, device), "hipGetDeviceProperties");
  int driver = 0, runtime = 0;
  gpu_check(hipDriverGetVersion(&driver), "hipDriverGetVersion");
  gpu_check(hipRuntimeGetVersion(&runtime), "hipRuntimeGetVersion");

  DeviceInfo info;
  info.platform = "amd";
  info.software_stack = "rocm";
  // "AMD Instinct MI300X (gfx942:sramecc+:xnack-)": the peak table matches on the marketing name.
  info.device_name = std::string(prop.name) + " (" + prop.gcnArchName + ")";
  info.device_count = count;
  info.cores = prop.multiProcessorCount;  // compute units
  info.total_memory_gb = double(prop.totalGlobalMem) / double(1ull << 30);
  info.driver_version = hip_version(driver);
  info.runtime_version = hip_version(runtime);
  info.peak_tflops_dense = report::dense_peak_tflops(info.device_name);
  info.peak_tflops_fp8_dense = report::dense_fp8_peak_tflops(info.device_name);
  info.gemm = std::string(gemm_library());
#if defined(TPRIMAT_HAVE_HIPBLASLT)
  // The headers' version (hipBLASLt has no handle-free version query).
  info.blas_version = "hipBLASLt " + std::to_string(HIPBLASLT_VERSION_MAJOR) + "." +
                      std::to_string(HIPBLASLT_VERSION_MINOR) + "." +
                      std::to_string(HIPBLASLT_VERSION_PATCH);
  try {  // gfx942: fnuz; gfx950: OCP; others have no FP8 matrix cores (left empty)
    const detail::blaslt::Fp8Formats f = detail::blaslt::hipblaslt_fp8_formats(prop.gcnArchName);
    info.fp8_forward = kernels::fp8_format_name(f.e4m3);
    info.fp8_backward = kernels::fp8_format_name(f.e5m2);
  } catch (const core::InputError&) {
  }
#endif
  return info;
}

}  // namespace tprimat::backend
