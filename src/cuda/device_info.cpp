// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Cuda::device_info, compiled once for the in-tree binaries.
#define TPRIMAT_GPU_LIBRARY_TU 1

#include "tprimat/backend/cuda/device_info.hpp"
