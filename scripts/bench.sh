#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# The main job: installs dependencies, builds the tprimat CLI, runs `tprimat bench` with your flags.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/configure.sh"

cmake --build "${TPRIMAT_BUILD_DIR}" --parallel "${TPRIMAT_JOBS}" --target tprimat_cli
exec "${TPRIMAT_BUILD_DIR}/examples/cli/tprimat" bench "$@"
