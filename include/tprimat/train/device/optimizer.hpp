// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// DeviceOptimizer: global-norm clipping and AdamW over the split master, whole or (ZeRO-1) over
// this rank's slices with the updated weights all-gathered over DP.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/buffer.hpp"
#include "tprimat/parallel/device_collectives.hpp"
#include "tprimat/profile/nvtx.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/device/gradient_sync.hpp"
#include "tprimat/train/device/parameters.hpp"
#include "tprimat/train/rank_plan.hpp"
#include "tprimat/train/device/resources.hpp"
#include "tprimat/train/device/weight_gather.hpp"

namespace tprimat::train::device {

class DeviceOptimizer {
 public:
  DeviceOptimizer(const OptimizerConfig& opt, std::shared_ptr<parallel::DeviceCollectives> dp,
                  bool overlap)
      : opt_(opt), dp_(std::move(dp)), overlap_(overlap) {}

  void create(const GradientSyncPlan& sync, bool zero) {
    if (zero)
      for (std::size_t i = 0; i < sync.buckets.buckets.size(); ++i)
        updated_.emplace_back(EventUse::order);
  }

  /// The table's opt_* buffers (train/buffer_table.hpp's step_buffers): the scalars, each
  /// tensor's end and decay flag (AdamW over the whole buffer), and under ZeRO-1 the same per
  /// bucket slice (BucketPlan::tensor_ends, decay).
  void allocate(BufferAllocator& a, const RankPlan& p, const BucketPlan& buckets,
                const BufferTable& table) {
    static_assert(sizeof(backend::OptimizerScalars) == optimizer_scalars_bytes);
    using B = BufferId;
    for (const BufferEntry& e : table) {
      if (owner_of(e.buffer) != BufferOwner::optimizer) continue;
      switch (e.buffer) {
        case B::opt_scalars: scalars_ = a.take<backend::OptimizerScalars>(e); break;
        case B::opt_bucket_tensor_ends: bucket_tensor_ends_ = a.take<std::int64_t>(e); break;
        case B::opt_bucket_decay: bucket_decay_ = a.take<std::uint8_t>(e); break;
        case B::opt_tensor_ends: tensor_ends_ = a.take<std::int64_t>(e); break;
        case B::opt_decay: decay_ = a.take<std::uint8_t>(e); break;
        default: break;
      }
    }
    if (p.zero && !buckets.tensor_ends.empty()) {
      bucket_tensor_ends_.upload(buckets.tensor_ends);
      bucket_decay_.upload(buckets.decay);
    }
    const int t = static_cast<int>(p.table.tensors.size());
    h_scalars_ = PinnedBuffer<backend::OptimizerScalars>(1);
    std::vector<std::int64_t> ends(t);
    std::vector<std::uint8_t> flags(t);
    for (int i = 0; i < t; ++i) {
      ends[i] = p.table.tensors[i].offset + p.table.tensors[i].size();
      flags[i] = p.table.tensors[i].decay ? 1 : 0;
    }
    tensor_ends_.upload(ends);
    decay_.upload(flags);
  }

  /// The step's learning rate and bias corrections, for the kernels to read on the device (a
  /// captured graph replays unchanged while they move).
  void set_step(double lr, int step_number, gpuStream_t stream) {
    backend::OptimizerScalars& sc = h_scalars_[0];
    sc.lr = static_cast<float>(lr);
    sc.beta1 = static_cast<float>(opt_.beta1);
    sc.beta2 = static_cast<float>(opt_.beta2);
    sc.eps = static_cast<float>(opt_.eps);
    sc.weight_decay = static_cast<float>(opt_.weight_decay);
    sc.bias_correction1 = static_cast<float>(1.0 - std::pow(opt_.beta1, step_number));
    sc.bias_correction2 = static_cast<float>(1.0 - std::pow(opt_.beta2, step_number));
    sc.clip_norm = static_cast<float>(opt_.clip_norm);
    upload(scalars_, h_scalars_, stream);
  }

  /// Clips by the global norm sqrt(*squares) and updates the weights on `main`. Under ZeRO-1
  /// and 2 each bucket's slice is updated, then its bf16 weights are all-gathered over DP on the
  /// side stream while the next bucket is updated; `main` joins at the end.
  void update(const RankPlan& p, DeviceParameters& params, GradientSync& sync,
              const double* squares, gpuStream_t main) {
    using backend::Gpu;
    if (!p.zero) {
      Gpu::adamw(params.weights.data(), params.master_lo.data(), params.grads.data(),
                 params.m.data(), params.v.data(), p.params, tensor_ends_.data(), decay_.data(),
                 static_cast<int>(p.table.tensors.size()), scalars_.data(), squares, main);
      return;
    }
    const std::vector<GradientBucket>& buckets = sync.plan.buckets.buckets;
    for (std::size_t i = 0; i < buckets.size(); ++i) {
      const GradientBucket& b = buckets[i];
      Gpu::adamw(params.slice_w(b), params.master_lo.data() + b.owned_base, params.slice_g(b),
                 params.m.data() + b.owned_base, params.v.data() + b.owned_base, b.slice_count,
                 bucket_tensor_ends_.data() + b.tensors_begin,
                 bucket_decay_.data() + b.tensors_begin, b.tensors, scalars_.data(), squares, main);
      if (params.sharded_weights()) continue;  // FSDP gathers them before their next use
      const gpuStream_t side = sync.side_stream(main);
      if (overlap_) stream_wait(side, main, updated_[i]);
      const profile::Range range("dp weight all-gather");
      gather_weights(p, params, b, side);
    }
    sync.join(main);
  }

  /// Bucket b's updated bf16 weights from every rank, on `stream`: in place, or where its chunks
  /// run past it (ZeRO-2's padded segments, whose next segment's weights the gather would
  /// overwrite) through its gradient staging buffer, free once the backward is done.
  void gather_weights(const RankPlan& p, DeviceParameters& params, const GradientBucket& b,
                      gpuStream_t stream) {
    using bf16 = backend::Gpu::bf16;
    if (!params.sharded_grads() || b.chunk * p.shards == b.count) {
      dp_->all_gather_bytes(params.weights.data() + b.offset,
                            static_cast<std::size_t>(b.chunk) * sizeof(bf16), stream);
      return;
    }
    auto* staged = reinterpret_cast<bf16*>(params.g(b.offset));  // chunk x dp bf16 fit in it
    gather_slices(dp_.get(), p.shard_rank, b, params.slice_w(b), staged, stream);
    backend::gpu_check(gpuMemcpyAsync(params.weights.data() + b.offset, staged,
                                      b.count * sizeof(bf16), gpuMemcpyDeviceToDevice, stream),
                       "gathered weights");
  }

  /// Every rank's slices of a sharded 16-bit buffer (`owned`: this rank's, at each bucket's
  /// owned_base: ZeRO's remainders, FSDP's bf16 weights) in table order; collective over DP.
  std::vector<std::uint16_t> gathered_slices(const RankPlan& p, const std::uint16_t* owned,
                                             const BucketPlan& buckets, gpuStream_t stream) const {
    std::vector<std::uint16_t> out(static_cast<std::size_t>(p.params));
    for (const GradientBucket& b : buckets.buckets) {
      backend::DeviceBuffer<std::uint16_t> all(static_cast<std::size_t>(b.chunk * p.shards),
                                               stream);
      gather_slices(dp_.get(), p.shard_rank, b, owned + b.owned_base, all.data(), stream);
      const std::vector<std::uint16_t> host = all.download();
      std::copy_n(host.begin(), b.count, out.begin() + b.offset);
    }
    return out;
  }

 private:
  OptimizerConfig opt_;
  std::shared_ptr<parallel::DeviceCollectives> dp_;
  bool overlap_ = true;
  std::vector<OwnedEvent> updated_;  // ZeRO-1: each bucket's update done, for its all-gather
  backend::DeviceBuffer<backend::OptimizerScalars> scalars_;
  PinnedBuffer<backend::OptimizerScalars> h_scalars_;
  backend::DeviceBuffer<std::int64_t> tensor_ends_, bucket_tensor_ends_;
  backend::DeviceBuffer<std::uint8_t> decay_, bucket_decay_;
};

}  // namespace tprimat::train::device
