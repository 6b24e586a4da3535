// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Introspection of Cuda::gemm's plan cache (src/cuda/gemm.cpp), for tests and benchmarks.
#pragma once

#include <cstddef>

namespace tprimat::backend {

/// Plans (cuBLASLt descriptors + heuristic algorithm) Cuda::gemm holds, over all devices: one per
/// distinct (shape, transposes, leading dimensions, alignments, output type, beta != 0, bias,
/// device). A repeated call adds none.
std::size_t gemm_cached_plans();

}  // namespace tprimat::backend
