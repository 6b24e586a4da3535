// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// TPRIMAT_GPU_HIP: which GPU platform this TU is compiled for, without any runtime header.
#pragma once

// HIP (1) when hipcc compiles the TU, or a C++ compiler with ROCm's HIP headers (hip::host
// defines __HIP_PLATFORM_AMD__); CUDA (0) otherwise. A build has one GPU platform.
#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
#define TPRIMAT_GPU_HIP 1
#else
#define TPRIMAT_GPU_HIP 0
#endif
