// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The FP8 casts at Llama 3.1 8B shapes: cast_transpose (bf16 in, FP8 and its transpose out) and
// the scaled cast, each beside a plain bf16 copy of the same bytes, their HBM ceiling.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "cuda_timing.hpp"
#include "tprimat/kernels/fp8_format.hpp"

namespace tprimat::gpu_bench {
namespace {

using kernels::Fp8Format;

/// bf16 [rows, cols] inputs (rotated past L2), FP8 outputs, a scale and an amax per set.
struct Fp8Sets {
  std::int64_t rows, cols;
  int sets;
  std::vector<DeviceBuffer<bf16>> x;
  std::vector<DeviceBuffer<std::uint8_t>> out, out_t;
  DeviceBuffer<float> scale, amax;
  Fp8Sets(std::int64_t r, std::int64_t c, cudaStream_t stream)
      : rows(r),
        cols(c),
        sets(rotation_sets(4.0 * double(r * c))),
        scale(1, stream),
        amax(1, stream) {
    const std::size_t n = static_cast<std::size_t>(r * c);
    for (int s = 0; s < sets; ++s) {
      x.emplace_back(n, stream);
      fill_normal(x.back().data(), n, 11 + s, stream);
      out.emplace_back(n, stream);
      out_t.emplace_back(n, stream);
    }
    Gpu::fill(scale.data(), 1, 37.0f, stream);
    Gpu::fill(amax.data(), 1, 0.0f, stream);
  }
  /// Bytes a pass must move at least: read bf16 once, write each FP8 output once.
  double bytes(int outputs) const { return double(rows * cols) * (2.0 + outputs); }
};

enum class Kind { cast_transpose, cast, copy_same_bytes };

template <Kind K>
void BM_Fp8(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  try {
    Stream stream;
    Fp8Sets d(state.range(0), state.range(1), stream);
    gpu_check(cudaStreamSynchronize(stream), "set-up");
    // The copy moves as many bytes as cast_transpose: it reads 2 bytes an element and writes
    // 2, where cast_transpose writes 1 + 1 (into its two outputs, viewed as one bf16 buffer).
    const auto call = [&](int i) {
      const int k = i % d.sets;
      if constexpr (K == Kind::cast_transpose) {
        Gpu::fp8_cast_transpose(d.x[k].data(), d.rows, d.cols, Fp8Format::e4m3, d.scale.data(),
                                 d.out[k].data(), d.out_t[k].data(), d.amax.data(), stream);
      } else if constexpr (K == Kind::cast) {
        Gpu::fp8_cast(d.x[k].data(), d.rows * d.cols, Fp8Format::e4m3, d.scale.data(),
                       d.out[k].data(), d.amax.data(), stream);
      } else {
        gpu_check(cudaMemcpyAsync(d.out[k].data(), d.x[k].data(),
                                  static_cast<std::size_t>(d.rows * d.cols),
                                  cudaMemcpyDeviceToDevice, stream),
                  "copy");
        gpu_check(cudaMemcpyAsync(
                      d.out_t[k].data(),
                      reinterpret_cast<const std::uint8_t*>(d.x[k].data()) + d.rows * d.cols,
                      static_cast<std::size_t>(d.rows * d.cols), cudaMemcpyDeviceToDevice, stream),
                  "copy");
      }
    };
    const Timing t = time_calls(state, stream, d.sets, call);
    report(state, t, {d.bytes(K == Kind::cast ? 1 : 2), 0});
    state.counters["sets"] = d.sets;
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// Llama 3.1 8B: a [tokens, hidden] activation at 4096 tokens, a [tokens, ffn] one at 8192
// (gate/up outputs, the down projection's input), and the weights [hidden, hidden] (the
// o projection) and [ffn, hidden] (gate, up).
void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "cols"});
  for (const auto& s : std::vector<std::vector<std::int64_t>>{
           {4096, 4096}, {8192, 4096}, {8192, 14336}, {14336, 4096}})
    b->Args(s);
  b->UseManualTime()->Iterations(20)->Unit(benchmark::kMicrosecond);
}

BENCHMARK_TEMPLATE(BM_Fp8, Kind::cast_transpose)->Name("Fp8/cast_transpose_e4m3")->Apply(shapes);
BENCHMARK_TEMPLATE(BM_Fp8, Kind::copy_same_bytes)->Name("Fp8/bf16_copy_same_bytes")->Apply(shapes);
BENCHMARK_TEMPLATE(BM_Fp8, Kind::cast)->Name("Fp8/cast_e4m3")->Apply(shapes);

}  // namespace
}  // namespace tprimat::gpu_bench
