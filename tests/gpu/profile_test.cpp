// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// --profile on a GPU: CUPTI records the kernels of real CUDA steps (graph replays and eager
// steps), on the host's clock, inside the recorded step windows, and ties eager GEMMs to their
// FLOPs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../support/test_models.hpp"
#include "gpu_test.hpp"
#include "tprimat/backend/gpu.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/profile/cupti.hpp"
#include "tprimat/profile/nvtx.hpp"
#include "tprimat/profile/step_profiler.hpp"
#include "tprimat/profile/summary.hpp"
#include "tprimat/profile/trace_reader.hpp"
#include "tprimat/train/training_step.hpp"

namespace {

using namespace tprimat;
using backend::Gpu;using profile::Kind;
using profile::Schedule;
using profile::TraceEvent;
using tprimat::testing::LlamaNarrow;

struct Profiled {
  std::vector<TraceEvent> events;
  std::vector<double> device_seconds;  // by step
  std::vector<int> recorded;
  bool graph = false;
};

/// `steps` LlamaNarrow steps (mbs 1, seq 256: GEMMs big enough for cuBLASLt's GEMM kernels)
/// under `schedule`, as the bench runs them.
Profiled profile_steps(bool graph, Schedule schedule, int steps) {
  train::StepShape shape;
  shape.mbs = 1;
  shape.seq = 256;
  train::DeviceOptions options;
  options.graph = graph;
  auto collector = profile::make_collector<Gpu>();
  EXPECT_NE(collector, nullptr) << "this build has no CUPTI (CUDA::cupti not found by CMake)";
  profile::StepProfiler prof(schedule, 0, std::move(collector));
  train::TrainingStep<Gpu, LlamaNarrow, parallel::Layout<1, 1>> step(shape, {}, 42, {}, options);
  Profiled out;
  for (int s = 0; s < steps; ++s) {
    const auto tokens =
        tprimat::testing::random_tokens(std::size_t(shape.seq) + 1, LlamaNarrow::vocab, 1000 + s);
    prof.step_begin(s);
    const auto st = [&] {
      const profile::Range r("train_step");
      return step.run(tokens);
    }();
    prof.step_end(s, st.device_seconds);
    out.device_seconds.push_back(st.device_seconds);
  }
  prof.finish();
  out.events = prof.events();
  out.recorded = prof.recorded_steps();
  out.graph = step.engine().graph_captured();
  return out;
}

std::vector<const TraceEvent*> of_kind(const Profiled& p, Kind k) {
  std::vector<const TraceEvent*> v;
  for (const auto& e : p.events)
    if (e.kind == k) v.push_back(&e);
  return v;
}

/// Checks what every profiled run must satisfy; returns the step windows by step index.
std::map<int, std::pair<std::int64_t, std::int64_t>> check_common(const Profiled& p) {
  const auto kernels = of_kind(p, Kind::kernel);
  EXPECT_GT(kernels.size(), 0u) << "CUPTI recorded no kernel";
  EXPECT_TRUE(std::any_of(kernels.begin(), kernels.end(),
                          [](const TraceEvent* e) { return profile::is_gemm_kernel(e->name); }))
      << "no GEMM kernel among " << kernels.size();
  EXPECT_FALSE(of_kind(p, Kind::memcpy).empty()) << "the token upload and loss download";
  // Per stream: starts never go back in time, ends never before starts.
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> last_start;
  for (const auto& e : p.events) {
    if (!e.on_gpu()) continue;
    EXPECT_LE(e.start_ns, e.end_ns) << e.name;
    auto [it, fresh] = last_start.try_emplace({e.pid, e.tid}, e.start_ns);
    EXPECT_GE(e.start_ns, it->second) << e.name << " on stream " << e.tid;
    it->second = e.start_ns;
  }
  std::map<int, std::pair<std::int64_t, std::int64_t>> windows;
  for (const auto& e : p.events)
    if (!e.on_gpu() && e.name.rfind(profile::step_range_prefix, 0) == 0)
      windows[std::stoi(e.name.substr(profile::step_range_prefix.size()))] = {e.start_ns, e.end_ns};
  EXPECT_EQ(windows.size(), p.recorded.size());
  // Every GPU record lies inside a recorded step's window (CUPTI's clock converted to the
  // host's within a few microseconds), and each step's GPU span matches its CUDA-event time:
  // the events bracket the first upload and the loss download.
  constexpr std::int64_t slack_ns = 50'000;
  std::map<int, std::pair<std::int64_t, std::int64_t>> gpu_span;
  for (const auto& e : p.events) {
    if (!e.on_gpu()) continue;
    int owner = -1;
    for (const auto& [s, w] : windows)
      if (e.start_ns >= w.first - slack_ns && e.end_ns <= w.second + slack_ns) owner = s;
    EXPECT_GE(owner, 0) << e.name << " at " << e.start_ns << " lies in no recorded step";
    if (owner < 0) continue;
    auto [it, fresh] = gpu_span.try_emplace(owner, e.start_ns, e.end_ns);
    it->second.first = std::min(it->second.first, e.start_ns);
    it->second.second = std::max(it->second.second, e.end_ns);
  }
  for (const auto& [s, span] : gpu_span) {
    const double got = double(span.second - span.first) * 1e-9;
    const double want = p.device_seconds[std::size_t(s)];
    EXPECT_LE(got, want * 1.05 + 20e-6) << "step " << s;
    EXPECT_GE(got, want * 0.80 - 20e-6) << "step " << s;
  }
  return windows;
}

TEST(CuptiProfile, GraphReplaysAreRecordedWithTheSeedsSchedule) {
  TPRIMAT_REQUIRE_GPU();
  // wait 1 (step 0: eager), warm-up 1 (step 1: captured, CUPTI enabled first), record 2-6.
  const auto p = profile_steps(true, Schedule{}, 8);
  EXPECT_TRUE(p.graph);
  EXPECT_EQ(p.recorded, (std::vector<int>{2, 3, 4, 5, 6}));
  check_common(p);
  bool launch = false;
  for (const auto& e : p.events) launch = launch || e.name == "graph launch";
  EXPECT_TRUE(launch) << "the engine's range around cudaGraphLaunch";
}

// CUPTI enabled only after the graph was instantiated (step 1): on CUDA versions where CUPTI
// must see a graph's instantiation, this is where kernels would go missing.
TEST(CuptiProfile, GraphCapturedBeforeProfilingStarts) {
  TPRIMAT_REQUIRE_GPU();
  const auto p = profile_steps(true, Schedule{.wait = 3, .warmup = 1, .active = 2}, 7);
  EXPECT_EQ(p.recorded, (std::vector<int>{4, 5}));
  check_common(p);
}

TEST(CuptiProfile, EagerStepsCarryRangesAndGemmFlops) {
  TPRIMAT_REQUIRE_GPU();
  const auto p = profile_steps(false, Schedule{.wait = 1, .warmup = 1, .active = 2}, 4);
  EXPECT_FALSE(p.graph);
  check_common(p);
  std::map<std::string, int> ranges;
  for (const auto& e : p.events)
    if (!e.on_gpu()) ++ranges[e.name];
  for (const char* want : {"train_step", "forward", "backward", "optimizer", "forward layer 0",
                           "forward layer 1", "backward layer 1", "backward layer 0", "gemm"})
    EXPECT_GT(ranges[want], 0) << want;
  // Each GEMM kernel was launched inside a "gemm" range, so FLOPs reach it; the summary's rate
  // comes from the trace, and is a sane fraction of an H100's dense peak.
  profile::Trace t;
  t.events = p.events;
  t.format = "tprimat";
  const auto s = profile::summarize(t);
  EXPECT_GT(s.gemm_count, 0);
  std::string without;
  for (const auto& k : s.kernels)
    if (k.gemm && k.flops_ns < k.total_ns) without += "\n  " + k.name;
  EXPECT_EQ(s.gemm_flops_ns, s.gemm_ns) << "GEMM kernels launched outside a gemm range:" << without;
  const auto rate = s.gemm_tflops();
  ASSERT_TRUE(rate);
  EXPECT_EQ(rate->second, "trace");
  EXPECT_GT(rate->first, 1.0);
  EXPECT_LT(rate->first, 1000.0);
  std::printf(
      "eager LlamaNarrow step: %d GEMM kernels at %.1f TFLOP/s, %d kernels, GPU busy "
      "%.3f ms of %.3f ms\n",
      s.gemm_count, rate->first, s.kernel_count, double(s.busy_ns) * 1e-6,
      double(s.span_ns) * 1e-6);
}

TEST(CuptiProfile, TraceFileReadsBack) {
  TPRIMAT_REQUIRE_GPU();
  profile::StepProfiler prof(Schedule{.wait = 0, .warmup = 1, .active = 1}, 0,
                             profile::make_collector<Gpu>());
  train::StepShape shape;
  shape.seq = 128;
  train::TrainingStep<Gpu, LlamaNarrow, parallel::Layout<1, 1>> step(shape, {});
  for (int s = 0; s < 3; ++s) {
    prof.step_begin(s);
    const auto st = step.run(tprimat::testing::random_tokens(129, LlamaNarrow::vocab, 7 + s));
    prof.step_end(s, st.device_seconds);
  }
  prof.finish();
  const auto path = std::filesystem::temp_directory_path() /
                    ("tprimat_gpu_profile_" + std::to_string(::getpid()) + ".json");
  prof.write(path, false, {{"model", "llama-narrow"}}, "tprimat rank 0");
  const auto t = profile::read_chrome_trace(path);
  std::filesystem::remove(path);
  EXPECT_EQ(t.metadata["collector"], "cupti");
  const auto s = profile::summarize(t);
  EXPECT_EQ(s.steps, 1);
  EXPECT_EQ(s.devices, 1);
  EXPECT_GT(s.kernel_count, 0);
  EXPECT_GT(s.busy_ns, 0);
  EXPECT_TRUE(t.names.processes.count(0)) << "GPU 0 is named";
}

TEST(CuptiProfile, WithoutAProfilerRangesReachNoSink) {
  EXPECT_EQ(profile::detail::range_sink.load(), nullptr);
  const profile::Range r("idle");  // NVTX only (a no-op without a tool attached)
  EXPECT_EQ(profile::detail::range_sink.load(), nullptr);
}

}  // namespace
