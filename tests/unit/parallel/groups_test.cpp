// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Rank <-> (tp, pp, dp) in Megatron's order, and groups of a single process.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>

#include "tprimat/parallel/groups.hpp"

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
