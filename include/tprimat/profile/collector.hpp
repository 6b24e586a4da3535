// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// ActivityCollector: what a backend's device tracer (CUPTI for CUDA) offers the step profiler.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tprimat/profile/trace_event.hpp"

namespace tprimat::profile {

/// Device activity (kernels, copies, memsets) of the profiled steps. Constructed only when this
/// process profiles; calls happen once per profiling cycle (start/stop) and per host range
/// (push/pop), never per kernel.
class ActivityCollector {
 public:
  virtual ~ActivityCollector() = default;
  virtual std::string name() const = 0;  ///< "cupti"
  /// Starts recording (the schedule's first warm-up step).
  virtual void start() = 0;
  /// Waits for the device, stops recording and returns what was recorded since start(), its
  /// timestamps on the host's steady_clock (nanoseconds since its epoch).
  virtual std::vector<TraceEvent> stop() = 0;
  /// The host range `id` opens / closes: work launched inside carries it as its external id.
  virtual void push_correlation(std::uint64_t id) = 0;
  virtual void pop_correlation() = 0;
};

/// The device collector of `Backend`; nullptr (host ranges only) for backends without one.
/// A backend with one specialises this where it is declared (profile/cupti.hpp for CUDA).
template <class Backend>
std::unique_ptr<ActivityCollector> make_collector() {
  return nullptr;
}

}  // namespace tprimat::profile
