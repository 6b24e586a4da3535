// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Cuda::device_info: the current device's name, memory, SMs and software versions.
#pragma once

#include <cublasLt.h>

#include <string>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/kernels/fp8_format.hpp"
#include "tprimat/report/peaks.hpp"

#if defined(TPRIMAT_HAVE_CUDNN)
#include <cudnn.h>
#endif

namespace tprimat::backend {
namespace detail::cuda_info {

/// CUDA encodes versions as 1000 * major + 10 * minor: 13000 -> "13.0".
inline std::string cuda_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

/// cuBLAS and cuDNN 9 encode 10000 * major + 100 * minor + patch: 91900 -> "9.19.0".
inline std::string library_version(std::size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) + "." +
         std::to_string(v % 100);
}

}  // namespace detail::cuda_info

TPRIMAT_GPU_INLINE DeviceInfo Gpu::device_info() {
  using namespace detail::cuda_info;
  int count = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    throw core::RunError(
        std::string("no CUDA device: ") +
        (status != cudaSuccess ? cudaGetErrorString(status) : "the driver reports 0 GPUs") +
        "; run on a machine with an NVIDIA GPU and driver, or use the CPU backend");
  }
  int device = 0;
  gpu_check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp prop{};
  gpu_check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  int driver = 0, runtime = 0;
  gpu_check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  gpu_check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");

  DeviceInfo info;
  info.platform = "nvd";
  info.software_stack = "cuda";
  info.device_name = prop.name;
  info.device_count = count;
  info.cores = prop.multiProcessorCount;
  info.total_memory_gb = double(prop.totalGlobalMem) / double(1ull << 30);
  // The CUDA version the driver supports (what nvidia-smi prints as "CUDA Version"), not the
  // kernel module's release number, which only NVML knows.
  info.driver_version = cuda_version(driver);
  info.runtime_version = cuda_version(runtime);
  info.peak_tflops_dense = report::dense_peak_tflops(info.device_name);
  info.peak_tflops_fp8_dense = report::dense_fp8_peak_tflops(info.device_name);
  // The loaded libraries' versions (may differ from the headers this was compiled with).
  info.blas_version = "cuBLASLt " + library_version(cublasLtGetVersion());
  info.gemm = std::string(gemm_library());
  info.fp8_forward = kernels::fp8_format_name(kernels::Fp8Format::e4m3);  // cuBLASLt: OCP
  info.fp8_backward = kernels::fp8_format_name(kernels::Fp8Format::e5m2);
#if defined(TPRIMAT_HAVE_CUDNN)
  {
    const std::size_t v = cudnnGetVersion();
    // cuDNN 8 used 1000 * major + 100 * minor + patch.
    info.dnn_version =
        "cuDNN " + (v >= 90000 ? library_version(v)
                               : std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 100) +
                                     "." + std::to_string(v % 100));
  }
#endif
  return info;
}

}  // namespace tprimat::backend
