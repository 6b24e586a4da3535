// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// How many partials the deterministic reductions write (RMSNorm's dg and a bias gradient's rows,
// a global sum's doubles, the vocab-parallel loss's statistics a row): host code, so that the
// engine's buffer table can size their buffers without a GPU compiler.
#pragma once

#include <cstdint>

namespace tprimat::kernels {

/// Row chunks of the backward's dg: each block reduces every rmsnorm_chunks-th row into its own
/// [h] partial row. 256 blocks of 1024 threads are two rounds of an H100 or H200 (132 SMs, one
/// such block each) with the rows split evenly, and the partials (4 MiB at h = 4096) and their
/// column sum stay small beside the 150 MB a 2048-token backward moves.
inline constexpr std::int64_t rmsnorm_chunks = 256;

/// Row chunks (grid.y) of a bias gradient's first pass, at most: a block of 1024 threads each,
/// about one per SM of an H100 or H200, and partials of 1/16 of the gradient's bytes at 4,096
/// rows (a narrow bias's blocks read several rows at once: kernels/bias.cuh).
inline constexpr std::int64_t bias_chunks = 128;

/// Blocks of a global sum's first pass (Gpu::reduce_sum): a fixed grid, so that the order of
/// the additions, and the sum, is the same whatever the length; one double each.
inline constexpr std::int64_t sum_partials = 1024;

/// Per-row statistics of one vocabulary slice of the vocab-parallel loss: {max, sum exp(x - max),
/// target logit or 0 when the target lies in another rank's slice}.
inline constexpr int cross_entropy_stats_per_row = 3;

/// Floats of RMSNorm backward's partials for n rows of width h.
constexpr std::int64_t rmsnorm_partials(std::int64_t n, std::int64_t h) {
  return (n < rmsnorm_chunks ? n : rmsnorm_chunks) * h;
}

/// Floats of a bias gradient's partials for a [rows, cols] gradient.
constexpr std::int64_t bias_partials(std::int64_t rows, std::int64_t cols) {
  return (rows < bias_chunks ? rows : bias_chunks) * cols;
}

}  // namespace tprimat::kernels
