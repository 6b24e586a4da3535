// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Settings read from environment variables (TPRIMAT_GEMM_TUNING, TPRIMAT_GNUPLOT_TIMEOUT, ...). A
// value that cannot be read is refused, never taken for the default: a misspelt "TPRIMAT_GEMM_
// TUNING=off" must not quietly time the candidates it meant to skip.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "tprimat/core/ascii_case.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/number.hpp"

namespace tprimat::core {

/// The value of environment variable `name`; nullopt where it is unset or empty.
inline std::optional<std::string> env_text(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

namespace detail {
inline InputError unreadable_env(const char* name, const std::string& value, std::string_view want,
                                 const std::string& fallback) {
  return InputError(
      "environment variable " + std::string(name) + "='" + shown(value) + "' cannot be read",
      "set it to " + std::string(want) + ", or unset it for the default (" + fallback + ")");
}
}  // namespace detail

/// A switch: 1/true/on/yes or 0/false/off/no (any case); `fallback` where unset.
inline bool env_switch(const char* name, bool fallback) {
  const auto v = env_text(name);
  if (!v) return fallback;
  const std::string lower = ascii_lower(*v);
  if (lower == "1" || lower == "true" || lower == "on" || lower == "yes") return true;
  if (lower == "0" || lower == "false" || lower == "off" || lower == "no") return false;
  throw detail::unreadable_env(name, *v, "0 or 1", fallback ? "1" : "0");
}

/// A number in `range` (parse_number's plain decimal); `fallback` where unset.
template <class T>
T env_number(const char* name, const Range<T>& range, T fallback) {
  const auto v = env_text(name);
  if (!v) return fallback;
  try {
    return parse_number(name, *v, range);
  } catch (const InputError&) {
    throw detail::unreadable_env(
        name, *v,
        std::string(std::is_integral_v<T> ? "a whole number " : "a number ") + range_text(range),
        detail::bound_text(fallback));
  }
}

}  // namespace tprimat::core
