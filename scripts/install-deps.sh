#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Installs the Debian packages tprimat builds and tests with; skips those already present.
# `install-deps.sh cli`: only what the tprimat program needs (scripts/bench.sh); `all` (the
# default): everything the tests use too (scripts/test.sh); `fuzz`: all, and the fuzzers'.
set -euo pipefail
role="${1:-all}"
case "${role}" in
  cli | all | fuzz) ;;
  *)
    echo "install-deps: unknown role '${role}'; pass cli, all or fuzz" >&2
    exit 2
    ;;
esac

# The program: build tools, the library's public dependencies (Eigen, nlohmann-json), CLI11, MPI
# for multi-process runs, zlib for gzip profiles (--profile-gzip), gnuplot for the reports' plots,
# libyaml for YAML config files (the seeds' config.yaml).
packages=(
  cmake ninja-build g++ git
  libeigen3-dev nlohmann-json3-dev libcli11-dev
  libopenmpi-dev openmpi-bin
  zlib1g-dev gnuplot-nox libyaml-dev
)
if [[ "${role}" != cli ]]; then
  # The tests: GoogleTest/Benchmark, and the schema validator the result checks use.
  packages+=(libgtest-dev libgmock-dev libbenchmark-dev python3-jsonschema)
  # The HIP compile checks (tests/hip, label hip): Debian's HIP 5.2 hipcc with its runtime and
  # device libraries (gfx90a compile + link), and clang/lld 19 (gfx942 device code). ~20 s to
  # install. Skipped when the build turns them off (-DTPRIMAT_HIP=OFF in TPRIMAT_CMAKE_ARGS).
  if [[ " ${TPRIMAT_CMAKE_ARGS:-} " != *" -DTPRIMAT_HIP=OFF "* ]]; then
    packages+=(hipcc libamdhip64-dev rocm-device-libs clang-19 lld-19)
  fi
fi
# The fuzzers (scripts/fuzz.sh): clang 14 and its libFuzzer and sanitizer runtimes.
if [[ "${role}" == fuzz ]]; then
  packages+=(clang-14 libclang-rt-14-dev)
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
