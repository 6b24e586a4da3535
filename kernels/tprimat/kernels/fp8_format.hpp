// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The four 8-bit float formats (OCP E4M3/E5M2, AMD's fnuz variants) and the exact value of a byte.
#pragma once

#include <bit>
#include <cstdint>

#include "tprimat/config.hpp"

namespace tprimat::kernels {

// FP8 data lives on the device as plain bytes (std::uint8_t); what a byte means is its format,
// carried beside it. Hopper and gfx950 use the OCP formats; gfx942 (MI300X) the "fnuz" ones:
// a bias one higher, no infinities, no negative zero, and 0x80 as the only NaN.
enum class Fp8Format : std::uint8_t {
  e4m3,       ///< OCP E4M3 ("FN"): bias 7, max 448, no infinities, NaN S.1111.111
  e5m2,       ///< OCP E5M2: bias 15, max 57344, infinities, NaNs as IEEE
  e4m3_fnuz,  ///< gfx942 E4M3: bias 8, max 240
  e5m2_fnuz,  ///< gfx942 E5M2: bias 16, max 57344
};

/// Every format, in the enum's order.
inline constexpr Fp8Format all_fp8_formats[] = {Fp8Format::e4m3, Fp8Format::e5m2,
                                                Fp8Format::e4m3_fnuz, Fp8Format::e5m2_fnuz};

/// The layout of one format.
struct Fp8Spec {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  float max_finite;   ///< the largest finite magnitude: where a saturating cast stops
  bool has_infinity;  ///< E5M2 (OCP) only
  bool fnuz;          ///< finite and NaN-unsigned-zero: 0x80 is NaN, there is no -0
};

TPRIMAT_HOST_DEVICE constexpr Fp8Spec fp8_spec(Fp8Format f) {
  switch (f) {
    case Fp8Format::e4m3: return {4, 3, 7, 448.0f, false, false};
    case Fp8Format::e5m2: return {5, 2, 15, 57344.0f, true, false};
    case Fp8Format::e4m3_fnuz: return {4, 3, 8, 240.0f, false, true};
    case Fp8Format::e5m2_fnuz: return {5, 2, 16, 57344.0f, false, true};
  }
  return {4, 3, 7, 448.0f, false, false};
}

/// The format's name as results and messages spell it: "e4m3", "e5m2", "e4m3_fnuz", "e5m2_fnuz".
constexpr const char* fp8_format_name(Fp8Format f) {
  switch (f) {
    case Fp8Format::e4m3: return "e4m3";
    case Fp8Format::e5m2: return "e5m2";
    case Fp8Format::e4m3_fnuz: return "e4m3_fnuz";
    case Fp8Format::e5m2_fnuz: return "e5m2_fnuz";
  }
  return "?";
}

/// Whether byte `b` is a NaN of format `f`.
TPRIMAT_HOST_DEVICE constexpr bool fp8_is_nan(std::uint8_t b, Fp8Format f) {
  const Fp8Spec s = fp8_spec(f);
  if (s.fnuz) return b == 0x80;
  const std::uint8_t magnitude = b & 0x7f;
  if (!s.has_infinity) return magnitude == 0x7f;                 // E4M3: S.1111.111 only
  const std::uint8_t exponent_all_ones = 0x7f & ~((1u << s.mantissa_bits) - 1u);
  return magnitude > exponent_all_ones;                           // E5M2: S.11111.mm, mm != 0
}

/// The exact value of byte `b` in format `f` (every FP8 value is a float; NaN for the NaNs).
TPRIMAT_HOST_DEVICE constexpr float fp8_to_float(std::uint8_t b, Fp8Format f) {
  const Fp8Spec s = fp8_spec(f);
  if (fp8_is_nan(b, f)) return std::bit_cast<float>(0x7fc00000u);
  const bool negative = (b & 0x80) != 0;
  const int exponent = (b & 0x7f) >> s.mantissa_bits;
  const int mantissa = b & ((1 << s.mantissa_bits) - 1);
  float magnitude;
  if (s.has_infinity && exponent == (1 << s.exponent_bits) - 1) {
    magnitude = std::bit_cast<float>(0x7f800000u);
  } else {
    // value = (exponent ? 1.m : 0.m) * 2^(max(exponent, 1) - bias), built as an fp32 bit
    // pattern: every FP8 value, subnormals included, is a normal fp32.
    int e = exponent == 0 ? 1 - s.bias : exponent - s.bias;
    int m = mantissa << (23 - s.mantissa_bits);
    if (exponent == 0) {
      if (mantissa == 0) return negative ? -0.0f : 0.0f;
      while ((m & (1 << 23)) == 0) {  // normalise the subnormal
        m <<= 1;
        --e;
      }
      m &= (1 << 23) - 1;
    }
    magnitude = std::bit_cast<float>(static_cast<std::uint32_t>(e + 127) << 23 |
                                     static_cast<std::uint32_t>(m));
  }
  return negative ? -magnitude : magnitude;
}

}  // namespace tprimat::kernels
