#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Every test, in stages. main: installs dependencies, builds everything in ./build, runs CTest
# (MPI tests included); extra arguments go to this ctest. asan: the CPU tests again, built with
# AddressSanitizer + UndefinedBehaviorSanitizer (leaks fail too) in ./build-asan; skip it with
# TPRIMAT_SKIP_ASAN=1. rocm7: the HIP backend and the CLI built against ROCm 7 in a Debian sid
# root (scripts/rocm-sysroot.sh, a 1.1 GB download, 3.3 GB on disk) in ./build-rocm7, the CLI run
# without an AMD GPU; skipped, loudly, when apt cannot install it, or with TPRIMAT_SKIP_ROCM7=1.
# hip: the same CLI build with Debian's own hipcc (HIP 5.2) in ./build-hip, in place of the rocm7
# stage when that one did not run (TPRIMAT_HIP_STAGE=always runs both; skipped without hipcc or
# with TPRIMAT_SKIP_HIP=1). Fails if any stage fails; prints each stage's timings.
set -euo pipefail
TPRIMAT_ROLE=all
source "$(dirname "${BASH_SOURCE[0]}")/configure.sh"

# MPI tests launch mpirun; as root (CI) Open MPI needs these to agree.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

start=$(date +%s)
since() { echo $(($(date +%s) - $1)); }
# Configures the extra stage's build directory $1 from the source tree with the cache entries
# that follow: Ninja for a fresh directory where it is installed (an existing one keeps its
# generator).
configure_stage() {
  local dir=$1 generator=()
  shift
  if [[ ! -f "${dir}/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
  fi
  cmake -S "${TPRIMAT_ROOT}" -B "${dir}" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
}

# The rocm7 stage (last) runs where it is not switched off and this is root. Its Debian sid root
# is mostly download and unpacking, not compiling: it is made in the background from here, beside
# the main and asan builds, and the stage waits for it.
rocm7_skip=""
if [[ "${TPRIMAT_SKIP_ROCM7:-0}" == 1 || " ${TPRIMAT_CMAKE_ARGS:-} " == *" -DTPRIMAT_HIP=OFF "* ]]; then
  rocm7_skip="skipped (-DTPRIMAT_HIP=OFF or TPRIMAT_SKIP_ROCM7=1)"
elif [[ "$(id -u)" != 0 ]]; then
  rocm7_skip="skipped (not root: the ROCm 7 root needs mmdebstrap and chroot)"
fi
rocm7_root_pid=""
rocm7_root_log="${TPRIMAT_BUILD_DIR}/rocm-sysroot.log"
if [[ -z "${rocm7_skip}" ]]; then
  mkdir -p "${TPRIMAT_BUILD_DIR}"
  TPRIMAT_BUILD_DIR="${TPRIMAT_BUILD_DIR}" setsid "${TPRIMAT_ROOT}/scripts/rocm-sysroot.sh" \
    >"${rocm7_root_log}" 2>&1 </dev/null &
  rocm7_root_pid=$!
  # An early exit (a failed stage under set -e, ^C) takes the background job, mmdebstrap and apt
  # included (its own process group), with it.
  trap '[[ -n "${rocm7_root_pid}" ]] && kill -- "-${rocm7_root_pid}" 2>/dev/null || true' EXIT
fi

# ---- main stage ---------------------------------------------------------------------------------
t=$(date +%s)
main_status=0
cmake --build "${TPRIMAT_BUILD_DIR}" --parallel "${TPRIMAT_JOBS}" || main_status=$?
main_build=$(since "$t")
echo "test.sh: main build took ${main_build} s"
t=$(date +%s)
if ((main_status == 0)); then
  ctest --test-dir "${TPRIMAT_BUILD_DIR}" --output-on-failure --no-tests=error \
    --parallel "${TPRIMAT_JOBS}" "$@" || main_status=$?
fi
main_ctest=$(since "$t")
echo "test.sh: main stage: build ${main_build} s, ctest ${main_ctest} s, exit ${main_status}"

# ---- asan stage ---------------------------------------------------------------------------------
# Every CPU test under ASan + UBSan (cmake/sanitizers.cmake: no recovery, leaks fail, label asan).
# Left out, as they run no tprimat code of this build: compile-fail (compiler diagnostics only),
# install (a fresh, unsanitized configure of its own), cli.schema_validates_results (Python reading
# JSON files) and examples.* (the example binaries are not built here; cli::example_main, their
# code, runs in cli.example_main_*). Left out too, for time: the three long trainings (hundreds of
# steps to see the loss fall: 2.5 minutes of CPU under ASan for data.bench_real_text_loss_falls
# alone), whose code every shorter step test runs sanitized. CUDA and the HIP compile checks are
# off (no GPU code runs in CI), and so are the benchmarks.
# The mpi tests run in a second ctest, sanitized but without leak checking: Open MPI 4.1 dlcloses
# its components in MPI_Finalize, so what they keep until exit is reported from frames of unloaded
# modules ("<unknown module>") that no suppression can tell apart from any other leak.
asan_skip='^(examples\.|cli\.schema_validates_results$|data\.bench_real_text_loss_falls$'
asan_skip+='|cli\.bench_tiny_loss_falls$|TrainingStep\.LossFallsOnSyntheticTask$)'
asan_status=0
asan_build=0
asan_ctest=0
if [[ "${TPRIMAT_SKIP_ASAN:-0}" == 1 ]]; then
  echo "test.sh: asan stage skipped (TPRIMAT_SKIP_ASAN=1)"
else
  asan_dir="${TPRIMAT_ASAN_BUILD_DIR:-${TPRIMAT_ROOT}/build-asan}"
  t=$(date +%s)
  { configure_stage "${asan_dir}" -DTPRIMAT_SANITIZE=address,undefined -DTPRIMAT_CUDA=OFF \
      -DTPRIMAT_HIP=OFF -DTPRIMAT_BUILD_BENCHMARKS=OFF &&
      cmake --build "${asan_dir}" --parallel "${TPRIMAT_JOBS}"; } || asan_status=$?
  asan_build=$(since "$t")
  echo "test.sh: asan build took ${asan_build} s"
  t=$(date +%s)
  if ((asan_status == 0)); then
    ctest --test-dir "${asan_dir}" --output-on-failure --no-tests=error \
      --parallel "${TPRIMAT_JOBS}" -L '^asan$' -LE '^(compile-fail|install|mpi)$' -E "${asan_skip}" ||
      asan_status=$?
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1:exitcode=66}" \
      ctest --test-dir "${asan_dir}" --output-on-failure --no-tests=error \
      --parallel "${TPRIMAT_JOBS}" -L '^mpi$' -E "${asan_skip}" || asan_status=$?
  fi
  asan_ctest=$(since "$t")
  echo "test.sh: asan stage: build ${asan_build} s, ctest ${asan_ctest} s, exit ${asan_status}"
fi

# ---- rocm7 stage --------------------------------------------------------------------------------
# backend::Hip built against ROCm 7.2 (hipcc/clang 22, libamdhip64 7) from Debian sid +
# experimental, in the root scripts/rocm-sysroot.sh makes (once per machine: ~1.1 GB download, ~3.3
# GB on disk, under TPRIMAT_ROCM_SYSROOT, default ./build/rocm-sysroot): the CLI and tprimat_hip_ops
# for gfx942, gfx90a and gfx950, the HIP checks (-Werror compiles, links, step check, resource
# budgets: no kernel spills) in ./build-rocm7. The archive moves: when apt cannot install the set (the script's exit 75) the
# stage is skipped, loudly, with apt's error above; a compile error is a failure. Needs root
# (chroot); skip it with TPRIMAT_SKIP_ROCM7=1.
rocm7_status=0
rocm7_time=0
rocm7_result="skipped"
if [[ -n "${rocm7_skip}" ]]; then
  rocm7_result="${rocm7_skip}"
else
  t=$(date +%s)
  # The root made in the background: its output here, whatever its end. A failure is not judged
  # here: `build` below reuses a complete root, or makes it again and says why it cannot.
  wait "${rocm7_root_pid}" || true
  rocm7_root_pid=""
  echo "test.sh: rocm7 root, made beside the earlier stages (${rocm7_root_log}):"
  cat "${rocm7_root_log}"
  TPRIMAT_BUILD_DIR="${TPRIMAT_BUILD_DIR}" "${TPRIMAT_ROOT}/scripts/rocm-sysroot.sh" build \
    "${TPRIMAT_ROCM7_BUILD_DIR:-${TPRIMAT_ROOT}/build-rocm7}" || rocm7_status=$?
  rocm7_time=$(since "$t")
  if ((rocm7_status == 75)); then
    rocm7_result="SKIPPED: apt could not install the ROCm 7 packages (archive change or network;"
    rocm7_result+=" apt's error is above)"
    rocm7_status=0
  else
    rocm7_result="exit ${rocm7_status}"
  fi
fi
echo "test.sh: rocm7 stage: ${rocm7_time} s, ${rocm7_result}"

# ---- hip stage ----------------------------------------------------------------------------------
# The ROCm build line of docs/rocm.md on this machine: CUDA off, so backend::Gpu is built by hipcc
# (src/hip) into the CLI. Without an AMD GPU the CLI must refuse --backend hip with the reason
# (exit 2) and run the CPU backend. The rocm7 stage checks the same with ROCm 7, the stack users
# install, so this one (Debian's HIP 5.2) runs where that one did not; the HIP compile checks of
# HIP 5.2 (tests/hip: compiles, the gfx90a link of the whole step) ran in the main stage either way.
hip_status=0
hip_time=0
if [[ "${TPRIMAT_SKIP_HIP:-0}" == 1 || " ${TPRIMAT_CMAKE_ARGS:-} " == *" -DTPRIMAT_HIP=OFF "* ]] ||
   ! command -v hipcc >/dev/null 2>&1; then
  echo "test.sh: hip stage skipped (no hipcc, -DTPRIMAT_HIP=OFF or TPRIMAT_SKIP_HIP=1)"
elif [[ "${rocm7_result}" == "exit 0" && "${TPRIMAT_HIP_STAGE:-}" != always ]]; then
  echo "test.sh: hip stage skipped: the rocm7 stage built and ran the CLI for HIP (ROCm 7);" \
       "TPRIMAT_HIP_STAGE=always runs it too"
else
  hip_dir="${TPRIMAT_HIP_BUILD_DIR:-${TPRIMAT_ROOT}/build-hip}"
  t=$(date +%s)
  hip_cli="${hip_dir}/apps/tprimat/tprimat"
  { configure_stage "${hip_dir}" -DTPRIMAT_CUDA=OFF -DTPRIMAT_HIP=ON -DTPRIMAT_BUILD_TESTS=OFF \
      -DTPRIMAT_BUILD_BENCHMARKS=OFF &&
      cmake --build "${hip_dir}" --parallel "${TPRIMAT_JOBS}" --target tprimat_cli; } ||
    hip_status=$?
  if ((hip_status == 0)); then
    refusal=$("${hip_cli}" bench --backend hip 2>&1) && hip_status=1
    if [[ "${refusal}" != *"no AMD GPU is visible"* ]]; then
      echo "test.sh: hip stage: --backend hip without an AMD GPU said: ${refusal}"
      hip_status=1
    fi
    "${hip_cli}" bench --steps 1 --warmup-steps 0 --seq 32 --output-dir "${hip_dir}/smoke" ||
      hip_status=$?
  fi
  hip_time=$(since "$t")
  echo "test.sh: hip stage: ${hip_time} s, exit ${hip_status}"
fi

echo "test.sh: total $(since "$start") s; main: build ${main_build} s + ctest ${main_ctest} s," \
     "exit ${main_status}; asan: build ${asan_build} s + ctest ${asan_ctest} s, exit ${asan_status};" \
     "hip: ${hip_time} s, exit ${hip_status}; rocm7: ${rocm7_time} s, ${rocm7_result}"
((main_status == 0 && asan_status == 0 && hip_status == 0 && rocm7_status == 0))
