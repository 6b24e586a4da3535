// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Introspection of Gpu::gemm's plan cache (backend/cuda/gemm.hpp), for tests and benchmarks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tprimat::backend {

/// Plans (cuBLASLt descriptors + heuristic algorithm) Gpu::gemm holds, over all devices: one per
/// distinct (shape, transposes, leading dimensions, alignments, output type, beta != 0, bias,
/// device). A repeated call adds none.
std::size_t gemm_cached_plans();

/// Of the plans Gpu::gemm holds, how many had their candidates timed (blaslt/tuning.hpp) and how
/// many of those run another algorithm than the heuristic's first.
struct GemmTuning {
  std::size_t timed = 0, changed = 0;
};
GemmTuning gemm_tuning();

/// A Gpu::gemm call as its plan cache sees it (fields as Gpu::gemm's arguments; `accumulate`
/// for beta != 0, which Gpu::gemm_add always is).
struct GemmQuery {
  bool trans_a = false, trans_b = false;
  std::int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  bool fp32_out = false, accumulate = false, bias = false;
};

/// The cuBLASLt algorithm cached for that call on the current device (chosen at its first run),
/// read-only: "algo=<id> tile=<t> stages=<s> splitk=<n> reduction=<r>
/// swizzle=<0|1> custom=<c> cluster=<c>", tile, stages, reduction and cluster being values of
/// cublasLt.h's cublasLtMatmulTile_t, cublasLtMatmulStages_t, cublasLtReductionScheme_t and
/// cublasLtClusterShape_t; then " rank=<r>", its place in the heuristic's order (-1: not timed),
/// and " of=<n>", the candidates timed.
/// Empty when no such call ran. Pointer alignments are not asked: the
/// most aligned matching plan is described.
std::string gemm_algorithm(const GemmQuery& query);

}  // namespace tprimat::backend
