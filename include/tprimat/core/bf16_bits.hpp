// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// bf16 <-> float by their bits on the host (checkpoints' BF16 tensors, the host-staged bf16
// collectives): round to nearest even, a NaN stays a NaN.
#pragma once

#include <bit>
#include <cstdint>

namespace tprimat::core {

inline float bf16_bits_to_float(std::uint16_t h) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}

inline std::uint16_t float_to_bf16_bits(float f) {
  const auto x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace tprimat::core
