// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The CPU reference of a saturating FP8 cast: the nearest of the format's values, ties to even.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tprimat/kernels/fp8_format.hpp"

namespace tprimat::kernels {

// Host code, written apart from the device cast's bit arithmetic (fp8_convert.hpp) so that each
// checks the other: it searches the format's decoded values (fp8_to_float) instead of shifting
// bits. It lives beside fp8_format.hpp because it defines what a byte should hold, for the GPU
// tests and for the CPU backend's FP8 emulation alike. The rules are Transformer Engine's
// saturating casts: finite magnitudes past max_finite and infinities become +-max_finite, NaN
// the format's NaN (0x7f for OCP, as Hopper's cvt.satfinite writes it; 0x80 for fnuz), and the
// sign of a zero (or of a value rounding to zero) is kept except in fnuz, which has no -0.

/// The non-negative finite values of format `f` in increasing order: bytes 0x00, 0x01, ... (the
/// sign bit off), up to the largest finite one.
inline const std::vector<double>& fp8_reference_values(Fp8Format f) {
  static const std::array<std::vector<double>, 4> tables = [] {
    std::array<std::vector<double>, 4> t;
    for (int k = 0; k < 4; ++k) {
      const auto format = static_cast<Fp8Format>(k);
      for (int b = 0; b < 0x80; ++b) {
        const float v = fp8_to_float(static_cast<std::uint8_t>(b), format);
        if (!std::isfinite(v)) break;  // E4M3's NaN, E5M2's infinity: nothing finite follows
        t[k].push_back(v);
      }
    }
    return t;
  }();
  return tables[static_cast<int>(f)];
}

/// The byte holding `x` in format `f`: round to nearest, ties to the even mantissa, saturating.
inline std::uint8_t fp8_reference_cast(float x, Fp8Format f) {
  const Fp8Spec s = fp8_spec(f);
  if (std::isnan(x)) return s.fnuz ? 0x80 : 0x7f;
  const bool negative = std::signbit(x);
  const double magnitude = std::fabs(static_cast<double>(x));
  const std::vector<double>& values = fp8_reference_values(f);
  // The first value above x; x lies between its predecessor and it. Past the largest value
  // (infinity included) the cast saturates to the largest.
  const auto above = std::upper_bound(values.begin(), values.end(), magnitude);
  std::size_t byte = values.size() - 1;
  if (above != values.end()) {
    const std::size_t hi = static_cast<std::size_t>(above - values.begin());
    const std::size_t lo = hi - 1;  // values[0] = 0 <= magnitude, so hi >= 1
    // Nearest of the two; at the midpoint (exact in double) the even byte, whose last bit is the
    // mantissa's last bit.
    const double mid = 0.5 * (values[lo] + values[hi]);
    if (magnitude < mid || (magnitude == mid && lo % 2 == 0)) {
      byte = lo;
    } else {
      byte = hi;
    }
  }
  if (byte == 0 && s.fnuz) return 0x00;  // fnuz: no -0, and 0x80 is its NaN
  return static_cast<std::uint8_t>(negative ? (byte | 0x80) : byte);
}

/// The same for a bf16 given as its bit pattern (bf16 is the top half of an fp32).
inline std::uint8_t fp8_reference_cast_bf16(std::uint16_t bits, Fp8Format f) {
  return fp8_reference_cast(std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16), f);
}

/// The scale a tensor of this amax gets: max_finite / amax / 2^margin; `previous` where amax is 0
/// or not finite (nothing to learn from it), and FLT_MAX where the quotient overflows (an amax
/// that small). Transformer Engine's rule, for delayed and current scaling alike.
inline float fp8_reference_scale(float amax, float previous, Fp8Format f, int margin) {
  if (!(amax > 0.0f) || !std::isfinite(amax)) return previous;
  float scale = fp8_spec(f).max_finite / amax;
  scale = std::ldexp(scale, -margin);
  return std::isfinite(scale) ? scale : 3.402823466e+38f;
}

}  // namespace tprimat::kernels
