#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Every test: installs dependencies, builds everything in ./build, runs CTest (MPI tests included).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/configure.sh"

start=$(date +%s)
cmake --build "${TPRIMAT_BUILD_DIR}" --parallel "${TPRIMAT_JOBS}"
echo "test.sh: build took $(( $(date +%s) - start )) s"

# MPI tests launch mpirun; as root (CI) Open MPI needs these to agree.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
status=0
ctest --test-dir "${TPRIMAT_BUILD_DIR}" --output-on-failure --no-tests=error \
  --parallel "${TPRIMAT_JOBS}" "$@" || status=$?
echo "test.sh: total $(( $(date +%s) - start )) s, ctest exit ${status}"
exit "${status}"
