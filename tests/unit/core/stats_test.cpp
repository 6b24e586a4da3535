// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// core/stats.hpp against values computed by hand and Student-t tables.
#include "tprimat/core/stats.hpp"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace {

using namespace tprimat::core;

TEST(Stats, KnownSample) {
  // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sum of squares 32, sample variance 32/7.
  const std::vector<double> x{9, 4, 5, 4, 2, 7, 4, 5};
  EXPECT_DOUBLE_EQ(mean(x), 5.0);
  EXPECT_DOUBLE_EQ(median(x), 4.5);
  EXPECT_NEAR(sample_std(x), std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_DOUBLE_EQ(min(x), 2.0);
  EXPECT_DOUBLE_EQ(max(x), 9.0);
  // t(7) = 2.3646; half-width = 2.3646 * s / sqrt(8).
  EXPECT_NEAR(ci95_half_width(x), 2.3646 * std::sqrt(32.0 / 7.0) / std::sqrt(8.0), 1e-9);
}

TEST(Stats, OddMedianDoesNotReorderInput) {
  const std::vector<double> x{3, 1, 2};
  EXPECT_DOUBLE_EQ(median(x), 2.0);
  EXPECT_EQ(x, (std::vector<double>{3, 1, 2}));
}

TEST(Stats, UndefinedStatisticsAreNaN) {
  const std::vector<double> none;
  const std::vector<double> one{1.5};
  EXPECT_TRUE(std::isnan(mean(none)));
  EXPECT_TRUE(std::isnan(median(none)));
  EXPECT_TRUE(std::isnan(min(none)));
  EXPECT_TRUE(std::isnan(max(none)));
  EXPECT_DOUBLE_EQ(mean(one), 1.5);
  EXPECT_TRUE(std::isnan(sample_std(one)));
  EXPECT_TRUE(std::isnan(ci95_half_width(one)));
  const Summary s = summarize(one);
  EXPECT_EQ(s.count, 1u);
  EXPECT_DOUBLE_EQ(s.median, 1.5);
  EXPECT_TRUE(std::isnan(s.std));
}

TEST(Stats, ConstantSampleHasZeroSpread) {
  const std::vector<double> x(10, 0.25);
  EXPECT_DOUBLE_EQ(sample_std(x), 0.0);
  EXPECT_DOUBLE_EQ(ci95_half_width(x), 0.0);
}

TEST(Stats, StudentTCriticalValues) {
  // Two-sided 95% quantiles from standard tables.
  EXPECT_NEAR(t_critical_95(1), 12.7062, 1e-4);
  EXPECT_NEAR(t_critical_95(2), 4.3027, 1e-4);
  EXPECT_NEAR(t_critical_95(10), 2.2281, 1e-4);
  EXPECT_NEAR(t_critical_95(30), 2.0423, 1e-4);
  // Beyond the table: the series must agree with tables to 1e-3 and fall towards z.
  EXPECT_NEAR(t_critical_95(31), 2.0395, 1e-3);
  EXPECT_NEAR(t_critical_95(40), 2.0211, 1e-3);
  EXPECT_NEAR(t_critical_95(60), 2.0003, 1e-3);
  EXPECT_NEAR(t_critical_95(120), 1.9799, 1e-3);
  EXPECT_NEAR(t_critical_95(100000), 1.95996, 1e-4);
  for (int d = 1; d < 200; ++d) EXPECT_GT(t_critical_95(d), t_critical_95(d + 1)) << d;
  EXPECT_TRUE(std::isnan(t_critical_95(0)));
}

TEST(Stats, SummaryMatchesFunctions) {
  const std::vector<double> x{0.5, 0.25, 1.0, 0.75};
  const Summary s = summarize(x);
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.mean, mean(x));
  EXPECT_DOUBLE_EQ(s.median, 0.625);
  EXPECT_DOUBLE_EQ(s.std, sample_std(x));
  EXPECT_DOUBLE_EQ(s.min, 0.25);
  EXPECT_DOUBLE_EQ(s.max, 1.0);
  EXPECT_DOUBLE_EQ(s.ci95, ci95_half_width(x));
}

}  // namespace
