// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// StepIO: what a device step reads from the host (token ids, targets, the embedding backward's
// grouping) and hands back (the loss and the gradient's sum of squares).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/buffer.hpp"
#include "tprimat/backend/gpu/embedding_groups.hpp"
#include "tprimat/parallel/context_parallel.hpp"
#include "tprimat/train/rank_plan.hpp"
#include "tprimat/train/device/resources.hpp"

namespace tprimat::train::device {

/// Per micro-batch m of a step: inputs and targets [m][n], the positions grouped by token id
/// (group_ids, offsets, positions, group_count: backend::embedding_groups_into), and the rows of
/// the embedding the last step touched (cleared at the start of the next). Prepared on the host
/// in page-locked buffers, uploaded at the step's start.
struct StepIO {
  backend::DeviceBuffer<std::int32_t> inputs, targets, group_ids, offsets, positions, group_count;
  backend::DeviceBuffer<std::int32_t> touched_rows, touched_count;
  /// [loss sum, gradient sum of squares], summed over the rank's groups by the end of a step.
  backend::DeviceBuffer<double> results;
  backend::DeviceBuffer<double> loss_partials;  ///< Gpu::reduce_partials: the loss sum's

  /// The table's buffers (train/buffer_table.hpp's step_buffers), and their pinned host twins.
  void allocate(BufferAllocator& a, const RankPlan& p, const BufferTable& table) {
    const std::int64_t n = p.n, ga = p.shape.grad_accum;
    using B = BufferId;
    for (const BufferEntry& e : table) {
      if (owner_of(e.buffer) != BufferOwner::step_io) continue;
      switch (e.buffer) {
        case B::io_inputs: inputs = a.take<std::int32_t>(e); break;
        case B::io_targets: targets = a.take<std::int32_t>(e); break;
        case B::io_group_ids: group_ids = a.take<std::int32_t>(e); break;
        case B::io_offsets: offsets = a.take<std::int32_t>(e); break;
        case B::io_positions: positions = a.take<std::int32_t>(e); break;
        case B::io_group_count: group_count = a.take<std::int32_t>(e); break;
        case B::io_touched_rows: touched_rows = a.take<std::int32_t>(e); break;
        case B::io_touched_count: touched_count = a.take<std::int32_t>(e); break;
        case B::io_results: results = a.take<double>(e); break;
        case B::io_loss_partials: loss_partials = a.take<double>(e); break;
        default: break;
      }
    }
    backend::gpu_check(gpuMemsetAsync(touched_count.data(), 0, touched_count.bytes(), a.stream),
                       "memset");
    h_inputs_ = PinnedBuffer<std::int32_t>(ga * n);
    h_targets_ = PinnedBuffer<std::int32_t>(ga * n);
    h_group_ids_ = PinnedBuffer<std::int32_t>(ga * n);
    h_offsets_ = PinnedBuffer<std::int32_t>(ga * (n + 1));
    h_positions_ = PinnedBuffer<std::int32_t>(ga * n);
    h_group_count_ = PinnedBuffer<std::int32_t>(ga);
    h_results_ = PinnedBuffer<double>(2);
  }

  /// Splits `tokens` (grad_accum x mbs x (seq + 1) ids, already validated) into inputs [0, seq)
  /// and targets [1, seq + 1) of each sequence (under context parallelism this rank's positions
  /// only, parallel::ContextSplit's, in local order), maps the inputs into this TP rank's
  /// vocabulary slice (its rows of the embedding; -1 elsewhere) and groups them for the embedding
  /// backward.
  void prepare(std::span<const std::int32_t> tokens, const RankPlan& p) {
    const std::int64_t n = p.n;
    const int seq = p.shape.seq, local_seq = p.local_seq;
    const parallel::ContextSplit split{seq, p.cp, p.cp_rank};
    for (int micro = 0; micro < p.shape.grad_accum; ++micro) {
      const std::int32_t* src = tokens.data() + micro * std::int64_t{p.shape.mbs} * (seq + 1);
      std::int32_t* in = h_inputs_.data() + micro * n;
      std::int32_t* out = h_targets_.data() + micro * n;
      for (int b = 0; b < p.shape.mbs; ++b) {
        const std::int32_t* sequence = src + std::int64_t{b} * (seq + 1);
        // Runs of consecutive positions: the whole sequence, or a CP rank's two chunks.
        for (int t = 0; t < local_seq;) {
          const int run = p.cp > 1 ? split.chunk() : local_seq;
          const int at = split.position(t);
          std::memcpy(in + std::int64_t{b} * local_seq + t, sequence + at,
                      run * sizeof(std::int32_t));
          std::memcpy(out + std::int64_t{b} * local_seq + t, sequence + at + 1,
                      run * sizeof(std::int32_t));
          t += run;
        }
      }
      if (p.tp > 1)
        for (std::int64_t t = 0; t < n; ++t) {
          const std::int64_t local = in[t] - p.vocab_begin;
          in[t] = local >= 0 && local < p.d.vocab ? static_cast<std::int32_t>(local) : -1;
        }
      h_group_count_[micro] = backend::embedding_groups_into(
          std::span<const std::int32_t>(in, n),
          std::span<std::int32_t>(h_group_ids_.data() + micro * n, n),
          std::span<std::int32_t>(h_offsets_.data() + micro * (n + 1), n + 1),
          std::span<std::int32_t>(h_positions_.data() + micro * n, n));
    }
  }

  void upload(gpuStream_t stream) {
    device::upload(inputs, h_inputs_, stream);
    device::upload(targets, h_targets_, stream);
    device::upload(group_ids, h_group_ids_, stream);
    device::upload(offsets, h_offsets_, stream);
    device::upload(positions, h_positions_, stream);
    device::upload(group_count, h_group_count_, stream);
  }

  /// The rows this step's tokens touched, kept to be cleared at the start of the next step.
  void keep_touched_rows(gpuStream_t stream) {
    backend::gpu_check(gpuMemcpyAsync(touched_rows.data(), group_ids.data(), group_ids.bytes(),
                                      gpuMemcpyDeviceToDevice, stream),
                       "copy of the touched rows");
    backend::gpu_check(gpuMemcpyAsync(touched_count.data(), group_count.data(), group_count.bytes(),
                                      gpuMemcpyDeviceToDevice, stream),
                       "copy of the touched rows");
  }

  void download_results(gpuStream_t stream) {
    backend::gpu_check(gpuMemcpyAsync(h_results_.data(), results.data(), results.bytes(),
                                      gpuMemcpyDeviceToHost, stream),
                       "download of the loss");
  }
  /// After the step has finished: [loss sum, gradient sum of squares].
  double loss_sum() { return h_results_[0]; }
  double sum_of_squares() { return h_results_[1]; }

 private:
  PinnedBuffer<std::int32_t> h_inputs_, h_targets_, h_group_ids_, h_offsets_, h_positions_,
      h_group_count_;
  PinnedBuffer<double> h_results_;
};

}  // namespace tprimat::train::device
