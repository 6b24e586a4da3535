// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Gpu's element-wise ops: each picks its kernel's pack width and grid, launches it and
// checks the launch (the kernels are in kernels/tprimat/kernels/).
#pragma once

#include <cstdint>
#include <type_traits>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/kernels/adamw.cuh"
#include "tprimat/kernels/attention_merge.cuh"
#include "tprimat/kernels/bias.cuh"
#include "tprimat/kernels/convert.cuh"
#include "tprimat/kernels/cross_entropy.cuh"
#include "tprimat/kernels/embedding.cuh"
#include "tprimat/kernels/reduce.cuh"
#include "tprimat/kernels/rmsnorm.cuh"
#include "tprimat/kernels/rope.cuh"
#include "tprimat/kernels/swiglu.cuh"

namespace tprimat::backend {
namespace detail {

/// A bf16 buffer as the bit patterns the split-master kernels work on (split_float.hpp).
inline std::uint16_t* bits(Gpu::bf16* p) { return reinterpret_cast<std::uint16_t*>(p); }
inline const std::uint16_t* bits(const Gpu::bf16* p) {
  return reinterpret_cast<const std::uint16_t*>(p);
}
static_assert(sizeof(Gpu::bf16) == sizeof(std::uint16_t));

/// Rotates x in place by the tables, or by their transpose (the backward).
inline void rope_rotate(Gpu::bf16* x, std::int64_t rows, int seq, int heads, int head_dim,
                        const float* cos_table, const float* sin_table, bool inverse,
                        Gpu::Stream stream) {
  using kernels::aligned_to;
  const int half = head_dim / 2;
  if (rows <= 0 || heads <= 0 || half <= 0) return;
  const float sign = inverse ? -1.0f : 1.0f;
  // One grid row per token: heads x half / V items, in blocks of at most 256 threads.
  const auto launch = [&]<int V>() {
    const int items = heads * (half / V);
    const int threads = kernels::row_threads(items, 256);
    const dim3 grid(static_cast<unsigned>(rows),
                    static_cast<unsigned>((items + threads - 1) / threads));
    kernels::rope_kernel<V>
        <<<grid, threads, 0, stream>>>(x, seq, heads, head_dim, cos_table, sin_table, sign);
  };
  const bool tables16 = aligned_to(cos_table, 16) && aligned_to(sin_table, 16);
  if (half % 8 == 0 && aligned_to(x, 16) && tables16)
    launch.template operator()<8>();
  else if (half % 4 == 0 && aligned_to(x, 8) && tables16)
    launch.template operator()<4>();
  else
    launch.template operator()<1>();
}

}  // namespace detail

static_assert(std::is_same_v<Gpu::bf16, gpu::bf16> && std::is_same_v<Gpu::Stream, gpu::Stream>,
              "tprimat: backend::Gpu and the kernels' gpu.cuh must agree on bf16 and the stream");

// Each op checks its launches only (bad configuration, missing kernel image): a fault inside a
// kernel surfaces at the next synchronisation, where the caller checks anyway, and a check here
// would need one and so break graph capture. Pack widths need aligned pointers (and row lengths
// that keep every row aligned); the one-element kernels take the rest.

TPRIMAT_GPU_INLINE void Gpu::embedding_forward(const std::int32_t* ids, std::int64_t n,
                                               const bf16* table, const std::uint16_t* table_lo,
                                               int hidden, float* out, Stream stream) {
  using kernels::aligned_to;
  if (n <= 0 || hidden <= 0) return;
  constexpr int threads = 256;
  const std::uint16_t* hi = detail::bits(table);
  if (hidden % 4 == 0 && aligned_to(hi, 8) && aligned_to(table_lo, 8) && aligned_to(out, 16)) {
    kernels::embedding_forward_kernel<4>
        <<<gpu::blocks_for(n * (hidden / 4), threads), threads, 0, stream>>>(ids, n, hi, table_lo,
                                                                             hidden, out);
  } else {
    kernels::embedding_forward_kernel<1>
        <<<gpu::blocks_for(n * hidden, threads), threads, 0, stream>>>(ids, n, hi, table_lo, hidden,
                                                                       out);
  }
  gpu_check(gpuGetLastError(), "embedding_forward");
}

TPRIMAT_GPU_INLINE void Gpu::embedding_backward(const std::int32_t* group_ids,
                                                const std::int32_t* offsets,
                                                const std::int32_t* positions,
                                                const std::int32_t* group_count,
                                                std::int64_t max_groups, const float* dout,
                                                int hidden, float* dtable, Stream stream) {
  using kernels::aligned_to;
  using kernels::row_threads;
  if (max_groups <= 0 || hidden <= 0) return;
  const unsigned grid = static_cast<unsigned>(max_groups);
  if (hidden % 4 == 0 && aligned_to(dout, 16) && aligned_to(dtable, 16)) {
    kernels::embedding_backward_kernel<4><<<grid, row_threads(hidden / 4, 256), 0, stream>>>(
        group_ids, offsets, positions, group_count, dout, hidden, dtable);
  } else {
    kernels::embedding_backward_kernel<1><<<grid, row_threads(hidden, 256), 0, stream>>>(
        group_ids, offsets, positions, group_count, dout, hidden, dtable);
  }
  gpu_check(gpuGetLastError(), "embedding_backward");
}

TPRIMAT_GPU_INLINE void Gpu::rmsnorm_forward(const float* x, const bf16* g,
                                             const std::uint16_t* g_lo, std::int64_t n, int h,
                                             float eps, bf16* y, float* rstd, Stream stream) {
  using kernels::aligned_to;
  using kernels::row_threads;
  if (n <= 0 || h <= 0) return;
  const std::uint16_t* g_hi = detail::bits(g);
  const unsigned grid = static_cast<unsigned>(n);
  if (h % 4 == 0 && aligned_to(x, 16) && aligned_to(g_hi, 8) && aligned_to(g_lo, 8) &&
      aligned_to(y, 8)) {
    const int threads = row_threads(h / 4, 256);
    constexpr int held = kernels::rmsnorm_forward_held_packs;
    if (h <= held * threads * 4)
      kernels::rmsnorm_forward_held_kernel<4, held>
          <<<grid, threads, 0, stream>>>(x, g_hi, g_lo, h, eps, y, rstd);
    else
      kernels::rmsnorm_forward_kernel<4>
          <<<grid, threads, 0, stream>>>(x, g_hi, g_lo, h, eps, y, rstd);
  } else {
    kernels::rmsnorm_forward_kernel<1>
        <<<grid, row_threads(h, 256), 0, stream>>>(x, g_hi, g_lo, h, eps, y, rstd);
  }
  gpu_check(gpuGetLastError(), "rmsnorm_forward");
}

TPRIMAT_GPU_INLINE void Gpu::rmsnorm_backward(const float* x, const bf16* g,
                                              const std::uint16_t* g_lo, const float* rstd,
                                              const float* dy, std::int64_t n, int h, float* dx,
                                              bf16* dx_bf16, float* dg, float* partials,
                                              Stream stream) {
  using kernels::aligned_to;
  using kernels::row_threads;
  if (n <= 0 || h <= 0) return;
  const std::uint16_t* g_hi = detail::bits(g);
  const std::int64_t chunks = n < kernels::rmsnorm_chunks ? n : kernels::rmsnorm_chunks;
  const unsigned grid = static_cast<unsigned>(chunks);
  const std::size_t smem =
      h <= kernels::rmsnorm_shared_columns ? std::size_t(h) * sizeof(float) : 0;
  if (h % 4 == 0 && aligned_to(x, 16) && aligned_to(g_hi, 8) && aligned_to(g_lo, 8) &&
      aligned_to(dy, 16) && aligned_to(dx, 16) && aligned_to(dx_bf16, 8)) {
    constexpr int held_threads = kernels::rmsnorm_held_threads;
    if (h <= held_threads * 4 && aligned_to(partials, 16))
      kernels::rmsnorm_backward_held_kernel<4>
          <<<grid, row_threads(h / 4, held_threads), 0, stream>>>(x, g_hi, g_lo, rstd, dy, n, h, dx,
                                                                  dx_bf16, partials);
    else
      kernels::rmsnorm_backward_kernel<4><<<grid, row_threads(h / 4, 256), smem, stream>>>(
          x, g_hi, g_lo, rstd, dy, n, h, dx, dx_bf16, partials);
  } else {
    kernels::rmsnorm_backward_kernel<1><<<grid, row_threads(h, 256), smem, stream>>>(
        x, g_hi, g_lo, rstd, dy, n, h, dx, dx_bf16, partials);
  }
  kernels::add_column_sums(partials, chunks, h, dg, stream);
  gpu_check(gpuGetLastError(), "rmsnorm_backward");
}

TPRIMAT_GPU_INLINE std::int64_t Gpu::rmsnorm_partials(std::int64_t n, int h) {
  return kernels::rmsnorm_partials(n, h);
}

TPRIMAT_GPU_INLINE void Gpu::rope_forward(bf16* x, std::int64_t rows, int seq, int heads,
                                          int head_dim, const float* cos_table,
                                          const float* sin_table, Stream stream) {
  detail::rope_rotate(x, rows, seq, heads, head_dim, cos_table, sin_table, false, stream);
  gpu_check(gpuGetLastError(), "rope_forward");
}

TPRIMAT_GPU_INLINE void Gpu::rope_backward(bf16* dx, std::int64_t rows, int seq, int heads,
                                           int head_dim, const float* cos_table,
                                           const float* sin_table, Stream stream) {
  detail::rope_rotate(dx, rows, seq, heads, head_dim, cos_table, sin_table, true, stream);
  gpu_check(gpuGetLastError(), "rope_backward");
}

TPRIMAT_GPU_INLINE void Gpu::swiglu_forward(const bf16* gate, const bf16* up, bf16* h,
                                            std::int64_t n, Stream stream) {
  using kernels::aligned_to;
  if (n <= 0) return;
  constexpr int threads = 256;
  if (aligned_to(gate, 16) && aligned_to(up, 16) && aligned_to(h, 16)) {
    kernels::swiglu_forward_kernel<8>
        <<<gpu::blocks_for((n + 7) / 8, threads), threads, 0, stream>>>(gate, up, h, n);
  } else {
    kernels::swiglu_forward_kernel<1>
        <<<gpu::blocks_for(n, threads), threads, 0, stream>>>(gate, up, h, n);
  }
  gpu_check(gpuGetLastError(), "swiglu_forward");
}

TPRIMAT_GPU_INLINE void Gpu::swiglu_backward(const bf16* gate, const bf16* up, const bf16* dh,
                                             bf16* dgate, bf16* dup, bf16* h, std::int64_t n,
                                             Stream stream) {
  using kernels::aligned_to;
  if (n <= 0) return;
  constexpr int threads = 256;
  auto launch = [&]<int V>() {
    const unsigned blocks = gpu::blocks_for((n + V - 1) / V, threads);
    if (h != nullptr)
      kernels::swiglu_backward_kernel<V, true>
          <<<blocks, threads, 0, stream>>>(gate, up, dh, dgate, dup, h, n);
    else
      kernels::swiglu_backward_kernel<V, false>
          <<<blocks, threads, 0, stream>>>(gate, up, dh, dgate, dup, h, n);
  };
  if (aligned_to(gate, 16) && aligned_to(up, 16) && aligned_to(dh, 16) && aligned_to(dgate, 16) &&
      aligned_to(dup, 16) && (h == nullptr || aligned_to(h, 16)))
    launch.template operator()<8>();
  else
    launch.template operator()<1>();
  gpu_check(gpuGetLastError(), "swiglu_backward");
}

TPRIMAT_GPU_INLINE void Gpu::bias_backward(const bf16* dy, std::int64_t rows, std::int64_t cols,
                                           float* dbias, float* partials, Stream stream) {
  using kernels::aligned_to;
  if (rows <= 0 || cols <= 0) return;
  std::int64_t chunks = 0;
  auto launch = [&]<int V>() {
    const kernels::BiasSpan span = kernels::bias_span(cols / V);
    const std::int64_t lanes = (rows + span.rows - 1) / span.rows;  // row groups of span.rows
    chunks = lanes < kernels::bias_chunks ? lanes : kernels::bias_chunks;
    const dim3 grid(static_cast<unsigned>(span.x_blocks), static_cast<unsigned>(chunks));
    kernels::bias_partials_kernel<V>
        <<<grid, kernels::bias_threads, 0, stream>>>(dy, rows, cols, span.rows, partials);
  };
  if (cols % 8 == 0 && aligned_to(dy, 16))
    launch.template operator()<8>();
  else if (cols % 2 == 0 && aligned_to(dy, 4))
    launch.template operator()<2>();
  else
    launch.template operator()<1>();
  kernels::add_column_sums(partials, chunks, cols, dbias, stream);
  gpu_check(gpuGetLastError(), "bias_backward");
}

TPRIMAT_GPU_INLINE std::int64_t Gpu::bias_partials(std::int64_t rows, std::int64_t cols) {
  return kernels::bias_partials(rows, cols);
}

TPRIMAT_GPU_INLINE void Gpu::cross_entropy(bf16* logits, const std::int32_t* targets,
                                           std::int64_t n, int vocab, float grad_scale,
                                           bool with_grad, float* row_loss, Stream stream) {
  if (n <= 0 || vocab <= 0) return;
  const kernels::RowLaunch l = kernels::row_launch(logits, n, vocab);
  if (l.packs_of_8)
    kernels::cross_entropy_kernel<8>
        <<<l.grid, l.threads, 0, stream>>>(logits, targets, vocab, grad_scale, with_grad, row_loss);
  else
    kernels::cross_entropy_kernel<1>
        <<<l.grid, l.threads, 0, stream>>>(logits, targets, vocab, grad_scale, with_grad, row_loss);
  gpu_check(gpuGetLastError(), "cross_entropy");
}

TPRIMAT_GPU_INLINE void Gpu::cross_entropy_stats(const bf16* logits, const std::int32_t* targets,
                                                 std::int64_t n, int vocab, int vocab_begin,
                                                 float* stats, Stream stream) {
  if (n <= 0 || vocab <= 0) return;
  const kernels::RowLaunch l = kernels::row_launch(logits, n, vocab);
  if (l.packs_of_8)
    kernels::cross_entropy_stats_kernel<8>
        <<<l.grid, l.threads, 0, stream>>>(logits, targets, vocab, vocab_begin, stats);
  else
    kernels::cross_entropy_stats_kernel<1>
        <<<l.grid, l.threads, 0, stream>>>(logits, targets, vocab, vocab_begin, stats);
  gpu_check(gpuGetLastError(), "cross_entropy_stats");
}

TPRIMAT_GPU_INLINE void Gpu::cross_entropy_combine(bf16* logits, const std::int32_t* targets,
                                                   std::int64_t n, int vocab, int vocab_begin,
                                                   const float* stats, int ranks, float grad_scale,
                                                   bool with_grad, float* row_loss, Stream stream) {
  if (n <= 0 || vocab <= 0) return;
  const kernels::RowLaunch l = kernels::row_launch(logits, n, vocab);
  if (l.packs_of_8)
    kernels::cross_entropy_combine_kernel<8><<<l.grid, l.threads, 0, stream>>>(
        logits, targets, n, vocab, vocab_begin, stats, ranks, grad_scale, with_grad, row_loss);
  else
    kernels::cross_entropy_combine_kernel<1><<<l.grid, l.threads, 0, stream>>>(
        logits, targets, n, vocab, vocab_begin, stats, ranks, grad_scale, with_grad, row_loss);
  gpu_check(gpuGetLastError(), "cross_entropy_combine");
}

// The global sums run on a fixed grid of reduce_partials blocks whatever n is, so the order of
// the additions depends on n alone; one block then adds the partials in order.

TPRIMAT_GPU_INLINE void Gpu::reduce_sum_partials(const float* x, std::int64_t n, bool squares,
                                                 double* partials, Stream stream) {
  constexpr int threads = kernels::reduce_threads;
  if (kernels::aligned_to(x, 16))
    kernels::reduce_sum_partials_kernel<4>
        <<<reduce_partials, threads, 0, stream>>>(x, n, squares, partials);
  else
    kernels::reduce_sum_partials_kernel<1>
        <<<reduce_partials, threads, 0, stream>>>(x, n, squares, partials);
  gpu_check(gpuGetLastError(), "reduce_sum_partials");
}

TPRIMAT_GPU_INLINE void Gpu::sum_partials(const double* partials, int count, double* out,
                                          Stream stream) {
  kernels::reduce_sum_final_kernel<double>
      <<<1, kernels::reduce_threads, 0, stream>>>(partials, count, false, out);
  gpu_check(gpuGetLastError(), "sum_partials");
}

TPRIMAT_GPU_INLINE void Gpu::reduce_sum(const float* x, std::int64_t n, bool squares,
                                        bool accumulate, double* out, double* partials,
                                        Stream stream) {
  reduce_sum_partials(x, n, squares, partials, stream);
  kernels::reduce_sum_final_kernel<double>
      <<<1, kernels::reduce_threads, 0, stream>>>(partials, reduce_partials, accumulate, out);
  gpu_check(gpuGetLastError(), "reduce_sum");
}

TPRIMAT_GPU_INLINE void Gpu::to_bf16(const float* src, bf16* dst, std::int64_t n, Stream stream) {
  using kernels::aligned_to;
  if (n <= 0) return;
  constexpr int threads = 256;
  if (aligned_to(src, 16) && aligned_to(dst, 8))
    kernels::to_bf16_kernel<4>
        <<<gpu::blocks_for((n + 3) / 4, threads), threads, 0, stream>>>(src, dst, n);
  else
    kernels::to_bf16_kernel<1><<<gpu::blocks_for(n, threads), threads, 0, stream>>>(src, dst, n);
  gpu_check(gpuGetLastError(), "to_bf16");
}

TPRIMAT_GPU_INLINE void Gpu::add_bf16(const float* residual, const bf16* y, float* out,
                                      std::int64_t n, Stream stream) {
  using kernels::aligned_to;
  if (n <= 0) return;
  constexpr int threads = 256;
  if (aligned_to(residual, 16) && aligned_to(y, 8) && aligned_to(out, 16))
    kernels::add_bf16_kernel<4>
        <<<gpu::blocks_for((n + 3) / 4, threads), threads, 0, stream>>>(residual, y, out, n);
  else
    kernels::add_bf16_kernel<1>
        <<<gpu::blocks_for(n, threads), threads, 0, stream>>>(residual, y, out, n);
  gpu_check(gpuGetLastError(), "add_bf16");
}

TPRIMAT_GPU_INLINE void Gpu::accumulate(float* x, const float* y, std::int64_t n,
                                        Stream stream) {
  using kernels::aligned_to;
  if (n <= 0) return;
  constexpr int threads = 256;
  if (aligned_to(x, 16) && aligned_to(y, 16))
    kernels::accumulate_kernel<4>
        <<<gpu::blocks_for((n + 3) / 4, threads), threads, 0, stream>>>(x, y, n);
  else
    kernels::accumulate_kernel<1><<<gpu::blocks_for(n, threads), threads, 0, stream>>>(x, y, n);
  gpu_check(gpuGetLastError(), "accumulate");
}

TPRIMAT_GPU_INLINE void Gpu::attention_merge(bf16* o, float* lse, const bf16* o_part,
                                             const float* lse_part, std::int64_t rows, int heads,
                                             int head_dim, Stream stream) {
  if (rows <= 0) return;
  kernels::attention_merge_kernel<<<static_cast<unsigned>(rows), 256, 0, stream>>>(
      o, lse, o_part, lse_part, rows, heads, head_dim);
  gpu_check(gpuGetLastError(), "attention_merge");
}

TPRIMAT_GPU_INLINE void Gpu::accumulate_bf16(bf16* x, const bf16* y, std::int64_t n,
                                             Stream stream) {
  if (n <= 0) return;
  constexpr int threads = 256;
  kernels::accumulate_bf16_kernel<<<gpu::blocks_for(n, threads), threads, 0, stream>>>(x, y, n);
  gpu_check(gpuGetLastError(), "accumulate_bf16");
}

TPRIMAT_GPU_INLINE void Gpu::split_master(const float* src, bf16* weights, std::uint16_t* master_lo,
                                          std::int64_t n, Stream stream) {
  if (n <= 0) return;
  constexpr int threads = 256;
  kernels::split_kernel<<<gpu::blocks_for(n, threads), threads, 0, stream>>>(
      src, detail::bits(weights), master_lo, n);
  gpu_check(gpuGetLastError(), "split_master");
}

TPRIMAT_GPU_INLINE void Gpu::adamw(bf16* weights, std::uint16_t* master_lo, const float* grads,
                                   float* m, float* v, std::int64_t n,
                                   const std::int64_t* tensor_ends, const std::uint8_t* decay,
                                   int tensors, const OptimizerScalars* scalars,
                                   const double* grad_sum_squares, Stream stream) {
  using kernels::aligned_to;
  if (n <= 0) return;
  constexpr int threads = 256;
  std::uint16_t* hi = detail::bits(weights);
  if (aligned_to(hi, 8) && aligned_to(master_lo, 8) && aligned_to(grads, 16) && aligned_to(m, 16) &&
      aligned_to(v, 16))
    kernels::adamw_kernel<OptimizerScalars, 4>
        <<<gpu::blocks_for((n + 3) / 4, threads), threads, 0, stream>>>(
            hi, master_lo, grads, m, v, n, tensor_ends, decay, tensors, scalars, grad_sum_squares);
  else
    kernels::adamw_kernel<OptimizerScalars, 1><<<gpu::blocks_for(n, threads), threads, 0, stream>>>(
        hi, master_lo, grads, m, v, n, tensor_ends, decay, tensors, scalars, grad_sum_squares);
  gpu_check(gpuGetLastError(), "adamw");
}

}  // namespace tprimat::backend
