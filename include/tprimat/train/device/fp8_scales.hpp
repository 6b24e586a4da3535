// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Fp8Scales: the per-tensor scales of one FP8 format's tensors on the device (amaxes, scales,
// cuBLASLt's scale_inv slots, delayed scaling's amax histories) and their updates.
#pragma once

#include <cstdint>
#include <vector>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/buffer.hpp"
#include "tprimat/kernels/fp8_format.hpp"
#include "tprimat/train/buffer_table.hpp"
#include "tprimat/train/device/resources.hpp"
#include "tprimat/train/fp8_tensors.hpp"

namespace tprimat::train::device {

/// Tensors [0, base) keep a history (delayed scaling's); [base, count) are extra copies scaled
/// only from their own amax (current scaling's per-micro-batch activations, docs/fp8.md).
/// scale_inv of tensor t sits at fp8_scale_inv_stride t (train/fp8_tensors.hpp).
class Fp8Scales {
 public:
  static constexpr int inv_stride = fp8_scale_inv_stride;

  /// The buffers are the table's entries of this format (`part`: 0 E4M3, 1 E5M2), sized by the
  /// same layout.
  void allocate(BufferAllocator& a, kernels::Fp8Format format, const Fp8ScaleLayout& layout,
                const BufferTable& table, int part) {
    format_ = format;
    base_ = layout.base;
    count_ = layout.count;
    history_ = layout.history;
    using B = BufferId;
    for (const BufferEntry& e : table) {
      if (owner_of(e.buffer) != BufferOwner::fp8_linears || e.part != part) continue;
      switch (e.buffer) {
        case B::fp8_amax: amax_ = a.take<float>(e); break;
        case B::fp8_amax_now: amax_now_ = a.take<float>(e); break;
        case B::fp8_scale: scale_ = a.take<float>(e); break;
        case B::fp8_scale_inv: scale_inv_ = a.take<float>(e); break;
        case B::fp8_history: history_buf_ = a.take<float>(e); break;
        default: break;
      }
    }
    using backend::Gpu;
    Gpu::fill(amax_.data(), amax_.size(), 0.0f, a.stream);
    Gpu::fill(amax_now_.data(), amax_now_.size(), 0.0f, a.stream);
    Gpu::fill(scale_.data(), scale_.size(), 1.0f, a.stream);
    Gpu::fill(scale_inv_.data(), scale_inv_.size(), 1.0f, a.stream);
    Gpu::fill(history_buf_.data(), history_buf_.size(), 0.0f, a.stream);
  }

  kernels::Fp8Format format() const { return format_; }
  const float* scale(int t) const { return scale_.data() + t; }
  const float* scale_inv(int t) const { return scale_inv_.data() + std::int64_t{t} * inv_stride; }
  /// The step's amax a delayed-scaling cast records into (max over the step's casts).
  float* amax(int t) { return amax_.data() + t; }
  /// A current-scaling cast's own amax pass.
  float* amax_now(int t) { return amax_now_.data() + t; }
  /// [0, base) amaxes, for a reduction over a group before update_delayed.
  float* amaxes() { return amax_.data(); }
  int base() const { return base_; }

  /// Tensors [first, first + count)'s scales from their amax_now (zeroed after), before
  /// current-scaling casts.
  void update_current(int first, int count, int margin, gpuStream_t stream) {
    backend::Gpu::fp8_current_scale_update(
        amax_now(first), count, format_, margin, scale_.data() + first,
        scale_inv_.data() + std::int64_t{first} * inv_stride, stream, inv_stride);
  }
  /// Every history tensor's history takes its step amax (zeroed after); its scale follows the max.
  void update_delayed(int margin, gpuStream_t stream) {
    backend::Gpu::fp8_delayed_scale_update(history_buf_.data(), history_, amax_.data(), base_,
                                           format_, margin, scale_.data(), scale_inv_.data(),
                                           stream, inv_stride);
  }
  /// Scales to the host (tests compare them with the CPU emulation's).
  std::vector<float> scales() const { return scale_.download(); }

 private:
  kernels::Fp8Format format_ = kernels::Fp8Format::e4m3;
  int base_ = 0, count_ = 0, history_ = 0;
  backend::DeviceBuffer<float> amax_, amax_now_, scale_, scale_inv_, history_buf_;
};

}  // namespace tprimat::train::device
