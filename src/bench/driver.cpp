// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// bench::run_bench and bench::run_plan compiled once for the in-tree binaries (src/README.md).
#define TPRIMAT_BENCH_LIBRARY_TU
#include "tprimat/bench/driver.hpp"
