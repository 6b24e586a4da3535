// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The single-process communicator: one rank, every collective the identity.
#include <gtest/gtest.h>

#include <vector>

#include "tprimat/parallel/communicator.hpp"

namespace tprimat::parallel {
namespace {

static_assert(Communicator<comm::Single>);
static_assert(!Communicator<int>);

TEST(ParallelCommunicator, SingleIsIdentity) {
  comm::Single c;
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.size(), 1);
  std::vector<float> f{1.5f, -2.0f};
  std::vector<double> d{3.0};
  c.all_reduce_sum(std::span<float>(f));
  c.all_reduce_sum(std::span<double>(d));
  c.broadcast(std::span<float>(f), 0);
  c.barrier();
  EXPECT_EQ(f, (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(d, (std::vector<double>{3.0}));
}

}  // namespace
}  // namespace tprimat::parallel
