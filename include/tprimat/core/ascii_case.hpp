// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Case folding of names people type and programs write (bf16, H200, Kernel): ASCII letters only,
// whatever the process's locale, so that a name matches the same way on every machine.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

namespace tprimat::core {

/// `c` with an ASCII capital made small; every other byte as it is.
constexpr char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

/// `text` with its ASCII capitals made small.
inline std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

/// Whether `text` holds `part`, case aside ("NVIDIA H200" holds "h200").
constexpr bool contains_ignoring_case(std::string_view text, std::string_view part) {
  return std::search(text.begin(), text.end(), part.begin(), part.end(), [](char x, char y) {
           return ascii_lower(x) == ascii_lower(y);
         }) != text.end();
}

}  // namespace tprimat::core
