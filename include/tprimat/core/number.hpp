// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Numbers people type (flags, their environment variables): plain decimal, finite, in range.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "tprimat/core/error.hpp"

namespace tprimat::core {

/// The values a numeric flag takes: `least` to `most`, both included, except `least` itself when
/// `least_excluded` (a learning rate is above 0). The defaults are the type's whole range.
template <class T>
struct Range {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  T least = std::numeric_limits<T>::lowest();
  T most = std::numeric_limits<T>::max();
  bool least_excluded = false;
};

template <class T>
constexpr Range<T> between(T least, T most) {
  return {least, most, false};
}
template <class T>
constexpr Range<T> at_least(T least) {
  return {least, std::numeric_limits<T>::max(), false};
}
/// Above `least` (excluded), up to `most`.
template <class T>
constexpr Range<T> above(T least, T most = std::numeric_limits<T>::max()) {
  return {least, most, true};
}

namespace detail {

/// A bound as people write it: 1048576, 0.01, 100000, 1e+12; never a 309-digit expansion.
template <class T>
std::string bound_text(T v) {
  if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else {
    char buf[32];
    if (std::fabs(v) < 1e7 && v == std::floor(v))
      std::snprintf(buf, sizeof buf, "%.0f", double(v));
    else
      std::snprintf(buf, sizeof buf, "%g", double(v));
    return buf;
  }
}

/// Only these characters make a plain decimal number: no 0x/0b prefixes, no nan or inf, no
/// spaces. Floating point adds a point and an exponent.
inline bool plain_decimal(std::string_view s, bool floating) {
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) s.remove_prefix(1);
  if (s.empty()) return false;
  std::size_t digits = 0, points = 0, i = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') {
      ++digits;
    } else if (floating && c == '.' && ++points == 1) {
    } else {
      break;
    }
  }
  if (digits == 0) return false;
  if (i == s.size()) return true;
  if (!floating || (s[i] != 'e' && s[i] != 'E')) return false;
  ++i;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

/// Whether the decimal number `s` spells (sign, digits, point, exponent: what from_chars read) is
/// below 1 in magnitude: where from_chars reports result_out_of_range, that tells an underflow
/// (1e-400, 0.000…1) from an overflow (1e400), which it reports alike.
inline bool below_one(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  const auto digit = [&] { return i < s.size() && s[i] >= '0' && s[i] <= '9'; };
  long long whole_digits = 0, zeros_after_point = 0;  // past the leading zeros
  bool nonzero = false;
  for (; digit(); ++i)
    if (nonzero || s[i] != '0') {
      nonzero = true;
      ++whole_digits;
    }
  if (i < s.size() && s[i] == '.')
    for (++i; digit(); ++i)
      if (!nonzero) {
        if (s[i] == '0')
          ++zeros_after_point;
        else
          nonzero = true;
      }
  if (!nonzero) return true;
  // The power of ten of the first nonzero digit, then the exponent (held to ±1e12: any larger
  // is as far out of a double's range).
  long long power = whole_digits > 0 ? whole_digits - 1 : -(zeros_after_point + 1);
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    const bool negative = i < s.size() && s[i] == '-';
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    long long exponent = 0;
    for (; digit(); ++i) exponent = std::min(exponent * 10 + (s[i] - '0'), 1'000'000'000'000LL);
    power += negative ? -exponent : exponent;
  }
  return power < 0;
}

}  // namespace detail

/// A decimal number read from the front of a text, and where it ends.
struct DecimalRead {
  double value;
  std::size_t length;  ///< characters read
};

/// The decimal number `text` starts with, as from_chars reads it in general format (a leading '-',
/// never '+' or hexadecimal; nan and inf read as such), except past a double's range: beyond its
/// largest, ±infinity; closer to 0 than its smallest, ±0 (from_chars reports both alike).
/// nullopt where `text` starts with no number.
inline std::optional<DecimalRead> read_decimal(std::string_view text) {
  double v = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), v, std::chars_format::general);
  if (end == text.data()) return std::nullopt;
  const auto length = static_cast<std::size_t>(end - text.data());
  if (ec == std::errc::result_out_of_range) {
    const bool negative = text.front() == '-';
    if (detail::below_one(text.substr(0, length)))
      v = negative ? -0.0 : 0.0;
    else
      v = negative ? -std::numeric_limits<double>::infinity()
                   : std::numeric_limits<double>::infinity();
  }
  return DecimalRead{v, length};
}

/// "from 1 to 1048576", "0.5 or more", "above 0", "above 0 and at most 100000". An integer's
/// range names both ends (a value past either is refused, not clamped); a floating-point one
/// leaves out an end that is the type's.
template <class T>
std::string range_text(const Range<T>& r) {
  using L = std::numeric_limits<T>;
  const std::string least = detail::bound_text(r.least), most = detail::bound_text(r.most);
  if constexpr (std::is_integral_v<T>) {
    return r.least_excluded ? "above " + least + " and at most " + most
                            : "from " + least + " to " + most;
  } else {
    const bool no_least = r.least == L::lowest() && !r.least_excluded;
    const bool no_most = r.most == L::max();
    if (no_least && no_most) return "any finite value";
    if (r.least_excluded) return "above " + least + (no_most ? "" : " and at most " + most);
    if (no_least) return "at most " + most;
    if (no_most) return least + " or more";
    return "from " + least + " to " + most;
  }
}

/// `text` as a T, or an InputError naming `flag`, the text and the range. Integers are decimal
/// digits with an optional sign ("010" is ten, "0x10" and "1e3" are refused); floating point adds
/// a fraction and an exponent, and must be finite. Nothing is clamped: a value outside `r` or
/// outside T is refused.
template <class T>
T parse_number(std::string_view flag, std::string_view text, const Range<T>& r = {}) {
  constexpr bool floating = std::is_floating_point_v<T>;
  const Range<T> whole_type{};
  const bool ranged = r.least != whole_type.least || r.most != whole_type.most || r.least_excluded;
  const auto not_a_number = [&]() -> T {
    throw InputError(std::string(flag) + " takes " +
                         (floating ? "a finite decimal number" : "a whole number") +
                         (ranged ? " (" + range_text(r) + ")" : "") + ", got '" + shown(text) + "'",
                     "write it in plain decimal digits" +
                         std::string(floating ? ", e.g. 0.25 or 3e-4" : ", e.g. 16"));
  };
  // A signed flag read over its type's whole range has a narrower one checked later (a count is
  // 1 or more): the type's bounds are no value to suggest.
  const auto out_of_range = [&]() -> T {
    if (!ranged && std::is_signed_v<T>)
      throw InputError(std::string(flag) + " " + shown(text) + " is out of range",
                       text.front() == '-' ? "pass a larger value" : "pass a smaller value");
    throw InputError(
        std::string(flag) + " " + shown(text) + " is out of range (" + range_text(r) + ")",
        "pass " + std::string(flag) + " " + range_text(r));
  };
  if (!detail::plain_decimal(text, floating)) return not_a_number();
  const bool negative = text.front() == '-';
  if constexpr (std::is_unsigned_v<T>)
    if (negative) return out_of_range();
  std::string_view digits = text;
  if (digits.front() == '+') digits.remove_prefix(1);  // from_chars takes '-' only
  using Wide =
      std::conditional_t<floating, double,
                         std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>>;
  Wide wide{};
  std::from_chars_result res{};
  if constexpr (floating)
    res = std::from_chars(digits.data(), digits.data() + digits.size(), wide,
                          std::chars_format::general);
  else
    res = std::from_chars(digits.data(), digits.data() + digits.size(), wide);
  if (res.ec == std::errc::result_out_of_range) {
    if constexpr (floating)  // from_chars says so for overflow and for underflow alike
      throw InputError(std::string(flag) + " " + shown(text) +
                           (detail::below_one(digits) ? " is closer to 0 than a double holds"
                                                      : " is larger than a double holds"),
                       "pass " + std::string(flag) + " " + range_text(r));
    return out_of_range();
  }
  if (res.ec != std::errc{} || res.ptr != digits.data() + digits.size()) return not_a_number();
  if constexpr (floating)
    if (!std::isfinite(wide))
      throw InputError(std::string(flag) + " " + shown(text) + " is not a finite number",
                       "pass " + std::string(flag) + " " + range_text(r));
  // Wide holds every T: compare there, so that nothing narrows before the range check.
  if (wide < Wide(r.least) || (r.least_excluded && wide == Wide(r.least)) || wide > Wide(r.most))
    return out_of_range();
  return static_cast<T>(wide);
}

}  // namespace tprimat::core
