// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Picks the communicator for this process: none alone, MPI when mpirun/srun started several ranks.
#pragma once

#include "tprimat/core/error.hpp"
#include "tprimat/parallel/communicator.hpp"
#include "tprimat/parallel/launch.hpp"
#if defined(TPRIMAT_WITH_MPI) && TPRIMAT_WITH_MPI
#include "tprimat/parallel/mpi.hpp"
#endif

namespace tprimat::cli {

/// Calls `f(comm)` with comm::Single for one process, or comm::Mpi (inside an MpiSession) when
/// the launcher announced more than one rank. MPI is only initialised when it is needed, so a
/// single process never pays for (or depends on) an MPI runtime.
template <class F>
int with_communicator(int* argc, char*** argv, F&& f) {
  const parallel::Launch launch = parallel::detect_launch();
  if (launch.size <= 1) return f(parallel::comm::Single{});
#if defined(TPRIMAT_WITH_MPI) && TPRIMAT_WITH_MPI
  parallel::MpiSession session(argc, argv);
  return f(parallel::comm::Mpi{});
#else
  (void)argc;
  (void)argv;
  throw core::InputError("launched by " + launch.launcher + " as " + std::to_string(launch.size) +
                             " ranks, but this tprimat is built without MPI",
                         "rebuild with MPI found by CMake, or run a single process");
#endif
}

}  // namespace tprimat::cli
