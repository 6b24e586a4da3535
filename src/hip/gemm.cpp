// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Gpu's GEMMs (hipBLASLt's bf16 and FP8 where the build found hipBLASLt, else the tiled
// fallback), compiled once for the in-tree binaries.
#define TPRIMAT_GPU_LIBRARY_TU 1

#include "tprimat/backend/hip/gemm.hpp"

TPRIMAT_GPU_INSTANTIATE_GEMMS(tprimat::backend::Gpu);

#if defined(TPRIMAT_HAVE_HIPBLASLT)
#include "tprimat/backend/blaslt/fp8_gemm.hpp"

TPRIMAT_CUDA_INSTANTIATE_FP8_GEMMS();
#endif
