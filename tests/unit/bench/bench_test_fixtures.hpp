// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// What the bench unit tests share: a jobs fixture (a scratch directory, a CPU environment, the
// InputError of resolve_jobs) and the context and run of a small complete CPU result.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tprimat/bench/jobs.hpp"
#include "tprimat/bench/options.hpp"
#include "tprimat/bench/result.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/model/tiny.hpp"

namespace tprimat::testing {

/// resolve_jobs on one CPU rank with 24 GiB, output under a scratch directory of this process.
class JobsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    namespace fs = std::filesystem;
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_suite()->name();
    dir_ = fs::temp_directory_path() / ("tprimat-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    env_.device.platform = "cpu";
    env_.device.software_stack = "cpu";
    env_.device.total_memory_gb = 24;
    opts_.output_dir = (dir_ / "out").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  bench::Job job(const bench::BenchOptions& o) { return bench::resolve_jobs(o, env_).jobs.at(0); }
  /// The InputError message of resolve_jobs (one line, "tprimat: ..."), or "" when it succeeds.
  std::string error_of(const bench::BenchOptions& o) {
    try {
      bench::resolve_jobs(o, env_);
    } catch (const core::InputError& e) {
      const std::string w = e.what();
      EXPECT_EQ(w.rfind("tprimat: ", 0), 0u) << w;
      EXPECT_EQ(w.find('\n'), std::string::npos) << w;
      return w;
    }
    return "";
  }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

  std::filesystem::path dir_;
  bench::Environment env_;
  bench::BenchOptions opts_;
};

/// A two-step run of Tiny on one CPU rank, fp32, gbs 2, seq 32 (the plan the caller's).
inline bench::ResultContext cpu_result_context(parallel::Plan plan, std::string command_line) {
  bench::ResultContext c;
  c.device.platform = "cpu";
  c.device.software_stack = "cpu";
  c.device.device_name = "check cpu";
  c.full = model::dims<model::Tiny>();
  c.dims = c.full;
  c.plan = std::move(plan);
  c.gbs = 2;
  c.seq = 32;
  c.steps = 2;
  c.warmup_steps = 1;
  c.precision = "fp32";
  c.command_line = std::move(command_line);
  c.timestamp = "2026-02-03T04:05:06Z";
  c.predicted.weights = c.predicted.total = 0.5 * bench::gib;
  return c;
}

/// One complete run of cpu_result_context's two steps, as the bench records it.
inline bench::RunRecord complete_cpu_run() {
  bench::RunRecord r;
  r.warmup_step_times = {0.3};
  r.step_times = {0.1, 0.2};
  r.losses = {5.0, 4.9};
  r.learning_rates = {1e-4, 2e-4};
  r.grad_norms = {1.0, 0.9};
  r.memory_gb = {0.1, 0.1};
  r.peak_bytes = 0.1 * bench::gib;
  r.complete = true;
  return r;
}

}  // namespace tprimat::testing
