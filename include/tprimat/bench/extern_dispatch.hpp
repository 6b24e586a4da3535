// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The run_with_model instantiations the in-tree build compiles once (src/bench): declared extern
// to the CLI and the example binaries, which link them instead of compiling every layout again,
// and defined by this same list in the TU that compiles them (src/bench/dispatch_cpu.cpp sets
// TPRIMAT_BENCH_CPU_DISPATCH_TU, dispatch_gpu.cpp TPRIMAT_BENCH_GPU_DISPATCH_TU).
#pragma once

#include "tprimat/config.hpp"

// run_with_model<Backend, M, Comm>'s explicit instantiation for every model of model::Models,
// after `Prefix` (`extern` or nothing); inside namespace tprimat::bench.
#define TPRIMAT_BENCH_RUN_WITH_MODEL(Prefix, Backend, M, Comm) \
  Prefix template RunRecord run_with_model<Backend, M, Comm>(const Job&, int, const Comm&, Reporter&)
#define TPRIMAT_BENCH_EACH_MODEL(Prefix, Backend, Comm)                              \
  TPRIMAT_BENCH_RUN_WITH_MODEL(Prefix, Backend, ::tprimat::model::Llama31_8B, Comm); \
  TPRIMAT_BENCH_RUN_WITH_MODEL(Prefix, Backend, ::tprimat::model::Qwen25_7B, Comm);  \
  TPRIMAT_BENCH_RUN_WITH_MODEL(Prefix, Backend, ::tprimat::model::Mistral7B, Comm);  \
  TPRIMAT_BENCH_RUN_WITH_MODEL(Prefix, Backend, ::tprimat::model::Tiny, Comm)

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
#if defined(TPRIMAT_HAVE_NCCL) && defined(TPRIMAT_WITH_MPI) && TPRIMAT_WITH_MPI
#include "tprimat/backend/nccl.hpp"
#endif
#endif

#if defined(TPRIMAT_BENCH_CPU_DISPATCH_TU)
#define TPRIMAT_BENCH_CPU_EXTERN
#else
#define TPRIMAT_BENCH_CPU_EXTERN extern
#endif
#if defined(TPRIMAT_BENCH_GPU_DISPATCH_TU)
#define TPRIMAT_BENCH_GPU_EXTERN
#else
#define TPRIMAT_BENCH_GPU_EXTERN extern
#endif

namespace tprimat::bench {

static_assert(model::Models::size == 4,
              "a model was added: list it in TPRIMAT_BENCH_EACH_MODEL (bench/extern_dispatch.hpp)");

// The CPU backend over one process and over MPI ranks (tprimat_bench).
TPRIMAT_BENCH_EACH_MODEL(TPRIMAT_BENCH_CPU_EXTERN, ::tprimat::backend::Cpu,
                         ::tprimat::parallel::comm::Single);
#if defined(TPRIMAT_WITH_MPI) && TPRIMAT_WITH_MPI
TPRIMAT_BENCH_EACH_MODEL(TPRIMAT_BENCH_CPU_EXTERN, ::tprimat::backend::Cpu,
                         ::tprimat::parallel::comm::Mpi);
#endif

// The GPU backend over one process and over NCCL (RCCL) ranks where the build has NCCL (RCCL)
// and MPI (tprimat_bench_gpu, linked by the CLI of a CUDA or HIP build).
#if defined(TPRIMAT_BENCH_GPU_COMPILED)
TPRIMAT_BENCH_EACH_MODEL(TPRIMAT_BENCH_GPU_EXTERN, ::tprimat::backend::Gpu,
                         ::tprimat::parallel::comm::Single);
#if defined(TPRIMAT_HAVE_NCCL) && defined(TPRIMAT_WITH_MPI) && TPRIMAT_WITH_MPI
TPRIMAT_BENCH_EACH_MODEL(TPRIMAT_BENCH_GPU_EXTERN, ::tprimat::backend::Gpu,
                         ::tprimat::parallel::comm::WithNccl<::tprimat::parallel::comm::Mpi>);
#endif
#endif

}  // namespace tprimat::bench
#endif
