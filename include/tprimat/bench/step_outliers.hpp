// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Measured steps that stand out from the run's spread: a pause (SIGSTOP, preemption, another
// job on the GPU) recorded as a step, named in the result instead of hiding in its mean.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tprimat::bench {

/// A step stands out when it takes more than this many times the run's median step: far beyond
/// the spread of real steps (a GPU step varies by percents; the CPU's first measured step by tens
/// of percents), well below a pause of a second among steps of milliseconds.
inline constexpr double outlier_times_median = 5.0;
/// Fewer measured steps than this have no median to stand out from.
inline constexpr std::size_t outlier_min_steps = 3;

/// One step that stood out: its number among the measured steps (from 1) and its time.
struct StepOutlier {
  std::size_t step = 0;
  double seconds = 0;
};

/// The median of the finite values of `v`; NaN when there are none.
inline double median_of(std::vector<double> v) {
  std::erase_if(v, [](double x) { return !std::isfinite(x); });
  if (v.empty()) return NAN;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

/// The measured steps of `seconds` that take more than outlier_times_median times its median.
inline std::vector<StepOutlier> step_outliers(const std::vector<double>& seconds) {
  std::vector<StepOutlier> out;
  if (std::count_if(seconds.begin(), seconds.end(), [](double x) { return std::isfinite(x); }) <
      static_cast<std::ptrdiff_t>(outlier_min_steps))
    return out;
  const double median = median_of(seconds);
  if (!(median > 0)) return out;
  for (std::size_t i = 0; i < seconds.size(); ++i)
    if (seconds[i] > outlier_times_median * median) out.push_back({i + 1, seconds[i]});
  return out;
}

/// The result's `step_outliers` (an empty array when none) and one line each for the console:
/// "measured step 3 took 3.040 s, 301x the median 0.0101 s ...".
inline nlohmann::json step_outliers_json(const std::vector<double>& seconds,
                                         std::vector<std::string>* lines = nullptr) {
  auto out = nlohmann::json::array();
  const double median = median_of(seconds);
  for (const auto& o : step_outliers(seconds)) {
    out.push_back({{"step", o.step}, {"seconds", o.seconds}, {"times_median", o.seconds / median}});
    if (lines != nullptr) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "measured step %zu took %.4g s, %.0fx the median %.4g s: a pause (SIGSTOP, "
                    "preemption, another job) stands out from the run's spread; the mean "
                    "includes it, the median does not",
                    o.step, o.seconds, o.seconds / median, median);
      lines->emplace_back(buf);
    }
  }
  return out;
}

}  // namespace tprimat::bench
