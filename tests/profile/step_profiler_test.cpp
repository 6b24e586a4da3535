// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// StepProfiler with a scripted device collector: the schedule starts and stops it, only the
// recorded steps are kept, ranges nest and carry their ids to the device work, and nothing is
// recorded or installed outside the cycle.
#include "tprimat/profile/step_profiler.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tprimat/profile/collector.hpp"
#include "tprimat/profile/nvtx.hpp"
#include "tprimat/profile/overhead.hpp"
#include "tprimat/profile/summary.hpp"
#include "tprimat/profile/trace_reader.hpp"

namespace {

namespace profile = tprimat::profile;
using profile::Kind;
using profile::Schedule;
using profile::TraceEvent;

/// Emits one "kernel" per step at the moment of the innermost push, tagged with that range's id,
/// as CUPTI's external correlation would; logs its calls.
struct ScriptedCollector final : profile::ActivityCollector {
  std::vector<std::string>* log;
  std::vector<TraceEvent> recorded;
  std::vector<std::uint64_t> open;
  bool running = false;
  explicit ScriptedCollector(std::vector<std::string>* l) : log(l) {}
  std::string name() const override { return "scripted"; }
  void start() override {
    log->push_back("start");
    running = true;
  }
  std::vector<TraceEvent> stop() override {
    log->push_back("stop");
    running = false;
    return std::move(recorded);
  }
  void push_correlation(std::uint64_t id) override {
    open.push_back(id);
    if (!running) return;
    TraceEvent k;
    k.kind = Kind::kernel;
    k.category = "kernel";
    k.name = "kernel_under_" + std::to_string(id);
    k.tid = 7;
    k.start_ns = profile::steady_now_ns();
    k.end_ns = k.start_ns + 1;
    k.external_id = id;
    recorded.push_back(k);
  }
  void pop_correlation() override { open.pop_back(); }
};

/// One step as the runner runs it: the runner's range, the engine's nested ranges.
void run_step(profile::StepProfiler& p, int step, double seconds = 0.1) {
  p.step_begin(step);
  {
    const profile::Range outer("train_step");
    const profile::Range layer("forward layer", 3);
    const profile::Range gemm("gemm", profile::Flops{2e6});
  }
  p.step_end(step, seconds);
}

TEST(StepProfiler, ScheduleDrivesTheCollectorAndKeepsRecordedSteps) {
  std::vector<std::string> log;
  auto c = std::make_unique<ScriptedCollector>(&log);
  auto* collector = c.get();
  // wait 1, warmup 1, active 2: steps 2 and 3 recorded, step 1 warms up, 0 and 4-5 untouched.
  profile::StepProfiler p(Schedule{.wait = 1, .warmup = 1, .active = 2, .repeat = 1}, 1,
                          std::move(c));
  for (int s = 0; s < 6; ++s) {
    run_step(p, s, s == 2 || s == 3 ? 0.11 : 0.1);
    const bool in_cycle = s == 1 || s == 2;  // after step_end
    EXPECT_EQ(profile::detail::range_sink.load() != nullptr, in_cycle) << "after step " << s;
  }
  p.finish();
  EXPECT_EQ(log, (std::vector<std::string>{"start", "stop"}));
  EXPECT_TRUE(collector->open.empty());  // every push popped
  EXPECT_EQ(p.recorded_steps(), (std::vector<int>{2, 3}));
  EXPECT_EQ(p.collector_name(), "scripted");

  const auto events = p.events();
  std::vector<std::string> host, device;
  for (const auto& e : events) (e.on_gpu() ? device : host).push_back(e.name);
  // The warm-up step's ranges and kernels are dropped; the recorded steps' are nested in order.
  EXPECT_EQ(host,
            (std::vector<std::string>{"ProfilerStep#2", "train_step", "forward layer 3", "gemm",
                                      "ProfilerStep#3", "train_step", "forward layer 3", "gemm"}));
  ASSERT_EQ(device.size(), 8u);  // one per push in steps 2 and 3
  for (const auto& e : events) {
    EXPECT_LE(e.start_ns, e.end_ns) << e.name;
    if (e.name == "gemm") EXPECT_DOUBLE_EQ(e.flops, 2e6);
  }
  // Ranges nest: each starts no earlier and ends no later than the one before it in its step.
  for (std::size_t i = 1; i < 4; ++i) {
    const auto* outer = &events[0];
    for (const auto& e : events)
      if (e.name == host[i - 1] && !e.on_gpu()) {
        outer = &e;
        break;
      }
    for (const auto& e : events)
      if (e.name == host[i] && !e.on_gpu()) {
        EXPECT_GE(e.start_ns, outer->start_ns) << host[i];
        EXPECT_LE(e.end_ns, outer->end_ns) << host[i];
        break;
      }
  }
  // Overhead: measured steps are 1-5; 2-3 recorded (0.11 s), 4-5 untouched (0.1 s), 1 warm-up.
  const auto o = p.overhead();
  EXPECT_EQ(o.profiled_steps, 2);
  EXPECT_EQ(o.unprofiled_steps, 2);
  EXPECT_NEAR(o.fraction(), 0.1, 1e-12);
}

TEST(StepProfiler, OutsideTheScheduleNothingIsInstalledOrRecorded) {
  std::vector<std::string> log;
  profile::StepProfiler p(Schedule{.wait = 3, .warmup = 1, .active = 1, .repeat = 1}, 0,
                          std::make_unique<ScriptedCollector>(&log));
  for (int s = 0; s < 3; ++s) run_step(p, s);  // the run ends before the warm-up step
  p.finish();
  EXPECT_TRUE(log.empty());
  EXPECT_TRUE(p.events().empty());
  EXPECT_EQ(profile::detail::range_sink.load(), nullptr);
}

TEST(StepProfiler, ARunCutShortKeepsItsRecordedStepsAndClosesRanges) {
  std::vector<std::string> log;
  profile::StepProfiler p(Schedule{.wait = 0, .warmup = 0, .active = 5, .repeat = 1}, 0,
                          std::make_unique<ScriptedCollector>(&log));
  run_step(p, 0);
  p.step_begin(1);
  {
    const profile::Range r("train_step");
    // A failure inside step 1: step_end never comes, the runner calls finish().
  }
  p.finish();
  EXPECT_EQ(log, (std::vector<std::string>{"start", "stop"}));
  EXPECT_EQ(p.recorded_steps(), (std::vector<int>{0}));
  int steps = 0;
  for (const auto& e : p.events())
    if (e.name.rfind("ProfilerStep#", 0) == 0) {
      ++steps;
      EXPECT_GE(e.end_ns, e.start_ns);
    }
  EXPECT_EQ(steps, 2);  // step 1's range closed at finish
  EXPECT_EQ(profile::detail::range_sink.load(), nullptr);
}

TEST(StepProfiler, RepeatedCyclesStartAndStopEachTime) {
  std::vector<std::string> log;
  profile::StepProfiler p(Schedule{.wait = 1, .warmup = 0, .active = 1, .repeat = 0}, 0,
                          std::make_unique<ScriptedCollector>(&log));
  for (int s = 0; s < 6; ++s) run_step(p, s);
  p.finish();
  EXPECT_EQ(p.recorded_steps(), (std::vector<int>{1, 3, 5}));
  EXPECT_EQ(log, (std::vector<std::string>{"start", "stop", "start", "stop", "start", "stop"}));
}

// The host-only profiler (CPU backend): a file any reader, and profile-summary, accepts.
TEST(StepProfiler, HostOnlyTraceWritesAndReadsBack) {
  profile::StepProfiler p(Schedule{.wait = 0, .warmup = 1, .active = 2, .repeat = 1}, 1, nullptr);
  for (int s = 0; s < 4; ++s) run_step(p, s, s == 1 || s == 2 ? 0.11 : 0.1);
  p.finish();
  EXPECT_EQ(p.collector_name(), "host");
  const auto path = std::filesystem::temp_directory_path() /
                    ("tprimat_step_profiler_" + std::to_string(::getpid()) + ".json");
  p.write(path, false, {{"model", "tiny"}}, "tprimat rank 0");
  const auto t = profile::read_chrome_trace(path);
  std::filesystem::remove(path);
  EXPECT_EQ(t.format, "tprimat");
  EXPECT_EQ(t.metadata["model"], "tiny");
  EXPECT_EQ(t.metadata["collector"], "host");
  EXPECT_EQ(t.metadata["recorded_steps"], nlohmann::json({1, 2}));
  EXPECT_EQ(t.metadata["schedule"]["active"], 2);
  EXPECT_EQ(t.names.processes.at(::getpid()), "tprimat rank 0");
  const auto s = profile::summarize(t);
  EXPECT_EQ(s.steps, 2);
  EXPECT_EQ(s.kernel_count, 0);
  // Steps 1-2 recorded (0.11 s), step 3 untouched (0.1 s).
  ASSERT_TRUE(s.overhead_fraction());
  EXPECT_NEAR(*s.overhead_fraction(), 0.1, 1e-9);
}

TEST(Overhead, ComparesRecordedWithUntouchedMeasuredSteps) {
  const Schedule s{.wait = 1, .warmup = 1, .active = 2, .repeat = 1};
  // Steps: 0 bench warm-up (excluded), 1 profiler warm-up (neither), 2-3 recorded, 4-5 untouched.
  const std::vector<double> t = {9.0, 5.0, 1.2, 1.4, 1.0, 1.0};
  const auto o = profile::measure_overhead(s, 1, t);
  EXPECT_EQ(o.profiled_steps, 2);
  EXPECT_EQ(o.unprofiled_steps, 2);
  EXPECT_DOUBLE_EQ(o.profiled_mean, 1.3);
  EXPECT_DOUBLE_EQ(o.unprofiled_mean, 1.0);
  EXPECT_NEAR(o.fraction(), 0.3, 1e-12);
  const auto j = profile::overhead_json(o);
  EXPECT_NEAR(j["fraction"].get<double>(), 0.3, 1e-12);
  // No untouched measured step: not measured, null in JSON.
  const auto none = profile::measure_overhead(s, 1, std::vector<double>{1, 1, 1, 1});
  EXPECT_TRUE(std::isnan(none.fraction()));
  EXPECT_TRUE(profile::overhead_json(none)["fraction"].is_null());
}

}  // namespace
