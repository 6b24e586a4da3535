// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// PhaseTimer: GPU time of an eager step per category (gemm, attention, ...), from events between
// ops (DeviceOptions::phase_timing).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/train/device/resources.hpp"

namespace tprimat::train::device {

/// mark(c) records an event on the engine's stream: the GPU time until the next mark is charged
/// to category c. Marks record only between begin(true) and end() (eager steps: a graph replays
/// without host marks), so the ops call mark() unconditionally.
class PhaseTimer {
 public:
  void bind(gpuStream_t stream) { stream_ = stream; }

  void begin(bool on) {
    timing_ = on;
    used_ = 0;
  }
  /// Stops recording; the step's events are read by collect() once the step has finished.
  void end() { timing_ = false; }
  bool recorded() const { return used_ > 0; }

  void mark(const char* category) {
    if (!timing_) return;
    if (used_ == events_.size()) {
      events_.emplace_back(EventUse::timing);
      categories_.push_back(category);
    }
    categories_[used_] = category;
    backend::gpu_check(gpuEventRecord(events_[used_++], stream_), "gpuEventRecord");
  }

  /// Seconds per category over the last recorded step (its events must have completed).
  void collect() {
    totals_.clear();
    for (std::size_t i = 0; i + 1 < used_; ++i) {
      float ms = 0;
      backend::gpu_check(gpuEventElapsedTime(&ms, events_[i], events_[i + 1]), "phase timing");
      const std::string name = categories_[i];
      auto it = std::find_if(totals_.begin(), totals_.end(),
                             [&](const auto& p) { return p.first == name; });
      if (it == totals_.end())
        totals_.emplace_back(name, ms * 1e-3);
      else
        it->second += ms * 1e-3;
    }
  }
  const std::vector<std::pair<std::string, double>>& totals() const { return totals_; }

 private:
  gpuStream_t stream_ = nullptr;
  bool timing_ = false;
  std::vector<OwnedEvent> events_;
  std::vector<const char*> categories_;
  std::size_t used_ = 0;
  std::vector<std::pair<std::string, double>> totals_;
};

}  // namespace tprimat::train::device
