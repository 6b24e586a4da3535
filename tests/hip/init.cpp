// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// HIP check of src/cuda/init.cu's kernels: initialisation, fills and row clears.
#include "tprimat/kernels/init.cuh"

#include "launchers.hpp"

namespace tprimat::hip_check {
namespace {

const AnyLauncher launchers[] = {
    any(&kernels::launch_init_normal),
    any(&kernels::launch_fill),
    any(&kernels::launch_zero_rows),
};

}  // namespace

std::span<const AnyLauncher> init_launchers() { return launchers; }

}  // namespace tprimat::hip_check
