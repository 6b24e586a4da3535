// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// cuBLASLt and hipBLASLt under one set of names (lt*, LT_*), as gpu_runtime.hpp maps the runtime,
// so that one wrapper (blaslt/gemm.hpp, blaslt/fp8_gemm.hpp) serves both libraries.
#pragma once

// hipBLASLt takes cuBLASLt's descriptors, attributes and calls under hip names; what differs is
// named here: the status text, the hints a failure gives, which statuses mean "no candidate",
// the FP8 data types, and how a device names its architecture. Only the names the wrappers use
// are mapped; add one here before using it.
#include <string>

#include "tprimat/backend/blaslt/plan.hpp"
#include "tprimat/backend/gpu/runtime.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/kernels/fp8_format.hpp"

#if TPRIMAT_GPU_HIP
#include <hipblaslt/hipblaslt.h>
#define TPRIMAT_LT_API(name) hipblasLt##name
#define TPRIMAT_LT_ENUM(name) HIPBLASLT_##name
#define TPRIMAT_BLAS_ENUM(name) HIPBLAS_##name
#define TPRIMAT_LT_TYPE(name) HIP_##name
#define ltStatus_t hipblasStatus_t
#define ltDataType_t hipDataType
#else
#include <cublasLt.h>
#define TPRIMAT_LT_API(name) cublasLt##name
#define TPRIMAT_LT_ENUM(name) CUBLASLT_##name
#define TPRIMAT_BLAS_ENUM(name) CUBLAS_##name
#define TPRIMAT_LT_TYPE(name) CUDA_##name
#define ltStatus_t cublasStatus_t
#define ltDataType_t cudaDataType_t
#endif

// Types and calls.
#define ltHandle_t TPRIMAT_LT_API(Handle_t)
#define ltMatmulDesc_t TPRIMAT_LT_API(MatmulDesc_t)
#define ltMatmulDescAttributes_t TPRIMAT_LT_API(MatmulDescAttributes_t)
#define ltMatrixLayout_t TPRIMAT_LT_API(MatrixLayout_t)
#define ltMatmulAlgo_t TPRIMAT_LT_API(MatmulAlgo_t)
#define ltMatmulPreference_t TPRIMAT_LT_API(MatmulPreference_t)
#define ltMatmulPreferenceAttributes_t TPRIMAT_LT_API(MatmulPreferenceAttributes_t)
#define ltMatmulHeuristicResult_t TPRIMAT_LT_API(MatmulHeuristicResult_t)
#define ltCreate TPRIMAT_LT_API(Create)
#define ltDestroy TPRIMAT_LT_API(Destroy)
#define ltMatmul TPRIMAT_LT_API(Matmul)
#define ltMatmulDescCreate TPRIMAT_LT_API(MatmulDescCreate)
#define ltMatmulDescDestroy TPRIMAT_LT_API(MatmulDescDestroy)
#define ltMatmulDescSetAttribute TPRIMAT_LT_API(MatmulDescSetAttribute)
#define ltMatrixLayoutCreate TPRIMAT_LT_API(MatrixLayoutCreate)
#define ltMatrixLayoutDestroy TPRIMAT_LT_API(MatrixLayoutDestroy)
#define ltMatmulPreferenceCreate TPRIMAT_LT_API(MatmulPreferenceCreate)
#define ltMatmulPreferenceDestroy TPRIMAT_LT_API(MatmulPreferenceDestroy)
#define ltMatmulPreferenceSetAttribute TPRIMAT_LT_API(MatmulPreferenceSetAttribute)
#define ltMatmulAlgoGetHeuristic TPRIMAT_LT_API(MatmulAlgoGetHeuristic)

// Attributes and constants.
#define LT_MATMUL_DESC_TRANSA TPRIMAT_LT_ENUM(MATMUL_DESC_TRANSA)
#define LT_MATMUL_DESC_TRANSB TPRIMAT_LT_ENUM(MATMUL_DESC_TRANSB)
#define LT_MATMUL_DESC_EPILOGUE TPRIMAT_LT_ENUM(MATMUL_DESC_EPILOGUE)
#define LT_MATMUL_DESC_BIAS_DATA_TYPE TPRIMAT_LT_ENUM(MATMUL_DESC_BIAS_DATA_TYPE)
#define LT_MATMUL_DESC_BIAS_POINTER TPRIMAT_LT_ENUM(MATMUL_DESC_BIAS_POINTER)
#define LT_MATMUL_DESC_A_SCALE_POINTER TPRIMAT_LT_ENUM(MATMUL_DESC_A_SCALE_POINTER)
#define LT_MATMUL_DESC_B_SCALE_POINTER TPRIMAT_LT_ENUM(MATMUL_DESC_B_SCALE_POINTER)
#define LT_MATMUL_PREF_MAX_WORKSPACE_BYTES TPRIMAT_LT_ENUM(MATMUL_PREF_MAX_WORKSPACE_BYTES)
#define LT_EPILOGUE_BIAS TPRIMAT_LT_ENUM(EPILOGUE_BIAS)
#define LT_STATUS_SUCCESS TPRIMAT_BLAS_ENUM(STATUS_SUCCESS)
#define LT_STATUS_NOT_SUPPORTED TPRIMAT_BLAS_ENUM(STATUS_NOT_SUPPORTED)
#define LT_STATUS_INVALID_VALUE TPRIMAT_BLAS_ENUM(STATUS_INVALID_VALUE)
#define LT_OP_N TPRIMAT_BLAS_ENUM(OP_N)
#define LT_OP_T TPRIMAT_BLAS_ENUM(OP_T)
#define LT_COMPUTE_32F TPRIMAT_BLAS_ENUM(COMPUTE_32F)
#define LT_R_16BF TPRIMAT_LT_TYPE(R_16BF)
#define LT_R_32F TPRIMAT_LT_TYPE(R_32F)

namespace tprimat::backend::detail::blaslt {

#if TPRIMAT_GPU_HIP
/// gpu_info.gemm, and the library's name in messages.
inline constexpr const char* library_id = "hipblaslt";
inline constexpr const char* library_name = "hipBLASLt";
inline constexpr const char* call_prefix = "hipblasLt";  // of the calls a failure names
/// What a failed call or a shape with no algorithm adds: hipBLASLt's log says why.
inline constexpr const char* why_hint = " (HIPBLASLT_LOG_MASK=32 HIPBLASLT_LOG_LEVEL=5 prints why)";
inline constexpr const char* no_algorithm_hint =
    " on this GPU (HIPBLASLT_LOG_MASK=32 HIPBLASLT_LOG_LEVEL=5 prints why)";
inline constexpr const char* no_fp8_algorithm_hint = no_algorithm_hint;

/// hipblas-common's status names (hipblasStatusToString lives in libhipblas, not linked).
inline const char* status_name(hipblasStatus_t status) {
  switch (status) {
    case HIPBLAS_STATUS_SUCCESS: return "HIPBLAS_STATUS_SUCCESS";
    case HIPBLAS_STATUS_NOT_INITIALIZED: return "HIPBLAS_STATUS_NOT_INITIALIZED";
    case HIPBLAS_STATUS_ALLOC_FAILED: return "HIPBLAS_STATUS_ALLOC_FAILED";
    case HIPBLAS_STATUS_INVALID_VALUE: return "HIPBLAS_STATUS_INVALID_VALUE";
    case HIPBLAS_STATUS_MAPPING_ERROR: return "HIPBLAS_STATUS_MAPPING_ERROR";
    case HIPBLAS_STATUS_EXECUTION_FAILED: return "HIPBLAS_STATUS_EXECUTION_FAILED";
    case HIPBLAS_STATUS_INTERNAL_ERROR: return "HIPBLAS_STATUS_INTERNAL_ERROR";
    case HIPBLAS_STATUS_NOT_SUPPORTED: return "HIPBLAS_STATUS_NOT_SUPPORTED";
    case HIPBLAS_STATUS_ARCH_MISMATCH: return "HIPBLAS_STATUS_ARCH_MISMATCH";
    case HIPBLAS_STATUS_HANDLE_IS_NULLPTR: return "HIPBLAS_STATUS_HANDLE_IS_NULLPTR";
    case HIPBLAS_STATUS_INVALID_ENUM: return "HIPBLAS_STATUS_INVALID_ENUM";
    default: return "HIPBLAS_STATUS_UNKNOWN";
  }
}
inline std::string status_text(hipblasStatus_t status) {
  return std::string(status_name(status)) +
         (status == HIPBLAS_STATUS_NOT_SUPPORTED || status == HIPBLAS_STATUS_INVALID_VALUE ? why_hint
                                                                                          : "");
}
/// The heuristic's answers that mean "no candidate" (INVALID_VALUE: a type combination it has no
/// kernel for), which the caller turns into its own message.
inline bool no_candidate(hipblasStatus_t status) {
  return status == HIPBLAS_STATUS_NOT_SUPPORTED || status == HIPBLAS_STATUS_INVALID_VALUE;
}

/// hipBLASLt's type of an FP8 format: gfx942 computes in the fnuz ones, gfx950 in OCP's.
inline hipDataType fp8_type(kernels::Fp8Format f) {
  switch (f) {
    case kernels::Fp8Format::e4m3: return HIP_R_8F_E4M3;
    case kernels::Fp8Format::e5m2: return HIP_R_8F_E5M2;
    case kernels::Fp8Format::e4m3_fnuz: return HIP_R_8F_E4M3_FNUZ;
    case kernels::Fp8Format::e5m2_fnuz: return HIP_R_8F_E5M2_FNUZ;
  }
  return HIP_R_8F_E4M3_FNUZ;
}
/// The FP8 formats hipBLASLt takes depend on the device (its gcnArchName).
inline constexpr bool fp8_formats_need_device = true;
inline Fp8Formats fp8_formats(const std::string& arch) { return hipblaslt_fp8_formats(arch); }
/// What decides the FP8 formats: "gfx942:sramecc+:xnack-".
inline std::string device_arch(const gpuDeviceProp_t& prop) { return prop.gcnArchName; }
#else
inline constexpr const char* library_id = "cublaslt";
inline constexpr const char* library_name = "cuBLASLt";
inline constexpr const char* call_prefix = "cublasLt";  // of the calls a failure names
inline constexpr const char* no_algorithm_hint =
    "; leading dimensions and pointers must be multiples of 16 bytes";
inline constexpr const char* no_fp8_algorithm_hint =
    " (FP8 GEMMs need compute capability 8.9 or later)";

inline std::string status_text(cublasStatus_t status) {
  return std::string(cublasLtGetStatusName(status)) + " (" + cublasLtGetStatusString(status) + ")";
}
inline bool no_candidate(cublasStatus_t status) { return status == CUBLAS_STATUS_NOT_SUPPORTED; }

/// cuBLASLt's type of an FP8 format; the fnuz formats have none (check_fp8_shape refuses them
/// first).
inline cudaDataType_t fp8_type(kernels::Fp8Format f) {
  return f == kernels::Fp8Format::e5m2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3;
}
/// cuBLASLt takes the OCP formats on every device: a shape is refused the same with no GPU.
inline constexpr bool fp8_formats_need_device = false;
inline Fp8Formats fp8_formats(const std::string&) { return cublaslt_fp8_formats; }
inline std::string device_arch(const gpuDeviceProp_t& prop) {
  return "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
}
#endif

/// The library's type of a GEMM's C/D.
inline ltDataType_t data_type(OutType out) { return out == OutType::bf16 ? LT_R_16BF : LT_R_32F; }

}  // namespace tprimat::backend::detail::blaslt
