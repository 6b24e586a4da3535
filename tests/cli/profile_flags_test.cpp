// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// --profile flags over a config file's `profiling` block: precedence, checks, file names.
#include "cli/profile_flags.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tprimat/core/error.hpp"

namespace {

using tprimat::core::InputError;
using Flags = tprimat::cli::ProfileFlags;
using tprimat::profile::Settings;

Settings resolve(const Flags& f, const nlohmann::json& block, const std::string& file, int steps,
                 int world) {
  return tprimat::cli::resolve_profile(f, block, file, steps, world);
}

std::string profile_error_of(const Flags& f, const nlohmann::json& block = nullptr, int steps = 12,
                             int world = 1) {
  try {
    (void)resolve(f, block, "cfg.json", steps, world);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ProfileFlags, OffByDefaultAndNothingElseAllowed) {
  const Settings s = resolve(Flags{}, nullptr, "", 12, 1);
  EXPECT_FALSE(s.enabled);
  EXPECT_FALSE(s.profiles(0));
  EXPECT_EQ(profile_error_of({.active = 2}),
            "tprimat: --profile-active has no effect without --profile; add --profile");
  EXPECT_EQ(profile_error_of({.ranks = "0"}),
            "tprimat: --profile-ranks has no effect without --profile; add --profile");
  EXPECT_EQ(profile_error_of({.gzip = true}),
            "tprimat: --profile-gzip has no effect without --profile; add --profile");
}

TEST(ProfileFlags, SeedsDefaultsRankZero) {
  const Settings s = resolve({.enabled = true}, nullptr, "", 12, 2);
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.schedule.wait, 1);
  EXPECT_EQ(s.schedule.warmup, 1);
  EXPECT_EQ(s.schedule.active, 5);
  EXPECT_EQ(s.schedule.repeat, 1);
  EXPECT_TRUE(s.profiles(0));
  EXPECT_FALSE(s.profiles(1));
  EXPECT_FALSE(s.gzip);
}

TEST(ProfileFlags, ConfigBlockEnablesAndFlagsWin) {
  const auto block = nlohmann::json::parse(R"({
    "enabled": true, "export_chrome_trace": true, "profile_memory": true, "with_stack": true,
    "with_flops": true, "record_shapes": true,
    "schedule": {"wait": 2, "warmup": 1, "active": 3, "repeat": 2}, "ranks": [0, 1]})");
  Settings s = resolve({}, block, "cfg.json", 20, 2);
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.schedule.wait, 2);
  EXPECT_EQ(s.schedule.active, 3);
  EXPECT_EQ(s.schedule.repeat, 2);
  EXPECT_TRUE(s.profiles(1));
  s = resolve({.active = 1, .ranks = "all"}, block, "cfg.json", 20, 4);
  EXPECT_EQ(s.schedule.active, 1);
  EXPECT_EQ(s.schedule.wait, 2);  // the block's, no flag given
  EXPECT_TRUE(s.all_ranks);
  EXPECT_TRUE(s.profiles(3));
  // A disabled block: --profile turns it on with the block's schedule.
  const auto off = nlohmann::json::parse(R"({"enabled": false, "schedule": {"active": 2}})");
  EXPECT_FALSE(resolve({}, off, "cfg.json", 20, 1).enabled);
  EXPECT_EQ(resolve({.enabled = true}, off, "cfg.json", 20, 1).schedule.active, 2);
}

TEST(ProfileFlags, ConfigBlockMistakesNameTheKey) {
  EXPECT_EQ(profile_error_of({}, nlohmann::json::parse(R"({"enabled": "yes"})")),
            "tprimat: config cfg.json: profiling.enabled must be true or false, got \"yes\"; "
            "write it without quotes");
  EXPECT_EQ(profile_error_of({}, nlohmann::json::parse(R"({"schedule": {"wiat": 1}})")),
            "tprimat: config cfg.json: profiling.schedule has unknown key wiat; use wait, warmup, "
            "active, repeat");
  EXPECT_EQ(profile_error_of({}, nlohmann::json::parse(R"({"schedule": {"active": "5"}})")),
            "tprimat: config cfg.json: profiling.schedule.active must be an integer, got \"5\"; "
            "write it as a number without quotes");
  EXPECT_EQ(profile_error_of({}, nlohmann::json::parse(R"({"ranks": [-1]})")),
            "tprimat: config cfg.json: profiling.ranks holds -1, not a rank; write non-negative "
            "integers, e.g. [0, 4]");
  EXPECT_EQ(profile_error_of({}, nlohmann::json::parse(R"({"trace_dir": "x"})")),
            "tprimat: config cfg.json: profiling has unknown key trace_dir; use enabled, "
            "schedule, ranks, gzip (or the seeds' Kineto switches)");
}

TEST(ProfileFlags, ScheduleMustFitTheRun) {
  EXPECT_EQ(profile_error_of({.enabled = true, .active = 0}),
            "tprimat: profiling schedule: active must be at least 1, got 0; fix --profile-* (or "
            "the config's profiling.schedule)");
  EXPECT_EQ(profile_error_of({.enabled = true, .wait = 3, .warmup = 1}, nullptr, 4),
            "tprimat: the profiling schedule records from step 5 (wait 3 + warmup 1) but the run "
            "has 4 steps (--warmup-steps + --steps); lower --profile-wait/--profile-warmup, or "
            "raise --steps");
  // Recording past the run's end is fine: the steps that exist are recorded.
  EXPECT_NO_THROW((void)resolve({.enabled = true, .wait = 2, .warmup = 1}, nullptr, "", 4, 1));
}

TEST(ProfileFlags, RanksAreCheckedAgainstTheWorld) {
  EXPECT_EQ(profile_error_of({.enabled = true, .ranks = "0,2"}, nullptr, 12, 2),
            "tprimat: --profile-ranks names rank 2 but the run has 2 rank(s); pass ranks below 2, "
            "or all");
  EXPECT_EQ(profile_error_of({.enabled = true, .ranks = "0,x"}),
            "tprimat: --profile-ranks takes all or a comma-separated list of ranks, got '0,x'; "
            "pass e.g. --profile-ranks 0 or --profile-ranks 0,4");
  const Settings s = resolve({.enabled = true, .ranks = "1,3"}, nullptr, "", 12, 4);
  EXPECT_FALSE(s.profiles(0));
  EXPECT_TRUE(s.profiles(1));
  EXPECT_TRUE(s.profiles(3));
}

TEST(ProfileFlags, GzipOnlyWithZlib) {
  if (tprimat::profile::gzip_available) {
    EXPECT_TRUE(resolve({.enabled = true, .gzip = true}, nullptr, "", 12, 1).gzip);
  } else {
    EXPECT_EQ(profile_error_of({.enabled = true, .gzip = true}),
              "tprimat: --profile-gzip needs a tprimat built with zlib; install zlib1g-dev and "
              "rebuild, or drop --profile-gzip");
  }
}

TEST(ProfileFlags, TraceFileNamesFollowTheSeeds) {
  EXPECT_EQ(tprimat::profile::trace_file_name("cuda", "llama", 0, false),
            "profile_cuda_llama_0.json");
  EXPECT_EQ(tprimat::profile::trace_file_name("cpu", "tiny", 3, true),
            "profile_cpu_tiny_3.json.gz");
}

}  // namespace
