// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Uses the installed tprimat::mpi target: the MPI communicator header compiles and links.
#include <tprimat/parallel/mpi.hpp>

#include <iostream>

static_assert(tprimat::parallel::Communicator<tprimat::parallel::comm::Mpi>);

int main() {
  std::cout << "tprimat::mpi consumer: TPRIMAT_WITH_MPI=" << TPRIMAT_WITH_MPI << "\n";
  return 0;
}
