// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The FP8 cast reference against hand-checked bytes, and the device cast's bit arithmetic
// (fp8_convert.hpp, run here on the host) against the reference over every bf16 pattern.
#include "tprimat/kernels/fp8_cast_reference.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "tprimat/kernels/fp8_convert.hpp"

namespace tprimat::kernels {
namespace {

constexpr float inf = std::numeric_limits<float>::infinity();
const float nan = std::numeric_limits<float>::quiet_NaN();

struct Case {
  float x;
  std::uint8_t byte;
};

// Each byte worked out by hand from the format's layout (sign.exponent.mantissa, bias).
void expect_cases(Fp8Format f, std::initializer_list<Case> cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(int(fp8_reference_cast(c.x, f)), int(c.byte))
        << "format " << int(f) << " x " << c.x << " (" << std::hexfloat << c.x << ")";
    EXPECT_EQ(int(fp8_from_float(c.x, f)), int(c.byte))
        << "bit arithmetic, format " << int(f) << " x " << std::hexfloat << c.x;
  }
}

TEST(Fp8CastReference, E4m3HandChecked) {
  expect_cases(Fp8Format::e4m3,
               {{0.0f, 0x00},      {-0.0f, 0x80},
                {1.0f, 0x38},      {-1.0f, 0xb8},
                {1.0625f, 0x38},  // midway 1 (000) and 1.125 (001): even 000
                {1.1875f, 0x3a},  // midway 1.125 (001) and 1.25 (010): even 010
                {1.0626f, 0x39},  // just past the midway point
                {416.0f, 0x7d},   // 1.101 x 2^8
                {432.0f, 0x7e},   // midway 416 (101) and 448 (110): even 110
                {448.0f, 0x7e},    {449.0f, 0x7e},
                {464.0f, 0x7e},    {1e30f, 0x7e},
                {-500.0f, 0xfe},   {inf, 0x7e},
                {-inf, 0xfe},      {nan, 0x7f},
                {0x1p-9f, 0x01},   // smallest subnormal
                {0x1p-10f, 0x00},  // midway 0 and 2^-9: even 0
                {-0x1p-10f, 0x80}, {0x1.000002p-10f, 0x01},
                {0x1.8p-9f, 0x02},  // 1.5 quanta: even 2
                {0x1.cp-7f, 0x07},  // largest subnormal 7 x 2^-9
                {0x1.ep-7f, 0x08},  // midway 7 x 2^-9 and 2^-6: even 0x08 (the smallest normal)
                {0x1p-6f, 0x08},   {0x1p-140f, 0x00},
                {-0x1p-140f, 0x80}});
}

TEST(Fp8CastReference, E5m2HandChecked) {
  expect_cases(Fp8Format::e5m2,
               {
                   {0.0f, 0x00},
                   {-0.0f, 0x80},
                   {1.0f, 0x3c},
                   {1.125f, 0x3c},  // midway 1 (00) and 1.25 (01): even 00
                   {1.375f, 0x3e},  // midway 1.25 (01) and 1.5 (10): even 10
                   {57344.0f, 0x7b},
                   {61440.0f, 0x7b},
                   {1e30f, 0x7b},
                   {inf, 0x7b},
                   {-inf, 0xfb},
                   {nan, 0x7f},
                   {0x1p-16f, 0x01},  // smallest subnormal
                   {0x1p-17f, 0x00},  // midway 0 and 2^-16: even 0
                   {-0x1p-17f, 0x80},
                   {0x1.8p-15f, 0x03},  // 3 x 2^-16 exactly
                   {0x1.cp-15f, 0x04}   // 3.5 quanta: midway 3 and 4, even 4 (the smallest normal)
               });
}

TEST(Fp8CastReference, E4m3FnuzHandChecked) {
  expect_cases(Fp8Format::e4m3_fnuz,
               {{0.0f, 0x00},
                {-0.0f, 0x00},
                {1.0f, 0x40},
                {-1.0f, 0xc0},
                {224.0f, 0x7e},
                {232.0f, 0x7e},  // midway 224 (110) and 240 (111): even 110
                {233.0f, 0x7f},
                {240.0f, 0x7f},
                {250.0f, 0x7f},
                {inf, 0x7f},
                {-inf, 0xff},
                {nan, 0x80},
                {-nan, 0x80},
                {0x1p-10f, 0x01},
                {-0x1p-10f, 0x81},  // smallest subnormal
                {-0x1p-11f, 0x00},  // midway to 0: rounds to zero, and fnuz has no -0
                {-0x1p-12f, 0x00}});
}

TEST(Fp8CastReference, E5m2FnuzHandChecked) {
  expect_cases(Fp8Format::e5m2_fnuz, {{0.0f, 0x00},
                                      {-0.0f, 0x00},
                                      {1.0f, 0x40},
                                      {57344.0f, 0x7f},
                                      {60000.0f, 0x7f},
                                      {inf, 0x7f},
                                      {-inf, 0xff},
                                      {nan, 0x80},
                                      {0x1p-17f, 0x01},
                                      {0x1p-18f, 0x00},
                                      {-0x1p-18f, 0x00},
                                      {-0x1.000002p-18f, 0x81}});
}

TEST(Fp8CastReference, EveryValueCastsToItself) {
  for (const Fp8Format f : all_fp8_formats)
    for (int b = 0; b < 256; ++b) {
      const float v = fp8_to_float(std::uint8_t(b), f);
      if (std::isnan(v) || std::isinf(v)) continue;
      if (fp8_spec(f).fnuz && b == 0x80) continue;
      EXPECT_EQ(int(fp8_reference_cast(v, f)), b) << "format " << int(f);
    }
}

TEST(Fp8CastReference, Bf16PatternsAreTheirFloats) {
  EXPECT_EQ(int(fp8_reference_cast_bf16(0x3f80, Fp8Format::e4m3)), 0x38);       // 1.0
  EXPECT_EQ(int(fp8_reference_cast_bf16(0xff80, Fp8Format::e5m2)), 0xfb);       // -inf
  EXPECT_EQ(int(fp8_reference_cast_bf16(0x7fc0, Fp8Format::e4m3_fnuz)), 0x80);  // NaN
}

// The device cast's arithmetic on every bf16 pattern, scaled as the kernels scale (one fp32
// multiply), bit for bit: the GPU tests then compare the kernels against the same reference.
TEST(Fp8Convert, EveryBf16PatternAtSeveralScales) {
  for (const Fp8Format f : all_fp8_formats)
    for (const float scale : {1.0f, 0x1p-8f, 0x1p8f, 0.7371f, 3.1e4f})
      for (std::uint32_t bits = 0; bits < 65536; ++bits) {
        const float x = std::bit_cast<float>(bits << 16) * scale;
        ASSERT_EQ(int(fp8_from_float(x, f)), int(fp8_reference_cast(x, f)))
            << "format " << int(f) << " bf16 0x" << std::hex << bits << " scale " << scale;
      }
}

TEST(Fp8Convert, RandomFloatPatterns) {
  const std::uint64_t seed = std::random_device{}();
  std::mt19937 rng(static_cast<std::uint32_t>(seed));
  for (const Fp8Format f : all_fp8_formats)
    for (int i = 0; i < 400000; ++i) {
      std::uint32_t bits = rng();
      // Half of them with the exponent pulled into the FP8 range, where rounding happens.
      if (i % 2) bits = (bits & 0x807fffffu) | ((100u + rng() % 50u) << 23);
      const float x = std::bit_cast<float>(bits);
      ASSERT_EQ(int(fp8_from_float(x, f)), int(fp8_reference_cast(x, f)))
          << "format " << int(f) << " bits 0x" << std::hex << bits << " seed " << seed;
    }
}

// Every fp32 within a few ulps of each midpoint between neighbours (and of each value): where
// ties and saturation decide the byte.
TEST(Fp8Convert, AroundEveryMidpoint) {
  for (const Fp8Format f : all_fp8_formats) {
    const std::vector<double>& v = fp8_reference_values(f);
    std::vector<float> points;
    for (std::size_t i = 0; i < v.size(); ++i) {
      points.push_back(float(v[i]));
      points.push_back(float(i + 1 < v.size() ? 0.5 * (v[i] + v[i + 1]) : 1.5 * v[i]));
    }
    for (const float p : points)
      for (int d = -3; d <= 3; ++d)
        for (const float sign : {1.0f, -1.0f}) {
          const float x =
              sign * std::bit_cast<float>(std::bit_cast<std::uint32_t>(p) + std::uint32_t(d));
          if (std::isnan(x)) continue;
          ASSERT_EQ(int(fp8_from_float(x, f)), int(fp8_reference_cast(x, f)))
              << "format " << int(f) << " x " << std::hexfloat << x;
        }
  }
}

TEST(Fp8CastReference, ScaleRule) {
  EXPECT_EQ(fp8_reference_scale(2.0f, 5.0f, Fp8Format::e4m3, 0), 224.0f);
  EXPECT_EQ(fp8_reference_scale(2.0f, 5.0f, Fp8Format::e4m3, 1), 112.0f);
  EXPECT_EQ(fp8_reference_scale(0.0f, 5.0f, Fp8Format::e4m3, 0), 5.0f);
  EXPECT_EQ(fp8_reference_scale(inf, 5.0f, Fp8Format::e5m2, 0), 5.0f);
  EXPECT_EQ(fp8_reference_scale(nan, 5.0f, Fp8Format::e5m2, 0), 5.0f);
  EXPECT_EQ(fp8_reference_scale(1e-45f, 5.0f, Fp8Format::e5m2, 0), 3.402823466e+38f);
}

}  // namespace
}  // namespace tprimat::kernels
