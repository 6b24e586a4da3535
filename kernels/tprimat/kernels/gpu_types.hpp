// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// gpu::Stream and gpu::bf16 of the platform (platform.hpp): the runtime and bf16 headers, no
// device code, so host code compiled by any C++ compiler may include it.
#pragma once

#include "tprimat/kernels/platform.hpp"

#if TPRIMAT_GPU_HIP
#include <hip/hip_runtime.h>
#if __has_include(<hip/hip_bf16.h>)
#include <hip/hip_bf16.h>
#define TPRIMAT_HIP_BF16 1
#else
#include <hip/hip_bfloat16.h>
#endif
#else
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#endif

namespace tprimat::gpu {

#if TPRIMAT_GPU_HIP
using Stream = hipStream_t;
#if defined(TPRIMAT_HIP_BF16)
using bf16 = __hip_bfloat16;  // ROCm 6
#else
using bf16 = hip_bfloat16;  // ROCm 5
#endif
#else
using Stream = cudaStream_t;
using bf16 = __nv_bfloat16;
#endif

}  // namespace tprimat::gpu
