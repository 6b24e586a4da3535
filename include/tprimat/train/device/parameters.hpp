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
class DeviceParameters {
 public:
  using bf16 = backend::Gpu::bf16;
  backend::DeviceBuffer<bf16> weights;
  backend::DeviceBuffer<std::uint16_t> master_lo;
  backend::DeviceBuffer<float> grads, m, v;

  /// The table's parameter buffers (train/buffer_table.hpp's parameter_buffers).
  void allocate(BufferAllocator& a, const BufferTable& table) {
    using B = BufferId;
    for (const BufferEntry& e : table) {
      if (owner_of(e.buffer) != BufferOwner::parameters) continue;
      switch (e.buffer) {
        case B::weights: weights = a.take<bf16>(e); break;
        case B::master_lo: master_lo = a.take<std::uint16_t>(e); break;
        case B::grads: grads = a.take<float>(e); break;
        case B::adam_m: m = a.take<float>(e); break;
        case B::adam_v: v = a.take<float>(e); break;
        default: break;
      }
    }
    backend::gpu_check(gpuMemsetAsync(weights.data(), 0, weights.bytes(), a.stream), "memset");
  }

  float* g(std::int64_t offset) { return grads.data() + offset; }
  const bf16* w(std::int64_t offset) const { return weights.data() + offset; }

  /// Weights drawn on the device into the gradient buffer, which stands in for an fp32 master
  /// until set_master_from_grads() has split them. Each element's draw is keyed by its place in
  /// the whole model's buffer, so a TP shard holds one GPU's weights.
  void init(const RankPlan& p, const BucketPlan& buckets, double init_std, std::uint64_t seed,
            gpuStream_t stream) {
    using backend::Gpu;
    const ParameterTable whole = make_parameter_table(p.full, Shard{});
    for (std::size_t k = 0; k < p.table.all_tensors.size(); ++k) {
      if (p.table.local_index[k] < 0) continue;
      const ParamTensor& t = p.table.tensors[p.table.local_index[k]];
      const std::int64_t first = whole.tensors[k].offset + t.row_begin * t.full_cols + t.col_begin;
      if (t.init == Init::normal)
        Gpu::init_normal_block(g(t.offset), t.rows, t.cols, t.full_cols,
                               static_cast<float>(init_std), seed,
                               static_cast<std::uint64_t>(first), stream);
      else
        Gpu::fill(g(t.offset), t.size(), t.init == Init::ones ? 1.0f : 0.0f, stream);
    }
    set_master_from_grads(p, buckets, stream);
  }

  /// The master from the fp32 weights in `grads` (init or load); then gradients and AdamW
  /// moments zeroed.
  void set_master_from_grads(const RankPlan& p, const BucketPlan& buckets, gpuStream_t stream) {
    using backend::Gpu;
    if (!p.zero) {
      Gpu::split_master(grads.data(), weights.data(), master_lo.data(), p.params, stream);
    } else {
      // Every weight's bf16 half, the remainders dropped into m (scratch, zeroed below); then
      // this rank's slices again, keeping their remainders.
      auto* scratch = reinterpret_cast<std::uint16_t*>(m.data());
      const std::int64_t room = 2 * static_cast<std::int64_t>(m.size());
      for (std::int64_t off = 0; off < p.params; off += room)
        Gpu::split_master(g(off), weights.data() + off, scratch, std::min(room, p.params - off),
                          stream);
      for (const GradientBucket& b : buckets.buckets)
        Gpu::split_master(g(b.slice_begin), weights.data() + b.slice_begin,
                          master_lo.data() + b.owned_base, b.slice_count, stream);
    }
    for (auto* b : {&grads, &m, &v})
      backend::gpu_check(gpuMemsetAsync(b->data(), 0, b->bytes(), stream), "memset");
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
