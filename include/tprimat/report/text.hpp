// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Number formatting and aligned tables, shared by the terminal output and the markdown reports.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tprimat/core/error.hpp"

namespace tprimat::report {

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

/// "mean ± std"; the std part is dropped when undefined (one sample).
inline std::string mean_std(double mean, double std, int decimals) {
  return std::isfinite(std) ? num(mean, decimals) + " ± " + num(std, decimals)
                            : num(mean, decimals);
}

/// "1 GPU", "8 GPUs".
inline std::string gpus_label(int n) { return std::to_string(n) + (n == 1 ? " GPU" : " GPUs"); }

using core::without_prefix;  // reports embed problem lines in sentences

/// Columns padded to their widest cell (UTF-8 aware enough for "±"); first row is the header.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.size() == 1; }

  std::string text() const {
    const auto w = widths();
    std::string out;
    for (const auto& r : rows_) {
      std::string line;
      for (std::size_t c = 0; c < r.size(); ++c) {
        line += r[c];
        if (c + 1 < r.size()) line += std::string(w[c] - width(r[c]) + 2, ' ');
      }
      out += line + "\n";
    }
    return out;
  }

  std::string markdown() const {
    std::string out;
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      out += "|";
      for (const auto& cell : rows_[i]) out += " " + cell + " |";
      out += "\n";
      if (i == 0) {
        out += "|";
        for (std::size_t c = 0; c < rows_[0].size(); ++c) out += "---|";
        out += "\n";
      }
    }
    return out;
  }

 private:
  /// Code points, not bytes: "±" is two bytes and one column.
  static std::size_t width(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
    return n;
  }
  std::vector<std::size_t> widths() const {
    std::vector<std::size_t> w;
    for (const auto& r : rows_) {
      if (w.size() < r.size()) w.resize(r.size(), 0);
      for (std::size_t c = 0; c < r.size(); ++c) w[c] = std::max(w[c], width(r[c]));
    }
    return w;
  }
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace tprimat::report
