// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// cli/layout_flags.hpp: Megatron's --tp/--pp/--gradient-accumulation-steps, alone and beside a
// strategy, and the global batch they make.
#include "cli/layout_flags.hpp"

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
  cli::BenchOptions o;
  EXPECT_FALSE(cli::layout_flags_given(o));
  o.pp = 2;
  EXPECT_TRUE(cli::layout_flags_given(o));
  EXPECT_EQ(cli::layout_flags_name(o), "tp1_pp2");
  EXPECT_EQ(cli::layout_from_flags(o).tp, 1);
  EXPECT_EQ(cli::layout_from_flags(o).pp, 2);
}

TEST(LayoutFlags, BesideAStrategyTheyMayOnlyAgree) {
  cli::BenchOptions o;
  o.tp = 2;
  EXPECT_EQ(refusal([&] { cli::check_layout_flags(o, "balanced", {2, 1}, 0); }), "accepted");
  EXPECT_EQ(refusal([&] {
              cli::check_layout_flags(o, "maximum_performance", {4, 1}, 0);
            }),
            "tprimat: --tp 2 contradicts strategy maximum_performance, whose TP is 4; drop --tp, "
            "or pass a --parallel strategy (or config) with TP 2");
  o = {};
  o.grad_accum = 4;
  EXPECT_EQ(refusal([&] {
              cli::check_layout_flags(o, "cfg", {1, 1}, 8);
            })
                .rfind("tprimat: --gradient-accumulation-steps 4 contradicts strategy cfg, whose "
                       "gradient_accumulation_steps is 8",
                       0),
            0u);
  o = {};
  o.parallel = "all";
  o.tp = 1;
  EXPECT_NE(refusal([&] { cli::check_layout_flags_one_strategy(o); }).find("--parallel all"),
            std::string::npos);
}

TEST(LayoutFlags, GlobalBatch) {
  cli::BenchOptions o;
  o.seq = 128;
  EXPECT_EQ(cli::global_batch(o, "tiny", 4), 4) << "mbs x DP";
  EXPECT_EQ(cli::global_batch(o, "llama", 4), 64) << "the seeds' default";
  o.mbs = 2;
  o.grad_accum = 3;
  EXPECT_EQ(cli::global_batch(o, "llama", 4), 24) << "mbs x DP x GA";
  o.gbs = 24;
  EXPECT_EQ(cli::global_batch(o, "llama", 4), 24) << "a --gbs that agrees";
  o.gbs = 32;
  EXPECT_EQ(refusal([&] { cli::global_batch(o, "llama", 4); }),
            "tprimat: --gbs 32 disagrees with --mbs 2 x DP 4 x --gradient-accumulation-steps 3 = "
            "24; pass one of --gbs and --gradient-accumulation-steps");
  // Counted in 64 bits: each flag is in range, their product is not an int.
  o = {};
  o.mbs = cli::limits::batch;
  o.grad_accum = cli::limits::batch;
  EXPECT_NE(refusal([&] { cli::global_batch(o, "tiny", 1 << 17); })
                .find("global batch 144115188075855872 (--mbs 1048576 x DP 131072 x "
                      "--gradient-accumulation-steps 1048576) exceeds 1048576 sequences"),
            std::string::npos);
  o = {};
  o.gbs = 1 << 20;
  o.seq = 1 << 20;
  EXPECT_NE(refusal([&] { cli::global_batch(o, "tiny", 1); }).find("= 1099511627776 tokens"),
            std::string::npos);
}

TEST(Options, RangesHoldForOptionsFilledInCode) {
  cli::BenchOptions o;
  EXPECT_NO_THROW(cli::check_ranges(o)) << "defaults, 'not given' marks included, pass";
  o.profile.repeat = -7;
  EXPECT_THROW(cli::check_ranges(o), core::InputError);
  o = {};
  o.lr = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(refusal([&] { cli::check_ranges(o); }).rfind("tprimat: --lr takes a finite", 0), 0u);
  o = {};
  o.seq = 1 << 21;
  EXPECT_EQ(refusal([&] { cli::check_ranges(o); }),
            "tprimat: --seq 2097152 is out of range (from 1 to 1048576); pass --seq from 1 to "
            "1048576");
}

TEST(Options, HandParserRefusesAFlagTwiceAndOctal) {
  cli::BenchOptions o;
  std::vector<std::string_view> twice{"--steps", "2", "--steps=3"};
  EXPECT_EQ(refusal([&] {
              cli::parse_args(o, twice, false);
            }).rfind("tprimat: --steps was given twice", 0),
            0u);
  cli::BenchOptions p;
  std::vector<std::string_view> octal{"--seq", "010"};
  EXPECT_TRUE(cli::parse_args(p, octal, false));
  EXPECT_EQ(p.seq, 10);
  cli::BenchOptions q;
  std::vector<std::string_view> alias{"--tensor-model-parallel-size", "2", "--pp", "1"};
  EXPECT_TRUE(cli::parse_args(q, alias, true));
  EXPECT_EQ(q.tp, 2);
  EXPECT_EQ(q.pp, 1);
  EXPECT_NE(cli::usage("x", true).find("--tp, --tensor-model-parallel-size ARG"),
            std::string::npos);
}

}  // namespace
