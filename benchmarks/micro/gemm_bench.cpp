// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// CPU GEMM on Llama 3.1 8B-shaped slices (backend::Cpu::gemm) beside a raw Eigen product baseline.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "tprimat/backend/cpu.hpp"
#include "tprimat/model/llama31_8b.hpp"

namespace {

using tprimat::backend::Cpu;
using tprimat::model::Llama31_8B;

// The projections of one Llama layer at TP=4, as [tokens, k] x [k, n] (weights stored [n, k],
// hence trans_b, as the step multiplies them). Arg 0: tokens per micro-batch slice.
struct Shape {
  const char* name;
  std::int64_t k, n;
};
constexpr int tp = 4;
constexpr Shape shapes[] = {
    {"qkv", Llama31_8B::hidden, (Llama31_8B::heads + 2 * Llama31_8B::kv_heads) *
                                    Llama31_8B::head_dim / tp},  // [t, 4096] x [4096, 1536]
    {"gate", Llama31_8B::hidden, Llama31_8B::ffn / tp},          // [t, 4096] x [4096, 3584]
    {"down", Llama31_8B::ffn / tp, Llama31_8B::hidden},          // [t, 3584] x [3584, 4096]
};

void set_counters(benchmark::State& state, std::int64_t m, std::int64_t n, std::int64_t k) {
  const double flops = 2.0 * m * n * k;
  state.counters["FLOP/s"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes/s"] = benchmark::Counter(4.0 * (m * k + n * k + m * n),
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void BM_CpuGemm(benchmark::State& state, Shape s) {
  const std::int64_t m = state.range(0);
  std::vector<float> a(m * s.k, 0.01f), b(s.n * s.k, 0.02f), c(m * s.n);
  for (auto _ : state) {
    Cpu::gemm(false, true, m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.k, 0.0f, c.data(), s.n);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, m, s.n, s.k);
}

// Baseline: the same product written directly in Eigen, no wrapper, no strides.
void BM_EigenBaseline(benchmark::State& state, Shape s) {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const std::int64_t m = state.range(0);
  Matrix a = Matrix::Constant(m, s.k, 0.01f), b = Matrix::Constant(s.n, s.k, 0.02f);
  Matrix c(m, s.n);
  for (auto _ : state) {
    c.noalias() = a * b.transpose();
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, m, s.n, s.k);
}

void register_all() {
  for (const Shape& s : shapes) {
    for (auto* fn : {&BM_CpuGemm, &BM_EigenBaseline}) {
      const char* prefix = fn == &BM_CpuGemm ? "CpuGemm/" : "EigenBaseline/";
      benchmark::RegisterBenchmark((std::string(prefix) + s.name).c_str(), fn, s)
          ->ArgName("tokens")
          ->Arg(128)
          ->Arg(512)
          ->Unit(benchmark::kMillisecond);
    }
  }
}
const bool registered = (register_all(), true);

}  // namespace
