// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Shared pieces of the GPU tests: skip without a GPU, a stream, fresh random inputs, bf16 on the
// host, and the one error measure every kernel check uses.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/buffer.hpp"

/// Skips the test, with the reason, where no GPU of the build's platform can run it (CI, a
/// laptop). The same sources build for CUDA and for HIP (backend::Gpu).
#define TPRIMAT_REQUIRE_GPU()                                                               \
  do {                                                                                      \
    if (::tprimat::backend::Gpu::device_count() == 0)                                       \
      GTEST_SKIP() << (TPRIMAT_GPU_HIP ? "no AMD GPU (ROCm driver or GPU missing)"          \
                                       : "no CUDA device (driver or GPU missing)")          \
                   << ": GPU tests run on a GPU machine, e.g. the device tool's "           \
                      "nvidia-h100-x1, or an MI300X node";                                  \
  } while (0)

namespace tprimat::testing {

using backend::Gpu;
using backend::DeviceBuffer;
using bf16 = Gpu::bf16;

/// A stream for one test, destroyed (after a synchronize) at the end.
struct TestStream {
  gpuStream_t s = nullptr;
  TestStream() { backend::gpu_check(gpuStreamCreateWithFlags(&s, 0), "gpuStreamCreate"); }
  ~TestStream() {
    (void)gpuStreamSynchronize(s);
    (void)gpuStreamDestroy(s);
  }
  operator gpuStream_t() const { return s; }
};

/// A fresh seed per run (inputs are never the same twice); tests print it on failure.
inline std::uint64_t fresh_seed() { return std::random_device{}() * 0x9E3779B97F4A7C15ull + 1; }

inline std::vector<float> random_normal(std::size_t n, std::uint64_t seed, float stddev = 1.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

inline std::vector<bf16> to_bf16(std::span<const float> x) {
  std::vector<bf16> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = __float2bfloat16(x[i]);
  return out;
}
inline std::vector<float> to_float(std::span<const bf16> x) {
  std::vector<float> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = __bfloat162float(x[i]);
  return out;
}
/// Rounds through bf16 and back: the reference then sees exactly the device's operands.
inline std::vector<float> round_bf16(std::span<const float> x) { return to_float(to_bf16(x)); }

template <class T>
DeviceBuffer<T> upload(std::span<const T> host, gpuStream_t s) {
  DeviceBuffer<T> d(host.size(), s);
  d.upload(host);
  return d;
}

/// max |got - want| / max(max |want|, floor): one number per tensor, compared with a bound named
/// at each check. NaN or Inf anywhere in `got` (a poisoned output never written) makes it
/// infinite, so NaN never passes.
inline double relative_error(std::span<const float> got, std::span<const float> want,
                             double floor = 1e-6) {
  if (got.size() != want.size()) return INFINITY;
  double err = 0, scale = floor;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    err = std::max(err, std::abs(double(got[i]) - double(want[i])));
    scale = std::max(scale, std::abs(double(want[i])));
  }
  return err / scale;
}

}  // namespace tprimat::testing
