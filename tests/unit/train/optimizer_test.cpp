// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Unit tests of the LR schedule, AdamW against hand computation, and global-norm clipping.
#include "tprimat/train/cpu/optimizer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "tprimat/backend/cpu.hpp"
#include "tprimat/train/schedule.hpp"

namespace {

using tprimat::backend::Cpu;
using tprimat::train::OptimizerConfig;

// Schedule values are exact formulas of doubles; 1e-15 relative covers the last-bit rounding.
TEST(Schedule, WarmupIsLinearFromFirstStep) {
  OptimizerConfig c;
  c.lr_peak = 3e-4;
  c.warmup_steps = 50;
  c.decay_steps = 500;
  EXPECT_NEAR(tprimat::train::learning_rate(c, 0), 3e-4 / 50, 1e-15 * 3e-4);
  EXPECT_NEAR(tprimat::train::learning_rate(c, 24), 3e-4 * 25 / 50, 1e-15 * 3e-4);
  EXPECT_NEAR(tprimat::train::learning_rate(c, 49), 3e-4, 1e-15 * 3e-4);
}

TEST(Schedule, CosineFromPeakToMin) {
  OptimizerConfig c;
  c.lr_peak = 1e-3;
  c.lr_min = 1e-4;
  c.warmup_steps = 10;
  c.decay_steps = 110;
  EXPECT_NEAR(tprimat::train::learning_rate(c, 10), 1e-3, 1e-18);  // cosine starts at peak
  EXPECT_NEAR(tprimat::train::learning_rate(c, 60), 0.5 * (1e-3 + 1e-4), 1e-18);  // half way
  const double quarter = 1e-4 + 0.5 * 9e-4 * (1 + std::cos(std::numbers::pi * 0.25));
  EXPECT_NEAR(tprimat::train::learning_rate(c, 35), quarter, 1e-18);
  EXPECT_NEAR(tprimat::train::learning_rate(c, 110), 1e-4, 1e-18);  // reaches min at decay_steps
  EXPECT_EQ(tprimat::train::learning_rate(c, 1000), 1e-4);          // and stays there
  for (int s = 10; s < 110; ++s)  // monotone non-increasing after warm-up
    EXPECT_GE(tprimat::train::learning_rate(c, s), tprimat::train::learning_rate(c, s + 1));
}

TEST(Schedule, NoWarmup) {
  OptimizerConfig c;
  c.lr_peak = 2e-3;
  c.warmup_steps = 0;
  c.decay_steps = 4;
  EXPECT_NEAR(tprimat::train::learning_rate(c, 0), 2e-3, 1e-18);
  EXPECT_NEAR(tprimat::train::learning_rate(c, 2), 1e-3, 1e-18);
}

// AdamW, two steps on three entries, against the formulas written out by hand in double.
// Tolerance: the backend computes in double here too, only the order of operations differs:
// 1e-14 relative.
TEST(AdamW, TwoStepsMatchHandComputation) {
  std::vector<double> p{0.5, -1.0, 2.0}, m(3, 0.0), v(3, 0.0);
  const std::vector<double> g1{0.1, -0.2, 0.0}, g2{0.3, 0.1, -0.5};
  const double lr = 1e-2, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1;
  std::vector<double> ref = p, rm(3, 0.0), rv(3, 0.0);
  int step = 0;
  for (const auto* g : {&g1, &g2}) {
    ++step;
    Cpu::adamw(p.data(), g->data(), m.data(), v.data(), 3,
               tprimat::backend::AdamWArgs{lr, b1, b2, eps, wd, step});
    for (int i = 0; i < 3; ++i) {
      rm[i] = b1 * rm[i] + (1 - b1) * (*g)[i];
      rv[i] = b2 * rv[i] + (1 - b2) * (*g)[i] * (*g)[i];
      const double mhat = rm[i] / (1 - std::pow(b1, step));
      const double vhat = rv[i] / (1 - std::pow(b2, step));
      ref[i] = ref[i] - lr * wd * ref[i] - lr * mhat / (std::sqrt(vhat) + eps);
    }
  }
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(p[i], ref[i], 1e-14 * std::abs(ref[i])) << i;
  // First step of Adam moves each entry with a non-zero gradient by ~lr against its sign.
  EXPECT_LT(p[0], 0.5);
  EXPECT_GT(p[1], -1.0);
}

TEST(AdamW, ZeroDecayLeavesZeroGradientEntryUnchanged) {
  std::vector<double> p{1.5}, g{0.0}, m{0.0}, v{0.0};
  Cpu::adamw(p.data(), g.data(), m.data(), v.data(), 1,
             tprimat::backend::AdamWArgs{1e-2, 0.9, 0.95, 1e-8, 0.0, 1});
  EXPECT_EQ(p[0], 1.5);
  Cpu::adamw(p.data(), g.data(), m.data(), v.data(), 1,
             tprimat::backend::AdamWArgs{1e-2, 0.9, 0.95, 1e-8, 0.1, 2});
  EXPECT_NEAR(p[0], 1.5 * (1 - 1e-3), 1e-15);  // decoupled decay alone: p *= 1 - lr * wd
}

// The optimizer applies decay per tensor: matrices decay, norm gains and biases do not.
TEST(AdamW, DecayOnlyOnTensorsMarkedForIt) {
  std::vector<tprimat::train::ParamTensor> tensors{
      {"w", 0, 1, 2, true, tprimat::train::Init::normal},
      {"norm", 2, 1, 2, false, tprimat::train::Init::ones},
  };
  OptimizerConfig c;
  c.weight_decay = 0.5;
  tprimat::train::AdamW<Cpu, double> adam(c, 4);
  std::vector<double> p{1.0, 1.0, 1.0, 1.0}, g(4, 0.0);
  adam.update(p, g, tensors, 0.1);
  EXPECT_NEAR(p[0], 1.0 - 0.1 * 0.5, 1e-15);
  EXPECT_NEAR(p[1], 1.0 - 0.1 * 0.5, 1e-15);
  EXPECT_EQ(p[2], 1.0);
  EXPECT_EQ(p[3], 1.0);
  EXPECT_EQ(adam.steps(), 1);
}

TEST(Clipping, ScalesOnlyAboveThreshold) {
  std::vector<float> g{3.0f, 4.0f};  // norm 5
  const double norm = tprimat::train::global_norm<Cpu, float>(g);
  EXPECT_NEAR(norm, 5.0, 1e-12);
  EXPECT_EQ((tprimat::train::clip_by_global_norm<Cpu, float>(g, norm, 10.0)), 1.0);
  EXPECT_EQ(g[0], 3.0f);
  const double f = tprimat::train::clip_by_global_norm<Cpu, float>(g, norm, 1.0);
  EXPECT_NEAR(f, 0.2, 1e-15);
  // fp32: 1 ulp at 0.6 / 0.8 is ~6e-8.
  EXPECT_NEAR(g[0], 0.6f, 1e-7);
  EXPECT_NEAR(g[1], 0.8f, 1e-7);
  EXPECT_NEAR((tprimat::train::global_norm<Cpu, float>(g)), 1.0, 1e-6);
  std::vector<float> h{3.0f, 4.0f};
  EXPECT_EQ((tprimat::train::clip_by_global_norm<Cpu, float>(h, 5.0, 0.0)), 1.0);  // disabled
  EXPECT_EQ(h[1], 4.0f);
}

}  // namespace
