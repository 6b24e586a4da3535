// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// gpu.cuh's wave-size guard: compiled for gfx90a (wave64) it builds; for a wave32 target it must
// stop with the guard's message instead of compiling reductions over the wrong width.
// EXPECT: tprimat: HIP device pass for an architecture other than gfx9
#include "tprimat/kernels/gpu.cuh"

__global__ void warp_sum_kernel(float* p) { *p = tprimat::gpu::warp_sum(*p); }
