// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// run_with_model<Gpu, M, Comm> for every model, over one process and over NCCL (RCCL) ranks where
// the build has NCCL (RCCL) and MPI, for the CLI of a CUDA or HIP build (the engine itself is
// tprimat_cuda_ops' or tprimat_hip_ops').
#include "tprimat/backend/gpu.hpp"
#include "tprimat/parallel/communicator.hpp"
#if defined(TPRIMAT_HAVE_NCCL) && defined(TPRIMAT_WITH_MPI) && TPRIMAT_WITH_MPI
#include "tprimat/backend/gpu/nccl.hpp"
#include "tprimat/parallel/mpi.hpp"
#endif
#include "cli/dispatch_layouts.hpp"

namespace tprimat::cli {

TPRIMAT_CLI_EACH_MODEL(::tprimat::backend::Gpu, ::tprimat::parallel::comm::Single);
#if defined(TPRIMAT_HAVE_NCCL) && defined(TPRIMAT_WITH_MPI) && TPRIMAT_WITH_MPI
TPRIMAT_CLI_EACH_MODEL(::tprimat::backend::Gpu,
                       ::tprimat::parallel::comm::WithNccl<::tprimat::parallel::comm::Mpi>);
#endif

}  // namespace tprimat::cli
