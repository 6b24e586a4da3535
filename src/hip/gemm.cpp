// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Hip's GEMM (the tiled fallback), compiled once for the in-tree binaries.
#define TPRIMAT_GPU_LIBRARY_TU 1

#include "tprimat/backend/hip/gemm.hpp"

TPRIMAT_GPU_INSTANTIATE_GEMMS(tprimat::backend::Hip);
