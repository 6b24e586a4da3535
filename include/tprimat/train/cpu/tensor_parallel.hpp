// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Tensor parallelism in the CPU engine: the TP group's collectives and what a layer does with
// them (norms over sequence-parallel rows, row-parallel sums, the replicated gains' gradients).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>

#include "tprimat/model/spec.hpp"
#include "tprimat/train/cpu/aligned_vector.hpp"
#include "tprimat/train/parameters.hpp"

namespace tprimat::train {

/// The tensor-parallel collectives the model calls inside forward and backward. Type-erased
/// (std::function) so the engine compiles once per element type whatever the communicator; one
/// call per block half is nothing next to the GEMMs it follows. Unset means TP = 1.
/// Sequence parallelism also needs the last two: reduce_scatter_sum(in, out), `in` holding TP
/// chunks of out.size() of which rank r gets chunk r summed over TP, and all_gather(in, out),
/// `out` holding TP chunks of in.size() of which chunk r is rank r's `in` (Communicator's).
template <class T>
struct TensorParallelOps {
  std::function<void(std::span<T>)> all_reduce_sum;
  std::function<void(std::span<T>)> all_reduce_max;
  std::function<void(std::span<const T>, std::span<T>)> reduce_scatter_sum;
  std::function<void(std::span<const T>, std::span<T>)> all_gather;
};

namespace cpu {

/// One rank's tensor parallelism (Megatron's): column-parallel QKV and gate/up read every token
/// row, the row-parallel O and down produce partial products summed over TP, and under sequence
/// parallelism the residual stream and the norms hold `rows` = n / TP token rows of the n,
/// gathered before each column-parallel GEMM and reduce-scattered after each row-parallel one.
/// Without TP every call is the plain single-rank computation.
template <class Backend, class T>
class TensorParallel {
 public:
  TensorParallel() = default;
  /// `ops` of a group of `size` ranks; micro-batches of `n` tokens of `hidden` features;
  /// `replicated_elements`: the norm gains' elements (their gradients are summed over TP under
  /// sequence parallelism). Checked by the caller: TP > 1 has its ops, SP's rows split.
  TensorParallel(TensorParallelOps<T> ops, int size, bool sequence_parallel, std::int64_t n,
                 const model::Dims& d, std::int64_t replicated_elements)
      : ops_(std::move(ops)),
        size_(size),
        sp_(sequence_parallel && size > 1),
        n_(n),
        rows_(sp_ ? n / size : n),
        h_(d.hidden),
        norm_eps_(d.norm_eps) {
    if (!sp_) return;
    full_.resize(n_ * h_);
    rows_buffer_.resize(rows_ * h_);
    replicated_grads_.resize(replicated_elements);
  }

  bool splits() const { return size_ > 1; }
  bool sequence_parallel() const { return sp_; }
  /// Token rows of the residual stream on this rank: n, or n / TP under sequence parallelism.
  std::int64_t rows() const { return rows_; }
  const TensorParallelOps<T>& ops() const { return ops_; }

  /// Sums `count` values over TP in place (nothing without TP).
  void sum(T* x, std::int64_t count) {
    if (size_ > 1) ops_.all_reduce_sum(std::span<T>(x, count));
  }

  /// Where a row-parallel GEMM writes its partial product [n, hidden] before row_parallel_sum:
  /// `out` itself, or under sequence parallelism a full-size scratch (out holds rows only).
  T* partial_buffer(T* out) { return sp_ ? full_.data() : out; }

  /// RMSNorm of this rank's residual rows `x` into `xn` [n, hidden]: under sequence
  /// parallelism the norm runs on the slice and its output is all-gathered over TP (the
  /// column-parallel GEMMs read every row).
  void norm_forward(const T* x, const T* weight, T* xn, T* rstd) {
    if (!sp_) {
      Backend::rmsnorm_forward(x, weight, n_, h_, norm_eps_, xn, rstd);
      return;
    }
    Backend::rmsnorm_forward(x, weight, rows_, h_, norm_eps_, rows_buffer_.data(), rstd);
    ops_.all_gather(std::span<const T>(rows_buffer_), std::span<T>(xn, n_ * h_));
  }

  /// The row-parallel GEMM's partial product `partial` [n, hidden], summed over TP, plus the
  /// residual `residual` (nullptr: none) into `out` [rows, hidden]: an all-reduce in place
  /// (out == partial), or under sequence parallelism a reduce-scatter to this rank's rows.
  void row_parallel_sum(T* partial, const T* residual, T* out) {
    if (sp_)
      ops_.reduce_scatter_sum(std::span<const T>(partial, n_ * h_), std::span<T>(out, rows_ * h_));
    else
      sum(partial, n_ * h_);  // out == partial
    if (residual != nullptr) Backend::add(out, residual, rows_ * h_);
  }

  /// Backward of norm_forward: `dxn` [n, hidden] holds this rank's partial input gradient of the
  /// column-parallel GEMMs; summed over TP (all-reduce, or reduce-scatter to this rank's rows)
  /// and taken through the norm, ADDING to `dx` [rows, hidden] and to the gain's gradient.
  void norm_backward(T* dxn, const T* x, const T* weight, const T* rstd, T* dx, T* dweight) {
    if (!sp_) {
      sum(dxn, n_ * h_);
      Backend::rmsnorm_backward(x, weight, rstd, dxn, n_, h_, dx, dweight);
      return;
    }
    ops_.reduce_scatter_sum(std::span<const T>(dxn, n_ * h_), std::span<T>(rows_buffer_));
    Backend::rmsnorm_backward(x, weight, rstd, rows_buffer_.data(), rows_, h_, dx, dweight);
  }

  /// The residual gradient `dx` [rows, hidden] as the row-parallel GEMMs' backward reads it,
  /// [n, hidden]: dx itself, or under sequence parallelism its all-gather over TP.
  const T* full_residual_grad(const T* dx) {
    if (!sp_) return dx;
    ops_.all_gather(std::span<const T>(dx, rows_ * h_), std::span<T>(full_));
    return full_.data();
  }

  /// Sequence parallelism: each TP rank's norm gains got the gradient of its own token rows
  /// only. Sums them over TP, as Megatron all-reduces its sequence-parallel parameters'
  /// gradients, so that every TP rank holds the whole gradient before the norm and the clip.
  void sum_replicated_grads(const ParameterTable& table, T* grads) {
    if (!sp_) return;
    T* packed = replicated_grads_.data();
    for (const auto& t : table.tensors)
      if (t.split == Split::none) packed = std::copy_n(grads + t.offset, t.size(), packed);
    ops_.all_reduce_sum(std::span<T>(replicated_grads_));
    const T* summed = replicated_grads_.data();
    for (const auto& t : table.tensors)
      if (t.split == Split::none) {
        std::copy_n(summed, t.size(), grads + t.offset);
        summed += t.size();
      }
  }

  /// Elements of T held (sequence parallelism's scratch).
  std::size_t elements() const {
    return full_.size() + rows_buffer_.size() + replicated_grads_.size();
  }

 private:
  TensorParallelOps<T> ops_;
  int size_ = 1;
  bool sp_ = false;
  std::int64_t n_ = 0, rows_ = 0, h_ = 0;
  double norm_eps_ = 1e-5;
  // Sequence parallelism only: [n, h] a row-parallel GEMM's partial product, the embedding's
  // rows, the gathered residual gradient; [rows, h] a norm's output or input gradient on this
  // rank's rows; the norm gains' gradients packed for their sum over TP.
  AlignedVector<T> full_, rows_buffer_, replicated_grads_;
};

}  // namespace cpu
}  // namespace tprimat::train
