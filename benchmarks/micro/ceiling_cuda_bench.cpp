// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The two ceilings every other GPU figure is read against: a device-to-device copy (bandwidth)
// and an 8192^3 bf16 GEMM (matrix rate), as benchmarks and as ceilings() for the counters; and the
// FP8 GEMMs' own matrix rate, an 8192^3 E4M3 GEMM.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <vector>

#include "cuda_timing.hpp"
#include "tprimat/backend/gpu/fp8_gemm.hpp"

namespace tprimat::gpu_bench {
namespace {

constexpr std::size_t copy_bytes = std::size_t{1} << 30;  // 1 GiB: 20x an H100's 50 MB L2
constexpr std::int64_t square = 8192;

/// cudaMemcpyAsync device to device of copy_bytes; it moves 2 x copy_bytes (read + write).
struct Copy {
  DeviceBuffer<std::byte> src, dst;
  explicit Copy(cudaStream_t stream) : src(copy_bytes, stream), dst(copy_bytes, stream) {
    fill_normal(reinterpret_cast<float*>(src.data()), copy_bytes / sizeof(float), 7, stream);
  }
  void operator()(cudaStream_t stream) {
    gpu_check(
        cudaMemcpyAsync(dst.data(), src.data(), copy_bytes, cudaMemcpyDeviceToDevice, stream),
        "cudaMemcpyAsync");
  }
  static Work work() { return {2.0 * copy_bytes, 0}; }
};

/// C[8192, 8192] = A B through Gpu::gemm (cuBLASLt, the plan the step would get): bf16
/// operands of unit normals, fp32 accumulation, bf16 out. 2 x 8192^3 FLOPs; bytes: A and B read,
/// C written once.
struct SquareGemm {
  DeviceBuffer<bf16> a, b, c;
  explicit SquareGemm(cudaStream_t stream)
      : a(square * square, stream), b(square * square, stream), c(square * square, stream) {
    Gpu::gemm_prepare(stream);
    fill_normal(a.data(), a.size(), 11, stream);
    fill_normal(b.data(), b.size(), 12, stream);
  }
  void operator()(cudaStream_t stream) {
    Gpu::gemm<bf16>(false, false, square, square, square, a.data(), square, b.data(), square, 0.0f,
                     c.data(), square, nullptr, stream);
  }
  static Work work() {
    return {3.0 * double(square) * square * sizeof(bf16), 2.0 * double(square) * square * square};
  }
};

/// D[8192, 8192] = (sa A)(sb B)^T through backend::fp8_gemm (cuBLASLt): E4M3 operands of random
/// finite bytes, both K-major, fast accumulation (the forward GEMM's settings), bf16 out.
/// 2 x 8192^3 FLOPs; bytes: A and B read (one byte an element), D written once.
struct SquareFp8Gemm {
  static constexpr bool fp8 = true;  ///< report()'s of_dense_peak is the bf16 peak: dropped
  DeviceBuffer<std::uint8_t> a, b;
  DeviceBuffer<float> scales;
  DeviceBuffer<bf16> d;
  explicit SquareFp8Gemm(cudaStream_t stream)
      : a(square * square, stream),
        b(square * square, stream),
        scales(128, stream),
        d(square * square, stream) {
    Gpu::gemm_prepare(stream);
    fill_fp8(a.data(), a.size(), kernels::Fp8Format::e4m3, 13, stream);
    fill_fp8(b.data(), b.size(), kernels::Fp8Format::e4m3, 14, stream);
    // Each scale on a 256-byte boundary of its own, as a tensor's scale_inv allocation would be.
    std::vector<float> host_scales(128, 0.0f);
    host_scales[0] = 0.25f;
    host_scales[64] = 0.5f;
    scales.upload(host_scales);
  }
  void operator()(cudaStream_t stream) {
    backend::fp8_gemm<bf16>(square, square, square,
                            {a.data(), kernels::Fp8Format::e4m3, scales.data(), square},
                            {b.data(), kernels::Fp8Format::e4m3, scales.data() + 64, square}, 1.0f,
                            0.0f, d.data(), square, backend::Fp8Accumulation::fast, stream);
  }
  static Work work() {
    return {2.0 * double(square) * square + double(square) * square * sizeof(bf16),
            2.0 * double(square) * square * square};
  }
};

template <class Op>
void BM_Ceiling(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  try {
    Stream stream;
    Op op(stream);
    const Timing t = time_calls(state, stream, 1, [&](int) { op(stream); });
    report(state, t, Op::work());
    if constexpr (requires { Op::fp8; }) state.counters.erase("of_dense_peak");
    state.SetLabel(Device::get().name);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// Its source is listed first in CMakeLists.txt: static registration follows link order with GNU
// ld, so a plain run prints the ceilings before the figures read against them.
BENCHMARK_TEMPLATE(BM_Ceiling, Copy)
    ->Name("Ceiling/copy_d2d/MiB:1024")
    ->UseManualTime()
    ->Iterations(20)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_Ceiling, SquareGemm)
    ->Name("Ceiling/gemm_bf16/8192")
    ->UseManualTime()
    ->Iterations(20)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_Ceiling, SquareFp8Gemm)
    ->Name("Ceiling/gemm_fp8_e4m3_fast/8192")
    ->UseManualTime()
    ->Iterations(20)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

const Ceilings& ceilings() {
  static const Ceilings c = [] {
    Ceilings r;
    Stream stream;
    {
      Copy copy(stream);
      const double s = median_of(sample_calls(stream, 1, 10, [&](int) { copy(stream); }));
      r.copy_gbps = Copy::work().bytes / s * 1e-9;
    }
    {
      SquareGemm gemm(stream);
      const double s = median_of(sample_calls(stream, 1, 10, [&](int) { gemm(stream); }));
      r.gemm_tflops = SquareGemm::work().flops / s * 1e-12;
    }
    // A device without FP8 tensor cores (before sm_89) has no FP8 ceiling (0), and the other
    // figures keep theirs.
    try {
      SquareFp8Gemm gemm(stream);
      const double s = median_of(sample_calls(stream, 1, 10, [&](int) { gemm(stream); }));
      r.fp8_gemm_tflops = SquareFp8Gemm::work().flops / s * 1e-12;
    } catch (const std::exception&) {
      r.fp8_gemm_tflops = 0;
    }
    return r;
  }();
  return c;
}

}  // namespace tprimat::gpu_bench
