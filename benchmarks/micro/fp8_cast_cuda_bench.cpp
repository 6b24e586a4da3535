// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The FP8 casts at Llama 3.1 8B shapes: cast_transpose (bf16 in, FP8 and its transpose out) and
// the scaled cast, each beside a plain bf16 copy of the same bytes, their HBM ceiling; SwiGLU's
// tile passes (its output or gradients cast where they are computed) beside the unfused passes.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "cuda_timing.hpp"
#include "tprimat/kernels/fp8_format.hpp"
#include "tprimat/kernels/fp8_target.hpp"

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

/// SwiGLU's FP8 casts at Llama 3.1 8B's [tokens, ffn]: the tile pass that computes h (forward)
/// or dgate and dup (backward) where it casts them (`fused`), against SwiGLU's kernel writing
/// bf16 and cast_transpose reading it back (`unfused`, the engine before the tile pass). Both
/// report the fused pass's least bytes (forward: gate, up read, two FP8 outputs written;
/// backward: gate, up, dh read, four FP8 outputs written), so the unfused rate shows the passes
/// it spends beyond them.
enum class SwigluKind { fused_forward, unfused_forward, fused_backward, unfused_backward };

template <SwigluKind K>
void BM_Fp8Swiglu(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  constexpr bool backward = K == SwigluKind::fused_backward || K == SwigluKind::unfused_backward;
  constexpr bool fused = K == SwigluKind::fused_forward || K == SwigluKind::fused_backward;
  try {
    Stream stream;
    const std::int64_t rows = state.range(0), cols = state.range(1);
    const std::size_t n = static_cast<std::size_t>(rows * cols);
    const double bytes = double(n) * (backward ? 6.0 + 4.0 : 4.0 + 2.0);
    const int sets = rotation_sets(bytes);
    std::vector<DeviceBuffer<bf16>> gate, up, dh;
    std::vector<DeviceBuffer<std::uint8_t>> out, out_t, out2, out2_t;
    std::uint64_t seed = 31;
    for (int k = 0; k < sets; ++k) {
      for (auto* v : {&gate, &up, &dh}) {
        v->emplace_back(n, stream);
        fill_normal(v->back().data(), n, seed++, stream);
      }
      for (auto* v : {&out, &out_t, &out2, &out2_t}) v->emplace_back(n, stream);
    }
    // The unfused passes' bf16 intermediates: h, or dgate and dup (one set: they are written
    // and read back at once).
    DeviceBuffer<bf16> mid(n, stream), mid2(n, stream);
    DeviceBuffer<float> scales(2, stream), amaxes(2, stream);
    Gpu::fill(scales.data(), 2, 37.0f, stream);
    Gpu::fill(amaxes.data(), 2, 0.0f, stream);
    gpu_check(cudaStreamSynchronize(stream), "set-up");
    const Fp8Format e4m3 = Fp8Format::e4m3, e5m2 = Fp8Format::e5m2;
    const auto call = [&](int i) {
      const int k = i % sets;
      const kernels::Fp8Target a{scales.data(), out[k].data(), out_t[k].data(), amaxes.data()},
          b{scales.data() + 1, out2[k].data(), out2_t[k].data(), amaxes.data() + 1};
      if constexpr (K == SwigluKind::fused_forward) {
        Gpu::fp8_swiglu_cast(gate[k].data(), up[k].data(), rows, cols, e4m3, a, stream);
      } else if constexpr (K == SwigluKind::unfused_forward) {
        Gpu::swiglu_forward(gate[k].data(), up[k].data(), mid.data(), rows * cols, stream);
        Gpu::fp8_cast_transpose(mid.data(), rows, cols, e4m3, a.scale, a.out, a.out_t, a.amax,
                                stream);
      } else if constexpr (K == SwigluKind::fused_backward) {
        Gpu::fp8_swiglu_grad_cast(gate[k].data(), up[k].data(), dh[k].data(), rows, cols, e5m2, a,
                                  b, stream);
      } else {
        Gpu::swiglu_backward(gate[k].data(), up[k].data(), dh[k].data(), mid.data(), mid2.data(),
                             nullptr, rows * cols, stream);
        Gpu::fp8_cast_transpose(mid.data(), rows, cols, e5m2, a.scale, a.out, a.out_t, a.amax,
                                stream);
        Gpu::fp8_cast_transpose(mid2.data(), rows, cols, e5m2, b.scale, b.out, b.out_t, b.amax,
                                stream);
      }
    };
    const Timing t = time_calls(state, stream, sets, call);
    report(state, t, {bytes, 0});
    state.counters["sets"] = sets;
    state.SetLabel(fused ? "one pass" : "SwiGLU in bf16, then cast_transpose");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

/// [tokens, ffn] at mbs 1 and 2 of seq 2048 (4096 tokens: the proxies' and the full model's
/// step) and 8192.
void swiglu_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "cols"});
  for (const std::int64_t tokens : {2048, 4096, 8192}) b->Args({tokens, 14336});
  b->UseManualTime()->Iterations(20)->Unit(benchmark::kMicrosecond);
}

BENCHMARK_TEMPLATE(BM_Fp8Swiglu, SwigluKind::fused_forward)
    ->Name("Fp8/swiglu_cast_transpose_e4m3/fused")
    ->Apply(swiglu_shapes);
BENCHMARK_TEMPLATE(BM_Fp8Swiglu, SwigluKind::unfused_forward)
    ->Name("Fp8/swiglu_cast_transpose_e4m3/unfused")
    ->Apply(swiglu_shapes);
BENCHMARK_TEMPLATE(BM_Fp8Swiglu, SwigluKind::fused_backward)
    ->Name("Fp8/swiglu_grad_cast_transpose_e5m2/fused")
    ->Apply(swiglu_shapes);
BENCHMARK_TEMPLATE(BM_Fp8Swiglu, SwigluKind::unfused_backward)
    ->Name("Fp8/swiglu_grad_cast_transpose_e5m2/unfused")
    ->Apply(swiglu_shapes);

}  // namespace
}  // namespace tprimat::gpu_bench
