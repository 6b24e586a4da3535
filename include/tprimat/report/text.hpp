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

/// `text` with each control character written as an escape (`\n`, `\t`, `\x1b`, `\u009b`) and
/// each byte that is not part of valid UTF-8 as '?': a name taken from a result file or a folder
/// cannot break a table's row, a data file's line, or drive the terminal.
inline std::string printable(std::string_view text) {
  std::string out;
  const auto escape = [&](const char* fmt, unsigned code) {
    char buf[8];
    std::snprintf(buf, sizeof buf, fmt, code);
    out += buf;
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '\n')
        out += "\\n";
      else if (c == '\r')
        out += "\\r";
      else if (c == '\t')
        out += "\\t";
      else if (c < 0x20 || c == 0x7f)
        escape("\\x%02x", c);
      else
        out += static_cast<char>(c);
      ++i;
      continue;
    }
    // The length a lead byte announces, and the smallest code point that length may encode.
    const std::size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                            : c >= 0xE0 && c <= 0xEF ? 3
                            : c >= 0xF0 && c <= 0xF4 ? 4
                                                     : 0;
    unsigned code = len == 2 ? c & 0x1Fu : len == 3 ? c & 0x0Fu : c & 0x07u;
    bool valid = len > 0 && i + len <= text.size();
    for (std::size_t k = 1; valid && k < len; ++k) {
      const auto cont = static_cast<unsigned char>(text[i + k]);
      valid = (cont & 0xC0) == 0x80;
      code = (code << 6) | (cont & 0x3Fu);
    }
    valid = valid &&
            code >= (len == 3   ? 0x800u
                     : len == 4 ? 0x10000u
                                : 0x80u) &&
            code <= 0x10FFFF && !(code >= 0xD800 && code <= 0xDFFF);
    if (!valid) {
      out += '?';
      ++i;
    } else if (code < 0xA0) {  // C1 controls: 0x9b starts a terminal escape sequence
      escape("\\u%04x", code);
      i += len;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

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
