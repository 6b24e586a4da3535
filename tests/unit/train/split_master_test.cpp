// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The GPU engine's split fp32 master (kernels/tprimat/kernels/split_float.hpp), on the host: the
// same functions the kernels call. Exactness of the round trip and the bf16 half's rounding.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "tprimat/kernels/split_float.hpp"

namespace {

using tprimat::kernels::join_float;
using tprimat::kernels::split_float;

std::uint32_t bits(float w) { return std::bit_cast<std::uint32_t>(w); }

/// The bf16 nearest to w with ties away from zero, computed in double: the reference for `hi`.
std::uint16_t nearest_bf16_ties_away(float w) {
  const std::uint32_t b = bits(w);
  const std::uint32_t down = b & 0xFFFF0000u, up = down + 0x10000u;  // magnitudes around |w|
  const double dw = std::fabs(double(w));
  const double dd = std::fabs(double(std::bit_cast<float>(down)));
  const double du = std::fabs(double(std::bit_cast<float>(up)));
  return static_cast<std::uint16_t>((du - dw <= dw - dd ? up : down) >> 16);
}

void expect_exact(float w) {
  std::uint16_t hi = 0, lo = 0;
  split_float(w, hi, lo);
  EXPECT_EQ(bits(join_float(hi, lo)), bits(w)) << "w bits 0x" << std::hex << bits(w);
}

TEST(SplitMaster, RoundTripIsExactOnRandomBitPatterns) {
  std::mt19937_64 rng(20261123);
  for (int i = 0; i < 2'000'000; ++i) {
    const float w = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
    if (std::isnan(w)) continue;  // NaN payloads are not weights
    expect_exact(w);
  }
}

TEST(SplitMaster, RoundTripIsExactForEveryRemainderOfSomeHighHalves) {
  // Every low half (all 65536) under high halves at the edges: zero, the smallest normals and
  // denormals, one, a binade edge, the largest finite, both signs.
  for (std::uint32_t high : {0x0000u, 0x0001u, 0x0080u, 0x3F80u, 0x3FFFu, 0x7F7Fu, 0x8000u,
                             0x8080u, 0xBF80u, 0xFF7Fu})
    for (std::uint32_t low = 0; low <= 0xFFFFu; ++low)
      expect_exact(std::bit_cast<float>((high << 16) | low));
}

TEST(SplitMaster, HighHalfIsTheNearestBf16TiesAwayFromZero) {
  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.02f);  // weights as the engine draws them
  for (int i = 0; i < 200'000; ++i) {
    const float w = normal(rng);
    std::uint16_t hi = 0, lo = 0;
    split_float(w, hi, lo);
    ASSERT_EQ(hi, nearest_bf16_ties_away(w)) << "w = " << w;
  }
  // A tie rounds away from zero, either sign: 1 + 2^-8 lies halfway between two bf16.
  std::uint16_t hi = 0, lo = 0;
  split_float(std::bit_cast<float>(0x3F808000u), hi, lo);
  EXPECT_EQ(hi, 0x3F81u);
  split_float(std::bit_cast<float>(0xBF808000u), hi, lo);
  EXPECT_EQ(hi, 0xBF81u);
}

TEST(SplitMaster, SpecialValuesSurvive) {
  for (float w : {0.0f, -0.0f, std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()})
    expect_exact(w);
}

}  // namespace
