// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The ends of the CPU engine's model: the token embedding (first stage), and the final norm, LM
// head and cross-entropy (last stage), vocab-parallel under TP; forward and backward.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

#include <Eigen/Core>

#include "tprimat/train/cpu/activations.hpp"
#include "tprimat/train/cpu/aligned_vector.hpp"
#include "tprimat/train/cpu/tensor_parallel.hpp"
#include "tprimat/train/rank_plan.hpp"

namespace tprimat::train::cpu {

/// The vocab-parallel cross-entropy's row statistics under TP: [n] row maxima, [2n] the
/// softmax denominators and target logits (none without TP).
template <class T>
struct LossScratch {
  AlignedVector<T> row_max, sums;

  void allocate(std::int64_t n, bool tensor_parallel) {
    if (!tensor_parallel) return;
    row_max.resize(n);
    sums.resize(2 * n);
  }
  std::size_t elements() const { return row_max.size() + sums.size(); }
};

/// What the embedding and the head read: the rank's plan (its vocabulary slice), the flat
/// weights and gradients, the TP group and the scratch, lent for one pass.
template <class Backend, class T>
struct HeadResources {
  const RankPlan& plan;
  T* params;
  T* grads;
  TensorParallel<Backend, T>& tp;
  LossScratch<T>& loss;
  BackwardScratch<T>& scratch;
};

/// The first stage's input: the embeddings of m.inputs into x [rows, hidden]. Under TP the
/// embedding is vocab-parallel: the rank owning a token's row contributes it, the others zeros,
/// summed over TP (to this rank's rows under sequence parallelism).
template <class Backend, class T>
void embedding_forward(const HeadResources<Backend, T>& r, const MicroBatchActivations<T>& m,
                       T* x) {
  const RankPlan& p = r.plan;
  const std::int64_t n = p.n, h = p.d.hidden;
  const T* embedding = r.params + p.table.embedding;
  if (!r.tp.splits()) {
    Backend::embedding_forward(m.inputs.data(), n, embedding, h, x);
    return;
  }
  T* rows = r.tp.partial_buffer(x);  // all n rows, summed to this rank's
  for (std::int64_t t = 0; t < n; ++t) {
    const std::int64_t row = m.inputs[t] - p.vocab_begin;
    if (row >= 0 && row < p.d.vocab)
      std::copy_n(embedding + row * h, h, rows + t * h);
    else
      std::fill_n(rows + t * h, h, T(0));
  }
  r.tp.row_parallel_sum(rows, nullptr, x);
}

/// Backward of embedding_forward: scratch.dx, the gradient of the first layer's input, ADDED to
/// the embedding rows of the step's tokens (under TP only the rows this rank owns, of every
/// token, gathered under sequence parallelism).
template <class Backend, class T>
void embedding_backward(const HeadResources<Backend, T>& r, const MicroBatchActivations<T>& m) {
  const RankPlan& p = r.plan;
  const std::int64_t n = p.n, h = p.d.hidden;
  T* d_embedding = r.grads + p.table.embedding;
  if (!r.tp.splits()) {
    Backend::embedding_backward(m.inputs.data(), n, r.scratch.dx.data(), h, d_embedding);
    return;
  }
  const T* dx = r.tp.full_residual_grad(r.scratch.dx.data());
  for (std::int64_t t = 0; t < n; ++t) {
    const std::int64_t row = m.inputs[t] - p.vocab_begin;
    if (row >= 0 && row < p.d.vocab) Backend::add(d_embedding + row * h, dx + t * h, h);
  }
}

/// Megatron's vocab-parallel cross-entropy: each rank holds logits [n, vocab / TP]; the row max,
/// the softmax denominator and the target logit are reduced over TP ([n] and [2n] numbers per
/// micro-batch), so the full [n, vocab] logits never exist on one rank. With `with_grad` the
/// logits become grad_scale times the loss sum's gradient.
template <class Backend, class T>
double vocab_parallel_cross_entropy(const HeadResources<Backend, T>& r,
                                    MicroBatchActivations<T>& m, T grad_scale, bool with_grad) {
  const std::int64_t n = r.plan.n, v = r.plan.d.vocab, vocab_begin = r.plan.vocab_begin;
  using Row = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
  T* logits = m.logits.data();
  const std::int32_t* targets = m.targets.data();
  auto& row_max = r.loss.row_max;
  auto& sums = r.loss.sums;
  for (std::int64_t t = 0; t < n; ++t) row_max[t] = Row(logits + t * v, v).maxCoeff();
  r.tp.ops().all_reduce_max(std::span<T>(row_max.data(), n));
  for (std::int64_t t = 0; t < n; ++t) {
    Row row(logits + t * v, v);
    const std::int64_t target = targets[t] - vocab_begin;
    const bool mine = target >= 0 && target < v;
    sums[2 * t + 1] = mine ? row[target] : T(0);
    if (with_grad) {
      row = (row - row_max[t]).exp();
      sums[2 * t] = row.sum();
    } else {
      sums[2 * t] = (row - row_max[t]).exp().sum();
    }
  }
  r.tp.ops().all_reduce_sum(std::span<T>(sums.data(), 2 * n));
  double total = 0;
  for (std::int64_t t = 0; t < n; ++t) {
    const T sum = sums[2 * t];
    total += static_cast<double>(row_max[t]) + std::log(static_cast<double>(sum)) - sums[2 * t + 1];
    if (!with_grad) continue;
    Row row(logits + t * v, v);
    row *= grad_scale / sum;
    const std::int64_t target = targets[t] - vocab_begin;
    if (target >= 0 && target < v) row[target] -= grad_scale;
  }
  return total;
}

/// The last stage: final RMSNorm of the stage's output m.x_final, the LM head (column-parallel:
/// this rank's vocabulary slice; the embedding transposed where tied) and the cross-entropy over
/// m.targets. Returns the loss sum; with `with_grad` the logits hold its gradient, times
/// grad_scale.
template <class Backend, class T>
double head_forward(const HeadResources<Backend, T>& r, MicroBatchActivations<T>& m,
                    double grad_scale, bool with_grad) {
  const RankPlan& p = r.plan;
  const std::int64_t n = p.n, h = p.d.hidden, v = p.d.vocab;
  r.tp.norm_forward(m.x_final.data(), r.params + p.table.final_norm, m.xn_final.data(),
                    m.rstd_final.data());
  if (p.full.tied_embeddings)  // logits = xn E^T, E [vocab, hidden]
    Backend::gemm(false, true, n, v, h, T(1), m.xn_final.data(), h, r.params + p.table.embedding,
                  h, T(0), m.logits.data(), v);
  else
    Backend::gemm(false, false, n, v, h, T(1), m.xn_final.data(), h, r.params + p.table.head, v,
                  T(0), m.logits.data(), v);
  if (r.tp.splits())
    return vocab_parallel_cross_entropy(r, m, static_cast<T>(grad_scale), with_grad);
  return Backend::cross_entropy(m.logits.data(), m.targets.data(), n, p.full.vocab,
                                static_cast<T>(grad_scale), with_grad);
}

/// Backward of head_forward: the logits' gradient (left by the loss) into the head's (or the
/// tied embedding's) gradient and through the final norm into scratch.dx, the gradient of the
/// stage's output. Each column-parallel layer's input gradient is a partial sum over TP.
template <class Backend, class T>
void head_backward(const HeadResources<Backend, T>& r, const MicroBatchActivations<T>& m) {
  const RankPlan& p = r.plan;
  const std::int64_t n = p.n, h = p.d.hidden, v = p.d.vocab;
  auto& s = r.scratch;
  const T* dlogits = m.logits.data();  // cross_entropy left grad_scale * dloss/dlogits here
  if (p.full.tied_embeddings) {
    Backend::gemm(true, false, v, h, n, T(1), dlogits, v, m.xn_final.data(), h, T(1),
                  r.grads + p.table.embedding, h);
    Backend::gemm(false, false, n, h, v, T(1), dlogits, v, r.params + p.table.embedding, h, T(0),
                  s.dxn.data(), h);
  } else {
    Backend::gemm(true, false, h, v, n, T(1), m.xn_final.data(), h, dlogits, v, T(1),
                  r.grads + p.table.head, v);
    Backend::gemm(false, true, n, h, v, T(1), dlogits, v, r.params + p.table.head, v, T(0),
                  s.dxn.data(), h);
  }
  std::fill(s.dx.begin(), s.dx.end(), T(0));
  r.tp.norm_backward(s.dxn.data(), m.x_final.data(), r.params + p.table.final_norm,
                     m.rstd_final.data(), s.dx.data(), r.grads + p.table.final_norm);
}

}  // namespace tprimat::train::cpu
