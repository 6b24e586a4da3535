// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// What a backend reports about the device(s) a run used: the result JSON's gpu_info.
#pragma once

#include <string>

namespace tprimat::backend {

struct DeviceInfo {
  std::string platform;         ///< "nvd", "amd" or "cpu" (the seeds' platform key)
  std::string software_stack;   ///< "cuda", "rocm" or "cpu"
  std::string device_name;      ///< e.g. "NVIDIA H100 80GB HBM3" or the CPU model name
  int device_count = 1;         ///< devices (or, on CPU, sockets treated as one device) per node
  int cores = 0;                ///< CPU cores, or SMs/CUs on a GPU
  double total_memory_gb = 0;   ///< memory of one device (host memory on CPU), GiB
  std::string driver_version;   ///< empty where there is none
  std::string runtime_version;  ///< CUDA/HIP runtime; empty on the CPU, which has none
  double peak_tflops_dense = 0; ///< dense bf16 peak per device; 0 when unknown (MFU is then null)
  /// Dense FP8 peak per device (backend/peaks.hpp); 0 when unknown or without FP8 (then
  /// mfu_fp8_peak is null). Every result states it, FP8 run or not.
  double peak_tflops_fp8_dense = 0;
  /// GEMM library, e.g. "cuBLASLt 13.1.0" or "hipBLASLt 1.2.2"; empty where none
  std::string blas_version;
  /// The GEMM a GPU run uses: "cublaslt" (CUDA), "hipblaslt" (HIP built with hipBLASLt), or
  /// "fallback" (the portable tiled kernel: correct, slow; HIP without hipBLASLt); empty on the
  /// CPU.
  std::string gemm;
  std::string dnn_version;      ///< fused-attention library, e.g. "cuDNN 9.19.0"; empty where none
  std::string collectives_version;  ///< e.g. "NCCL 2.27.3", "RCCL 2.27.7"; empty where none
  /// The FP8 formats the device's FP8 GEMM takes, forward operands and gradients: "e4m3" and
  /// "e5m2" (OCP: NVIDIA, gfx950), "e4m3_fnuz" and "e5m2_fnuz" (gfx942); empty where it has
  /// none. An FP8 run's training_config.fp8 records them.
  std::string fp8_forward, fp8_backward;
};

}  // namespace tprimat::backend
