// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// DeviceTransformer<Gpu>, the device engine, compiled once for the in-tree binaries.
#define TPRIMAT_GPU_LIBRARY_TU 1

#include "tprimat/train/device/engine.hpp"

#include "tprimat/backend/gpu.hpp"

template class tprimat::train::DeviceTransformer<tprimat::backend::Gpu>;
