// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// An fp32 master weight held as two 16-bit halves: the bf16 the GEMMs read, and the remainder.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "tprimat/config.hpp"

namespace tprimat::kernels {

// The GPU engine keeps no separate fp32 master: a weight w lives as `hi`, the bits of bf16(w)
// rounded to nearest with ties away from zero (the operand every GEMM reads), and `lo`, the
// signed difference of the bit patterns, so that bits(w) = (hi << 16) + lo exactly (mod 2^32).
// Four bytes per weight instead of six (fp32 master + bf16 copy), and AdamW reads and writes
// 4 + 4 bytes of weight instead of 4 + 6. The rounding differs from round-to-nearest-even only
// on exact ties (the low 16 bits exactly 0x8000), which then round away from zero.

/// The fp32 value of a split weight: exact.
TPRIMAT_HOST_DEVICE inline float join_float(std::uint16_t hi, std::uint16_t lo) {
  const std::uint32_t bits =
      (std::uint32_t{hi} << 16) + static_cast<std::uint32_t>(static_cast<std::int16_t>(lo));
  // bit_cast, not memcpy: constexpr, so both device compilers take it, whatever the order in
  // which a TU included <cstring> and the runtime's device memcpy.
  return std::bit_cast<float>(bits);
}

/// The fp32 values of a split master downloaded to the host (`Bf16`: any 2-byte bf16 type):
/// join_float of each pair.
template <class Bf16>
std::vector<float> join_floats(std::span<const Bf16> hi, std::span<const std::uint16_t> lo) {
  static_assert(sizeof(Bf16) == sizeof(std::uint16_t));
  std::vector<float> out(hi.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint16_t hi_bits;
    std::memcpy(&hi_bits, &hi[i], sizeof hi_bits);
    out[i] = join_float(hi_bits, lo[i]);
  }
  return out;
}

/// Splits w into (hi, lo); join_float(hi, lo) == w bit for bit.
TPRIMAT_HOST_DEVICE inline void split_float(float w, std::uint16_t& hi, std::uint16_t& lo) {
  const auto bits = std::bit_cast<std::uint32_t>(w);
  const std::uint32_t rounded = (bits + 0x8000u) >> 16;  // |w| rounded half up: the bf16
  hi = static_cast<std::uint16_t>(rounded);
  lo = static_cast<std::uint16_t>(bits - (rounded << 16));  // in [-0x8000, 0x7FFF]
}

}  // namespace tprimat::kernels
