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
#include "tprimat/train/device/parameters.hpp"
#include "tprimat/train/device/resources.hpp"
#include "tprimat/train/gradient_buckets.hpp"

namespace tprimat::train::device {

/// Runs the plan. The side stream also carries ZeRO-1's weight all-gathers (optimizer.hpp);
/// without overlap (DeviceOptions::overlap off) all of it runs in line on the main stream.
///
/// Without ZeRO-2 a segment is reduced once a step, after the last micro-batch's backward has
/// made it final. Under ZeRO-2 it is reduced after every micro-batch's: reduce-scattered in its
/// staging buffer, this rank's chunk copied (first micro-batch) or added into its sum; the
/// staging buffer is free again once that is done (acquire() waits for it).
class GradientSync {
 public:
  GradientSyncPlan plan;

  /// `dp`: the ranks the gradients are reduced over (every replica, or under hybrid sharding this
  /// rank's instance); `replicate`: hybrid sharding's ranks holding the same shards, over which
  /// each reduced shard is summed once a step (null without it).
  GradientSync(GradientSyncPlan p, std::shared_ptr<parallel::DeviceCollectives> dp,
               std::shared_ptr<parallel::DeviceCollectives> replicate, bool zero, bool overlap,
               std::vector<std::pair<std::int64_t, std::int64_t>> zero_ranges = {})
      : plan(std::move(p)),
        dp_(std::move(dp)),
        replicate_(std::move(replicate)),
        zero_(zero),
        overlap_(overlap) {
    // ZeRO-2: each micro-batch clears the ranges no beta-0 GEMM overwrites, segment by segment.
    if (plan.buckets.segment_slot.empty()) return;
    segment_zeroing_.resize(plan.segments.size());
    for (const auto& [offset, count] : zero_ranges)
      for (std::size_t s = 0; s < plan.segments.size(); ++s) {
        const auto [begin, size] = plan.segments[s];
        const std::int64_t lo = std::max(offset, begin);
        const std::int64_t hi = std::min(offset + count, begin + size);
        if (lo < hi) segment_zeroing_[s].emplace_back(lo, hi - lo);
      }
  }

  /// Streams and events, after the engine's device checks.
  void create() {
    side_.create();
    for (std::size_t i = 0; i <= plan.segments.size(); ++i)
      segment_done_.emplace_back(EventUse::order);
    for (std::size_t i = 0; i < plan.buckets.slot_elements.size(); ++i)
      slot_free_.emplace_back(EventUse::order);
    slot_pending_.assign(plan.buckets.slot_elements.size(), false);
  }
  /// The table's grad_norm_partials: Gpu::reduce_partials doubles a norm range.
  void allocate(BufferAllocator& a, const BufferTable& table) {
    for (const BufferEntry& e : table)
      if (e.buffer == BufferId::grad_norm_partials) norm_partials_ = a.take<double>(e);
  }

  /// Whether each micro-batch's gradients are reduced (ZeRO-2), not the step's sum once.
  bool per_micro_batch() const { return !plan.buckets.segment_slot.empty(); }

  /// The stream of the gradient work beside the backward pass (the main stream without overlap).
  gpuStream_t side_stream(gpuStream_t main) const { return overlap_ ? gpuStream_t(side_) : main; }

  /// Before a step's first micro-batch: every staging buffer is free (the last step ended joined).
  void begin_step() { std::fill(slot_pending_.begin(), slot_pending_.end(), false); }

  /// ZeRO-2, before a micro-batch first writes segment `s`'s gradient: `main` waits until the
  /// last reduction out of its staging buffer is done, then clears what the backward adds to.
  void acquire(std::size_t s, DeviceParameters& params, gpuStream_t main) {
    if (!per_micro_batch()) return;
    const auto slot = static_cast<std::size_t>(plan.buckets.segment_slot[s]);
    if (overlap_ && slot_pending_[slot])
      backend::gpu_check(gpuStreamWaitEvent(main, slot_free_[slot], 0), "gpuStreamWaitEvent");
    slot_pending_[slot] = false;
    for (const auto& [offset, count] : segment_zeroing_[s])
      backend::gpu_check(gpuMemsetAsync(params.g(offset), 0, count * sizeof(float), main),
                         "memset");
  }

  /// Segment `s` of the gradients is final on `main` for micro-batch `micro` of `micros`. On the
  /// side stream, alongside the rest of the backward pass: the buckets it completes are reduced
  /// over DP (all-reduce, or reduce-scatter under ZeRO-1 and 2); after the last micro-batch the
  /// squares of this rank's norm ranges of each are summed into their partials.
  void reduce_segment(std::size_t s, DeviceParameters& params, int micro, int micros,
                      gpuStream_t main) {
    const gpuStream_t side = side_stream(main);
    if (overlap_) stream_wait(side, main, segment_done_[s]);
    for (std::size_t i = 0; i < plan.buckets.buckets.size(); ++i) {
      const GradientBucket& b = plan.buckets.buckets[i];
      if (b.trigger != static_cast<int>(s)) continue;
      if (dp_) {
        const profile::Range range("dp gradient reduction");
        if (zero_)
          dp_->reduce_scatter_sum(params.g(b.offset), static_cast<std::size_t>(b.chunk), side);
        else
          dp_->all_reduce_sum(params.g(b.offset), static_cast<std::size_t>(b.count), side);
      }
      if (per_micro_batch()) add_slice(s, b, params, micro, side);
      if (micro + 1 < micros) continue;
      if (replicate_) {  // hybrid sharding: the instances' sums of this slice, once a step
        const profile::Range range("dp gradient replica reduction");
        replicate_->all_reduce_sum(params.slice_g(b), static_cast<std::size_t>(b.slice_count),
                                   side);
      }
      for (std::size_t r = 0; r < plan.norm_ranges.size(); ++r) {
        const NormRange& n = plan.norm_ranges[r];
        if (n.bucket == i)
          backend::Gpu::reduce_sum_partials(
              params.slice_g(b) + (n.offset - b.slice_begin), n.count, true,
              norm_partials_.data() + r * backend::Gpu::reduce_partials, side);
      }
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
  /// ZeRO-2: bucket b's reduced chunk (this rank's slice) into its sum, on `side`; its staging
  /// buffer is then free.
  void add_slice(std::size_t s, const GradientBucket& b, DeviceParameters& params, int micro,
                 gpuStream_t side) {
    float* sum = params.slice_g(b);
    const float* chunk = params.g(b.slice_begin);
    if (micro == 0)
      backend::gpu_check(gpuMemcpyAsync(sum, chunk, b.slice_count * sizeof(float),
                                        gpuMemcpyDeviceToDevice, side),
                         "gradient shard");
    else
      backend::Gpu::accumulate(sum, chunk, b.slice_count, side);
    const auto slot = static_cast<std::size_t>(plan.buckets.segment_slot[s]);
    if (overlap_) {
      backend::gpu_check(gpuEventRecord(slot_free_[slot], side), "event record");
      slot_pending_[slot] = true;
    }
  }

  std::shared_ptr<parallel::DeviceCollectives> dp_, replicate_;
  bool zero_ = false, overlap_ = true;
  OwnedStream side_;
  std::vector<OwnedEvent> segment_done_;  // one per segment, then the join
  std::vector<OwnedEvent> slot_free_;     // ZeRO-2: each staging buffer's last reduction done
  std::vector<bool> slot_pending_;        // ZeRO-2: whether this step recorded slot_free_ yet
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> segment_zeroing_;  // ZeRO-2
  backend::DeviceBuffer<double> norm_partials_;
};

}  // namespace tprimat::train::device
