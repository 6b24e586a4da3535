// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The cost of profiling, measured: step time of recorded steps against steps left alone.
#pragma once

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <span>

#include "tprimat/profile/schedule.hpp"

namespace tprimat::profile {

struct Overhead {
  int profiled_steps = 0;
  int unprofiled_steps = 0;
  double profiled_mean = std::numeric_limits<double>::quiet_NaN();    ///< seconds
  double unprofiled_mean = std::numeric_limits<double>::quiet_NaN();  ///< seconds
  /// profiled / unprofiled - 1; NaN when either kind of step is missing.
  double fraction() const { return profiled_mean / unprofiled_mean - 1.0; }
};

/// Over the measured steps (index >= `first_measured`: the bench's warm-up steps are slow for
/// their own reasons), the mean time of steps the schedule records against that of steps it
/// leaves alone (Phase::none; warm-up steps, where the collector already runs, count as
/// neither). `seconds[i]` is step i's time.
inline Overhead measure_overhead(const Schedule& schedule, int first_measured,
                                 std::span<const double> seconds) {
  Overhead o;
  double on = 0, off = 0;
  for (int i = first_measured; i < static_cast<int>(seconds.size()); ++i) {
    if (schedule.records(i)) {
      on += seconds[i];
      ++o.profiled_steps;
    } else if (schedule.phase(i) == Phase::none) {
      off += seconds[i];
      ++o.unprofiled_steps;
    }
  }
  if (o.profiled_steps > 0) o.profiled_mean = on / o.profiled_steps;
  if (o.unprofiled_steps > 0) o.unprofiled_mean = off / o.unprofiled_steps;
  return o;
}

/// {"profiled_step_seconds", "unprofiled_step_seconds", "fraction", and the step counts};
/// null where not measured.
inline nlohmann::json overhead_json(const Overhead& o) {
  auto num = [](double v) {
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
  };
  return {{"profiled_step_seconds", num(o.profiled_mean)},
          {"unprofiled_step_seconds", num(o.unprofiled_mean)},
          {"fraction", num(o.fraction())},
          {"profiled_steps", o.profiled_steps},
          {"unprofiled_steps", o.unprofiled_steps}};
}

}  // namespace tprimat::profile
