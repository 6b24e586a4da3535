// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// run_with_model<Cpu, M, Comm> for every model, over one process and over MPI ranks, compiled
// once. One TU for all models: what their layouts share (the step loop, the result) is compiled
// once too, and a TU per model cost more than it saved.
#include "tprimat/bench/dispatch.hpp"

namespace tprimat::bench {
TPRIMAT_BENCH_EACH_MODEL(TPRIMAT_BENCH_RUN_WITH_MODEL, ::tprimat::backend::Cpu,
                         ::tprimat::parallel::comm::Single);
#if defined(TPRIMAT_WITH_MPI) && TPRIMAT_WITH_MPI
TPRIMAT_BENCH_EACH_MODEL(TPRIMAT_BENCH_RUN_WITH_MODEL, ::tprimat::backend::Cpu,
                         ::tprimat::parallel::comm::Mpi);
#endif
}  // namespace tprimat::bench
