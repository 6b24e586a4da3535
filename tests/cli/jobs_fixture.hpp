// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The program's jobs fixture: a scratch directory, a CPU environment, the InputError of
// resolve_jobs.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tprimat/core/error.hpp"
#include "cli/jobs.hpp"
#include "cli/options.hpp"

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

  cli::Job job(const cli::BenchOptions& o) { return cli::resolve_jobs(o, env_).jobs.at(0); }
  /// The InputError message of resolve_jobs (one line, "tprimat: ..."), or "" when it succeeds.
  std::string error_of(const cli::BenchOptions& o) {
    try {
      cli::resolve_jobs(o, env_);
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
  cli::Environment env_;
  cli::BenchOptions opts_;
};

}  // namespace tprimat::testing
