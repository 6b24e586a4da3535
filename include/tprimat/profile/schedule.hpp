// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The profiling schedule (wait / warmup / active / repeat) over step indices, as the seeds set it.
#pragma once

#include <optional>
#include <string>

namespace tprimat::profile {

/// What the profiler does during one step. The names and the state machine are
/// torch.profiler.schedule's (ProfilerAction), so a seeds' config means the same here.
enum class Phase {
  none,            ///< not profiled: nothing is recorded, nothing runs
  warmup,          ///< the collector runs, its records are dropped (absorbs its start-up cost)
  record,          ///< recorded
  record_and_save  ///< recorded, and the cycle ends with this step: the records are kept
};

/// The seeds' `profiling.schedule` (tprimat-readme "Profiler Configuration"): skip `wait` steps,
/// run the collector `warmup` steps, record `active` steps; `repeat` such cycles (0: cycles until
/// the run ends). Step indices count every step of a run from 0, the bench's warm-up steps
/// included, as torch.profiler counts prof.step() calls.
struct Schedule {
  int wait = 1;    ///< seeds' default
  int warmup = 1;  ///< seeds' default
  int active = 5;  ///< seeds' default
  int repeat = 1;  ///< seeds' default

  constexpr int cycle() const { return wait + warmup + active; }

  constexpr Phase phase(int step) const {
    if (step < 0 || active < 1) return Phase::none;
    if (repeat > 0 && step / cycle() >= repeat) return Phase::none;  // no repeat x cycle overflow
    const int in_cycle = step % cycle();
    if (in_cycle < wait) return Phase::none;
    if (in_cycle < wait + warmup) return Phase::warmup;
    return in_cycle < cycle() - 1 ? Phase::record : Phase::record_and_save;
  }

  constexpr bool records(int step) const {
    const Phase p = phase(step);
    return p == Phase::record || p == Phase::record_and_save;
  }

  /// The first step that is recorded: the collector starts `warmup` steps before it.
  constexpr int first_recorded() const { return wait + warmup; }
};

static_assert(Schedule{}.phase(0) == Phase::none && Schedule{}.phase(1) == Phase::warmup &&
              Schedule{}.phase(2) == Phase::record &&
              Schedule{}.phase(6) == Phase::record_and_save && Schedule{}.phase(7) == Phase::none);

/// Why a schedule cannot run, naming the field (the --profile-* flag or config key), or nullopt.
inline std::optional<std::string> schedule_error(const Schedule& s) {
  if (s.active < 1) return "active must be at least 1, got " + std::to_string(s.active);
  if (s.wait < 0) return "wait must be 0 or more, got " + std::to_string(s.wait);
  if (s.warmup < 0) return "warmup must be 0 or more, got " + std::to_string(s.warmup);
  if (s.repeat < 0)
    return "repeat must be 0 (until the run ends) or more, got " + std::to_string(s.repeat);
  return std::nullopt;
}

}  // namespace tprimat::profile
