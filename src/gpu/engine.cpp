// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The device engine (make_device_transformer<Gpu>), compiled once for the in-tree binaries.
#define TPRIMAT_GPU_LIBRARY_TU 1

#include "tprimat/train/device/engine.hpp"

#include "tprimat/backend/gpu.hpp"

template std::unique_ptr<tprimat::train::DeviceTransformer>
tprimat::train::make_device_transformer<tprimat::backend::Gpu>(
    const tprimat::model::Dims&, tprimat::train::StepShape, const tprimat::train::OptimizerConfig&,
    std::uint64_t, tprimat::train::DeviceOptions, tprimat::train::DeviceGroups);
