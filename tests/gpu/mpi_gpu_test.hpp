// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Shared pieces of the GPU tests run under mpirun: this rank, the world size, and the skip where
// NCCL would need more GPUs than the machine has. main() is tests/mpi/mpi_main.cpp.
#pragma once

#include <mpi.h>

#include "gpu_test.hpp"

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

}  // namespace tprimat::testing

/// One rank per GPU: skip where this machine has fewer GPUs than ranks (NCCL refuses two ranks
/// on one device).
#define TPRIMAT_REQUIRE_GPU_PER_RANK()                                                        \
  do {                                                                                        \
    TPRIMAT_REQUIRE_GPU();                                                                    \
    if (::tprimat::backend::Cuda::device_count() < ::tprimat::testing::world_size())          \
      GTEST_SKIP() << ::tprimat::testing::world_size()                                        \
                   << " ranks need as many GPUs for NCCL; this machine has "                  \
                   << ::tprimat::backend::Cuda::device_count();                               \
  } while (0)
