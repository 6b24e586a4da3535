// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Gpu::device_info: the current GPU's name, memory, SMs (CUs) and software versions, one
// source over the gpu* names; what only one vendor reports (library versions, FP8 formats) apart.
#pragma once

#include <cstddef>
#include <string>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/peaks.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/kernels/fp8_format.hpp"

#if TPRIMAT_GPU_HIP
#if defined(TPRIMAT_HAVE_HIPBLASLT)
#include <hipblaslt/hipblaslt-version.h>

#include "tprimat/backend/blaslt/plan.hpp"
#endif
#else
#include <cublasLt.h>
#if defined(TPRIMAT_HAVE_CUDNN)
#include <cudnn.h>
#endif
#endif

namespace tprimat::backend {
namespace detail::device_info {

#if TPRIMAT_GPU_HIP
inline constexpr const char* platform = "amd";
inline constexpr const char* software_stack = "rocm";
inline constexpr const char* no_device = "no HIP device: ";
inline constexpr const char* none_reported = "the ROCm runtime reports 0 GPUs";
inline constexpr const char* no_device_fix =
    "; run on a machine with an AMD GPU and ROCm, or use the CPU backend";

/// HIP encodes its version as 10000000 * major + 100000 * minor + patch: 60241134 -> "6.2.41134".
inline std::string runtime_version(int v) {
  return std::to_string(v / 10000000) + "." + std::to_string(v / 100000 % 100) + "." +
         std::to_string(v % 100000);
}

/// "AMD Instinct MI300X (gfx942:sramecc+:xnack-)": the peak table matches on the marketing name.
inline std::string device_name(const gpuDeviceProp_t& prop) {
  return std::string(prop.name) + " (" + prop.gcnArchName + ")";
}

/// hipBLASLt's version and FP8 formats (gfx942: fnuz; gfx950: OCP; others have no FP8 matrix
/// cores: left empty). Without hipBLASLt, nothing: the tiled GEMM runs and FP8 is refused.
inline void add_libraries([[maybe_unused]] DeviceInfo& info,
                          [[maybe_unused]] const gpuDeviceProp_t& prop) {
#if defined(TPRIMAT_HAVE_HIPBLASLT)
  // The headers' version (hipBLASLt has no handle-free version query).
  info.blas_version = "hipBLASLt " + std::to_string(HIPBLASLT_VERSION_MAJOR) + "." +
                      std::to_string(HIPBLASLT_VERSION_MINOR) + "." +
                      std::to_string(HIPBLASLT_VERSION_PATCH);
  try {
    const detail::blaslt::Fp8Formats f = detail::blaslt::hipblaslt_fp8_formats(prop.gcnArchName);
    info.fp8_forward = kernels::fp8_format_name(f.e4m3);
    info.fp8_backward = kernels::fp8_format_name(f.e5m2);
  } catch (const core::InputError&) {
  }
#endif
}
#else
inline constexpr const char* platform = "nvd";
inline constexpr const char* software_stack = "cuda";
inline constexpr const char* no_device = "no CUDA device: ";
inline constexpr const char* none_reported = "the driver reports 0 GPUs";
inline constexpr const char* no_device_fix =
    "; run on a machine with an NVIDIA GPU and driver, or use the CPU backend";

/// CUDA encodes versions as 1000 * major + 10 * minor: 13000 -> "13.0". The driver's is the CUDA
/// version it supports (nvidia-smi's "CUDA Version"), not the kernel module's release number,
/// which only NVML knows.
inline std::string runtime_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

/// cuBLAS and cuDNN 9 encode 10000 * major + 100 * minor + patch: 91900 -> "9.19.0".
inline std::string library_version(std::size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) + "." +
         std::to_string(v % 100);
}

inline std::string device_name(const gpuDeviceProp_t& prop) { return prop.name; }

/// The loaded libraries' versions (may differ from the headers this was compiled with), and
/// cuBLASLt's FP8 formats (OCP).
inline void add_libraries(DeviceInfo& info, const gpuDeviceProp_t&) {
  info.blas_version = "cuBLASLt " + library_version(cublasLtGetVersion());
  info.fp8_forward = kernels::fp8_format_name(kernels::Fp8Format::e4m3);
  info.fp8_backward = kernels::fp8_format_name(kernels::Fp8Format::e5m2);
#if defined(TPRIMAT_HAVE_CUDNN)
  const std::size_t v = cudnnGetVersion();
  // cuDNN 8 used 1000 * major + 100 * minor + patch.
  info.dnn_version =
      "cuDNN " + (v >= 90000 ? library_version(v)
                             : std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 100) +
                                   "." + std::to_string(v % 100));
#endif
}
#endif

}  // namespace detail::device_info

TPRIMAT_GPU_INLINE DeviceInfo Gpu::device_info() {
  namespace vendor = detail::device_info;
  int count = 0;
  if (const gpuError_t status = gpuGetDeviceCount(&count); status != gpuSuccess || count == 0) {
    (void)gpuGetLastError();
    throw core::RunError(std::string(vendor::no_device) +
                         (status != gpuSuccess ? gpuGetErrorString(status) : vendor::none_reported) +
                         vendor::no_device_fix);
  }
  int device = 0;
  gpu_check(gpuGetDevice(&device), "gpuGetDevice");
  gpuDeviceProp_t prop{};
  gpu_check(gpuGetDeviceProperties(&prop, device), "gpuGetDeviceProperties");
  int driver = 0, runtime = 0;
  gpu_check(gpuDriverGetVersion(&driver), "gpuDriverGetVersion");
  gpu_check(gpuRuntimeGetVersion(&runtime), "gpuRuntimeGetVersion");

  DeviceInfo info;
  info.platform = vendor::platform;
  info.software_stack = vendor::software_stack;
  info.device_name = vendor::device_name(prop);
  info.device_count = count;
  info.cores = prop.multiProcessorCount;  // SMs, or compute units
  info.total_memory_gb = double(prop.totalGlobalMem) / double(1ull << 30);
  info.driver_version = vendor::runtime_version(driver);
  info.runtime_version = vendor::runtime_version(runtime);
  info.peak_tflops_dense = dense_peak_tflops(info.device_name);
  info.peak_tflops_fp8_dense = dense_fp8_peak_tflops(info.device_name);
  info.gemm = std::string(gemm_library());
  vendor::add_libraries(info, prop);
  return info;
}

}  // namespace tprimat::backend
