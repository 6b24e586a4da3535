// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// run_with_model<Gpu, M, Comm> for every model, over one process and over NCCL (RCCL) ranks,
// compiled once for the CLI of a CUDA or HIP build (the engine itself is tprimat_cuda_ops' or
// tprimat_hip_ops').
#include "tprimat/bench/dispatch.hpp"

namespace tprimat::bench {
TPRIMAT_BENCH_EACH_MODEL(TPRIMAT_BENCH_RUN_WITH_MODEL, ::tprimat::backend::Gpu,
                         ::tprimat::parallel::comm::Single);
#if TPRIMAT_BENCH_GPU_OVER_NCCL
TPRIMAT_BENCH_EACH_MODEL(TPRIMAT_BENCH_RUN_WITH_MODEL, ::tprimat::backend::Gpu,
                         ::tprimat::parallel::comm::WithNccl<::tprimat::parallel::comm::Mpi>);
#endif
}  // namespace tprimat::bench
