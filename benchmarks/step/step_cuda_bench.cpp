// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// One CUDA TrainingStep per iteration at Llama 3.1 8B / Qwen 2.5 7B width (8 layers), timed by
// CUDA events, with tokens/s and MFU against the device's dense bf16 peak; with and without the
// CUDA graph, the host's issue time, a per-category breakdown, and the timing harness's own cost.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/data/synthetic.hpp"
#include "tprimat/model/counts.hpp"
#include "tprimat/model/llama31_8b.hpp"
#include "tprimat/model/qwen25_7b.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/train/training_step.hpp"

namespace {

namespace md = tprimat::model;
namespace tr = tprimat::train;
using tprimat::backend::Gpu;
constexpr int layers = 8;

/// Skips the benchmark, with the reason, where no GPU is visible (CI builds and lists these).
bool skip_without_gpu(benchmark::State& state) {
  if (Gpu::device_count() > 0) return false;
  state.SkipWithError("no CUDA device");
  return true;
}

/// A TrainingStep of M (8 layers, one GPU) and the synthetic corpus it reads, after `warm`
/// untimed steps: the first runs eagerly and settles every plan, the second (with the graph)
/// captures it.
template <md::ModelSpec M>
struct WarmStep {
  tr::TrainingStep<Gpu, M, tprimat::parallel::Layout<1, 1>> step;
  tprimat::data::SyntheticTokens corpus{M::vocab, 42};
  std::int64_t index = 0;

  WarmStep(tr::StepShape shape, tr::DeviceOptions options, int warm)
      : step(shape, tr::OptimizerConfig{}, 42, {}, options) {
    std::vector<std::int32_t> tokens = batch();
    for (int i = 0; i < warm; ++i) {
      next(tokens);
      step.run(tokens);
    }
  }
  /// A buffer for one step's tokens: grad_accum x mbs x (seq + 1).
  std::vector<std::int32_t> batch() const {
    return std::vector<std::int32_t>(static_cast<std::size_t>(step.shape().grad_accum) *
                                     step.shape().mbs * (step.shape().seq + 1));
  }
  /// The corpus's next micro-batches into `tokens`.
  void next(std::vector<std::int32_t>& tokens) {
    const std::size_t micro = std::size_t(step.shape().mbs) * (step.shape().seq + 1);
    std::vector<std::int32_t> one(micro);
    for (int m = 0; m < step.shape().grad_accum; ++m) {
      tprimat::data::fill_rank_batch(corpus, index++, step.shape().mbs, 0, 1, step.shape().seq,
                                     one);
      std::copy(one.begin(), one.end(), tokens.begin() + std::ptrdiff_t(m * micro));
    }
  }
};

/// tokens/s, TFLOP/s (model FLOPs), MFU against the dense bf16 peak and, named apart, against the
/// dense FP8 peak (each where known), and the pool's peak GiB of a timed step of `shape`
/// (grad_accum micro-batches). The FLOPs are the same whatever the precision.
template <md::ModelSpec M>
void throughput_counters(benchmark::State& state, const tr::StepShape& shape,
                         const tprimat::backend::DeviceInfo& info, std::size_t peak_bytes) {
  const double tokens_per_step = double(shape.grad_accum) * shape.mbs * shape.seq;
  const double flops =
      md::flops_per_token(md::dims<M>().with_layers(layers), shape.seq) * tokens_per_step;
  state.counters["tokens/s"] =
      benchmark::Counter(tokens_per_step, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["TFLOP/s"] =
      benchmark::Counter(flops * 1e-12, benchmark::Counter::kIsIterationInvariantRate);
  if (info.peak_tflops_dense > 0)
    state.counters["MFU"] = benchmark::Counter(flops * 1e-12 / info.peak_tflops_dense,
                                               benchmark::Counter::kIsIterationInvariantRate);
  if (info.peak_tflops_fp8_dense > 0)
    state.counters["MFU_fp8_peak"] = benchmark::Counter(
        flops * 1e-12 / info.peak_tflops_fp8_dense, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_GiB"] = double(peak_bytes) / double(1ull << 30);
}

// Args: mbs, seq, graph (1: replay a CUDA graph, 0: launch each kernel), attention (0 auto,
// 1 flash, 2 cudnn). The first step (eager, plans chosen) and the capture run before timing.
template <md::ModelSpec M>
void BM_CudaStep(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  tr::StepShape shape{static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), 1,
                      layers};
  tr::DeviceOptions options;
  options.graph = state.range(2) != 0;
  options.attention = static_cast<tr::AttentionChoice>(state.range(3));
  const auto info = Gpu::device_info();
  try {
    WarmStep<M> warm(shape, options, 3);
    auto& step = warm.step;
    std::vector<std::int32_t> tokens = warm.batch();
    double issue = 0, device = 0;
    for (auto _ : state) {
      warm.next(tokens);
      const auto stats = step.run(tokens);
      state.SetIterationTime(stats.device_seconds);
      issue += step.engine().issue_seconds();
      device += stats.device_seconds;
    }
    // The CPU side of a step (uploads + launches, or one graph launch) against its GPU time.
    state.counters["host_issue_ms"] = issue * 1e3 / double(state.iterations());
    state.counters["host_issue_share"] = issue / device;
    throughput_counters<M>(state, shape, info, step.peak_bytes());
    state.SetLabel(step.engine().attention_name() + (options.graph ? ", graph" : ", no graph"));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// Where one eager step's GPU time goes: events between the ops (DeviceOptions::phase_timing),
// summed per category. Args: mbs, attention (0 auto, 1 flash).
template <md::ModelSpec M>
void BM_CudaStepBreakdown(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  tr::StepShape shape{static_cast<int>(state.range(0)), 2048, 1, layers};
  tr::DeviceOptions options;
  options.graph = false;
  options.phase_timing = true;
  options.attention = static_cast<tr::AttentionChoice>(state.range(1));
  try {
    WarmStep<M> warm(shape, options, 2);
    auto& step = warm.step;
    std::vector<std::int32_t> tokens = warm.batch();
    std::vector<std::pair<std::string, double>> totals;
    for (auto _ : state) {
      warm.next(tokens);
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

// Does timing every step cost anything? Blocks of `block` steps: each step between the engine's
// own CUDA events (StepStats::device_seconds, what BM_CudaStep and the CLI report) against two
// events on a stream of ours around the whole block (the time column). The block also holds what
// lies between the steps' events (the host's work before each step's first event: splitting the
// tokens, grouping them for the embedding backward, issuing; the wake-up after each step's
// synchronisation), so the difference per step is the most per-step timing can hide or add.
// The blocks' tokens are drawn before timing. Args: graph (1 replay, 0 launch each kernel).
template <md::ModelSpec M>
void BM_CudaStepHarness(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  constexpr int block = 10;
  tr::StepShape shape{1, 2048, 1, layers};
  tr::DeviceOptions options;
  options.graph = state.range(0) != 0;
  cudaStream_t marks = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  try {
    WarmStep<M> warm(shape, options, 3);
    auto& step = warm.step;
    std::vector<std::vector<std::int32_t>> batches(block, warm.batch());
    tprimat::backend::gpu_check(cudaStreamCreateWithFlags(&marks, cudaStreamNonBlocking),
                                 "cudaStreamCreate");
    tprimat::backend::gpu_check(cudaEventCreate(&start), "cudaEventCreate");
    tprimat::backend::gpu_check(cudaEventCreate(&stop), "cudaEventCreate");
    double per_step_events = 0, block_events = 0, block_wall = 0;
    for (auto _ : state) {
      for (auto& b : batches) warm.next(b);
      double events = 0;
      const auto wall_start = std::chrono::steady_clock::now();
      tprimat::backend::gpu_check(cudaEventRecord(start, marks), "cudaEventRecord");
      for (const auto& b : batches) events += step.run(b).device_seconds;
      tprimat::backend::gpu_check(cudaEventRecord(stop, marks), "cudaEventRecord");
      tprimat::backend::gpu_check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
      float ms = 0;
      tprimat::backend::gpu_check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      state.SetIterationTime(ms * 1e-3 / block);
      per_step_events += events;
      block_events += ms * 1e-3;
      block_wall += wall;
    }
    const double steps = double(state.iterations()) * block;
    state.counters["per_step_events_ms"] = per_step_events / steps * 1e3;
    state.counters["block_events_ms_per_step"] = block_events / steps * 1e3;
    state.counters["block_wall_ms_per_step"] = block_wall / steps * 1e3;
    state.counters["harness_ms"] = (block_events - per_step_events) / steps * 1e3;
    state.counters["harness_share"] = (block_events - per_step_events) / per_step_events;
    state.SetLabel(step.engine().attention_name() + (options.graph ? ", graph" : ", no graph") +
                   ", " + std::to_string(block) + "-step blocks");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  if (marks) cudaStreamDestroy(marks);
}

// The step in bf16 and in FP8 (docs/fp8.md), micro-batches accumulated as a real step does (the
// FP8 weights are cast once a step, or at each use). Args: mbs, grad_accum, precision (0 bf16,
// 1 FP8 delayed, 2 FP8 current), copies (FP8: 0 kept, 1 recast: what the full models need on one
// H200, here at a depth where both fit, to price it). MFU against the bf16 dense peak and, named
// apart, the FP8 dense peak.
template <md::ModelSpec M>
void BM_CudaStepPrecision(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  tr::StepShape shape{static_cast<int>(state.range(0)), 2048, static_cast<int>(state.range(1)),
                      layers};
  tr::DeviceOptions options;
  const auto choice = state.range(2);
  if (choice > 0)
    options.precision = tr::PrecisionConfig::fp8_hybrid(choice == 1 ? tr::Fp8Recipe::delayed
                                                                     : tr::Fp8Recipe::current);
  if (state.range(3) == 1) options.precision.fp8.copies = tr::Fp8Copies::recast;
  const auto info = Gpu::device_info();
  try {
    WarmStep<M> warm(shape, options, 2);
    auto& step = warm.step;
    std::vector<std::int32_t> tokens = warm.batch();
    for (auto _ : state) {
      warm.next(tokens);
      state.SetIterationTime(step.run(tokens).device_seconds);
    }
    throughput_counters<M>(state, shape, info, step.peak_bytes());
    state.SetLabel(options.precision.name() +
                   (choice > 0 ? std::string("/") + tr::copies_name(options.precision.fp8.copies)
                               : std::string()));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

template <md::ModelSpec M>
void register_model() {
  benchmark::RegisterBenchmark(("CudaStepPrecision/" + std::string(M::cli_name)).c_str(),
                               &BM_CudaStepPrecision<M>)
      ->ArgNames({"mbs", "accum", "precision", "copies"})
      ->Args({2, 8, 0, 0})
      ->Args({2, 8, 1, 0})
      ->Args({2, 8, 2, 0})
      ->Args({2, 8, 1, 1})
      ->Args({2, 8, 2, 1})
      ->Unit(benchmark::kMillisecond)
      ->UseManualTime()
      ->Iterations(3);
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
      ->Args({2, 2048, 0, 0})
      ->Unit(benchmark::kMillisecond)
      ->UseManualTime()
      ->Iterations(10);
}
const bool registered = [] {
  register_model<md::Llama31_8B>();
  register_model<md::Qwen25_7B>();
  benchmark::RegisterBenchmark("CudaStepHarness/llama", &BM_CudaStepHarness<md::Llama31_8B>)
      ->ArgName("graph")
      ->Arg(1)
      ->Arg(0)
      ->Unit(benchmark::kMillisecond)
      ->UseManualTime()
      ->Iterations(3);
  return true;
}();

}  // namespace
