// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// run_with_model<Cpu, M, Comm> for every model, over one process and over MPI ranks, compiled
// once: bench/extern_dispatch.hpp's list, as definitions here. One TU for all models: what their
// layouts share (the step loop, the result) is compiled once too, and a TU per model cost more
// than it saved.
#define TPRIMAT_BENCH_CPU_DISPATCH_TU
#include "tprimat/bench/dispatch.hpp"
