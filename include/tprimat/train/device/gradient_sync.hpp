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

/// A part of a bucket's slice whose squares this rank adds to the gradient norm, with its own
/// Gpu::reduce_partials slots.
struct NormRange {
  std::size_t bucket;
  std::int64_t offset, count;
};

/// The gradient's segments in buffer order, each final at one point of the last micro-batch's
/// backward pass ([embedding], [layer 0], ..., [layer L-1], [final norm, head]; a pipeline stage:
/// the embedding on the first only, final norm and head on the last only), the DP buckets over
/// them, and the norm ranges: each bucket's slice whole, except on TP ranks other than 0, which
/// skip the tensors every TP rank holds whole (norm gains), so each element counts once.
struct GradientSyncPlan {
  std::vector<std::pair<std::int64_t, std::int64_t>> segments;  ///< (offset, count)
  BucketPlan buckets;
  std::vector<NormRange> norm_ranges;
};

inline GradientSyncPlan plan_gradient_sync(const RankPlan& p) {
  GradientSyncPlan s;
  s.segments = gradient_segments(p);
  s.buckets = plan_gradient_buckets(s.segments, p.table, p.dp, p.dp_rank);
  for (std::size_t i = 0; i < s.buckets.buckets.size(); ++i) {
    const GradientBucket& b = s.buckets.buckets[i];
    const std::int64_t begin = b.slice_begin, end = b.slice_begin + b.slice_count;
    if (p.tp_rank == 0) {
      s.norm_ranges.push_back({i, begin, b.slice_count});
      continue;
    }
    for (const ParamTensor& t : p.table.tensors) {
      if (t.split == Split::none) continue;  // held whole by every TP rank
      const std::int64_t lo = std::max(begin, t.offset);
      const std::int64_t hi = std::min(end, t.offset + t.size());
      if (lo >= hi) continue;
      NormRange* last = s.norm_ranges.empty() ? nullptr : &s.norm_ranges.back();
      if (last && last->bucket == i && last->offset + last->count == lo)
        last->count += hi - lo;  // adjacent: one reduction
      else
        s.norm_ranges.push_back({i, lo, hi - lo});
    }
  }
  if (s.norm_ranges.empty()) s.norm_ranges.push_back({0, 0, 0});  // its slots hold zeros
  return s;
}

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
  void allocate(BufferAllocator& a) {
    norm_partials_ = a.alloc<double>(static_cast<std::int64_t>(plan.norm_ranges.size()) *
                                     backend::Gpu::reduce_partials);
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
