// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// One CUDA TrainingStep per iteration at Llama 3.1 8B / Qwen 2.5 7B width (8 layers), timed by
// CUDA events, with tokens/s and MFU against the device's dense bf16 peak.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tprimat/backend/cuda.hpp"
#include "tprimat/data/synthetic.hpp"
#include "tprimat/model/counts.hpp"
#include "tprimat/model/llama31_8b.hpp"
#include "tprimat/model/qwen25_7b.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/train/training_step.hpp"

namespace {

namespace md = tprimat::model;
namespace tr = tprimat::train;
using tprimat::backend::Cuda;

constexpr int layers = 8;

// Args: mbs, seq, graph (1: replay a CUDA graph, 0: launch each kernel), attention (0 auto,
// 1 flash, 2 cudnn). The first step (eager, plans chosen) and the capture run before timing.
template <md::ModelSpec M>
void BM_CudaStep(benchmark::State& state) {
  if (Cuda::device_count() == 0) {
    state.SkipWithError("no CUDA device");
    return;
  }
  tr::StepShape shape{static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), 1,
                      layers};
  tr::DeviceOptions options;
  options.graph = state.range(2) != 0;
  options.attention = static_cast<tr::AttentionChoice>(state.range(3));
  const auto info = Cuda::device_info();
  try {
    tr::TrainingStep<Cuda, M, tprimat::parallel::Layout<1, 1>> step(shape, tr::OptimizerConfig{},
                                                                      42, {}, options);
    const tprimat::data::SyntheticTokens corpus(M::vocab, 42);
    std::vector<std::int32_t> tokens(static_cast<std::size_t>(shape.mbs) * (shape.seq + 1));
    std::int64_t index = 0;
    for (int warm = 0; warm < 3; ++warm) {
      tprimat::data::fill_rank_batch(corpus, index++, shape.mbs, 0, 1, shape.seq, tokens);
      step.run(tokens);
    }
    double issue = 0, device = 0;
    for (auto _ : state) {
      tprimat::data::fill_rank_batch(corpus, index++, shape.mbs, 0, 1, shape.seq, tokens);
      const auto stats = step.run(tokens);
      state.SetIterationTime(stats.device_seconds);
      issue += step.engine().issue_seconds();
      device += stats.device_seconds;
    }
    // The CPU side of a step (uploads + launches, or one graph launch) against its GPU time.
    state.counters["host_issue_ms"] = issue * 1e3 / double(state.iterations());
    state.counters["host_issue_share"] = issue / device;
    const double tokens_per_step = static_cast<double>(shape.mbs) * shape.seq;
    const double flops =
        md::flops_per_token(md::dims<M>().with_layers(layers), shape.seq) * tokens_per_step;
    state.counters["tokens/s"] =
        benchmark::Counter(tokens_per_step, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["TFLOP/s"] =
        benchmark::Counter(flops * 1e-12, benchmark::Counter::kIsIterationInvariantRate);
    if (info.peak_tflops_dense > 0)
      state.counters["MFU"] = benchmark::Counter(flops * 1e-12 / info.peak_tflops_dense,
                                                 benchmark::Counter::kIsIterationInvariantRate);
    state.counters["peak_GiB"] = double(step.peak_bytes()) / double(1ull << 30);
    state.SetLabel(step.engine().attention_name() + (options.graph ? ", graph" : ", no graph"));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// Where one eager step's GPU time goes: events between the ops (DeviceOptions::phase_timing),
// summed per category. Args: mbs, attention (0 auto, 1 flash).
template <md::ModelSpec M>
void BM_CudaStepBreakdown(benchmark::State& state) {
  if (Cuda::device_count() == 0) {
    state.SkipWithError("no CUDA device");
    return;
  }
  tr::StepShape shape{static_cast<int>(state.range(0)), 2048, 1, layers};
  tr::DeviceOptions options;
  options.graph = false;
  options.phase_timing = true;
  options.attention = static_cast<tr::AttentionChoice>(state.range(1));
  try {
    tr::TrainingStep<Cuda, M, tprimat::parallel::Layout<1, 1>> step(shape, tr::OptimizerConfig{},
                                                                      42, {}, options);
    const tprimat::data::SyntheticTokens corpus(M::vocab, 42);
    std::vector<std::int32_t> tokens(static_cast<std::size_t>(shape.mbs) * (shape.seq + 1));
    std::int64_t index = 0;
    for (int warm = 0; warm < 2; ++warm) {
      tprimat::data::fill_rank_batch(corpus, index++, shape.mbs, 0, 1, shape.seq, tokens);
      step.run(tokens);
    }
    std::vector<std::pair<std::string, double>> totals;
    for (auto _ : state) {
      tprimat::data::fill_rank_batch(corpus, index++, shape.mbs, 0, 1, shape.seq, tokens);
      const auto stats = step.run(tokens);
      state.SetIterationTime(stats.device_seconds);
      for (const auto& [name, sec] : step.engine().phase_seconds()) {
        auto it = std::find_if(totals.begin(), totals.end(),
                               [&](const auto& p) { return p.first == name; });
        if (it == totals.end())
          totals.emplace_back(name, sec);
        else
          it->second += sec;
      }
    }
    for (const auto& [name, sec] : totals)
      state.counters[name + "_ms"] = sec * 1e3 / double(state.iterations());
    state.SetLabel(step.engine().attention_name() + ", eager, events between ops");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

template <md::ModelSpec M>
void register_model() {
  benchmark::RegisterBenchmark(("CudaStepBreakdown/" + std::string(M::cli_name)).c_str(),
                               &BM_CudaStepBreakdown<M>)
      ->ArgNames({"mbs", "attention"})
      ->Args({1, 0})
      ->Args({2, 0})
      ->Unit(benchmark::kMillisecond)
      ->UseManualTime()
      ->Iterations(3);
  benchmark::RegisterBenchmark(("CudaStep/" + std::string(M::cli_name)).c_str(), &BM_CudaStep<M>)
      ->ArgNames({"mbs", "seq", "graph", "attention"})
      ->Args({1, 2048, 1, 0})
      ->Args({1, 2048, 0, 0})
      ->Args({1, 2048, 1, 1})
      ->Args({2, 2048, 1, 0})
      ->Unit(benchmark::kMillisecond)
      ->UseManualTime()
      ->Iterations(10);
}
const bool registered = (register_model<md::Llama31_8B>(), register_model<md::Qwen25_7B>(), true);

}  // namespace
