// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// bench/layout_flags.hpp: Megatron's --tp/--pp/--gradient-accumulation-steps, alone and beside a
// strategy, and the global batch they make.
#include "tprimat/bench/layout_flags.hpp"

#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace {

using namespace tprimat;

std::string refusal(const auto& f) {
  try {
    f();
    return "accepted";
  } catch (const core::InputError& e) {
    return e.what();
  }
}

TEST(LayoutFlags, AloneTheyNameTheLayout) {
  bench::BenchOptions o;
  EXPECT_FALSE(bench::layout_flags_given(o));
  o.pp = 2;
  EXPECT_TRUE(bench::layout_flags_given(o));
  EXPECT_EQ(bench::layout_flags_name(o), "tp1_pp2");
  EXPECT_EQ(bench::layout_from_flags(o).tp, 1);
  EXPECT_EQ(bench::layout_from_flags(o).pp, 2);
}

TEST(LayoutFlags, BesideAStrategyTheyMayOnlyAgree) {
  bench::BenchOptions o;
  o.tp = 2;
  EXPECT_EQ(refusal([&] { bench::check_layout_flags(o, "balanced", {2, 1}, 0); }), "accepted");
  EXPECT_EQ(refusal([&] {
              bench::check_layout_flags(o, "maximum_performance", {4, 1}, 0);
            }),
            "tprimat: --tp 2 contradicts strategy maximum_performance, whose TP is 4; drop --tp, "
            "or pass a --parallel strategy (or config) with TP 2");
  o = {};
  o.grad_accum = 4;
  EXPECT_EQ(refusal([&] {
              bench::check_layout_flags(o, "cfg", {1, 1}, 8);
            })
                .rfind("tprimat: --gradient-accumulation-steps 4 contradicts strategy cfg, whose "
                       "gradient_accumulation_steps is 8",
                       0),
            0u);
  o = {};
  o.parallel = "all";
  o.tp = 1;
  EXPECT_NE(refusal([&] { bench::check_layout_flags_one_strategy(o); }).find("--parallel all"),
            std::string::npos);
}

TEST(LayoutFlags, GlobalBatch) {
  bench::BenchOptions o;
  o.seq = 128;
  EXPECT_EQ(bench::global_batch(o, "tiny", 4), 4) << "mbs x DP";
  EXPECT_EQ(bench::global_batch(o, "llama", 4), 64) << "the seeds' default";
  o.mbs = 2;
  o.grad_accum = 3;
  EXPECT_EQ(bench::global_batch(o, "llama", 4), 24) << "mbs x DP x GA";
  o.gbs = 24;
  EXPECT_EQ(bench::global_batch(o, "llama", 4), 24) << "a --gbs that agrees";
  o.gbs = 32;
  EXPECT_EQ(refusal([&] { bench::global_batch(o, "llama", 4); }),
            "tprimat: --gbs 32 disagrees with --mbs 2 x DP 4 x --gradient-accumulation-steps 3 = "
            "24; pass one of --gbs and --gradient-accumulation-steps");
  // Counted in 64 bits: each flag is in range, their product is not an int.
  o = {};
  o.mbs = bench::limits::batch;
  o.grad_accum = bench::limits::batch;
  EXPECT_NE(refusal([&] { bench::global_batch(o, "tiny", 1 << 17); })
                .find("global batch 144115188075855872 (--mbs 1048576 x DP 131072 x "
                      "--gradient-accumulation-steps 1048576) exceeds 1048576 sequences"),
            std::string::npos);
  o = {};
  o.gbs = 1 << 20;
  o.seq = 1 << 20;
  EXPECT_NE(refusal([&] { bench::global_batch(o, "tiny", 1); }).find("= 1099511627776 tokens"),
            std::string::npos);
}

TEST(Options, RangesHoldForOptionsFilledInCode) {
  bench::BenchOptions o;
  EXPECT_NO_THROW(bench::check_ranges(o)) << "defaults, 'not given' marks included, pass";
  o.profile.repeat = -7;
  EXPECT_THROW(bench::check_ranges(o), core::InputError);
  o = {};
  o.lr = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(refusal([&] { bench::check_ranges(o); }).rfind("tprimat: --lr takes a finite", 0), 0u);
  o = {};
  o.seq = 1 << 21;
  EXPECT_EQ(refusal([&] { bench::check_ranges(o); }),
            "tprimat: --seq 2097152 is out of range (from 1 to 1048576); pass --seq from 1 to "
            "1048576");
}

TEST(Options, HandParserRefusesAFlagTwiceAndOctal) {
  bench::BenchOptions o;
  std::vector<std::string_view> twice{"--steps", "2", "--steps=3"};
  EXPECT_EQ(refusal([&] {
              bench::parse_args(o, twice, false);
            }).rfind("tprimat: --steps was given twice", 0),
            0u);
  bench::BenchOptions p;
  std::vector<std::string_view> octal{"--seq", "010"};
  EXPECT_TRUE(bench::parse_args(p, octal, false));
  EXPECT_EQ(p.seq, 10);
  bench::BenchOptions q;
  std::vector<std::string_view> alias{"--tensor-model-parallel-size", "2", "--pp", "1"};
  EXPECT_TRUE(bench::parse_args(q, alias, true));
  EXPECT_EQ(q.tp, 2);
  EXPECT_EQ(q.pp, 1);
  EXPECT_NE(bench::usage("x", true).find("--tp, --tensor-model-parallel-size ARG"),
            std::string::npos);
}

}  // namespace
