// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// kernels/fp8_format.hpp: every byte of every format decodes to the value its layout defines.
#include "tprimat/kernels/fp8_format.hpp"

#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>

namespace tprimat::kernels {
namespace {

// The value of a byte from its fields with ldexp, written apart from the bit construction
// fp8_to_float uses; NaN and infinity per the format's rules as OCP and AMD state them.
double expected_value(std::uint8_t b, Fp8Format f) {
  const Fp8Spec s = fp8_spec(f);
  const int exponent = (b & 0x7f) >> s.mantissa_bits;
  const int mantissa = b & ((1 << s.mantissa_bits) - 1);
  const int max_exponent = (1 << s.exponent_bits) - 1;
  const double sign = (b & 0x80) ? -1.0 : 1.0;
  if (s.fnuz && b == 0x80) return NAN;
  if (f == Fp8Format::e4m3 && exponent == max_exponent && mantissa == (1 << s.mantissa_bits) - 1)
    return NAN;
  if (f == Fp8Format::e5m2 && exponent == max_exponent) return mantissa ? NAN : sign * INFINITY;
  const double fraction = double(mantissa) / (1 << s.mantissa_bits);
  return exponent == 0 ? sign * std::ldexp(fraction, 1 - s.bias)
                       : sign * std::ldexp(1 + fraction, exponent - s.bias);
}

TEST(Fp8Format, EveryByteOfEveryFormat) {
  for (const Fp8Format f : all_fp8_formats)
    for (int b = 0; b < 256; ++b) {
      const double want = expected_value(std::uint8_t(b), f);
      const float got = fp8_to_float(std::uint8_t(b), f);
      EXPECT_EQ(fp8_is_nan(std::uint8_t(b), f), std::isnan(want)) << int(f) << " byte " << b;
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << int(f) << " byte " << b;
      } else {
        EXPECT_EQ(double(got), want) << int(f) << " byte " << b;
        EXPECT_EQ(std::signbit(got), std::signbit(want)) << int(f) << " byte " << b;
      }
    }
}

TEST(Fp8Format, LargestFiniteAndSmallestSubnormal) {
  // The saturation bounds a cast clamps to, and the smallest step of each format.
  EXPECT_EQ(fp8_to_float(0x7e, Fp8Format::e4m3), 448.0f);
  EXPECT_EQ(fp8_to_float(0x7b, Fp8Format::e5m2), 57344.0f);
  EXPECT_EQ(fp8_to_float(0x7f, Fp8Format::e4m3_fnuz), 240.0f);
  EXPECT_EQ(fp8_to_float(0x7f, Fp8Format::e5m2_fnuz), 57344.0f);
  EXPECT_EQ(fp8_to_float(0x01, Fp8Format::e4m3), std::ldexp(1.0f, -9));
  EXPECT_EQ(fp8_to_float(0x01, Fp8Format::e5m2), std::ldexp(1.0f, -16));
  EXPECT_EQ(fp8_to_float(0x01, Fp8Format::e4m3_fnuz), std::ldexp(1.0f, -10));
  EXPECT_EQ(fp8_to_float(0x01, Fp8Format::e5m2_fnuz), std::ldexp(1.0f, -17));
  for (const Fp8Format f : all_fp8_formats) {
    float largest = 0;
    for (int b = 0; b < 128; ++b)
      if (!fp8_is_nan(std::uint8_t(b), f) && std::isfinite(fp8_to_float(std::uint8_t(b), f)))
        largest = std::fmax(largest, fp8_to_float(std::uint8_t(b), f));
    EXPECT_EQ(largest, fp8_spec(f).max_finite) << int(f);
  }
}

}  // namespace
}  // namespace tprimat::kernels
