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
  std::vector<float> out(2);
  c.reduce_scatter_sum(f, out);
  EXPECT_EQ(out, f);
  c.all_gather(f, out);
  EXPECT_EQ(out, f);
  c.all_reduce_max(std::span<float>(f));
  EXPECT_EQ(f, (std::vector<float>{1.5f, -2.0f}));
  EXPECT_THROW(c.send(f, 0), core::RunError);  // one rank has no peer
  EXPECT_EQ(c.split(0, 0).size(), 1);
}

}  // namespace
}  // namespace tprimat::parallel
