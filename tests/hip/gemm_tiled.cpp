// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// HIP check of src/cuda/gemm_tiled.cu's kernel: the portable GEMM, bf16 and fp32 output.
#include "tprimat/kernels/gemm_tiled.cuh"

#include "launchers.hpp"

namespace tprimat::hip_check {
namespace {

const AnyLauncher launchers[] = {
    any(&kernels::gemm_tiled<gpu::bf16>),
    any(&kernels::gemm_tiled<float>),
};

}  // namespace

std::span<const AnyLauncher> gemm_tiled_launchers() { return launchers; }

}  // namespace tprimat::hip_check
