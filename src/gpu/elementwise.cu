// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Gpu's element-wise ops: each forwards to its kernel family's launcher, then checks it.

#include <type_traits>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/kernels/adamw.cuh"
#include "tprimat/kernels/bias.cuh"
#include "tprimat/kernels/convert.cuh"
#include "tprimat/kernels/cross_entropy.cuh"
#include "tprimat/kernels/embedding.cuh"
#include "tprimat/kernels/reduce.cuh"
#include "tprimat/kernels/rmsnorm.cuh"
#include "tprimat/kernels/rope.cuh"
#include "tprimat/kernels/swiglu.cuh"

namespace tprimat::backend {
namespace {

/// A bf16 buffer as the bit patterns the split-master kernels work on (split_float.hpp).
std::uint16_t* bits(Gpu::bf16* p) { return reinterpret_cast<std::uint16_t*>(p); }
const std::uint16_t* bits(const Gpu::bf16* p) { return reinterpret_cast<const std::uint16_t*>(p); }
static_assert(sizeof(Gpu::bf16) == sizeof(std::uint16_t));

}  // namespace

static_assert(std::is_same_v<Gpu::bf16, gpu::bf16> && std::is_same_v<Gpu::Stream, gpu::Stream>,
              "tprimat: backend::Gpu and the kernels' gpu.cuh must agree on bf16 and the stream");

// Each op checks its launches only (bad configuration, missing kernel image): a fault inside a
// kernel surfaces at the next synchronisation, where the caller checks anyway, and a check here
// would need one and so break graph capture.

void Gpu::embedding_forward(const std::int32_t* ids, std::int64_t n, const bf16* table,
                            const std::uint16_t* table_lo, int hidden, float* out, Stream stream) {
  kernels::embedding_forward(ids, n, bits(table), table_lo, hidden, out, stream);
  gpu_check(gpuGetLastError(), "embedding_forward");
}

void Gpu::embedding_backward(const std::int32_t* group_ids, const std::int32_t* offsets,
                              const std::int32_t* positions, const std::int32_t* group_count,
                              std::int64_t max_groups, const float* dout, int hidden, float* dtable,
                              Stream stream) {
  kernels::embedding_backward(group_ids, offsets, positions, group_count, max_groups, dout, hidden,
                              dtable, stream);
  gpu_check(gpuGetLastError(), "embedding_backward");
}

void Gpu::rmsnorm_forward(const float* x, const bf16* g, const std::uint16_t* g_lo,
                          std::int64_t n, int h, float eps, bf16* y, float* rstd, Stream stream) {
  kernels::rmsnorm_forward(x, bits(g), g_lo, n, h, eps, y, rstd, stream);
  gpu_check(gpuGetLastError(), "rmsnorm_forward");
}

void Gpu::rmsnorm_backward(const float* x, const bf16* g, const std::uint16_t* g_lo,
                           const float* rstd, const float* dy, std::int64_t n, int h, float* dx,
                           bf16* dx_bf16, float* dg, float* partials, Stream stream) {
  kernels::rmsnorm_backward(x, bits(g), g_lo, rstd, dy, n, h, dx, dx_bf16, dg, partials, stream);
  gpu_check(gpuGetLastError(), "rmsnorm_backward");
}

std::int64_t Gpu::rmsnorm_partials(std::int64_t n, int h) {
  return kernels::rmsnorm_partials(n, h);
}

void Gpu::rope_forward(bf16* x, std::int64_t rows, int seq, int heads, int head_dim,
                        const float* cos_table, const float* sin_table, Stream stream) {
  kernels::rope_forward(x, rows, seq, heads, head_dim, cos_table, sin_table, stream);
  gpu_check(gpuGetLastError(), "rope_forward");
}

void Gpu::rope_backward(bf16* dx, std::int64_t rows, int seq, int heads, int head_dim,
                         const float* cos_table, const float* sin_table, Stream stream) {
  kernels::rope_backward(dx, rows, seq, heads, head_dim, cos_table, sin_table, stream);
  gpu_check(gpuGetLastError(), "rope_backward");
}

void Gpu::swiglu_forward(const bf16* gate, const bf16* up, bf16* h, std::int64_t n,
                          Stream stream) {
  kernels::swiglu_forward(gate, up, h, n, stream);
  gpu_check(gpuGetLastError(), "swiglu_forward");
}

void Gpu::swiglu_backward(const bf16* gate, const bf16* up, const bf16* dh, bf16* dgate, bf16* dup,
                          bf16* h, std::int64_t n, Stream stream) {
  kernels::swiglu_backward(gate, up, dh, dgate, dup, h, n, stream);
  gpu_check(gpuGetLastError(), "swiglu_backward");
}

void Gpu::bias_backward(const bf16* dy, std::int64_t rows, std::int64_t cols, float* dbias,
                         float* partials, Stream stream) {
  kernels::bias_backward(dy, rows, cols, dbias, partials, stream);
  gpu_check(gpuGetLastError(), "bias_backward");
}

std::int64_t Gpu::bias_partials(std::int64_t rows, std::int64_t cols) {
  return kernels::bias_partials(rows, cols);
}

void Gpu::cross_entropy(bf16* logits, const std::int32_t* targets, std::int64_t n, int vocab,
                         float grad_scale, bool with_grad, float* row_loss, Stream stream) {
  kernels::cross_entropy(logits, targets, n, vocab, grad_scale, with_grad, row_loss, stream);
  gpu_check(gpuGetLastError(), "cross_entropy");
}

static_assert(Gpu::cross_entropy_stats_per_row == kernels::cross_entropy_stats_per_row);

void Gpu::cross_entropy_stats(const bf16* logits, const std::int32_t* targets, std::int64_t n,
                              int vocab, int vocab_begin, float* stats, Stream stream) {
  kernels::cross_entropy_stats(logits, targets, n, vocab, vocab_begin, stats, stream);
  gpu_check(gpuGetLastError(), "cross_entropy_stats");
}

void Gpu::cross_entropy_combine(bf16* logits, const std::int32_t* targets, std::int64_t n,
                                int vocab, int vocab_begin, const float* stats, int ranks,
                                float grad_scale, bool with_grad, float* row_loss,
                                Stream stream) {
  kernels::cross_entropy_combine(logits, targets, n, vocab, vocab_begin, stats, ranks, grad_scale,
                                 with_grad, row_loss, stream);
  gpu_check(gpuGetLastError(), "cross_entropy_combine");
}

void Gpu::reduce_sum(const float* x, std::int64_t n, bool squares, bool accumulate, double* out,
                      double* partials, Stream stream) {
  kernels::reduce_sum(x, n, squares, accumulate, out, partials, reduce_partials, stream);
  gpu_check(gpuGetLastError(), "reduce_sum");
}

void Gpu::reduce_sum_partials(const float* x, std::int64_t n, bool squares, double* partials,
                               Stream stream) {
  kernels::reduce_sum_partials(x, n, squares, partials, reduce_partials, stream);
  gpu_check(gpuGetLastError(), "reduce_sum_partials");
}

void Gpu::sum_partials(const double* partials, int count, double* out, Stream stream) {
  kernels::sum_partials(partials, count, false, out, stream);
  gpu_check(gpuGetLastError(), "sum_partials");
}

void Gpu::to_bf16(const float* src, bf16* dst, std::int64_t n, Stream stream) {
  kernels::to_bf16(src, dst, n, stream);
  gpu_check(gpuGetLastError(), "to_bf16");
}

void Gpu::split_master(const float* src, bf16* weights, std::uint16_t* master_lo, std::int64_t n,
                       Stream stream) {
  kernels::split(src, bits(weights), master_lo, n, stream);
  gpu_check(gpuGetLastError(), "split_master");
}

void Gpu::adamw(bf16* weights, std::uint16_t* master_lo, const float* grads, float* m, float* v,
                std::int64_t n, const std::int64_t* tensor_ends, const std::uint8_t* decay,
                int tensors, const OptimizerScalars* scalars, const double* grad_sum_squares,
                Stream stream) {
  kernels::adamw(bits(weights), master_lo, grads, m, v, n, tensor_ends, decay, tensors, scalars,
                 grad_sum_squares, stream);
  gpu_check(gpuGetLastError(), "adamw");
}

}  // namespace tprimat::backend
