#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Shared by bench.sh and test.sh: installs dependencies and configures the build directory.
# Sourced, not run, after setting TPRIMAT_ROLE: `cli` (bench.sh: the program alone, none of the
# tests, examples or benchmarks, and no HIP toolchain installed) or `all` (test.sh: everything).
# Both set every part explicitly, so one build directory serves both in either order. Sets
# TPRIMAT_ROOT, TPRIMAT_BUILD_DIR and TPRIMAT_JOBS.
set -euo pipefail
TPRIMAT_ROLE="${TPRIMAT_ROLE:-all}"

TPRIMAT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TPRIMAT_BUILD_DIR="${TPRIMAT_BUILD_DIR:-${TPRIMAT_ROOT}/build}"
TPRIMAT_JOBS="${TPRIMAT_JOBS:-$(nproc 2>/dev/null || echo 2)}"

"${TPRIMAT_ROOT}/scripts/install-deps.sh" "${TPRIMAT_ROLE}"
if [[ "${TPRIMAT_ROLE}" == cli ]]; then
  parts=(-DTPRIMAT_BUILD_CLI=ON -DTPRIMAT_BUILD_TESTS=OFF -DTPRIMAT_BUILD_EXAMPLES=OFF
         -DTPRIMAT_BUILD_BENCHMARKS=OFF)
else
  parts=(-DTPRIMAT_BUILD_CLI=ON -DTPRIMAT_BUILD_TESTS=ON -DTPRIMAT_BUILD_EXAMPLES=ON
         -DTPRIMAT_BUILD_BENCHMARKS=ON)
fi

generator=()
# Keep whatever generator an existing build dir was made with; else prefer Ninja.
if [[ ! -f "${TPRIMAT_BUILD_DIR}/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi
# Release: timings mean nothing unoptimized, and the CPU training-step tests run faster.
cmake -S "${TPRIMAT_ROOT}" -B "${TPRIMAT_BUILD_DIR}" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE="${TPRIMAT_BUILD_TYPE:-Release}" "${parts[@]}" ${TPRIMAT_CMAKE_ARGS:-}
