// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// run_with_model<Gpu, M, Comm> for every model, over one process and over NCCL (RCCL) ranks,
// compiled once for the CLI of a CUDA or HIP build: bench/extern_dispatch.hpp's list, as
// definitions here (the engine itself is tprimat_cuda_ops' or tprimat_hip_ops').
#define TPRIMAT_BENCH_GPU_DISPATCH_TU
#include "tprimat/bench/dispatch.hpp"
