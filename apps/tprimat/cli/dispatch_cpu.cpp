// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// run_with_model<Cpu, M, Comm> for every model, over one process and over MPI ranks.
#include "tprimat/backend/cpu.hpp"
#include "tprimat/parallel/communicator.hpp"
#if defined(TPRIMAT_WITH_MPI) && TPRIMAT_WITH_MPI
#include "tprimat/parallel/mpi.hpp"
#endif
#include "cli/dispatch_layouts.hpp"

namespace tprimat::cli {

TPRIMAT_CLI_EACH_MODEL(::tprimat::backend::Cpu, ::tprimat::parallel::comm::Single);
#if defined(TPRIMAT_WITH_MPI) && TPRIMAT_WITH_MPI
TPRIMAT_CLI_EACH_MODEL(::tprimat::backend::Cpu, ::tprimat::parallel::comm::Mpi);
#endif

}  // namespace tprimat::cli
