// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// StepProfiler: runs the schedule over a run's steps, records host ranges (every backend) and the
// device collector's activity (CUDA: CUPTI), and writes the recorded steps as a Chrome trace.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tprimat/profile/chrome_trace.hpp"
#include "tprimat/profile/collector.hpp"
#include "tprimat/profile/nvtx.hpp"
#include "tprimat/profile/overhead.hpp"
#include "tprimat/profile/schedule.hpp"
#include "tprimat/profile/trace_event.hpp"
#include "tprimat/profile/trace_io.hpp"

namespace tprimat::profile {

/// Host time of every tprimat trace: steady_clock (CLOCK_MONOTONIC on Linux), in nanoseconds.
inline std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The loop calls step_begin(i) before step i and step_end(i, seconds) after it. Built only for
/// a rank that profiles; a run that does not profile never constructs one (nothing recorded,
/// no collector, no allocation). While a cycle runs it is the RangeSink of profile::Range.
class StepProfiler final : public RangeSink {
 public:
  /// `first_measured`: index of the first step whose time enters the statistics (the bench's
  /// warm-up steps precede it), for the overhead measure. `collector` may be null (host only).
  StepProfiler(Schedule schedule, int first_measured, std::unique_ptr<ActivityCollector> collector)
      : schedule_(schedule),
        first_measured_(first_measured),
        collector_(std::move(collector)),
        pid_(::getpid()),
        tid_(static_cast<std::int64_t>(::syscall(SYS_gettid))) {}
  StepProfiler(const StepProfiler&) = delete;
  StepProfiler& operator=(const StepProfiler&) = delete;
  ~StepProfiler() {
    set_range_sink(nullptr);
    if (collecting_ && collector_) {
      try {
        (void)collector_->stop();
      } catch (...) {  // a destructor during unwinding: the first error is the one to report
      }
    }
  }

  void step_begin(int step) {
    const Phase p = schedule_.phase(step);
    if (p == Phase::none) return;
    if (!collecting_) begin_cycle();
    if (p != Phase::warmup) open_range(std::string(step_range_prefix) + std::to_string(step), 0);
  }

  /// `seconds`: the step's measured time (the bench's figure), for the overhead measure.
  void step_end(int step, double seconds) {
    if (step < 0) return;
    if (seconds_.size() <= static_cast<std::size_t>(step))
      seconds_.resize(static_cast<std::size_t>(step) + 1, std::numeric_limits<double>::quiet_NaN());
    seconds_[static_cast<std::size_t>(step)] = seconds;
    const Phase p = schedule_.phase(step);
    if (p == Phase::none || p == Phase::warmup || !collecting_) return;
    while (!open_.empty()) close_range();  // the step's ProfilerStep range, last
    recorded_.push_back(step);
    if (p == Phase::record_and_save) end_cycle();
  }

  /// Ends a cycle the run cut short (it ended, or failed, inside one): its recorded steps stay.
  void finish() {
    if (collecting_) end_cycle();
  }

  const std::vector<int>& recorded_steps() const { return recorded_; }
  std::string collector_name() const { return collector_ ? collector_->name() : "host"; }
  Overhead overhead() const { return measure_overhead(schedule_, first_measured_, seconds_); }

  /// Host ranges and device activity of the recorded steps, by start time.
  std::vector<TraceEvent> events() const {
    std::vector<TraceEvent> all = host_;
    all.insert(all.end(), device_.begin(), device_.end());
    std::stable_sort(all.begin(), all.end(), [](const TraceEvent& a, const TraceEvent& b) {
      return a.start_ns < b.start_ns;
    });
    return all;
  }

  /// Writes the trace (after finish()). `metadata` (an object: platform, model, rank...) goes
  /// under "tprimat" with what this profiler knows added: collector, recorded steps, overhead.
  void write(const std::filesystem::path& path, bool gzip, nlohmann::json metadata,
             const std::string& host_name) const {
    if (!metadata.is_object()) metadata = nlohmann::json::object();
    metadata["collector"] = collector_name();
    metadata["clock"] = "steady_clock";
    metadata["schedule"] = {{"wait", schedule_.wait},
                            {"warmup", schedule_.warmup},
                            {"active", schedule_.active},
                            {"repeat", schedule_.repeat}};
    metadata["recorded_steps"] = recorded_;
    metadata["first_measured_step"] = first_measured_;
    metadata["profiling_overhead"] = overhead_json(overhead());
    const auto all = events();
    TrackNames names;
    names.processes[pid_] = host_name;
    names.threads[{pid_, tid_}] = "step thread";
    for (const auto& e : all) {
      if (!e.on_gpu()) continue;
      names.processes.emplace(e.pid, "GPU " + std::to_string(e.pid));
      names.threads.emplace(std::pair{e.pid, e.tid}, "stream " + std::to_string(e.tid));
    }
    write_trace_text(path, chrome_trace_json(all, names, metadata), gzip);
  }

  // RangeSink: profile::Range of the stepping thread, while a cycle runs.
  void push(const char* name, int index, double flops) override {
    open_range(index >= 0 ? std::string(name) + " " + std::to_string(index) : std::string(name),
               flops);
  }
  void pop() override {
    if (collecting_ && !open_.empty()) close_range();
  }

 private:
  void begin_cycle() {
    cycle_host_begin_ = host_.size();
    window_.reset();
    if (collector_) collector_->start();
    collecting_ = true;
    set_range_sink(this);
  }

  void end_cycle() {
    set_range_sink(nullptr);
    while (!open_.empty()) close_range();  // a failure inside a step left its ranges open
    std::vector<TraceEvent> device;
    collecting_ = false;
    if (collector_) device = collector_->stop();
    if (!window_) {  // nothing recorded (the run ended during the warm-up steps)
      host_.resize(cycle_host_begin_);
      return;
    }
    // Keep what the recorded steps cover: the warm-up steps only primed the collector.
    // Not a structured binding: clang before 16 (hipcc of ROCm 5) cannot capture one.
    const std::int64_t begin = window_->first, end = window_->second;
    host_.erase(
        std::remove_if(host_.begin() + static_cast<std::ptrdiff_t>(cycle_host_begin_), host_.end(),
                       [&](const TraceEvent& e) { return e.start_ns < begin; }),
        host_.end());
    for (auto& e : device)
      if (e.end_ns > begin && e.start_ns < end) device_.push_back(std::move(e));
    window_.reset();
  }

  void open_range(std::string name, double flops) {
    if (!collecting_) return;
    TraceEvent e;
    e.kind = Kind::range;
    e.category = std::string(category::annotation);
    e.name = std::move(name);
    e.pid = pid_;
    e.tid = tid_;
    e.external_id = ++next_id_;
    e.flops = flops;
    e.start_ns = steady_now_ns();  // before the push: work it tags starts inside the range
    if (collector_) collector_->push_correlation(e.external_id);
    open_.push_back(host_.size());
    host_.push_back(std::move(e));
  }

  void close_range() {
    TraceEvent& e = host_[open_.back()];
    e.end_ns = steady_now_ns();
    open_.pop_back();
    if (collector_) collector_->pop_correlation();
    if (e.name.rfind(step_range_prefix, 0) == 0) {  // a recorded step widens the kept window
      if (!window_) window_ = std::pair{e.start_ns, e.end_ns};
      window_->first = std::min(window_->first, e.start_ns);
      window_->second = std::max(window_->second, e.end_ns);
    }
  }

  Schedule schedule_;
  int first_measured_ = 0;
  std::unique_ptr<ActivityCollector> collector_;
  std::int64_t pid_ = 0, tid_ = 0;
  bool collecting_ = false;
  std::vector<TraceEvent> host_, device_;
  std::vector<std::size_t> open_;  // indices into host_ of the open ranges, innermost last
  std::size_t cycle_host_begin_ = 0;
  std::optional<std::pair<std::int64_t, std::int64_t>> window_;  // recorded steps of the cycle
  std::uint64_t next_id_ = 0;
  std::vector<int> recorded_;
  std::vector<double> seconds_;  // by step index
};

}  // namespace tprimat::profile
