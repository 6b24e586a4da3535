// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The name a mistyped one was meant to be: one rule for flags and config keys alike.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tprimat/core/ascii_case.hpp"

namespace tprimat::core {

/// Levenshtein distance: insertions, deletions and substitutions that turn `a` into `b`.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

/// The name of `names` nearest to `word`, when near enough to be a slip of the keyboard (a third
/// of the word's letters, at least one) or a prefix of it; nullopt otherwise.
inline std::optional<std::string> nearest(std::string_view word,
                                          const std::vector<std::string>& names) {
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(1, word.size() / 3) + 1;
  const std::string w = ascii_lower(word);
  for (const auto& name : names) {
    const std::string n = ascii_lower(name);  // BENCH is a slip of bench
    const std::size_t d = n.rfind(w, 0) == 0 && w.size() >= 2 ? 0 : edit_distance(w, n);
    if (d < best_distance) {
      best = name;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace tprimat::core
