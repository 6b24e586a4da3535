// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// One GEMM test call (shape, transposes, beta, bias, leading dimensions) and its output-type
// helpers, shared by the cuBLASLt and tiled-GEMM tests.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu_test.hpp"

namespace tprimat::testing {

/// One call. Leading dimensions are the row lengths rounded up to a multiple of `ld_multiple`,
/// plus `pad`: 1 gives odd, unaligned rows (only the tiled kernel accepts them); 8 gives the
/// 16-byte rows cuBLASLt needs.
struct GemmCase {
  bool trans_a = false;
  bool trans_b = false;
  std::int64_t m = 0, n = 0, k = 0;
  float beta = 0;
  bool bias = false;
  std::int64_t pad = 0;
  std::int64_t ld_multiple = 1;
};

inline std::int64_t leading(std::int64_t row_length, const GemmCase& g) {
  return (row_length + g.ld_multiple - 1) / g.ld_multiple * g.ld_multiple + g.pad;
}

template <class Out>
inline constexpr bool is_bf16 = std::is_same_v<Out, bf16>;

template <class Out>
std::string describe(const GemmCase& g) {
  return std::string(is_bf16<Out> ? "bf16" : "fp32") + " out, m=" + std::to_string(g.m) +
         " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) +
         " trans_a=" + std::to_string(g.trans_a) + " trans_b=" + std::to_string(g.trans_b) +
         " beta=" + std::to_string(g.beta) + " bias=" + std::to_string(g.bias) +
         " pad=" + std::to_string(g.pad) + " ld_multiple=" + std::to_string(g.ld_multiple);
}

/// Host values as the output type, and back.
template <class Out>
std::vector<Out> to_out(const std::vector<float>& x) {
  if constexpr (is_bf16<Out>)
    return to_bf16(x);
  else
    return x;
}
template <class Out>
std::vector<float> from_out(const std::vector<Out>& x) {
  if constexpr (is_bf16<Out>)
    return to_float(x);
  else
    return x;
}

}  // namespace tprimat::testing
