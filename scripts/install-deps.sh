#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Installs the Debian packages tprimat builds and tests with; skips those already present.
set -euo pipefail

# Build tools, the library's public dependencies (Eigen, nlohmann-json), the CLI's (CLI11, fmt),
# MPI for multi-process CPU runs and tests, GoogleTest/Benchmark, and what the result checks and
# plots use (jsonschema, gnuplot), and zlib for gzip profiles (--profile-gzip).
packages=(
  cmake ninja-build g++ git
  libeigen3-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libopenmpi-dev openmpi-bin
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-jsonschema gnuplot-nox
  zlib1g-dev
)
# `install-deps.sh fuzz`: also clang 14 and its libFuzzer and sanitizer runtimes (scripts/fuzz.sh).
if [[ "${1:-}" == fuzz ]]; then
  packages+=(clang-14 libclang-rt-14-dev)
fi
# The HIP compile checks (tests/hip, label hip): Debian's HIP 5.2 hipcc with its runtime and
# device libraries (gfx90a compile + link), and clang/lld 19 (gfx942 device code). ~20 s to
# install. Skipped when the build turns them off (-DTPRIMAT_HIP=OFF in TPRIMAT_CMAKE_ARGS).
if [[ " ${TPRIMAT_CMAKE_ARGS:-} " != *" -DTPRIMAT_HIP=OFF "* ]]; then
  packages+=(hipcc libamdhip64-dev rocm-device-libs clang-19 lld-19)
fi

if [[ "${TPRIMAT_SKIP_DEPS:-0}" == 1 ]]; then
  echo "install-deps: TPRIMAT_SKIP_DEPS=1, not checking packages"
  exit 0
fi
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps: not a Debian/Ubuntu system; install these yourself: ${packages[*]}" >&2
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=()
if [[ "$(id -u)" != 0 ]]; then
  command -v sudo >/dev/null 2>&1 || {
    echo "install-deps: not root and no sudo; install: ${missing[*]}" >&2
    exit 1
  }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
