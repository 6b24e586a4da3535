// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Tick labels that fit their panels: only what differs between rows, wrapped, else numbered.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace tprimat::report {

/// Characters of tick text one report panel holds across its width: a 1800-pixel figure of three
/// columns leaves ~520 pixels of plot per panel, ~6 pixels per character at the ticks' 9 points.
inline constexpr int panel_width_chars = 80;
/// Lines a tick may take below its panel before the ticks become numbers: more would squeeze the
/// plots of a 1000-pixel figure (two rows of panels) into slivers.
inline constexpr int max_tick_lines = 6;

/// How the rows of one panel (bars, or strips) are named on its x axis.
struct TickLabels {
  std::vector<std::string> ticks;   ///< per row; lines separated by '\n'; "1".."n" when numbered
  std::vector<std::string> full;    ///< per row: every field, space-separated (data files, keys)
  std::vector<std::string> common;  ///< the fields all rows share, named once in the title
  bool numbered = false;            ///< the names did not fit: the figure's title lists them
  int lines = 1;                    ///< lines of the tallest tick, for the bottom margin

  /// "every result: nvd, 1 GPU": the `common` fields not in `known` (said already); "" if none.
  std::string common_line(const std::string& what,
                          const std::vector<std::string>& known = {}) const {
    std::string s;
    for (const auto& f : common)
      if (std::find(known.begin(), known.end(), f) == known.end()) s += (s.empty() ? "" : ", ") + f;
    return s.empty() ? s : what + ": " + s;
  }
  /// "name: 1 first row,  2 second row, ..." for the figure's title when numbered, else "";
  /// broken into lines of at most `width` characters (the figure is ~270 wide at 10 points).
  std::string key(const std::string& name, std::size_t width = 200) const {
    if (!numbered) return "";
    std::string s = name + ":";
    std::size_t line = s.size();  // characters on the current line
    for (std::size_t i = 0; i < full.size(); ++i) {
      const std::string entry = std::to_string(i + 1) + " " + full[i];
      const bool wrap = i > 0 && line + 3 + entry.size() > width;
      s += (i == 0 ? "  " : wrap ? ",\n" : ",  ") + entry;
      line = wrap ? entry.size() : line + 3 + entry.size();
    }
    return s;
  }
};

namespace detail {

/// `field` cut after underscores into lines of at most `width` characters; a piece longer than
/// that stays whole (the caller sees it does not fit).
inline std::vector<std::string> wrap_at_underscores(const std::string& field, std::size_t width) {
  std::vector<std::string> pieces;
  std::size_t start = 0;
  while (start < field.size()) {
    const auto us = field.find('_', start);
    const auto end = us == std::string::npos ? field.size() : us + 1;
    pieces.push_back(field.substr(start, end - start));
    start = end;
  }
  std::vector<std::string> lines;
  for (const auto& p : pieces) {
    if (!lines.empty() && lines.back().size() + p.size() <= width)
      lines.back() += p;
    else
      lines.push_back(p);
  }
  return lines;
}

}  // namespace detail

/// `rows[i]` holds the fields naming row i (platform, model, strategy, "8 GPUs", ...), all rows
/// the same fields in the same order. A field every row shares goes to `common` once, not under
/// every tick. The others make the tick, one field per line, cut after '_' where a field is wider
/// than its slot (`width_chars` / rows). Where a line still does not fit, or a tick takes more
/// than max_tick_lines, the ticks are numbers and `key()` spells them out: rotated labels of 40
/// characters would run into the next panel.
inline TickLabels tick_labels(const std::vector<std::vector<std::string>>& rows,
                              int width_chars = panel_width_chars) {
  TickLabels t;
  if (rows.empty()) return t;
  const std::size_t fields = rows.front().size();
  std::vector<bool> shared(fields, rows.size() > 1);  // one row: name it in full at its tick
  for (std::size_t f = 0; f < fields; ++f)
    for (const auto& r : rows)
      if (r[f] != rows.front()[f]) shared[f] = false;
  for (std::size_t f = 0; f < fields; ++f)
    if (shared[f] && !rows.front()[f].empty()) t.common.push_back(rows.front()[f]);

  const std::size_t slot =
      static_cast<std::size_t>(std::max(1, width_chars / static_cast<int>(rows.size()) - 1));
  bool fits = true;
  for (const auto& r : rows) {
    std::string full, tick;
    int lines = 0;
    for (std::size_t f = 0; f < fields; ++f) {
      if (r[f].empty()) continue;
      full += (full.empty() ? "" : " ") + r[f];
      if (shared[f]) continue;
      for (const auto& line : detail::wrap_at_underscores(r[f], slot)) {
        fits = fits && line.size() <= slot;
        tick += (tick.empty() ? "" : "\n") + line;
        ++lines;
      }
    }
    t.full.push_back(full);
    t.ticks.push_back(tick);
    t.lines = std::max(t.lines, lines);
  }
  if (!fits || t.lines > max_tick_lines) {
    t.numbered = true;
    t.lines = 1;
    for (std::size_t i = 0; i < t.ticks.size(); ++i) t.ticks[i] = std::to_string(i + 1);
  }
  return t;
}

/// One line per row for a line plot's key: the fields that differ between rows, space-separated
/// (the key has the width a tick lacks); all fields where every one is shared.
inline std::vector<std::string> series_labels(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::string> out;
  if (rows.empty()) return out;
  const std::size_t fields = rows.front().size();
  std::vector<bool> differs(fields, false);
  for (std::size_t f = 0; f < fields; ++f)
    for (const auto& r : rows)
      if (r[f] != rows.front()[f]) differs[f] = true;
  const bool none = std::none_of(differs.begin(), differs.end(), [](bool b) { return b; });
  for (const auto& r : rows) {
    std::string s;
    for (std::size_t f = 0; f < fields; ++f)
      if ((none || differs[f]) && !r[f].empty()) s += (s.empty() ? "" : " ") + r[f];
    out.push_back(s);
  }
  return out;
}

}  // namespace tprimat::report
