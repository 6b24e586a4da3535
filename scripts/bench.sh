#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# The main job: installs what the program needs (no test or HIP toolchain), builds the tprimat CLI
# alone, runs `tprimat bench` with your flags.
set -euo pipefail
TPRIMAT_ROLE=cli
source "$(dirname "${BASH_SOURCE[0]}")/configure.sh"

cmake --build "${TPRIMAT_BUILD_DIR}" --parallel "${TPRIMAT_JOBS}" --target tprimat_cli
exec "${TPRIMAT_BUILD_DIR}/apps/tprimat/tprimat" bench "$@"
