// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// GradientSync: each gradient segment, once final, reduced over DP and its squares summed for the
// global norm, on a side stream beside the rest of the backward pass. Planned once, walked per
// step.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/buffer.hpp"
#include "tprimat/parallel/device_collectives.hpp"
#include "tprimat/profile/nvtx.hpp"
#include "tprimat/train/rank_plan.hpp"
#include "tprimat/train/device/resources.hpp"
#include "tprimat/train/gradient_buckets.hpp"

namespace tprimat::train::device {

/// Runs the plan. The side stream also carries ZeRO-1's weight all-gathers (optimizer.hpp);
/// without overlap (DeviceOptions::overlap off) all of it runs in line on the main stream.
class GradientSync {
 public:
  GradientSyncPlan plan;

  GradientSync(GradientSyncPlan p, std::shared_ptr<parallel::DeviceCollectives> dp, bool zero,
               bool overlap)
      : plan(std::move(p)), dp_(std::move(dp)), zero_(zero), overlap_(overlap) {}

  /// Streams and events, after the engine's device checks.
  void create() {
    side_.create();
    for (std::size_t i = 0; i <= plan.segments.size(); ++i) segment_done_.emplace_back(false);
  }
  /// The table's grad_norm_partials: Gpu::reduce_partials doubles a norm range.
  void allocate(BufferAllocator& a, const BufferTable& table) {
    for (const BufferEntry& e : table)
      if (e.buffer == BufferId::grad_norm_partials) norm_partials_ = a.take<double>(e);
  }

  /// The stream of the gradient work beside the backward pass (the main stream without overlap).
  gpuStream_t side_stream(gpuStream_t main) const { return overlap_ ? gpuStream_t(side_) : main; }

  /// Segment `s` of `grads` is final on `main`. On the side stream, alongside the rest of the
  /// backward pass: the buckets it completes are reduced over DP (all-reduce, or reduce-scatter
  /// under ZeRO-1), then the squares of this rank's norm ranges of each are summed into their
  /// partials.
  void reduce_segment(std::size_t s, float* grads, gpuStream_t main) {
    const gpuStream_t side = side_stream(main);
    if (overlap_) stream_wait(side_, main, segment_done_[s]);
    for (std::size_t i = 0; i < plan.buckets.buckets.size(); ++i) {
      const GradientBucket& b = plan.buckets.buckets[i];
      if (b.trigger != static_cast<int>(s)) continue;
      if (dp_) {
        const profile::Range range("dp gradient reduction");
        if (zero_)
          dp_->reduce_scatter_sum(grads + b.offset, static_cast<std::size_t>(b.chunk), side);
        else
          dp_->all_reduce_sum(grads + b.offset, static_cast<std::size_t>(b.count), side);
      }
      for (std::size_t r = 0; r < plan.norm_ranges.size(); ++r)
        if (plan.norm_ranges[r].bucket == i)
          backend::Gpu::reduce_sum_partials(
              grads + plan.norm_ranges[r].offset, plan.norm_ranges[r].count, true,
              norm_partials_.data() + r * backend::Gpu::reduce_partials, side);
    }
  }

  /// `main` waits for the side stream's work (none without overlap: a graph capture refuses a
  /// wait on a stream it never forked to).
  void join(gpuStream_t main) {
    if (overlap_) stream_wait(main, side_, segment_done_.back());
  }

  /// *squares = this rank's sum of squared gradients, from every range's partials, on `main`.
  void sum_squares(double* squares, gpuStream_t main) {
    backend::Gpu::sum_partials(
        norm_partials_.data(),
        static_cast<int>(plan.norm_ranges.size()) * backend::Gpu::reduce_partials, squares, main);
  }

  /// Synchronises the side stream (the engine's teardown).
  void synchronize() {
    if (side_) (void)gpuStreamSynchronize(side_);
  }

 private:
  std::shared_ptr<parallel::DeviceCollectives> dp_;
  bool zero_ = false, overlap_ = true;
  OwnedStream side_;
  std::vector<OwnedEvent> segment_done_;  // one per segment, then the join
  backend::DeviceBuffer<double> norm_partials_;
};

}  // namespace tprimat::train::device
