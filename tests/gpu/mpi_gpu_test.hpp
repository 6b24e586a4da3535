// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Shared pieces of the GPU tests run under mpirun: this rank, the world size, a seed every rank
// shares, the two worlds the tests run over, and the skip where NCCL would need more GPUs than the
// machine has. main() is tests/mpi/mpi_main.cpp.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "gpu_test.hpp"
#include "tprimat/backend/gpu/nccl.hpp"
#include "tprimat/parallel/launch.hpp"
#include "tprimat/parallel/mpi.hpp"

namespace tprimat::testing {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

/// Rank 0's fresh seed, the same on every rank.
inline std::uint64_t shared_seed() {
  std::uint64_t seed = fresh_seed();
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return seed;
}

/// The ranks sharing the GPUs there are, through host-staged MPI collectives.
inline parallel::comm::Mpi mpi_world() { return parallel::comm::Mpi{}; }

/// One GPU per rank (its node-local one), NCCL over the MPI world.
using NcclWorld = parallel::comm::WithNccl<parallel::comm::Mpi>;
inline NcclWorld nccl_world() {
  backend::Gpu::use_device(parallel::detect_launch().local_rank);
  return NcclWorld(parallel::comm::Mpi{});
}

}  // namespace tprimat::testing

/// One rank per GPU: skip where this machine has fewer GPUs than ranks (NCCL refuses two ranks
/// on one device).
#define TPRIMAT_REQUIRE_GPU_PER_RANK()                                                        \
  do {                                                                                        \
    TPRIMAT_REQUIRE_GPU();                                                                    \
    if (::tprimat::backend::Gpu::device_count() < ::tprimat::testing::world_size())          \
      GTEST_SKIP() << ::tprimat::testing::world_size()                                        \
                   << " ranks need as many GPUs for NCCL; this machine has "                  \
                   << ::tprimat::backend::Gpu::device_count();                               \
  } while (0)
