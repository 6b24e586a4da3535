// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Where the FP8 tile pass (kernels/fp8_cast.cuh) puts each tensor it casts: host code fills these,
// the kernel takes them by value.
#pragma once

#include <cstdint>

namespace tprimat::kernels {

/// One FP8 output of a tile pass: cast(v * *scale) written row-major into `out` and transposed
/// into `out_t` (either may be null), max |v| reduced into `amax` (may be null). With `out` and
/// `out_t` null the pass takes the amax alone (`scale` may then be null).
struct Fp8Target {
  const float* scale = nullptr;
  std::uint8_t* out = nullptr;
  std::uint8_t* out_t = nullptr;
  float* amax = nullptr;
};

/// The tensors one tile pass casts.
template <int N>
struct Fp8Targets {
  Fp8Target t[N];
};

}  // namespace tprimat::kernels
