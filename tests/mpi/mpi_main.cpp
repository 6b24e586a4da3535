// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// main() of the MPI tests: MPI must be initialised before gtest runs and finalised after.
#include <gtest/gtest.h>
#include <mpi.h>

#include "tprimat/parallel/mpi.hpp"

int main(int argc, char** argv) {
  tprimat::parallel::MpiSession session(&argc, &argv);
  testing::InitGoogleTest(&argc, argv);
  int failed = RUN_ALL_TESTS();
  // A failure on any rank fails the job on every rank, so mpirun reports it whichever rank saw it.
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return failed;
}
