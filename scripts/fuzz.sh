#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Fuzzes one input parser with libFuzzer (clang, ASan + UBSan) and minimises its corpus.
#   scripts/fuzz.sh list                        the harnesses
#   scripts/fuzz.sh build                       build every harness in ./build-fuzz
#   scripts/fuzz.sh HARNESS [SECONDS] [-flag=value ...]   fuzz it (default 600 s), then merge
# The run grows build-fuzz/corpus/HARNESS, seeded from tests/fuzz/corpus/HARNESS,
# tests/fuzz/seeds/HARNESS and tests/fuzz/regressions/HARNESS; at the end the committed corpus
# and the growth are merged, minimised (-set_cover_merge), into tests/fuzz/corpus/HARNESS, which
# the test fuzz.HARNESS replays (with the seeds and regressions, kept by hand as they are).
# Crashes land in build-fuzz/artifacts/HARNESS/ (replay one: build-fuzz/tests/fuzz/HARNESS_fuzz
# FILE); once fixed, keep the input in tests/fuzz/regressions/HARNESS/. Extra -flag=value
# arguments go to libFuzzer. Env: TPRIMAT_FUZZ_CXX (default clang++-14), TPRIMAT_FUZZ_BUILD_DIR
# (default ./build-fuzz), TPRIMAT_JOBS (build jobs, default 2).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TPRIMAT_FUZZ_BUILD_DIR:-${root}/build-fuzz}"
cxx="${TPRIMAT_FUZZ_CXX:-clang++-14}"
jobs="${TPRIMAT_JOBS:-2}"
harnesses=(config_file result_load megatron_indexed safetensors import_log trace_reader)

usage() { sed -n '4,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

configure_and_build() {
  "${root}/scripts/install-deps.sh" fuzz
  command -v "${cxx}" >/dev/null 2>&1 || {
    echo "fuzz.sh: ${cxx} not found; install clang-14 and libclang-rt-14-dev or set" \
         "TPRIMAT_FUZZ_CXX" >&2
    exit 1
  }
  local generator=()
  if [[ ! -f "${build}/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
  fi
  # Release, as the parsers ship; CUDA and benchmarks are not what is fuzzed. The harnesses at
  # the sanitized build's -O1 too (not the -O0 CI's replays take): executions per second count.
  cmake -S "${root}" -B "${build}" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="${cxx}" -DTPRIMAT_SANITIZE=address,undefined \
    -DTPRIMAT_SANITIZE_INPUT_OPTIMIZE=-O1 \
    -DTPRIMAT_FUZZ_LIBFUZZER=ON -DTPRIMAT_CUDA=OFF -DTPRIMAT_BUILD_BENCHMARKS=OFF >/dev/null
  local targets=()
  for h in "$@"; do targets+=("${h}_fuzz"); done
  cmake --build "${build}" --parallel "${jobs}" --target "${targets[@]}"
}

(($# >= 1)) || usage
case "$1" in
  list) printf '%s\n' "${harnesses[@]}"; exit 0 ;;
  build) configure_and_build "${harnesses[@]}"; exit 0 ;;
  -h|--help) usage ;;
esac

harness="$1"
shift
[[ " ${harnesses[*]} " == *" ${harness} "* ]] || {
  echo "fuzz.sh: unknown harness '${harness}' (one of: ${harnesses[*]})" >&2
  exit 2
}
seconds=600
if (($# >= 1)) && [[ "$1" =~ ^[0-9]+$ ]]; then
  seconds="$1"
  shift
fi

configure_and_build "${harness}"
binary="${build}/tests/fuzz/${harness}_fuzz"
committed="${root}/tests/fuzz/corpus/${harness}"
work="${build}/corpus/${harness}"
artifacts="${build}/artifacts/${harness}"
mkdir -p "${committed}" "${work}" "${artifacts}"
dict=()
[[ -f "${root}/tests/fuzz/${harness}.dict" ]] && dict=(-dict="${root}/tests/fuzz/${harness}.dict")

# -timeout: an input taking 10 s is a hang worth a report; -rss_limit_mb: an absurd size that the
# parser allocates before checking it against the file is a finding, not a machine swapping.
echo "fuzz.sh: ${harness} for ${seconds} s (corpus ${work}, crashes in ${artifacts})"
start=$(date +%s)
status=0
# The hand-written hostile inputs (tests/fuzz/seeds/HARNESS) and the inputs of fixed findings
# (tests/fuzz/regressions/HARNESS) seed it too, and stay as they are.
seeds=("${committed}")
for kept in seeds regressions; do
  [[ -d "${root}/tests/fuzz/${kept}/${harness}" ]] && seeds+=("${root}/tests/fuzz/${kept}/${harness}")
done
"${binary}" -max_total_time="${seconds}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="${artifacts}/" "${dict[@]}" "$@" "${work}" "${seeds[@]}" || status=$?
echo "fuzz.sh: ${harness} ran $(( $(date +%s) - start )) s, exit ${status}"

# Minimise: a small set of inputs with the same edge coverage (greedy set cover; hit counts
# left out, or the corpora grow to megabytes), replacing the committed corpus.
fresh="${build}/corpus/${harness}.merged"
rm -rf "${fresh}"
mkdir -p "${fresh}"
"${binary}" -set_cover_merge=1 -use_counters=0 "${fresh}" "${committed}" "${work}" 2>&1 | tail -n 1
rm -rf "${committed}"
mv "${fresh}" "${committed}"
echo "fuzz.sh: ${committed}: $(find "${committed}" -type f | wc -l) inputs," \
     "$(du -sk "${committed}" | cut -f1) KiB"
exit "${status}"
