// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// comm::Nccl against the Communicator contract, one GPU per rank (run under mpirun -np N, or
// alone as one rank): every collective's result is checked element by element on the host.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "mpi_gpu_test.hpp"
#include "tprimat/backend/gpu/nccl.hpp"
#include "tprimat/parallel/mpi.hpp"

namespace {

using tprimat::parallel::comm::Nccl;
using tprimat::testing::DeviceBuffer;
using tprimat::testing::world_rank;
using tprimat::testing::world_size;

Nccl make_world() {
  tprimat::backend::gpu_check(gpuSetDevice(world_rank()), "gpuSetDevice");
  return Nccl(world_rank(), world_size(), [](void* data, std::size_t bytes) {
    MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
  });
}

std::vector<float> iota_for(int rank, std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = float(rank * 1000 + int(i));
  return v;
}

TEST(NcclCommunicator, AllReduceSumMaxAndDouble) {
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  Nccl world = make_world();
  const int r = world.rank(), n = world.size();
  EXPECT_EQ(r, world_rank());
  EXPECT_EQ(n, world_size());
  tprimat::testing::TestStream s;
  const std::size_t len = 1003;  // not a multiple of anything NCCL chunks by
  auto x = tprimat::testing::upload<float>(iota_for(r, len), s);
  world.all_reduce_sum(std::span<float>(x.data(), len));
  const auto sum = x.download();
  for (std::size_t i = 0; i < len; ++i) {
    float want = 0;
    for (int k = 0; k < n; ++k) want += float(k * 1000 + int(i));
    ASSERT_EQ(sum[i], want) << i;  // exact: small integers in fp32
  }
  auto y = tprimat::testing::upload<float>(iota_for(r, len), s);
  world.all_reduce_max(std::span<float>(y.data(), len));
  const auto mx = y.download();
  for (std::size_t i = 0; i < len; ++i) ASSERT_EQ(mx[i], float((n - 1) * 1000 + int(i)));
  std::vector<double> dh{1e-30 * (r + 1), 1.0 + r};
  auto d = tprimat::testing::upload<double>(dh, s);
  world.all_reduce_sum(std::span<double>(d.data(), 2));
  const auto dd = d.download();
  EXPECT_DOUBLE_EQ(dd[0], 1e-30 * n * (n + 1) / 2);  // survives only in double
  EXPECT_DOUBLE_EQ(dd[1], n + n * (n - 1) / 2.0);
}

TEST(NcclCommunicator, ReduceScatterAllGatherBroadcast) {
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  Nccl world = make_world();
  const int r = world.rank(), n = world.size();
  tprimat::testing::TestStream s;
  const std::size_t chunk = 257;
  auto in = tprimat::testing::upload<float>(iota_for(r, chunk * n), s);
  DeviceBuffer<float> out(chunk, s);
  out.fill_bytes(0xFF);
  world.reduce_scatter_sum(std::span<const float>(in.data(), chunk * n),
                           std::span<float>(out.data(), chunk));
  const auto rs = out.download();
  for (std::size_t i = 0; i < chunk; ++i) {
    float want = 0;
    for (int k = 0; k < n; ++k) want += float(k * 1000 + int(r * chunk + i));
    ASSERT_EQ(rs[i], want) << i;
  }
  DeviceBuffer<float> gathered(chunk * n, s);
  gathered.fill_bytes(0xFF);
  auto mine = tprimat::testing::upload<float>(iota_for(r, chunk), s);
  world.all_gather(std::span<const float>(mine.data(), chunk),
                   std::span<float>(gathered.data(), chunk * n));
  const auto ag = gathered.download();
  for (int k = 0; k < n; ++k)
    for (std::size_t i = 0; i < chunk; ++i) ASSERT_EQ(ag[k * chunk + i], float(k * 1000 + int(i)));
  auto b = tprimat::testing::upload<float>(iota_for(r, 64), s);
  world.broadcast(std::span<float>(b.data(), 64), n - 1);
  const auto bc = b.download();
  for (std::size_t i = 0; i < 64; ++i) ASSERT_EQ(bc[i], float((n - 1) * 1000 + int(i)));
  EXPECT_THROW(world.reduce_scatter_sum(std::span<const float>(in.data(), chunk * n - 1),
                                        std::span<float>(out.data(), chunk)),
               tprimat::core::InputError);
  world.barrier();
}

TEST(NcclCommunicator, RingSendRecvAndSplit) {
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  Nccl world = make_world();
  const int r = world.rank(), n = world.size();
  if (n < 2) GTEST_SKIP() << "point-to-point needs two ranks (mpirun -np 2 on two GPUs)";
  tprimat::testing::TestStream s;
  auto out = tprimat::testing::upload<float>(iota_for(r, 100), s);
  DeviceBuffer<float> in(100, s);
  in.fill_bytes(0xFF);
  const int next = (r + 1) % n, prev = (r + n - 1) % n;
  world.send_recv(std::span<const float>(out.data(), 100), next, std::span<float>(in.data(), 100),
                  prev);
  const auto got = in.download();
  for (int i = 0; i < 100; ++i) ASSERT_EQ(got[i], float(prev * 1000 + i));
  // Split by parity: each sub-group's sum covers its own ranks only.
  Nccl half = world.split(r % 2, r);
  int members = 0, rank_sum = 0;
  for (int k = r % 2; k < n; k += 2) ++members, rank_sum += k;
  EXPECT_EQ(half.size(), members);
  EXPECT_EQ(half.rank(), r / 2);
  std::vector<float> one{float(r)};
  auto v = tprimat::testing::upload<float>(one, s);
  half.all_reduce_sum(std::span<float>(v.data(), 1));
  EXPECT_EQ(v.download()[0], float(rank_sum));
  EXPECT_FALSE(Nccl::version().empty());
}

}  // namespace
