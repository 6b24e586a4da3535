// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The run_with_model instantiations the in-tree build compiles once (src/bench), declared extern
// so that the CLI and the example binaries link them instead of compiling every layout again.
#pragma once

#include "tprimat/config.hpp"

// run_with_model<Backend, M, Comm>'s explicit instantiation, as src/bench/dispatch_*.cpp define it
// and this header declares it `extern`; inside namespace tprimat::bench.
#define TPRIMAT_BENCH_RUN_WITH_MODEL(Backend, M, Comm) \
  template RunRecord run_with_model<Backend, M, Comm>(const Job&, int, const Comm&, Reporter&)

// Every model of model::Models under one backend and communicator (`X` is a macro of three).
#define TPRIMAT_BENCH_EACH_MODEL(X, Backend, Comm) \
  X(Backend, ::tprimat::model::Llama31_8B, Comm);  \
  X(Backend, ::tprimat::model::Qwen25_7B, Comm);   \
  X(Backend, ::tprimat::model::Mistral7B, Comm);   \
  X(Backend, ::tprimat::model::Tiny, Comm)

#define TPRIMAT_BENCH_EXTERN_RUN_WITH_MODEL(Backend, M, Comm) \
  extern TPRIMAT_BENCH_RUN_WITH_MODEL(Backend, M, Comm)

#if defined(TPRIMAT_BENCH_COMPILED)
#include "tprimat/backend/cpu.hpp"
#include "tprimat/bench/dispatch.hpp"
#include "tprimat/model/all.hpp"
#include "tprimat/parallel/communicator.hpp"
#if defined(TPRIMAT_WITH_MPI) && TPRIMAT_WITH_MPI
#include "tprimat/parallel/mpi.hpp"
#endif
#if defined(TPRIMAT_BENCH_GPU_COMPILED)
#include "tprimat/backend/gpu.hpp"
// The GPU ranks' communicator, where the build has NCCL (RCCL) and MPI.
#if defined(TPRIMAT_HAVE_NCCL) && defined(TPRIMAT_WITH_MPI) && TPRIMAT_WITH_MPI
#include "tprimat/backend/nccl.hpp"
#define TPRIMAT_BENCH_GPU_OVER_NCCL 1
#else
#define TPRIMAT_BENCH_GPU_OVER_NCCL 0
#endif
#endif

namespace tprimat::bench {

static_assert(model::Models::size == 4,
              "a model was added: list it in TPRIMAT_BENCH_EACH_MODEL (bench/extern_dispatch.hpp)");

// The CPU backend over one process and over MPI ranks (tprimat_bench).
TPRIMAT_BENCH_EACH_MODEL(TPRIMAT_BENCH_EXTERN_RUN_WITH_MODEL, ::tprimat::backend::Cpu,
                         ::tprimat::parallel::comm::Single);
#if defined(TPRIMAT_WITH_MPI) && TPRIMAT_WITH_MPI
TPRIMAT_BENCH_EACH_MODEL(TPRIMAT_BENCH_EXTERN_RUN_WITH_MODEL, ::tprimat::backend::Cpu,
                         ::tprimat::parallel::comm::Mpi);
#endif

// The GPU backend over one process and over NCCL (RCCL) ranks (tprimat_bench_gpu, linked by the
// CLI of a CUDA or HIP build).
#if defined(TPRIMAT_BENCH_GPU_COMPILED)
TPRIMAT_BENCH_EACH_MODEL(TPRIMAT_BENCH_EXTERN_RUN_WITH_MODEL, ::tprimat::backend::Gpu,
                         ::tprimat::parallel::comm::Single);
#if TPRIMAT_BENCH_GPU_OVER_NCCL
TPRIMAT_BENCH_EACH_MODEL(TPRIMAT_BENCH_EXTERN_RUN_WITH_MODEL, ::tprimat::backend::Gpu,
                         ::tprimat::parallel::comm::WithNccl<::tprimat::parallel::comm::Mpi>);
#endif
#endif

}  // namespace tprimat::bench
#endif
