// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Context parallelism in the CPU engine: the CP group's collectives and ring attention, the
// local queries against every rank's keys, block by block around the ring.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/context_parallel.hpp"
#include "tprimat/train/cpu/aligned_vector.hpp"

namespace tprimat::train {

/// The context-parallel collectives the model calls (type-erased as TensorParallelOps are).
/// ring_shift(to_next, from_previous) sends a block to the next CP rank and receives the
/// previous one's; all_reduce_max takes FP8's amaxes over the group. Unset means CP = 1.
template <class T>
struct ContextParallelOps {
  std::function<void(std::span<const T>, std::span<T>)> ring_shift;
  std::function<void(std::span<T>)> all_reduce_max;
};

namespace cpu {

/// One rank's context parallelism, Transformer Engine's `p2p` scheme: each CP rank holds the
/// tokens parallel::ContextSplit gives it; attention runs its queries against its own K/V block
/// first, then against each other rank's as the blocks travel around the ring, the partial
/// outputs merged by their log-sum-exp (Backend::merge_attention). The backward runs the ring
/// again, each block's K/V gradient travelling with it and arriving, complete, at its owner.
/// The ring's order is fixed (own block, then rank - 1, rank - 2, ...), so a step's numbers do
/// not depend on timing. Sizes: `d` is this rank's share of the model (heads / TP).
template <class Backend, class T>
class ContextParallel {
 public:
  ContextParallel() = default;
  ContextParallel(ContextParallelOps<T> ops, parallel::ContextSplit split, int mbs,
                  const model::Dims& d)
      : ops_(std::move(ops)),
        split_(split),
        mbs_(mbs),
        heads_(d.heads),
        kv_heads_(d.kv_heads),
        head_dim_(d.head_dim) {
    rank_positions_.clear();
    for (int r = 0; r < split.cp; ++r) rank_positions_.push_back(split.of_rank(r).positions());
    if (!on()) return;
    const std::int64_t rows = std::int64_t{mbs} * split.local_seq();
    kv_elements_ = rows * d.kv_dim();
    for (auto* buf : {&block_, &block_next_, &grad_, &grad_next_}) buf->resize(2 * kv_elements_);
    o_part_.resize(rows * d.q_dim());
    lse_part_.resize(std::int64_t{mbs} * d.heads * split.local_seq());
    tiles_.resize(Backend::attention_block_workspace(split.local_seq(), split.local_seq()));
  }

  bool on() const { return split_.cp > 1; }
  const parallel::ContextSplit& split() const { return split_; }
  /// Each local token's position in its sequence (RoPE's angle, the causal mask).
  const std::vector<int>& positions() const { return rank_positions_[split_.rank]; }
  const ContextParallelOps<T>& ops() const { return ops_; }
  std::size_t elements() const {
    return block_.size() + block_next_.size() + grad_.size() + grad_next_.size() +
           o_part_.size() + lse_part_.size() + tiles_.size();
  }

  /// o [rows, heads x head_dim] and lse [mbs, heads, local_seq] of the local queries q against
  /// every key of their sequences (causal by position); k, v this rank's [rows, kv_dim].
  void attention_forward(const T* q, const T* k, const T* v, T* o, T* lse) {
    load_block(k, v);
    const int lq = split_.local_seq();
    std::fill_n(o, o_part_.size(), T(0));
    std::fill_n(lse, lse_part_.size(), -std::numeric_limits<T>::infinity());
    for (int step = 0; step < split_.cp; ++step) {
      Backend::attention_block_forward(q, block_.data(), block_.data() + kv_elements_,
                                       o_part_.data(), lse_part_.data(), mbs_, lq,
                                       positions().data(), lq, key_positions(step), heads_,
                                       kv_heads_, head_dim_, tiles_.data());
      Backend::merge_attention(o, lse, o_part_.data(), lse_part_.data(), mbs_, lq, heads_,
                               head_dim_);
      if (step + 1 < split_.cp) shift(block_, block_next_);
    }
  }

  /// Backward of attention_forward: dq, dk, dv of this rank's rows (overwritten) from dout,
  /// given the forward's o and lse.
  void attention_backward(const T* q, const T* k, const T* v, const T* o, const T* lse,
                          const T* dout, T* dq, T* dk, T* dv) {
    load_block(k, v);
    const int lq = split_.local_seq();
    std::fill_n(dq, o_part_.size(), T(0));
    std::fill(grad_.begin(), grad_.end(), T(0));
    for (int step = 0; step < split_.cp; ++step) {
      Backend::attention_block_backward(q, block_.data(), block_.data() + kv_elements_, o, lse,
                                        dout, dq, grad_.data(), grad_.data() + kv_elements_, mbs_,
                                        lq, positions().data(), lq, key_positions(step), heads_,
                                        kv_heads_, head_dim_, tiles_.data());
      if (step + 1 < split_.cp) {
        shift(block_, block_next_);
        shift(grad_, grad_next_);
      }
    }
    // The block held last is the next rank's, its gradient summed by every rank: send it home
    // and receive this rank's own.
    shift(grad_, grad_next_);
    std::copy_n(grad_.begin(), kv_elements_, dk);
    std::copy_n(grad_.begin() + kv_elements_, kv_elements_, dv);
  }

 private:
  /// The positions of the K/V block this rank holds at ring step `step`: rank - step's.
  const int* key_positions(int step) const {
    return rank_positions_[(split_.rank - step + split_.cp) % split_.cp].data();
  }
  void load_block(const T* k, const T* v) {
    std::copy_n(k, kv_elements_, block_.begin());
    std::copy_n(v, kv_elements_, block_.begin() + kv_elements_);
  }
  void shift(AlignedVector<T>& held, AlignedVector<T>& spare) {
    ops_.ring_shift(held, spare);
    std::swap(held, spare);
  }

  ContextParallelOps<T> ops_;
  parallel::ContextSplit split_;
  int mbs_ = 1, heads_ = 1, kv_heads_ = 1, head_dim_ = 1;
  // Every CP rank's token positions, made once (a default object's: one token at 0).
  std::vector<std::vector<int>> rank_positions_ = {{0}};
  std::int64_t kv_elements_ = 0;          // one of K, V: [rows, kv_dim]
  AlignedVector<T> block_, block_next_;   // the K/V block held, [K | V], and the one arriving
  AlignedVector<T> grad_, grad_next_;     // its gradient [dK | dV], travelling with it
  AlignedVector<T> o_part_, lse_part_;    // one block's partial attention
  AlignedVector<T> tiles_;                // score tiles: Backend::attention_block_workspace
};

}  // namespace cpu
}  // namespace tprimat::train
