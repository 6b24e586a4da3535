// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// HIP check of src/cuda/flash_attention.cu's kernels: both passes at the four head dims it serves.
#include "tprimat/kernels/flash_attention.cuh"

#include "launchers.hpp"

namespace tprimat::hip_check {
namespace {

// HIP compiles flash_attention.cuh's scalar path (the CUDA build's is mma.sync).
const AnyLauncher launchers[] = {
    any(&kernels::flash_attention_forward<16>),  any(&kernels::flash_attention_forward<32>),
    any(&kernels::flash_attention_forward<64>),  any(&kernels::flash_attention_forward<128>),
    any(&kernels::flash_attention_backward<16>), any(&kernels::flash_attention_backward<32>),
    any(&kernels::flash_attention_backward<64>), any(&kernels::flash_attention_backward<128>),
};

}  // namespace

std::span<const AnyLauncher> flash_attention_launchers() { return launchers; }

}  // namespace tprimat::hip_check
