// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// DeviceParameters: a rank's weights (fp32 masters held split), gradients and AdamW moments on the
// device; their initialisation and loading; which gradients a step must clear first.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/buffer.hpp"
#include "tprimat/train/buffer_table.hpp"
#include "tprimat/train/rank_plan.hpp"
#include "tprimat/train/device/resources.hpp"
#include "tprimat/train/gradient_buckets.hpp"
#include "tprimat/train/parameters.hpp"

namespace tprimat::train::device {

/// The fp32 master weights, split (Gpu::split_master): `weights` are the bf16 the step reads
/// (GEMMs, embedding, norm gains: nullptr for the remainders), `master_lo` the remainders, read
/// by AdamW only, so ZeRO-1 shards them with the moments (this rank's bucket slices, at each
/// bucket's owned_base). Gradients and moments are fp32. The collectives may run past the last
/// parameter by buckets.padding elements (zeroed once, never updated).
///
/// Gradients: `grads` holds every parameter's, at its offset; under ZeRO-2 only the sums of this
/// rank's slices (at owned_base, as the moments), and a micro-batch's gradient is written into
/// its segment's staging buffer (BucketPlan::segment_slot), reduce-scattered from there. g()
/// finds where a gradient is written either way.
///
/// FSDP: `weights` holds this rank's slices only (at owned_base); a segment's whole weights are
/// gathered into its slot's weight staging buffer before use (train/device/weight_gather.hpp),
/// where w() finds them.
class DeviceParameters {
 public:
  using bf16 = backend::Gpu::bf16;
  backend::DeviceBuffer<bf16> weights;
  backend::DeviceBuffer<std::uint16_t> master_lo;
  backend::DeviceBuffer<float> grads, m, v;
  std::vector<backend::DeviceBuffer<float>> staging;  ///< ZeRO-2: one per slot
  std::vector<backend::DeviceBuffer<bf16>> weight_staging;  ///< FSDP: one per slot

  /// The table's parameter buffers (train/buffer_table.hpp's parameter_buffers); `buckets`
  /// places each segment's gradient (its staging buffer under ZeRO-2).
  void allocate(BufferAllocator& a, const BufferTable& table, const BucketPlan& buckets) {
    using B = BufferId;
    for (const BufferEntry& e : table) {
      if (owner_of(e.buffer) != BufferOwner::parameters) continue;
      switch (e.buffer) {
        case B::weights: weights = a.take<bf16>(e); break;
        case B::master_lo: master_lo = a.take<std::uint16_t>(e); break;
        case B::grads: grads = a.take<float>(e); break;
        case B::adam_m: m = a.take<float>(e); break;
        case B::adam_v: v = a.take<float>(e); break;
        case B::grad_staging: staging.push_back(a.take<float>(e)); break;
        case B::weight_staging: weight_staging.push_back(a.take<bf16>(e)); break;
        default: break;
      }
    }
    backend::gpu_check(gpuMemsetAsync(weights.data(), 0, weights.bytes(), a.stream), "memset");
    for (auto& slot : staging)
      backend::gpu_check(gpuMemsetAsync(slot.data(), 0, slot.bytes(), a.stream), "memset");
    for (auto& slot : weight_staging)
      backend::gpu_check(gpuMemsetAsync(slot.data(), 0, slot.bytes(), a.stream), "memset");
    if (staging.empty()) return;
    for (std::size_t s = 0; s < buckets.buckets.size(); ++s) {
      const auto slot = static_cast<std::size_t>(buckets.segment_slot[s]);
      segments_.push_back({buckets.buckets[s].offset, staging[slot].data(),
                           weight_staging.empty() ? nullptr : weight_staging[slot].data()});
    }
  }

  /// Where the gradient of flat element `offset` is written: in `grads`, or under ZeRO-2 in its
  /// segment's staging buffer.
  float* g(std::int64_t offset) {
    if (segments_.empty()) return grads.data() + offset;
    const Segment& s = segment_of(offset);
    return s.staging + (offset - s.offset);
  }
  /// The reduced gradient of bucket b's slice: in place, or under ZeRO-2 its sum at owned_base.
  float* slice_g(const GradientBucket& b) {
    return segments_.empty() ? grads.data() + b.slice_begin : grads.data() + b.owned_base;
  }
  /// The bf16 weight of flat element `offset`: in `weights`, or under FSDP in its segment's
  /// weight staging buffer (gathered there before the step reads it).
  const bf16* w(std::int64_t offset) const {
    if (weight_staging.empty()) return weights.data() + offset;
    const Segment& s = segment_of(offset);
    return s.weight_staging + (offset - s.offset);
  }
  /// Bucket b's slice of the bf16 weights (what AdamW updates): in place, or under FSDP this
  /// rank's at owned_base.
  bf16* slice_w(const GradientBucket& b) {
    return weight_staging.empty() ? weights.data() + b.slice_begin
                                  : weights.data() + b.owned_base;
  }
  /// FSDP: the part of flat elements [offset, offset + count) that bucket b's slice holds on this
  /// rank, and its length (0 where the slice holds none of them).
  std::pair<const bf16*, std::int64_t> held_part(const GradientBucket& b, std::int64_t offset,
                                                 std::int64_t count) const {
    const std::int64_t lo = std::max(offset, b.slice_begin),
                       hi = std::min(offset + count, b.slice_begin + b.slice_count);
    if (hi <= lo) return {nullptr, 0};
    return {weights.data() + b.owned_base + (lo - b.slice_begin), hi - lo};
  }
  /// FSDP: bucket b's segment's weight staging buffer.
  bf16* staged_w(const GradientBucket& b) { return segment_of(b.offset).weight_staging; }
  bool sharded_grads() const { return !segments_.empty(); }
  bool sharded_weights() const { return !weight_staging.empty(); }

  /// Weights drawn on the device (into the gradients' memory, which stands in for an fp32
  /// master until it is split). Each element's draw is keyed by its place in the whole model's
  /// buffer, so a TP shard holds one GPU's weights.
  void init(const RankPlan& p, const BucketPlan& buckets, double init_std, std::uint64_t seed,
            gpuStream_t stream) {
    using backend::Gpu;
    const ParameterTable whole = make_parameter_table(p.full, Shard{});
    set_master(p, buckets, stream, [&](std::int64_t begin, std::int64_t end) {
      for (std::size_t k = 0; k < p.table.all_tensors.size(); ++k) {
        if (p.table.local_index[k] < 0) continue;
        const ParamTensor& t = p.table.tensors[p.table.local_index[k]];
        if (t.offset < begin || t.offset >= end) continue;
        const std::int64_t first =
            whole.tensors[k].offset + t.row_begin * t.full_cols + t.col_begin;
        if (t.init == Init::normal)
          Gpu::init_normal_block(g(t.offset), t.rows, t.cols, t.full_cols,
                                 static_cast<float>(init_std), seed,
                                 static_cast<std::uint64_t>(first), stream);
        else
          Gpu::fill(g(t.offset), t.size(), t.init == Init::ones ? 1.0f : 0.0f, stream);
      }
    });
  }

  /// The master from `host`'s fp32 weights (one per parameter, in table order).
  void load(const RankPlan& p, const BucketPlan& buckets, std::span<const float> host,
            gpuStream_t stream) {
    set_master(p, buckets, stream, [&](std::int64_t begin, std::int64_t end) {
      backend::gpu_check(gpuMemcpyAsync(g(begin), host.data() + begin,
                                        static_cast<std::size_t>(end - begin) * sizeof(float),
                                        gpuMemcpyHostToDevice, stream),
                         "weights upload");
      // The host's pages must stay until the copy has read them.
      backend::gpu_check(gpuStreamSynchronize(stream), "weights upload");
    });
  }

 private:
  struct Segment {
    std::int64_t offset;   // the segment's first flat element
    float* staging;        // where its gradient is written (ZeRO-2)
    bf16* weight_staging;  // where its weights are gathered (FSDP)
  };
  std::vector<Segment> segments_;  // ZeRO-2 and FSDP only, in buffer order

  /// The last segment starting at or before flat element `offset`.
  const Segment& segment_of(std::int64_t offset) const {
    auto it = std::upper_bound(segments_.begin(), segments_.end(), offset,
                               [](std::int64_t o, const Segment& s) { return o < s.offset; });
    return *--it;
  }

  /// `fill(begin, end)` writes the fp32 weights of flat elements [begin, end) through g(); the
  /// master is split from them; then gradients and AdamW moments are zeroed. Whole, or under
  /// ZeRO-2 segment by segment through their staging buffers (the layers' are shared).
  template <class Fill>
  void set_master(const RankPlan& p, const BucketPlan& buckets, gpuStream_t stream, Fill&& fill) {
    using backend::Gpu;
    if (!sharded_grads()) {
      fill(0, p.params);
      if (!p.zero) {
        Gpu::split_master(grads.data(), weights.data(), master_lo.data(), p.params, stream);
      } else {
        split_weights(grads.data(), 0, p.params, stream);
        for (const GradientBucket& b : buckets.buckets)
          Gpu::split_master(g(b.slice_begin), weights.data() + b.slice_begin,
                            master_lo.data() + b.owned_base, b.slice_count, stream);
      }
    } else {
      for (const GradientBucket& b : buckets.buckets) {
        fill(b.offset, b.offset + b.count);
        if (!sharded_weights()) split_weights(g(b.offset), b.offset, b.count, stream);
        Gpu::split_master(g(b.slice_begin), slice_w(b), master_lo.data() + b.owned_base,
                          b.slice_count, stream);
      }
      for (auto& slot : staging)
        backend::gpu_check(gpuMemsetAsync(slot.data(), 0, slot.bytes(), stream), "memset");
    }
    for (auto* b : {&grads, &m, &v})
      backend::gpu_check(gpuMemsetAsync(b->data(), 0, b->bytes(), stream), "memset");
  }

  /// Every weight of flat elements [offset, +count) from the fp32 `src`: its bf16 half, the
  /// remainders dropped into m (scratch, zeroed after), a piece of m's size at a time.
  void split_weights(const float* src, std::int64_t offset, std::int64_t count,
                     gpuStream_t stream) {
    auto* scratch = reinterpret_cast<std::uint16_t*>(m.data());
    const std::int64_t room = 2 * static_cast<std::int64_t>(m.size());
    for (std::int64_t off = 0; off < count; off += room)
      backend::Gpu::split_master(src + off, weights.data() + offset + off, scratch,
                                 std::min(room, count - off), stream);
  }
};

/// The gradient ranges a step clears before its first micro-batch: every tensor whose first
/// write is not a beta-0 weight-gradient GEMM (norm gains and biases accumulate; an untied
/// embedding's rows are added per token). Skipping the rest saves a write of the whole gradient
/// buffer per step. With sparse embedding zeroing the embedding's gradient is not among them:
/// the rows the last step's tokens touched are cleared instead.
inline std::vector<std::pair<std::int64_t, std::int64_t>> plan_gradient_zeroing(const RankPlan& p) {
  std::vector<std::int64_t> gemm_written;
  for (const auto& lp : p.table.layers)
    for (Projection w : model::projections) gemm_written.push_back(lp[w]);
  gemm_written.push_back(p.d.tied_embeddings ? p.table.embedding : p.table.head);
  if (p.sparse_embedding_zeroing) gemm_written.push_back(p.table.embedding);
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  for (const auto& t : p.table.tensors) {
    if (std::find(gemm_written.begin(), gemm_written.end(), t.offset) != gemm_written.end())
      continue;
    if (!ranges.empty() && ranges.back().first + ranges.back().second == t.offset)
      ranges.back().second += t.size();  // adjacent: one memset
    else
      ranges.emplace_back(t.offset, t.size());
  }
  return ranges;
}

}  // namespace tprimat::train::device
