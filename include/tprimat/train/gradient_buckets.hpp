// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Gradient buckets of a data-parallel device step: what each DP rank reduces, owns and updates,
// and the ranges of it whose squares it adds to the gradient norm. Host code: the buffer table
// sizes the padding, ZeRO-1's slices and the norm's partials from it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "tprimat/train/parameters.hpp"
#include "tprimat/train/rank_plan.hpp"

namespace tprimat::train {

/// A contiguous range of the flat gradient buffer reduced over DP by one collective, as soon as
/// the backward pass has finished it (overlapping the rest of the backward pass).
struct GradientBucket {
  std::int64_t offset = 0, count = 0;  ///< the bucket's elements of the flat buffers
  /// Elements per DP rank: count = chunk x dp, except the single padded bucket (below), whose
  /// last chunk runs past the last parameter.
  std::int64_t chunk = 0;
  /// This rank's share [slice_begin, slice_begin + slice_count): it sums the squares of these
  /// gradient elements for the global norm and, under ZeRO-1, owns and updates these weights.
  std::int64_t slice_begin = 0, slice_count = 0;
  /// First element of the slice in the rank's compact optimizer state (ZeRO-1).
  std::int64_t owned_base = 0;
  /// The gradient segment whose completion makes the bucket final.
  int trigger = 0;
  /// The slice's tensors: ends relative to slice_begin in BucketPlan::tensor_ends /
  /// BucketPlan::decay, from tensors_begin, `tensors` of them (AdamW's decay lookup).
  int tensors_begin = 0, tensors = 0;
};

struct BucketPlan {
  std::vector<GradientBucket> buckets;
  std::vector<std::int64_t> tensor_ends;
  std::vector<std::uint8_t> decay;
  std::int64_t owned = 0;    ///< elements of optimizer state a rank holds under ZeRO-1
  std::int64_t padding = 0;  ///< elements past the last parameter the collectives touch
  /// ZeRO-2 and FSDP (padded_segments): the staging buffer each segment's gradient is written
  /// into, one micro-batch at a time (segment_slot, by segment), and each buffer's elements
  /// (slot_elements: its segments' largest chunk x dp); FSDP gathers a segment's weights into the
  /// same slots, in bf16. Empty otherwise: the gradients live whole, in place.
  std::vector<int> segment_slot;
  std::vector<std::int64_t> slot_elements;
};

/// How a gradient segment finds its buckets: whole-buffer buckets in place (no_shard and ZeRO-1,
/// whose flat gradient buffer holds every micro-batch's sum), or padded segments (ZeRO-2: one
/// bucket per segment, each padded to dp chunks of whole slice_align elements, reduce-scattered
/// from its own staging buffer every micro-batch).
enum class BucketLayout { in_place, padded_segments };

/// Slices start on slice_align elements so that AdamW takes its vector path on every rank, as it
/// does on one GPU: its scalar path rounds differently (1 ulp), and DP must match one GPU.
inline constexpr std::int64_t slice_align = 4;

/// Buckets over `segments` ((offset, count) in buffer order, each final at one point of the
/// backward pass; they tile [0, table.total())) for DP rank `rank` of `dp`. One bucket per segment
/// when every segment splits over dp into chunks of whole slice_align elements (the collectives
/// then work in place, without padding); otherwise one bucket over the whole buffer, padded to
/// dp equal chunks of whole slice_align elements, reduced once the last segment (index 0) is
/// final: correct for any size, without overlap.
inline BucketPlan plan_gradient_buckets(
    const std::vector<std::pair<std::int64_t, std::int64_t>>& segments,
    const ParameterTable& table, int dp, int rank,
    BucketLayout layout = BucketLayout::in_place) {
  BucketPlan plan;
  const std::int64_t total = table.total();
  const bool even = std::all_of(segments.begin(), segments.end(), [&](const auto& s) {
    return s.second % (std::int64_t{dp} * slice_align) == 0;
  });
  auto add = [&](std::int64_t offset, std::int64_t count, std::int64_t chunk, int trigger) {
    GradientBucket b;
    b.offset = offset;
    b.count = count;
    b.chunk = chunk;
    b.slice_begin = offset + std::min<std::int64_t>(rank * chunk, count);
    b.slice_count = std::clamp<std::int64_t>(count - rank * chunk, 0, chunk);
    b.owned_base = plan.owned;
    b.trigger = trigger;
    b.tensors_begin = static_cast<int>(plan.tensor_ends.size());
    const std::int64_t lo = b.slice_begin, hi = b.slice_begin + b.slice_count;
    for (const auto& t : table.tensors) {
      if (t.offset + t.size() <= lo || t.offset >= hi) continue;
      plan.tensor_ends.push_back(std::min(t.offset + t.size(), hi) - lo);
      plan.decay.push_back(t.decay ? 1 : 0);
    }
    b.tensors = static_cast<int>(plan.tensor_ends.size()) - b.tensors_begin;
    plan.owned += chunk;
    plan.buckets.push_back(b);
  };
  if (layout == BucketLayout::padded_segments) {
    for (std::size_t s = 0; s < segments.size(); ++s) {
      const std::int64_t per_rank = (segments[s].second + dp - 1) / dp;
      add(segments[s].first, segments[s].second,
          (per_rank + slice_align - 1) / slice_align * slice_align, static_cast<int>(s));
    }
  } else if (dp == 1 || even) {
    for (std::size_t s = 0; s < segments.size(); ++s)
      add(segments[s].first, segments[s].second, segments[s].second / dp, static_cast<int>(s));
  } else {
    const std::int64_t per_rank = (total + dp - 1) / dp;
    const std::int64_t chunk = (per_rank + slice_align - 1) / slice_align * slice_align;
    add(0, total, chunk, 0);
    plan.padding = chunk * dp - total;
  }
  return plan;
}

/// The gradient's segments of rank `p` in buffer order, each final at one point of the last
/// micro-batch's backward pass: [embedding], [layer 0], ..., [layer L-1], [final norm, head] (a
/// pipeline stage: the embedding on the first only, final norm and head on the last only).
inline std::vector<std::pair<std::int64_t, std::int64_t>> gradient_segments(const RankPlan& p) {
  std::vector<std::int64_t> starts;
  if (p.first_stage) starts.push_back(0);
  for (const auto& lp : p.table.layers) starts.push_back(lp.attn_norm);
  if (p.last_stage) starts.push_back(p.table.final_norm);
  std::vector<std::pair<std::int64_t, std::int64_t>> segments;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const std::int64_t end = i + 1 < starts.size() ? starts[i + 1] : p.params;
    segments.emplace_back(starts[i], end - starts[i]);
  }
  return segments;
}

/// A part of a bucket's slice whose squares this rank adds to the gradient norm, with its own
/// kernels::sum_partials slots.
struct NormRange {
  std::size_t bucket;
  std::int64_t offset, count;
};

/// The gradient's segments in buffer order, each final at one point of the last micro-batch's
/// backward pass ([embedding], [layer 0], ..., [layer L-1], [final norm, head]; a pipeline stage:
/// the embedding on the first only, final norm and head on the last only), the DP buckets over
/// them, and the norm ranges: each bucket's slice whole, except on TP ranks other than 0, which
/// skip the tensors every TP rank holds whole (norm gains), so each element counts once. The DP
/// group is the weights' replicas: DP x CP on the device engine.
struct GradientSyncPlan {
  std::vector<std::pair<std::int64_t, std::int64_t>> segments;  ///< (offset, count)
  BucketPlan buckets;
  std::vector<NormRange> norm_ranges;
};

/// ZeRO-2's staging buffers of `plan`'s segments (gradient_segments of p, one bucket each): the
/// layers' two in turn, so one layer's gradient is reduced while the next is computed; the
/// embedding's and the head's. An untied head's gradient, written in the forward, is reduced
/// as the backward starts, before the embedding's is written at its end: the two share one
/// buffer. A tied head writes the embedding's gradient, to which the embedding's backward adds:
/// its segment (the final norm alone) has its own.
inline void plan_gradient_staging(const RankPlan& p, BucketPlan& plan) {
  const int segments = static_cast<int>(plan.buckets.size());
  int slots = 0;
  const int embedding = p.first_stage ? slots++ : -1;
  const int layer_slots = std::min(p.local_layers, 2), first_layer_slot = slots;
  slots += layer_slots;
  const bool shared = p.first_stage && p.last_stage && !p.d.tied_embeddings;
  const int head = shared ? embedding : p.last_stage ? slots++ : -1;
  plan.slot_elements.assign(static_cast<std::size_t>(slots), 0);
  for (int s = 0; s < segments; ++s) {
    int slot = 0;
    if (s == 0 && p.first_stage)
      slot = embedding;
    else if (s == segments - 1 && p.last_stage)
      slot = head;
    else
      slot = first_layer_slot + (s - (p.first_stage ? 1 : 0)) % layer_slots;
    plan.segment_slot.push_back(slot);
    const GradientBucket& b = plan.buckets[static_cast<std::size_t>(s)];
    std::int64_t& elements = plan.slot_elements[static_cast<std::size_t>(slot)];
    elements = std::max(elements, b.chunk * p.shards);
  }
}

inline GradientSyncPlan plan_gradient_sync(const RankPlan& p) {
  GradientSyncPlan s;
  s.segments = gradient_segments(p);
  s.buckets = plan_gradient_buckets(
      s.segments, p.table, p.shards, p.shard_rank,
      p.sharded_grads ? BucketLayout::padded_segments : BucketLayout::in_place);
  if (p.sharded_grads) plan_gradient_staging(p, s.buckets);
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
  // Hybrid sharding: every instance holds the same slices, counted in the norm by the first
  // only; the others' ranges are kept, empty, so every rank holds the buffers the plan counts.
  if (p.instance != 0)
    for (NormRange& n : s.norm_ranges) n.count = 0;
  return s;
}

}  // namespace tprimat::train
