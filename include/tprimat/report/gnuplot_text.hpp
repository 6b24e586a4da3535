// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// What reaches gnuplot: scripts made of this program's literals and numbers, text only in data.
#pragma once

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tprimat/report/text.hpp"

namespace tprimat::report {

// gnuplot expands `backticks` in any string of a script as it parses it (double- or
// single-quoted), calls system("..."), and substitutes @macros: a label spliced into a script
// runs whatever a result file or a folder name holds. So no text from the data is ever script
// text. The script is a Script, which takes only string literals of this program and numbers;
// labels go into data files, which gnuplot reads as data (no expansion of any kind), and the
// script fetches them into variables (`stats ... using (var = strcol(n), 0)`): a variable's value
// is never parsed again.

/// gnuplot's `NaN` for unknowns: it skips such points instead of drawing a made-up 0.
inline std::string data_number(double v) {
  if (!std::isfinite(v)) return "NaN";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// A piece of script text: only a string literal converts to it (consteval), so nothing read at
/// run time, a result file's field or a folder name, can become one.
class ScriptLiteral {
 public:
  template <std::size_t N>
  consteval ScriptLiteral(const char (&text)[N]) : text_(text, N - 1) {}  // NOLINT: implicit
  constexpr std::string_view view() const { return text_; }

 private:
  std::string_view text_;
};

/// A gnuplot script built from ScriptLiterals and numbers alone.
class Script {
 public:
  Script& operator<<(ScriptLiteral s) {
    text_ += s.view();
    return *this;
  }
  template <std::integral T>
  requires(!std::same_as<T, bool> && !std::same_as<T, char>) Script& operator<<(T n) {
    text_ += std::to_string(n);
    return *this;
  }
  Script& operator<<(double v) {
    text_ += data_number(v);
    return *this;
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

/// `text` as one quoted field of a gnuplot data file. gnuplot's data files have no escapes: a
/// double quote would end the field and a newline the row, so `"` becomes `'` and control
/// characters are written as escapes (printable()); the rest is kept as it is, inert there.
inline std::string data_string(std::string_view text) {
  std::string s = printable(text);
  for (char& c : s)
    if (c == '"') c = '\'';
  return "\"" + s + "\"";
}

/// One field of a data file row: a number (NaN for unknown), an RGB colour, or a string.
class DataField {
 public:
  template <class T>
  requires std::is_arithmetic_v<T> &&(!std::same_as<T, bool>)&&(!std::same_as<T, char>)
      DataField(T v)  // NOLINT: implicit, rows are written as {x, "label", value}
      : text_(std::is_integral_v<T> ? std::to_string(v) : data_number(static_cast<double>(v))) {}
  DataField(std::string_view s) : text_(data_string(s)) {}    // NOLINT: implicit
  DataField(const std::string& s) : text_(data_string(s)) {}  // NOLINT: implicit
  DataField(const char* s) : text_(data_string(s)) {}         // NOLINT: implicit
  static DataField colour(std::uint32_t rgb) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%06X", static_cast<unsigned>(rgb & 0xFFFFFFu));
    return DataField(Verbatim{}, buf);
  }
  const std::string& text() const { return text_; }

 private:
  struct Verbatim {};
  DataField(Verbatim, std::string text) : text_(std::move(text)) {}
  std::string text_;
};

/// A gnuplot data file: comment lines, rows of fields, blocks separated for `index`.
class DataFile {
 public:
  DataFile& comment(std::string_view text) {
    text_ += "# " + printable(text) + "\n";
    return *this;
  }
  DataFile& row(std::initializer_list<DataField> fields) {
    std::string line;
    for (const auto& f : fields) line += (line.empty() ? "" : " ") + f.text();
    text_ += line + "\n";
    return *this;
  }
  /// Two blank lines: what follows is the next `index` of the file.
  DataFile& next_block() {
    text_ += "\n\n";
    return *this;
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

/// The words of one figure: its title lines and named lists of labels (tick labels, key titles).
/// They are written to a data file and read by the script into gnuplot variables: `title_text`,
/// and one array per list whose element i (1-based) is the list's i-th label, '\n' kept.
class FigureText {
 public:
  /// Adds the lines of `text` ('\n' between them) to the title; "" adds nothing.
  void title_lines(std::string_view text) {
    if (text.empty()) return;
    std::size_t start = 0;
    while (start <= text.size()) {
      const auto end = std::min(text.find('\n', start), text.size());
      title_.emplace_back(text.substr(start, end - start));
      start = end + 1;
    }
  }
  /// Adds a list, read into the gnuplot array `name`.
  void list(ScriptLiteral name, std::vector<std::string> labels) {
    lists_.push_back({name, std::move(labels)});
  }

  /// The data file: index 0 holds the title (line, text), index k the k-th list (item, line,
  /// text), one row per line of a label.
  std::string data(std::string_view what) const {
    DataFile d;
    d.comment(std::string("the words of ") + std::string(what) +
              ", read by its script into variables (never part of the script)");
    d.comment("index 0: the title, one row per line");
    for (std::size_t i = 0; i < title_.size(); ++i) d.row({i + 1, title_[i]});
    for (const auto& [name, labels] : lists_) {
      d.next_block();
      d.comment("the gnuplot array " + std::string(name.view()) + ": item, line, text");
      for (std::size_t i = 0; i < labels.size(); ++i) {
        std::size_t line = 0, start = 0;
        while (start <= labels[i].size()) {
          const auto end = std::min(labels[i].find('\n', start), labels[i].size());
          d.row({i + 1, ++line, std::string_view(labels[i]).substr(start, end - start)});
          start = end + 1;
        }
      }
    }
    return d.text();
  }

  /// The script lines that read `file` (this figure's data()) into title_text and the arrays.
  void read_into(Script& gp, ScriptLiteral file) const {
    gp << "title_text = \"\"\n";
    if (!title_.empty())
      gp << "stats \"" << file
         << "\" index 0 using (title_text = title_text . ($1 > 1 ? \"\\n\" : \"\") . "
            "strcol(2), 0) nooutput\n";
    for (std::size_t k = 0; k < lists_.size(); ++k) {
      const auto& [name, labels] = lists_[k];
      if (labels.empty()) continue;  // an array of 0 elements is a syntax error
      gp << "array " << name << "[" << labels.size() << "]\n"
         << "do for [i=1:" << labels.size() << "] { " << name << "[i] = \"\" }\n"
         << "stats \"" << file << "\" index " << k + 1 << " using (" << name
         << "[int($1)] = " << name
         << "[int($1)] . ($2 > 1 ? \"\\n\" : \"\") . strcol(3), 0) nooutput\n";
    }
  }

 private:
  std::vector<std::string> title_;
  std::vector<std::pair<ScriptLiteral, std::vector<std::string>>> lists_;
};

/// `set xtics` naming x = 0, 1, ... n-1 with the array `name` (a FigureText list of n labels).
inline void xtics_from(Script& gp, ScriptLiteral name, std::size_t n) {
  gp << "set xtics () norotate font \",9\"\n";
  if (n > 0) gp << "do for [i=1:" << n << "] { set xtics add (" << name << "[i] i-1) }\n";
}

}  // namespace tprimat::report
