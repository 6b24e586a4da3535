// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// float -> FP8 byte by bit arithmetic (round to nearest even, saturating), host and device.
#pragma once

#include <bit>
#include <cstdint>

#include "tprimat/config.hpp"
#include "tprimat/kernels/fp8_format.hpp"

namespace tprimat::kernels {

/// 2^e as a float, for e in [-126, 127] (every quantum and threshold below is one).
TPRIMAT_HOST_DEVICE constexpr float fp8_pow2(int e) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(e + 127) << 23);
}

/// The byte holding `x` in format `F`, by the rules of fp8_cast_reference.hpp (the CPU reference
/// it is tested against, bit for bit): nearest, ties to even, +-max_finite past the range and for
/// infinities, NaN to the format's NaN, no -0 in fnuz. Written with plain integer and float
/// operations (no rint, no intrinsics) so that nvcc, hipcc and the host compiler agree; the
/// Hopper kernels use the hardware cvt for the OCP formats instead (fp8_cast.cuh).
template <Fp8Format F>
TPRIMAT_HOST_DEVICE constexpr std::uint8_t fp8_from_float(float x) {
  constexpr Fp8Spec s = fp8_spec(F);
  constexpr int emin = 1 - s.bias;  // exponent of the smallest normal
  // The largest finite byte: fnuz has neither infinities nor NaNs among the positive bytes,
  // OCP E5M2 stops below its infinity (S.11111.00), OCP E4M3 below its NaN (S.1111.111).
  constexpr std::uint8_t max_byte =
      s.fnuz ? 0x7f : (s.has_infinity ? 0x7f - (1 << s.mantissa_bits) : 0x7e);
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  const std::uint8_t sign = static_cast<std::uint8_t>((u >> 24) & 0x80);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return s.fnuz ? 0x80 : 0x7f;
  const float magnitude = std::bit_cast<float>(a);
  std::uint8_t byte;
  if (magnitude >= s.max_finite) {
    byte = max_byte;  // infinity included
  } else {
    // The spacing of the format's values around x: 2^(e - mantissa bits) for x in [2^e, 2^e+1),
    // the subnormal spacing below 2^emin. x / quantum is exact (a power of two) and small, so it
    // splits exactly into an integer and a fraction; round the integer half to even.
    const int e = static_cast<int>(a >> 23) - 127;
    const int quantum_exponent = (e > emin ? e : emin) - s.mantissa_bits;
    const float t = magnitude * fp8_pow2(-quantum_exponent);
    std::uint32_t n = static_cast<std::uint32_t>(t);
    const float fraction = t - static_cast<float>(n);
    if (fraction > 0.5f || (fraction == 0.5f && (n & 1u))) ++n;
    // n quanta: below 2^mantissa_bits (at the smallest quantum) a subnormal, whose byte is n;
    // otherwise n in [2^m, 2^(m+1)] and the byte is (exponent field, n's low bits), which also
    // covers n = 2^(m+1), a carry into the next binade.
    if (quantum_exponent == emin - s.mantissa_bits && n < (1u << s.mantissa_bits)) {
      byte = static_cast<std::uint8_t>(n);
    } else {
      int field = quantum_exponent + s.mantissa_bits + s.bias;
      if (n == (2u << s.mantissa_bits)) {
        ++field;
        n >>= 1;
      }
      byte = static_cast<std::uint8_t>((field << s.mantissa_bits) |
                                       (n & ((1u << s.mantissa_bits) - 1)));
    }
  }
  if (byte == 0 && s.fnuz) return 0x00;
  return static_cast<std::uint8_t>(byte | sign);
}

/// The same for a format known only at run time (host code, tests).
TPRIMAT_HOST_DEVICE constexpr std::uint8_t fp8_from_float(float x, Fp8Format f) {
  switch (f) {
    case Fp8Format::e4m3:
      return fp8_from_float<Fp8Format::e4m3>(x);
    case Fp8Format::e5m2:
      return fp8_from_float<Fp8Format::e5m2>(x);
    case Fp8Format::e4m3_fnuz:
      return fp8_from_float<Fp8Format::e4m3_fnuz>(x);
    case Fp8Format::e5m2_fnuz:
      return fp8_from_float<Fp8Format::e5m2_fnuz>(x);
  }
  return 0;
}

}  // namespace tprimat::kernels
