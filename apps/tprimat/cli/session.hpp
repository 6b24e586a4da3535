// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Picks the communicator for this process: none alone, MPI when mpirun/srun started several ranks.
#pragma once

#include <string>
#include <utility>

#include "tprimat/core/error.hpp"
#include "tprimat/parallel/communicator.hpp"
#include "tprimat/parallel/launch.hpp"
#if defined(TPRIMAT_WITH_MPI) && TPRIMAT_WITH_MPI
#include "tprimat/parallel/mpi.hpp"
#endif

namespace tprimat::cli {

/// A launcher whose ranks tprimat would not join: torchrun (and torch.distributed's other
/// launchers) announce WORLD_SIZE, which MPI knows nothing of, so each process would run alone
/// as its own DP=1 job. Refused with the command that works.
inline void check_not_torchrun(const parallel::Launch& launch) {
  const int torch_world = parallel::detail::env_int("WORLD_SIZE", 1);
  if (launch.launcher != "single" || torch_world <= 1) return;
  const std::string n = std::to_string(torch_world);
  throw core::InputError(
      "WORLD_SIZE=" + n + " says torchrun (or another torch.distributed launcher) started this "
      "process as one of " + n + ", but tprimat's ranks join over MPI: each would run alone",
      "launch the " + n + " ranks with mpirun -np " + n + " tprimat ... (or srun --mpi=pmix -n " +
          n + " tprimat ... in a Slurm allocation)");
}

/// The ranks MPI joined against those the launcher announced: srun without a PMI that the MPI
/// library speaks starts every task as a singleton of one rank.
inline void check_ranks_joined(const parallel::Launch& launch, int mpi_size) {
  if (mpi_size == launch.size) return;
  const std::string n = std::to_string(launch.size);
  throw core::InputError(
      launch.launcher + " started " + n + " ranks, but MPI joined " + std::to_string(mpi_size) +
          (launch.launcher == "srun" ? " (srun without a PMI this MPI speaks)" : ""),
      "srun --mpi=pmix -n " + n + " tprimat ..., or mpirun -np " + n +
          " tprimat ... inside the allocation");
}

/// Calls `f(comm)` with comm::Single for one process, or comm::Mpi (inside an MpiSession) when
/// the launcher announced more than one rank. MPI is only initialised when it is needed, so a
/// single process never pays for (or depends on) an MPI runtime.
template <class F>
int with_communicator(int* argc, char*** argv, F&& f) {
  const parallel::Launch launch = parallel::detect_launch();
  check_not_torchrun(launch);
  if (launch.size <= 1) return f(parallel::comm::Single{});
#if defined(TPRIMAT_WITH_MPI) && TPRIMAT_WITH_MPI
  parallel::MpiSession session(argc, argv);
  parallel::comm::Mpi world;
  check_ranks_joined(launch, world.size());
  return f(std::move(world));
#else
  (void)argc;
  (void)argv;
  throw core::InputError("launched by " + launch.launcher + " as " + std::to_string(launch.size) +
                             " ranks, but this tprimat is built without MPI",
                         "rebuild with MPI found by CMake, or run a single process");
#endif
}

}  // namespace tprimat::cli
