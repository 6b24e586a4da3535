// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The `profiling` block of a result JSON: what was recorded, where the traces are, what it cost.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "tprimat/profile/settings.hpp"
#include "tprimat/profile/overhead.hpp"

namespace tprimat::profile {

/// `seconds` holds run 1's step times in step order (warm-up steps first), `first_measured` the
/// index of its first measured step; only run 1 is profiled. `collector` is "cupti" or "host".
inline nlohmann::json result_json(const Settings& s, int world, const std::filesystem::path& dir,
                                  std::string_view stack, std::string_view model,
                                  std::string_view collector, int first_measured,
                                  std::span<const double> seconds) {
  nlohmann::json traces = nlohmann::json::array(), ranks = nlohmann::json::array();
  for (int r = 0; r < world; ++r) {
    if (!s.profiles(r)) continue;
    ranks.push_back(r);
    traces.push_back((dir / trace_file_name(stack, model, r, s.gzip)).string());
  }
  nlohmann::json recorded = nlohmann::json::array();
  for (int i = 0; i < static_cast<int>(seconds.size()); ++i)
    if (s.schedule.records(i)) recorded.push_back(i);
  return {{"enabled", true},
          {"collector", collector},
          {"schedule",
           {{"wait", s.schedule.wait},
            {"warmup", s.schedule.warmup},
            {"active", s.schedule.active},
            {"repeat", s.schedule.repeat}}},
          {"ranks", ranks},
          {"traces", traces},
          {"recorded_steps", recorded},
          {"overhead", overhead_json(measure_overhead(s.schedule, first_measured, seconds))}};
}

}  // namespace tprimat::profile
