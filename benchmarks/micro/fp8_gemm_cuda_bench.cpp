// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The FP8 hybrid recipe's three GEMMs per projection of Llama 3.1 8B at 4096 tokens through
// backend::fp8_gemm, each beside Gpu::gemm in bf16 on the same shape, layout and output.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "cuda_timing.hpp"
#include "tprimat/backend/gpu/fp8_gemm.hpp"
#include "tprimat/model/llama31_8b.hpp"

namespace tprimat::gpu_bench {
namespace {

using backend::Fp8Accumulation;
using kernels::Fp8Format;

/// One recipe GEMM, row-major D[m, n] = A[m, k] B[n, k]^T, both operands K-major (fp8_gemm's one
/// layout; the bf16 twin runs Gpu::gemm with trans_b on the same buffers' shapes).
struct RecipeGemm {
  std::int64_t m = 0, n = 0, k = 0;
  Fp8Format fa = Fp8Format::e4m3, fb = Fp8Format::e4m3;
  bool fp32_out = false;
  float beta = 0;
  Fp8Accumulation accumulation = Fp8Accumulation::split;

  std::size_t out_bytes() const { return std::size_t(m) * n * (fp32_out ? 4 : 2); }
  /// A and B read once (bytes per element: 1 in FP8, 2 in bf16), D written once, C read when
  /// beta != 0.
  Work work(std::size_t operand_bytes) const {
    const double operands = double(operand_bytes) * double(m * k + n * k);
    const double c_read = beta != 0 ? double(out_bytes()) : 0;
    return {operands + double(out_bytes()) + c_read, 2.0 * double(m) * n * k};
  }
};

/// A linear layer y[tokens, out] = x[tokens, in] W^T in the hybrid recipe's three GEMMs:
/// forward y = x W^T (E4M3 x E4M3, bf16, fast); input gradient dx = dy W (E5M2 x E4M3, bf16,
/// split); weight gradient dW^T[in, out] = x^T dy (E4M3 x E5M2, fp32, split): written in a step's
/// first micro-batch (wgrad, beta 0), added in every later one (wgrad_acc, beta 1).
std::vector<std::pair<std::string, RecipeGemm>> recipe_gemms(std::int64_t in, std::int64_t out,
                                                             std::int64_t tokens) {
  return {
      {"fwd", {tokens, out, in, Fp8Format::e4m3, Fp8Format::e4m3, false, 0, Fp8Accumulation::fast}},
      {"dgrad",
       {tokens, in, out, Fp8Format::e5m2, Fp8Format::e4m3, false, 0, Fp8Accumulation::split}},
      {"wgrad",
       {in, out, tokens, Fp8Format::e4m3, Fp8Format::e5m2, true, 0, Fp8Accumulation::split}},
      {"wgrad_acc",
       {in, out, tokens, Fp8Format::e4m3, Fp8Format::e5m2, true, 1, Fp8Accumulation::split}},
  };
}

/// Operand copies to rotate past L2 (rotation_sets), one D per set.
template <class Operand>
struct Sets {
  std::vector<DeviceBuffer<Operand>> a, b;
  std::vector<DeviceBuffer<std::byte>> d;
};

void BM_Fp8Gemm(benchmark::State& state, RecipeGemm g) {
  if (skip_without_gpu(state)) return;
  try {
    Stream stream;
    Gpu::gemm_prepare(stream);
    const int sets = rotation_sets(g.work(1).bytes);
    Sets<std::uint8_t> ops;
    for (int i = 0; i < sets; ++i) {
      ops.a.emplace_back(std::size_t(g.m * g.k), stream);
      ops.b.emplace_back(std::size_t(g.n * g.k), stream);
      ops.d.emplace_back(g.out_bytes(), stream);
      fill_fp8(ops.a.back().data(), ops.a.back().size(), g.fa, 100 + i, stream);
      fill_fp8(ops.b.back().data(), ops.b.back().size(), g.fb, 200 + i, stream);
      gpu_check(cudaMemsetAsync(ops.d.back().data(), 0, g.out_bytes(), stream), "cudaMemsetAsync");
    }
    DeviceBuffer<float> scales(128, stream);
    // Each scale on a 256-byte boundary of its own, as a tensor's scale_inv allocation would be.
    std::vector<float> host_scales(128, 0.0f);
    host_scales[0] = 0.25f;
    host_scales[64] = 0.5f;
    scales.upload(host_scales);
    const Timing t = time_calls(state, stream, sets, [&](int i) {
      const int s = i % sets;
      const backend::Fp8Matrix a{ops.a[s].data(), g.fa, scales.data(), g.k};
      const backend::Fp8Matrix b{ops.b[s].data(), g.fb, scales.data() + 64, g.k};
      if (g.fp32_out)
        backend::fp8_gemm<float>(g.m, g.n, g.k, a, b, 1.0f, g.beta,
                                 reinterpret_cast<float*>(ops.d[s].data()), g.n, g.accumulation,
                                 stream);
      else
        backend::fp8_gemm<bf16>(g.m, g.n, g.k, a, b, 1.0f, g.beta,
                                reinterpret_cast<bf16*>(ops.d[s].data()), g.n, g.accumulation,
                                stream);
    });
    report(state, t, g.work(1));
    // report()'s dense peak is bf16's; the FP8 peak (twice it on Hopper) is not in the tree yet.
    state.counters.erase("of_dense_peak");
    if (const double c = ceilings().fp8_gemm_tflops; c > 0 && t.median > 0)
      state.counters["of_fp8_ceiling"] = g.work(1).flops / t.median * 1e-12 / c;
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void BM_Bf16Gemm(benchmark::State& state, RecipeGemm g) {
  if (skip_without_gpu(state)) return;
  try {
    Stream stream;
    Gpu::gemm_prepare(stream);
    const int sets = rotation_sets(g.work(2).bytes);
    Sets<bf16> ops;
    for (int i = 0; i < sets; ++i) {
      ops.a.emplace_back(std::size_t(g.m * g.k), stream);
      ops.b.emplace_back(std::size_t(g.n * g.k), stream);
      ops.d.emplace_back(g.out_bytes(), stream);
      fill_normal(ops.a.back().data(), ops.a.back().size(), 300 + i, stream);
      fill_normal(ops.b.back().data(), ops.b.back().size(), 400 + i, stream);
      gpu_check(cudaMemsetAsync(ops.d.back().data(), 0, g.out_bytes(), stream), "cudaMemsetAsync");
    }
    const Timing t = time_calls(state, stream, sets, [&](int i) {
      const int s = i % sets;
      if (g.fp32_out)
        Gpu::gemm<float>(false, true, g.m, g.n, g.k, ops.a[s].data(), g.k, ops.b[s].data(), g.k,
                          g.beta, reinterpret_cast<float*>(ops.d[s].data()), g.n, nullptr, stream);
      else
        Gpu::gemm<bf16>(false, true, g.m, g.n, g.k, ops.a[s].data(), g.k, ops.b[s].data(), g.k,
                         g.beta, reinterpret_cast<bf16*>(ops.d[s].data()), g.n, nullptr, stream);
    });
    report(state, t, g.work(2));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

constexpr int iterations = 10;

/// Names: Fp8Gemm/llama/qkv/fwd/tokens:4096/fp8 beside .../bf16.
const bool registered = [] {
  using M = model::Llama31_8B;
  const std::int64_t tokens = 4096;
  const std::int64_t q = std::int64_t(M::heads) * M::head_dim;
  const std::int64_t kv = std::int64_t(M::kv_heads) * M::head_dim;
  struct Projection {
    const char* name;
    std::int64_t in, out;
  };
  for (const Projection& p :
       {Projection{"qkv", M::hidden, q + 2 * kv}, Projection{"o", q, M::hidden},
        Projection{"gate_up", M::hidden, 2 * std::int64_t(M::ffn)},
        Projection{"down", M::ffn, M::hidden}})
    for (const auto& [pass, g] : recipe_gemms(p.in, p.out, tokens)) {
      const std::string tail = std::string(M::cli_name) + "/" + p.name + "/" + pass +
                               "/tokens:" + std::to_string(tokens);
      benchmark::RegisterBenchmark(("Fp8Gemm/" + tail + "/fp8").c_str(), BM_Fp8Gemm, g)
          ->UseManualTime()
          ->Iterations(iterations)
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("Fp8Gemm/" + tail + "/bf16").c_str(), BM_Bf16Gemm, g)
          ->UseManualTime()
          ->Iterations(iterations)
          ->Unit(benchmark::kMicrosecond);
    }
  return true;
}();

}  // namespace
}  // namespace tprimat::gpu_bench
