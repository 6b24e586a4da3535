// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The profiling schedule: torch.profiler.schedule's state machine over step indices.
#include "tprimat/profile/schedule.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using tprimat::profile::Phase;
using tprimat::profile::Schedule;

/// One letter per step: n(one), w(armup), r(ecord), s(ave: record_and_save).
std::string phases(const Schedule& s, int steps) {
  std::string out;
  for (int i = 0; i < steps; ++i) {
    switch (s.phase(i)) {
      case Phase::none:
        out += 'n';
        break;
      case Phase::warmup:
        out += 'w';
        break;
      case Phase::record:
        out += 'r';
        break;
      case Phase::record_and_save:
        out += 's';
        break;
    }
  }
  return out;
}

TEST(Schedule, SeedsDefaultsSkipOneWarmOneRecordFive) {
  const Schedule s;  // wait 1, warmup 1, active 5, repeat 1
  EXPECT_EQ(s.wait, 1);
  EXPECT_EQ(s.warmup, 1);
  EXPECT_EQ(s.active, 5);
  EXPECT_EQ(s.repeat, 1);
  EXPECT_EQ(phases(s, 12), "nwrrrrsnnnnn");
  EXPECT_EQ(s.first_recorded(), 2);
  EXPECT_EQ(s.cycle(), 7);
}

TEST(Schedule, RepeatsCycles) {
  const Schedule s{.wait = 1, .warmup = 2, .active = 2, .repeat = 2};
  EXPECT_EQ(phases(s, 14), "nwwrsnwwrsnnnn");
}

TEST(Schedule, RepeatZeroCyclesUntilTheRunEnds) {
  const Schedule s{.wait = 0, .warmup = 1, .active = 2, .repeat = 0};
  EXPECT_EQ(phases(s, 10), "wrswrswrsw");
}

TEST(Schedule, NoWaitNoWarmupRecordsFromTheFirstStep) {
  const Schedule s{.wait = 0, .warmup = 0, .active = 3, .repeat = 1};
  EXPECT_EQ(phases(s, 5), "rrsnn");
  EXPECT_EQ(s.first_recorded(), 0);
}

TEST(Schedule, OneActiveStepIsRecordedAndSaved) {
  const Schedule s{.wait = 2, .warmup = 1, .active = 1, .repeat = 1};
  EXPECT_EQ(phases(s, 6), "nnwsnn");
  EXPECT_TRUE(s.records(3));
  EXPECT_FALSE(s.records(2));
}

TEST(Schedule, NegativeStepsAreNeverProfiled) { EXPECT_EQ(Schedule{}.phase(-1), Phase::none); }

TEST(Schedule, ErrorsNameTheField) {
  EXPECT_FALSE(tprimat::profile::schedule_error(Schedule{}));
  EXPECT_EQ(*tprimat::profile::schedule_error(Schedule{.active = 0}),
            "active must be at least 1, got 0");
  EXPECT_EQ(*tprimat::profile::schedule_error(Schedule{.wait = -1}),
            "wait must be 0 or more, got -1");
  EXPECT_EQ(*tprimat::profile::schedule_error(Schedule{.warmup = -2}),
            "warmup must be 0 or more, got -2");
  EXPECT_EQ(*tprimat::profile::schedule_error(Schedule{.repeat = -1}),
            "repeat must be 0 (until the run ends) or more, got -1");
  // An invalid schedule profiles nothing rather than dividing by zero.
  EXPECT_EQ(phases(Schedule{.wait = 0, .warmup = 0, .active = 0}, 3), "nnn");
}

}  // namespace
