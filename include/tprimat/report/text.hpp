// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Number formatting and aligned tables, shared by the terminal output and the markdown reports.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/core/number_text.hpp"
#include "tprimat/core/printable.hpp"

namespace tprimat::report {

// Number formatting lives in core (the result's own checks use it too); the reports read it here.
using core::grouped;
using core::num;
using core::percent;

/// "mean ± std"; the std part is dropped when undefined (one sample).
inline std::string mean_std(double mean, double std, int decimals) {
  return std::isfinite(std) ? num(mean, decimals) + " ± " + num(std, decimals)
                            : num(mean, decimals);
}

// One escaping for every name printed (core/printable.hpp): reports, tables, profiles.
using core::printable;

/// "1 GPU", "8 GPUs".
inline std::string gpus_label(int n) { return std::to_string(n) + (n == 1 ? " GPU" : " GPUs"); }

using core::without_prefix;  // reports embed problem lines in sentences

/// Columns padded to their widest cell (UTF-8 aware enough for "±"); first row is the header.
/// Cells are kept printable(): a name holding a newline or an escape cannot break the table.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { add(std::move(header)); }
  void add(std::vector<std::string> row) {
    for (auto& cell : row) cell = printable(cell);
    rows_.push_back(std::move(row));
  }
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
      for (const auto& cell : rows_[i]) {
        out += " ";
        for (char c : cell) out += c == '|' ? std::string("\\|") : std::string(1, c);
        out += " |";
      }
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
