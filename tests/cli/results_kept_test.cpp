// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// What cli/runner.hpp leaves behind when a run is cut short (out of memory, SIGINT/SIGTERM,
// SIGHUP/SIGPIPE) or would replace a result of another configuration: fake steps drive the real
// run_job. Also the signal guard and the console that a closed pipe or terminal takes away.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <new>
#include <sstream>
#include <span>
#include <string>
#include <vector>

#include "tprimat/parallel/communicator.hpp"
#include "cli/interrupt.hpp"
#include "cli/jobs.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "cli/runner.hpp"

namespace {

using namespace tprimat;
namespace fs = std::filesystem;

/// What a fake step does at step `s` (0-based, warm-up included) before returning its stats.
using FakeStep = std::function<void(int s)>;

class ResultsKept : public ::testing::Test {
 protected:
  void SetUp() override {
    cli::clear_interrupt();
    dir_ = fs::temp_directory_path() / ("tprimat-results-kept-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    opts_.output_dir = (dir_ / "out").string();
    opts_.model = "tiny";
    opts_.seq = 16;
    opts_.steps = 4;
    opts_.warmup_steps = 1;
  }
  void TearDown() override {
    cli::clear_interrupt();
    fs::remove_all(dir_);
  }

  cli::Job job() {
    cli::Environment env;
    env.device.platform = "cpu";
    env.device.software_stack = "cpu";
    env.device.device_name = "test cpu";
    env.device.total_memory_gb = 16;
    env.command_line = "tprimat bench";
    auto list = cli::resolve_jobs(opts_, env);
    list.jobs.at(0).ctx.timestamp = "2026-01-01T00:00:00Z";
    return list.jobs.at(0);
  }

  /// run_job over a fake step: `before` runs where run_once would build the step.
  int run(const cli::Job& j, const FakeStep& at_step, const std::function<void()>& before = {}) {
    cli::Reporter rep(true);
    const cli::RunOnce once = [&](const cli::Job& jb, int r, cli::Reporter& rp) {
      parallel::comm::Single comm;
      if (r == 0) cli::refuse_conflicting_result(jb, comm);
      if (before) before();
      int s = 0;
      cli::StepDriver d{[&](std::span<const std::int32_t>) {
                            at_step(s);
                            train::StepStats st;
                            st.loss = 5.0 - 0.1 * s++;
                            st.lr = 1e-4;
                            st.device_seconds = 0.01;
                            return st;
                          },
                          [] { return std::size_t(1) << 20; }, 0};
      return cli::run_steps(jb, r, d, rp);
    };
    return cli::run_job(j, 0, once, rep);
  }

  nlohmann::json result() const {
    std::ifstream in(dir_ / "out" / "benchmark_cpu_tiny.json");
    return nlohmann::json::parse(in);
  }
  std::string text(const fs::path& rel) const {
    std::ifstream in(dir_ / "out" / rel);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
  cli::BenchOptions opts_;
};

// ---- out of memory: reported with the memory plan beside it, steps so far kept ----------------

TEST_F(ResultsKept, OutOfMemoryInAStepIsReportedWithThePlan) {
  ::testing::internal::CaptureStderr();
  const int rc = run(job(), [](int s) {
    if (s == 3)
      throw core::OutOfMemoryError(
          "out of GPU memory allocating 2.00 GiB (0.50 GiB free of 80.00 GiB)");
  });
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, core::exit_run_failed);
  const auto doc = result();
  EXPECT_EQ(doc["complete"], false);
  const std::string error = doc["error"];
  EXPECT_NE(error.find("out of GPU memory allocating 2.00 GiB"), std::string::npos) << error;
  EXPECT_NE(error.find("predicted memory per GPU "), std::string::npos) << error;
  EXPECT_NE(error.find(" of 16.00 GiB: weights "), std::string::npos) << error;
  EXPECT_NE(error.find("activations"), std::string::npos) << error;
  EXPECT_NE(error.find("to fit: --layers, a smaller --mbs"), std::string::npos) << error;
  EXPECT_GT(doc["memory_metrics"]["predicted_gb"].get<double>(), 0);
  EXPECT_EQ(doc["raw_step_times"].size(), 2u);  // steps 1 and 2 measured, step 3 ran out
  EXPECT_NE(err.find("tprimat: run failed: out of GPU memory"), std::string::npos) << err;
  EXPECT_NE(err.find("predicted memory per GPU"), std::string::npos) << err;
}

TEST_F(ResultsKept, OutOfMemoryBuildingTheStepStillWritesTheResult) {
  const auto j = job();
  cli::Reporter rep(true);
  const cli::RunOnce once = [](const cli::Job&, int, cli::Reporter&) -> bench::RunRecord {
    throw core::OutOfMemoryError("out of GPU memory allocating 30.00 GiB");
  };
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(cli::run_job(j, 0, once, rep), core::exit_run_failed);
  ::testing::internal::GetCapturedStderr();
  const std::string error = result()["error"];
  EXPECT_NE(error.find("30.00 GiB; predicted memory per GPU"), std::string::npos) << error;
  EXPECT_NE(text("training_tiny.log").find("predicted memory per GPU"), std::string::npos);
}

TEST_F(ResultsKept, HostOutOfMemoryIsReportedWithThePlanToo) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run(job(),
                [](int s) {
                  if (s == 2) throw std::bad_alloc();
                }),
            core::exit_run_failed);
  ::testing::internal::GetCapturedStderr();
  const std::string error = result()["error"];
  EXPECT_EQ(error.rfind("tprimat: out of host memory (", 0), 0u) << error;
  EXPECT_NE(error.find("predicted memory per GPU"), std::string::npos) << error;
}

// ---- SIGINT / SIGTERM: stop between steps, write what ran, exit 128 + signo -------------------

TEST_F(ResultsKept, SignalStopsBetweenStepsAndKeepsWhatRan) {
  ::testing::internal::CaptureStderr();
  const int rc = run(job(), [](int s) {
    if (s == 2) std::raise(SIGTERM);  // the step finishes; the next one does not start
  });
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 128 + SIGTERM);
  const auto doc = result();
  EXPECT_EQ(doc["complete"], false);
  EXPECT_EQ(doc["error"], "interrupted by SIGTERM");
  EXPECT_EQ(doc["raw_step_times"].size(), 2u);
  EXPECT_EQ(doc["warmup_step_times"].size(), 1u);
  EXPECT_NE(err.find("tprimat: interrupted by SIGTERM: writing the 2 measured step(s)"),
            std::string::npos)
      << err;
  // The log is published under its final name, with the interruption in it.
  EXPECT_NE(text("training_tiny.log").find("interrupted by SIGTERM"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "out" / "training_tiny.log.partial"));
}

TEST_F(ResultsKept, SignalBeforeTheFirstStepWritesNothingAndKeepsThePreviousPair) {
  EXPECT_EQ(run(job(), [](int) {}), 0);
  const std::string before = text("benchmark_cpu_tiny.json");
  const std::string log_before = text("training_tiny.log");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run(
                job(), [](int) {}, [] { std::raise(SIGINT); }),
            128 + SIGINT);
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(text("benchmark_cpu_tiny.json"), before);
  EXPECT_EQ(text("training_tiny.log"), log_before);
  EXPECT_FALSE(fs::exists(dir_ / "out" / "training_tiny.log.partial"));
}

TEST_F(ResultsKept, ANotedSignalSkipsTheNextJob) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run(job(),
                [](int s) {
                  if (s == 1) std::raise(SIGINT);
                }),
            128 + SIGINT);
  ::testing::internal::GetCapturedStderr();
  int steps = 0;
  EXPECT_EQ(run(job(), [&](int) { ++steps; }), 128 + SIGINT);
  EXPECT_EQ(steps, 0);
}

TEST(Interrupt, SecondSignalEndsTheProcessAtOnce) {
  EXPECT_EXIT(
      {
        cli::InterruptGuard guard;
        std::raise(SIGINT);  // noted
        std::raise(SIGINT);  // the default action again: the process ends here
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGINT), "");
  // A guard installed after a noted signal (the next job) does not hold a second one either.
  EXPECT_EXIT(
      {
        {
          cli::InterruptGuard first;
          std::raise(SIGTERM);
        }
        cli::InterruptGuard second;
        std::raise(SIGTERM);
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGTERM), "");
}

TEST(Interrupt, NamesAndExitCodes) {
  EXPECT_EQ(cli::interruption_reason(SIGINT), "interrupted by SIGINT");
  EXPECT_EQ(cli::signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(cli::interruption_reason(SIGHUP), "interrupted by SIGHUP");
  EXPECT_EQ(cli::signal_name(SIGPIPE), "SIGPIPE");
  EXPECT_EQ(core::exit_interrupted(SIGINT), 130);
  EXPECT_EQ(core::exit_interrupted(SIGTERM), 143);
  EXPECT_EQ(core::exit_interrupted(SIGHUP), 129);
  EXPECT_EQ(core::exit_interrupted(SIGPIPE), 141);
}

// ---- SIGHUP (the terminal went away) and SIGPIPE (the reader of stdout did) -----------------

TEST_F(ResultsKept, HangupAndBrokenPipeStopBetweenStepsAndKeepWhatRan) {
  for (const int signo : {SIGHUP, SIGPIPE}) {
    cli::clear_interrupt();
    fs::remove_all(dir_);
    ::testing::internal::CaptureStderr();
    const int rc = run(job(), [signo](int s) {
      if (s == 2) std::raise(signo);
    });
    const std::string err = ::testing::internal::GetCapturedStderr();
    const std::string name = cli::signal_name(signo);
    EXPECT_EQ(rc, 128 + signo) << name;
    const auto doc = result();
    EXPECT_EQ(doc["complete"], false) << name;
    EXPECT_EQ(doc["error"], "interrupted by " + name);
    EXPECT_EQ(doc["raw_step_times"].size(), 2u) << name;
    EXPECT_NE(err.find("tprimat: interrupted by " + name + ": writing the 2 measured step(s)"),
              std::string::npos)
        << err;
    EXPECT_NE(text("training_tiny.log").find("interrupted by " + name), std::string::npos);
  }
}

TEST(Interrupt, HangupAndBrokenPipeNeverEndTheProcessAtOnce) {
  EXPECT_EXIT(
      {
        cli::InterruptGuard guard;
        for (int i = 0; i < 3; ++i) {  // every write to a closed pipe raises SIGPIPE again
          std::raise(SIGHUP);
          std::raise(SIGPIPE);
        }
        std::exit(cli::interrupt_signal() == SIGHUP ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  // ...but someone's Ctrl-C after them still does.
  EXPECT_EXIT(
      {
        cli::InterruptGuard guard;
        std::raise(SIGHUP);
        std::raise(SIGINT);
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGINT), "");
}

TEST(Interrupt, ASignalIgnoredFromTheStartStaysIgnored) {
  EXPECT_EXIT(
      {
        std::signal(SIGHUP, SIG_IGN);  // nohup
        std::signal(SIGINT, SIG_IGN);  // a background job of a non-interactive shell
        {
          cli::InterruptGuard guard;
          std::raise(SIGHUP);
          std::raise(SIGINT);
          if (cli::interrupt_signal() != 0) std::exit(1);
          std::raise(SIGTERM);  // noted; SIGINT stays ignored, not armed to end the process
          std::raise(SIGINT);
        }
        struct sigaction now {};
        ::sigaction(SIGINT, nullptr, &now);
        std::exit(cli::interrupt_signal() == SIGTERM && now.sa_handler == SIG_IGN ? 0 : 2);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Reporter, AClosedPipeOnStdoutClosesTheConsoleNotTheRunNorTheLog) {
  const auto log = fs::temp_directory_path() / ("tprimat-reporter-" + std::to_string(::getpid()));
  EXPECT_EXIT(
      {
        int code = 3;
        {  // everything on the heap is gone before exit: no leak for the leak checker to see
          cli::InterruptGuard guard;
          int p[2];
          if (::pipe(p) != 0) std::exit(3);
          ::dup2(p[1], STDOUT_FILENO);
          ::close(p[0]);  // nobody reads stdout any more
          ::close(p[1]);
          cli::Reporter rep(true);
          rep.open_log(log);
          rep.line("before");
          cli::StepLine step;
          step.k = 1;
          step.n = 3;
          step.loss = 5.0;
          step.seconds = 0.1;
          step.tokens_per_second = 10.0;
          step.eta_seconds = 0.2;
          rep.step(step);
          rep.line("after");
          rep.close_log();
          std::ifstream in(log);
          std::stringstream s;
          s << in.rdbuf();
          const bool logged = s.str().find("before\nstep 1/3 ") == 0 &&
                              s.str().find("\nafter\n") != std::string::npos;
          code = !rep.console_open() && cli::interrupt_signal() == SIGPIPE && logged ? 0 : 4;
        }
        std::exit(code);
      },
      ::testing::ExitedWithCode(0), "");
  fs::remove(log);
}

TEST(Reporter, RedrawsOnlyOnATerminalOutsideMpirun) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  EXPECT_FALSE(cli::redraws_progress(p[1]));
  ::close(p[0]);
  ::close(p[1]);
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  const int tty = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(tty, 0);
  const char* term = std::getenv("TERM");
  const std::string saved_term = term != nullptr ? term : "";
  const char* ompi = std::getenv("OMPI_COMM_WORLD_SIZE");
  const std::string saved_ompi = ompi != nullptr ? ompi : "";
  ::setenv("TERM", "xterm", 1);
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  EXPECT_TRUE(cli::redraws_progress(tty));
  ::setenv("TERM", "dumb", 1);
  EXPECT_FALSE(cli::redraws_progress(tty));
  ::setenv("TERM", "xterm", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "1", 1);  // a rank of mpirun: its pty is not the user's
  EXPECT_FALSE(cli::redraws_progress(tty));
  if (ompi != nullptr)
    ::setenv("OMPI_COMM_WORLD_SIZE", saved_ompi.c_str(), 1);
  else
    ::unsetenv("OMPI_COMM_WORLD_SIZE");
  if (term != nullptr)
    ::setenv("TERM", saved_term.c_str(), 1);
  else
    ::unsetenv("TERM");
  ::close(tty);
  ::close(master);
}

// ---- a result of another configuration is never replaced without --overwrite ------------------

TEST_F(ResultsKept, AnotherConfigurationIsRefusedAndLeftUntouched) {
  opts_.seq = 32;
  EXPECT_EQ(run(job(), [](int) {}), 0);
  const std::string before = text("benchmark_cpu_tiny.json");
  opts_.seq = 16;
  opts_.mbs = 2;
  int steps = 0;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run(job(), [&](int) { ++steps; }), core::exit_bad_input);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(steps, 0);
  EXPECT_EQ(text("benchmark_cpu_tiny.json"), before);
  EXPECT_FALSE(fs::exists(dir_ / "out" / "training_tiny.log.partial"));
  EXPECT_EQ(err.rfind("tprimat: " + (dir_ / "out" / "benchmark_cpu_tiny.json").string() +
                          " holds the result of another configuration (",
                      0),
            0u)
      << err;
  EXPECT_NE(err.find("training_config.micro_batch_size: 1 -> 2"), std::string::npos) << err;
  EXPECT_NE(err.find("training_config.sequence_length: 32 -> 16"), std::string::npos) << err;
  EXPECT_NE(err.find("refused to overwrite it, nothing ran; pass --overwrite to replace it, or "
                     "another --output-dir\n"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find('\n'), err.size() - 1) << "one line";

  opts_.overwrite = true;
  EXPECT_EQ(run(job(), [](int) {}), 0);
  EXPECT_EQ(result()["training_config"]["micro_batch_size"], 2);
}

TEST_F(ResultsKept, RunLengthIsNotPartOfTheConfiguration) {
  auto j = job();
  EXPECT_EQ(run(j, [](int) {}), 0);
  opts_.steps = 7;
  opts_.warmup_steps = 0;
  opts_.runs = 2;
  EXPECT_TRUE(
      bench::existing_result_differences(dir_ / "out" / "benchmark_cpu_tiny.json", job().ctx)
          ->empty());
  opts_.seed = 7;
  opts_.lr = 1e-3;
  const auto diff =
      bench::existing_result_differences(dir_ / "out" / "benchmark_cpu_tiny.json", job().ctx);
  ASSERT_EQ(diff->size(), 2u);
  EXPECT_EQ((*diff)[0], "training_config.seed: 42 -> 7");
  EXPECT_EQ((*diff)[1].rfind("optimizer.lr_peak: 0.0003 -> 0.001", 0), 0u) << (*diff)[1];
}

TEST_F(ResultsKept, WhatIsNotAResultCountsAsAnotherConfiguration) {
  const auto j = job();
  const auto file = dir_ / "out" / "benchmark_cpu_tiny.json";
  EXPECT_FALSE(bench::existing_result_differences(file, j.ctx).has_value());
  std::ofstream(file) << "{\"schema_version\": 1";
  EXPECT_EQ(bench::existing_result_differences(file, j.ctx)->at(0),
            "not a tprimat result: unreadable, or not a JSON object");
  std::ofstream(file) << "{\"platform\": \"cpu\"}";  // older or foreign: keys are missing
  const auto diff = bench::existing_result_differences(file, j.ctx);
  EXPECT_EQ(diff->at(0), "model.cli_name: absent -> \"tiny\"");
  parallel::comm::Single comm;
  EXPECT_THROW(cli::refuse_conflicting_result(j, comm), bench::ResultConflict);
}

/// A rank of a group whose other ranks hold `others` (max-reduced with this rank's values).
struct OtherRanks {
  std::vector<std::vector<float>> others;  // one per call of all_reduce_max, in call order
  std::size_t calls = 0;
  int size() const { return 2; }
  void all_reduce_max(std::span<float> x) {
    const auto& o = others.at(calls++);
    ASSERT_EQ(o.size(), x.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::max(x[i], o[i]);
  }
};

// Rank 0 writes the result; under PP another stage may hold more, and the result names the
// busiest rank's peak (the plan beside it is the busiest stage's).
TEST(MemoryOverRanks, TheBusiestRanksPeaksAndStepsReachRankZero) {
  bench::RunRecord rec;
  rec.peak_bytes = 10.0 * (1 << 30);
  rec.peak_reserved_bytes = 11.0 * (1 << 30);
  rec.memory_gb = {9.0, 10.0};
  const float mib = 1024.0f;  // MiB in a GiB
  OtherRanks comm{{{12.5f * mib, 10.0f * mib, 2.0f, -2.0f}, {12.0f, 12.5f}}};
  cli::memory_over_ranks(rec, comm);
  EXPECT_EQ(comm.calls, 2u);
  EXPECT_DOUBLE_EQ(rec.peak_bytes, 12.5 * (1 << 30));
  EXPECT_DOUBLE_EQ(rec.peak_reserved_bytes, 11.0 * (1 << 30));  // its own, exact
  EXPECT_EQ(rec.memory_gb, (std::vector<double>{12.0, 12.5}));
}

TEST(MemoryOverRanks, RanksThatStoppedApartKeepRankZerosSteps) {
  bench::RunRecord rec;
  rec.peak_bytes = 3.0 * (1 << 30);
  rec.memory_gb = {2.0, 3.0};
  OtherRanks comm{{{4.0f * 1024, 0.0f, 2.0f, -1.0f}}};  // the other rank measured one step
  cli::memory_over_ranks(rec, comm);
  EXPECT_EQ(comm.calls, 1u);  // no per-step reduction of unequal lengths
  EXPECT_DOUBLE_EQ(rec.peak_bytes, 4.0 * (1 << 30));
  EXPECT_EQ(rec.memory_gb, (std::vector<double>{2.0, 3.0}));
}

}  // namespace
