// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::TiledGemm (the portable GEMM), compiled once for the in-tree binaries.
#define TPRIMAT_GPU_LIBRARY_TU 1

#include "tprimat/backend/gpu/gemm_tiled.cuh"

TPRIMAT_GPU_INSTANTIATE_GEMMS(tprimat::backend::TiledGemm);
