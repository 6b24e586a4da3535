// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Gpu's cuBLASLt GEMMs (bf16 and FP8), compiled once for the in-tree binaries.
#define TPRIMAT_GPU_LIBRARY_TU 1

#include "tprimat/backend/cuda/gemm.hpp"

#include "tprimat/backend/blaslt/fp8_gemm.hpp"

TPRIMAT_GPU_INSTANTIATE_GEMMS(tprimat::backend::Gpu);
TPRIMAT_CUDA_INSTANTIATE_FP8_GEMMS();
