// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Summary statistics of timing samples: mean, median, sample std, extremes, 95% CI (Student t).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

namespace tprimat::core {

namespace detail {
inline constexpr double nan = std::numeric_limits<double>::quiet_NaN();
}

/// Arithmetic mean; NaN for no samples (written as JSON null, never as a made-up 0).
inline double mean(std::span<const double> x) {
  if (x.empty()) return detail::nan;
  return std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
}

/// Median (mean of the two middle values for an even count); NaN for no samples.
inline double median(std::span<const double> x) {
  if (x.empty()) return detail::nan;
  std::vector<double> s(x.begin(), x.end());
  std::sort(s.begin(), s.end());
  const std::size_t n = s.size();
  return n % 2 == 1 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/// Sample standard deviation (n - 1 denominator); NaN below two samples, where it is undefined.
inline double sample_std(std::span<const double> x) {
  if (x.size() < 2) return detail::nan;
  const double m = mean(x);
  double ss = 0;
  for (double v : x) ss += (v - m) * (v - m);
  return std::sqrt(ss / static_cast<double>(x.size() - 1));
}

inline double min(std::span<const double> x) {
  return x.empty() ? detail::nan : *std::min_element(x.begin(), x.end());
}
inline double max(std::span<const double> x) {
  return x.empty() ? detail::nan : *std::max_element(x.begin(), x.end());
}

/// Two-sided 95% critical value of Student's t with `dof` degrees of freedom; NaN for dof < 1.
/// Exact table to 30 (where the series below is least accurate), Cornish-Fisher beyond
/// (error < 1e-4 there).
inline double t_critical_95(int dof) {
  static constexpr std::array<double, 30> table{
      12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
      2.2010,  2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
      2.0796,  2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};
  if (dof < 1) return detail::nan;
  if (dof <= 30) return table[static_cast<std::size_t>(dof - 1)];
  const double z = 1.959963984540054, v = dof;
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

/// Half-width of the 95% confidence interval of the mean: t(n-1) * s / sqrt(n); NaN below two.
inline double ci95_half_width(std::span<const double> x) {
  if (x.size() < 2) return detail::nan;
  return t_critical_95(static_cast<int>(x.size()) - 1) * sample_std(x) /
         std::sqrt(static_cast<double>(x.size()));
}

/// Everything above in one pass over the caller's samples.
struct Summary {
  std::size_t count = 0;
  double mean = detail::nan;
  double median = detail::nan;
  double std = detail::nan;
  double min = detail::nan;
  double max = detail::nan;
  double ci95 = detail::nan;  ///< half-width of the 95% CI of the mean
};

inline Summary summarize(std::span<const double> x) {
  return Summary{x.size(), core::mean(x), core::median(x), sample_std(x),
                 core::min(x), core::max(x), ci95_half_width(x)};
}

}  // namespace tprimat::core
