// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Gpu's memory and devices, and gpu_check, compiled once for the in-tree binaries.
#define TPRIMAT_GPU_LIBRARY_TU 1

#include "tprimat/backend/gpu/memory.hpp"
