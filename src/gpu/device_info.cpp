// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Gpu::device_info, compiled once for the in-tree binaries (by nvcc's host compiler for
// CUDA, by hipcc for HIP).
#define TPRIMAT_GPU_LIBRARY_TU 1

#include "tprimat/backend/gpu/device_info.hpp"
