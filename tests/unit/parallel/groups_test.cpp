// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Rank <-> (tp, cp, dp, pp) in Megatron's order, and groups of a single process; context
// parallelism's load-balanced split of a sequence.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tprimat/parallel/context_parallel.hpp"
#include "tprimat/parallel/groups.hpp"
#include "tprimat/parallel/validate.hpp"

namespace tprimat::parallel {
namespace {

TEST(ParallelGroups, MegatronOrderTpFastestThenDpThenPp) {
  const GridShape g{2, 2, 3};  // 12 ranks
  EXPECT_EQ(coords_of(0, g), (Coords{0, 0, 0}));
  EXPECT_EQ(coords_of(1, g), (Coords{1, 0, 0}));  // TP neighbours are consecutive ranks
  EXPECT_EQ(coords_of(2, g), (Coords{0, 0, 1}));  // then DP
  EXPECT_EQ(coords_of(6, g), (Coords{0, 1, 0}));  // PP slowest
  std::set<std::tuple<int, int, int>> seen;
  for (int r = 0; r < g.world(); ++r) {
    const Coords c = coords_of(r, g);
    EXPECT_EQ(rank_of(c, g), r);
    seen.insert({c.tp, c.pp, c.dp});
  }
  EXPECT_EQ(static_cast<int>(seen.size()), g.world());
}

TEST(ParallelGroups, MegatronOrderTpThenCpThenDpThenPp) {
  const GridShape g{2, 2, 2, 2};  // TP 2, PP 2, DP 2, CP 2: 16 ranks
  EXPECT_EQ(g.world(), 16);
  EXPECT_EQ(coords_of(1, g), (Coords{1, 0, 0, 0}));  // TP neighbours consecutive
  EXPECT_EQ(coords_of(2, g), (Coords{0, 0, 0, 1}));  // then CP
  EXPECT_EQ(coords_of(4, g), (Coords{0, 0, 1, 0}));  // then DP
  EXPECT_EQ(coords_of(8, g), (Coords{0, 1, 0, 0}));  // PP slowest
  std::set<std::tuple<int, int, int, int>> seen;
  for (int r = 0; r < g.world(); ++r) {
    const Coords c = coords_of(r, g);
    EXPECT_EQ(rank_of(c, g), r);
    seen.insert({c.tp, c.pp, c.dp, c.cp});
  }
  EXPECT_EQ(static_cast<int>(seen.size()), g.world());
}

TEST(ParallelGroups, ContextSplitIsLoadBalancedAndCoversTheSequenceOnce) {
  for (const int cp : {1, 2, 4}) {
    const int seq = 48;
    std::vector<int> owner(seq, -1);
    long long causal_work[4] = {};
    for (int r = 0; r < cp; ++r) {
      const ContextSplit split{seq, cp, r};
      ASSERT_EQ(split.local_seq(), seq / cp);
      for (const int p : split.positions()) {
        ASSERT_GE(p, 0);
        ASSERT_LT(p, seq);
        EXPECT_EQ(owner[p], -1) << "position " << p << " held twice";
        owner[p] = r;
        causal_work[r] += p + 1;  // keys a causal query at p attends to
      }
    }
    for (int p = 0; p < seq; ++p) EXPECT_GE(owner[p], 0) << "position " << p << " held by none";
    // Chunks r and 2 CP - 1 - r: every rank does the same causal work.
    for (int r = 1; r < cp; ++r) EXPECT_EQ(causal_work[r], causal_work[0]) << "CP " << cp;
  }
  // Megatron's example: CP 2, 4 chunks; rank 0 holds chunks 0 and 3, rank 1 chunks 1 and 2.
  EXPECT_EQ((ContextSplit{8, 2, 0}.positions()), (std::vector<int>{0, 1, 6, 7}));
  EXPECT_EQ((ContextSplit{8, 2, 1}.positions()), (std::vector<int>{2, 3, 4, 5}));
}

TEST(ParallelGroups, ContextParallelRuleNamesSeqAndTwiceCp) {
  EXPECT_FALSE(context_parallel_error(8192, 2));
  EXPECT_FALSE(context_parallel_error(7, 1));
  const auto err = context_parallel_error(100, 4);
  ASSERT_TRUE(err);
  EXPECT_NE(err->find("2 x CP = 8 chunks"), std::string::npos) << *err;
  EXPECT_NE(err->find("seq 100 is not a multiple of 8"), std::string::npos) << *err;
  EXPECT_TRUE(context_parallel_error(64, 0));
  // Sequence parallelism under CP splits this rank's mbs x seq / CP rows over TP.
  EXPECT_FALSE(sequence_parallel_error(1, 64, 4, 2));
  const auto sp = sequence_parallel_error(1, 24, 8, 2);  // 12 rows over TP 8
  ASSERT_TRUE(sp);
  EXPECT_NE(sp->find("mbs x seq / CP = 1 x 24 / 2 = 12 token rows"), std::string::npos) << *sp;
}

TEST(ParallelGroups, SingleProcessGroups) {
  auto g = make_groups(comm::Single{}, 1, 1);
  EXPECT_EQ(g.shape.world(), 1);
  EXPECT_TRUE(g.first_stage());
  EXPECT_TRUE(g.last_stage());
  EXPECT_EQ(g.tp.size(), 1);
}

TEST(ParallelGroups, WorldSizeMustBeAMultipleOfTpTimesPp) {
  try {
    make_groups(comm::Single{}, 2, 1);
    FAIL() << "expected InputError";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("needs a multiple of 2 ranks, but this run has 1"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tprimat::parallel
