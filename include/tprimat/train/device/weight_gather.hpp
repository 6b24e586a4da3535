// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// WeightGather: FSDP's all-gathers of each segment's bf16 weights into its slot's staging buffer
// before the step reads them, the next one prefetched on a side stream while the current layer
// computes.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/parallel/device_collectives.hpp"
#include "tprimat/profile/nvtx.hpp"
#include "tprimat/train/device/parameters.hpp"
#include "tprimat/train/device/resources.hpp"
#include "tprimat/train/gradient_buckets.hpp"
#include "tprimat/train/rank_plan.hpp"

namespace tprimat::train::device {

/// Every DP rank's slice of bucket b into `whole` (b.chunk x DP elements), on `stream`: this
/// rank's b.slice_count elements from `slice` copied to its place, then gathered in place over
/// `dp` (none: one rank, nothing to gather).
template <class T>
void gather_slices(parallel::DeviceCollectives* dp, int dp_rank, const GradientBucket& b,
                   const T* slice, T* whole, gpuStream_t stream) {
  backend::gpu_check(gpuMemcpyAsync(whole + std::int64_t{dp_rank} * b.chunk, slice,
                                    b.slice_count * sizeof(T), gpuMemcpyDeviceToDevice, stream),
                     "slice to the gather");
  if (dp) dp->all_gather_bytes(whole, static_cast<std::size_t>(b.chunk) * sizeof(T), stream);
}

/// Which segment each weight staging buffer holds, host-side. A gather into a slot waits for
/// everything the main stream enqueued before it (so for every earlier reader of the slot): a
/// prefetch is asked for before the layer that would overlap it is enqueued. Without overlap
/// (DeviceOptions::overlap off) the gathers run in line on the main stream. Off (no FSDP): every
/// call is a no-op.
class WeightGather {
 public:
  WeightGather(const RankPlan& p, std::shared_ptr<parallel::DeviceCollectives> dp, bool overlap)
      : on_(p.sharded_weights), dp_rank_(p.shard_rank), dp_(std::move(dp)), overlap_(overlap) {}

  /// Streams and events, after the engine's device checks.
  void create(const BucketPlan& buckets) {
    if (!on_) return;
    buckets_ = &buckets;
    stream_.create();
    forked_ = OwnedEvent(EventUse::order);
    joined_ = OwnedEvent(EventUse::order);
    for (std::size_t i = 0; i < buckets.slot_elements.size(); ++i)
      gathered_.emplace_back(EventUse::order);
    resident_.assign(buckets.slot_elements.size(), -1);
    waited_.assign(buckets.slot_elements.size(), true);
  }

  /// A step's first gather finds no slot holding its segment: the optimizer has moved every
  /// weight since.
  void begin_step() { std::fill(resident_.begin(), resident_.end(), -1); }

  /// Segment s's weights are in its slot before `main` reads them: gathered now, or by an earlier
  /// prefetch that `main` now waits for.
  void ensure(std::size_t s, DeviceParameters& params, gpuStream_t main) {
    if (!on_) return;
    const std::size_t slot = slot_of(s);
    if (resident_[slot] != static_cast<int>(s)) issue(s, params, main);
    if (overlap_ && !waited_[slot])
      backend::gpu_check(gpuStreamWaitEvent(main, gathered_[slot], 0), "gpuStreamWaitEvent");
    waited_[slot] = true;
  }

  /// Segment s's weights gathered on the side stream, beside what `main` enqueues next (its slot's
  /// earlier readers, enqueued before, are waited for).
  void prefetch(std::size_t s, DeviceParameters& params, gpuStream_t main) {
    if (!on_ || resident_[slot_of(s)] == static_cast<int>(s)) return;
    issue(s, params, main);
  }

  /// `main` waits for the side stream's gathers (the step's end: a graph capture must join it).
  void join(gpuStream_t main) {
    if (on_ && overlap_) stream_wait(main, stream_, joined_);
  }

  /// Synchronises the side stream (the engine's teardown).
  void synchronize() {
    if (stream_) (void)gpuStreamSynchronize(stream_);
  }

 private:
  std::size_t slot_of(std::size_t s) const {
    return static_cast<std::size_t>(buckets_->segment_slot[s]);
  }

  /// Segment s's slices from every DP rank into its slot: this rank's copied to its place, then
  /// gathered in place.
  void issue(std::size_t s, DeviceParameters& params, gpuStream_t main) {
    const GradientBucket& b = buckets_->buckets[s];
    const gpuStream_t stream = overlap_ ? gpuStream_t(stream_) : main;
    if (overlap_) stream_wait(stream_, main, forked_);
    const profile::Range range("fsdp weight all-gather");
    gather_slices(dp_.get(), dp_rank_, b, params.slice_w(b), params.staged_w(b), stream);
    const std::size_t i = slot_of(s);
    if (overlap_) backend::gpu_check(gpuEventRecord(gathered_[i], stream), "gpuEventRecord");
    resident_[i] = static_cast<int>(s);
    waited_[i] = !overlap_;
  }

  bool on_ = false;
  int dp_rank_ = 0;
  std::shared_ptr<parallel::DeviceCollectives> dp_;
  bool overlap_ = true;
  const BucketPlan* buckets_ = nullptr;
  OwnedStream stream_;
  OwnedEvent forked_, joined_;
  std::vector<OwnedEvent> gathered_;  // each slot's last gather done
  std::vector<int> resident_;         // the segment each slot holds (-1: none yet this step)
  std::vector<bool> waited_;          // whether main waits for the slot's last gather already
};

}  // namespace tprimat::train::device
