// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Gpu's FP8 casts and scale updates, compiled once for the in-tree binaries.
#define TPRIMAT_GPU_LIBRARY_TU 1

#include "tprimat/backend/gpu/fp8_cast.cuh"
