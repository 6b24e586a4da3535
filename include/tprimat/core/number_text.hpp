// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Numbers as text for people: fixed decimals, thousands separators, percentages; "n/a" for NaN.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace tprimat::core {

/// `v` with `decimals` digits; "n/a" for NaN, so an unknown never prints as a number.
inline std::string num(double v, int decimals = 1) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

/// 87933.4 -> "87,933" (decimals = 0); thousands separators, the seeds' style for tokens/s.
inline std::string grouped(double v, int decimals = 0) {
  if (!std::isfinite(v)) return "n/a";
  std::string s = num(std::fabs(v), decimals);
  const auto dot = s.find('.');
  std::string head = s.substr(0, dot), tail = dot == std::string::npos ? "" : s.substr(dot);
  std::string out;
  for (std::size_t i = 0; i < head.size(); ++i) {
    if (i > 0 && (head.size() - i) % 3 == 0) out += ',';
    out += head[i];
  }
  return (v < 0 ? "-" : "") + out + tail;
}

/// "12.3%" from a fraction.
inline std::string percent(double fraction, int decimals = 1) {
  return std::isfinite(fraction) ? num(100 * fraction, decimals) + "%" : "n/a";
}

}  // namespace tprimat::core
