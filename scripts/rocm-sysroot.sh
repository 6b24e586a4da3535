#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# A ROCm 7 build environment made from Debian's own archive: a Debian sid root with the ROCm set
# of experimental (hipcc/clang, HIP runtime + headers, hipBLASLt, rocBLAS, RCCL) and what a C++20
# cmake + Ninja build of tprimat needs, and tprimat's HIP backend built inside it.
#
#   scripts/rocm-sysroot.sh                 make the root, or reuse it when its stamp says it is
#                                           complete with this package set (a complete root of
#                                           an earlier set gets the missing packages with apt
#                                           inside it); prints its path
#   scripts/rocm-sysroot.sh run CMD...      run CMD inside the root (chroot in a private mount
#                                           namespace: the source tree, the build tree and /dev,
#                                           /proc, /tmp bind-mounted at their own paths)
#   scripts/rocm-sysroot.sh build [DIR] [CMAKE ARGS...]
#                                           the ROCm 7 HIP build in DIR (default
#                                           <build tree>/build-rocm7), inside the root: CUDA off,
#                                           HIP on, clang++-22 for the host code, hipcc for
#                                           TPRIMAT_ROCM_ARCHS (default gfx942;gfx90a;gfx950);
#                                           builds TPRIMAT_ROCM_TARGETS (default tprimat_cli
#                                           tprimat_hip_ops), runs the HIP checks (ctest -L hip:
#                                           -Werror compiles, links, step check; TPRIMAT_ROCM_CTEST
#                                           narrows them by -R regex; the resource budgets
#                                           among them), and checks the CLI (links libamdhip64.so.7,
#                                           refuses --backend hip without an AMD GPU, runs CPU)
#
# Why a chroot and not the host's cmake pointed at the root: the root's clang-22/hipcc are built
# against sid's glibc (2.43), which Debian 12's loader cannot run; inside the root everything is
# sid's and ROCm sits in Debian's own layout (/usr/bin/hipcc, /usr/include/hip, the libraries and
# their CMake configs, hip/hipblaslt/rccl, under /usr/lib/x86_64-linux-gnu), so cmake's own
# find_package finds it with no hints. The root path: TPRIMAT_ROCM_SYSROOT, else
# <build tree>/rocm-sysroot (TPRIMAT_BUILD_DIR, else ./build). Needs root (chroot, mounts);
# mmdebstrap is installed with apt when missing.
#
# The suites move daily: the ROCm packages come from experimental by source package (an apt pin,
# no version pinned), everything else from sid, and the script checks that the installed ROCm set
# has one upstream version. When apt cannot install the set (archive moved, network down) it
# prints apt's error and exits with status 75 (EX_TEMPFAIL), which scripts/test.sh reports as a
# named skip; any other failure (a compile error) is its ordinary non-zero status.
#
# Measured on a 2-core Debian 12 machine (shared): see README.md's ROCm section.
set -euo pipefail

TPRIMAT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_tree="${TPRIMAT_BUILD_DIR:-${TPRIMAT_ROOT}/build}"
sysroot="${TPRIMAT_ROCM_SYSROOT:-${build_tree}/rocm-sysroot}"
readonly apt_failed=75
# The CLI, the HIP ops library, and the GPU test binaries an MI300X user runs (tests/gpu: the
# portable suites, and those under mpirun over RCCL); here they load and skip, naming the reason.
default_targets="tprimat_cli tprimat_hip_ops tprimat_gpu_elementwise_tests tprimat_gpu_attention_tests"
default_targets+=" tprimat_gpu_step_tests tprimat_gpu_fp8_step_tests tprimat_gpu_init_checkpoint_tests"
default_targets+=" tprimat_gpu_fp8_cast_tests tprimat_gpu_nccl_tests tprimat_gpu_data_parallel_tests"
default_targets+=" tprimat_gpu_model_parallel_tests"

# The ROCm packages of the issue and the build's own dependencies (cmake, Ninja, g++ for the
# toolchain CMake's checks expect: the host code itself is compiled by hipcc's clang++-22 with
# g++'s libstdc++; the libraries of CMakeLists.txt and apps/tprimat; OpenMPI for the CLI's
# multi-rank path and the GPU tests under mpirun; no Google Benchmark: the ROCm build has no
# benchmarks).
# libhipblas-common-dev: hipblaslt.h and hipblaslt's CMake config need it, and Debian's
# libhipblaslt-dev 7.2.4 does not depend on it.
rocm_packages=(hipcc libamdhip64-dev libhipblaslt-dev libhipblas-common-dev librocblas-dev
               librccl-dev)
build_packages=(cmake ninja-build g++ libeigen3-dev nlohmann-json3-dev libcli11-dev zlib1g-dev
                libgtest-dev libgmock-dev libopenmpi-dev openmpi-bin)
# Source packages whose binaries come from experimental (the coherent ROCm 7.2 set there; sid
# mixes 6.4 and 7.x), all else from sid.
experimental_sources=(rocm-llvm rocm-hipamd rocr-runtime roctracer rocm-smi-lib hipblaslt
                      hipblas-common rocblas rccl)

die_apt() {
  echo "" >&2
  echo "rocm-sysroot: ================================================================" >&2
  echo "rocm-sysroot: APT FAILED: $*" >&2
  echo "rocm-sysroot: the ROCm 7 root at ${sysroot} could not be made (archive change or" >&2
  echo "rocm-sysroot: network failure); exiting ${apt_failed} (skip, not a build failure)" >&2
  echo "rocm-sysroot: ================================================================" >&2
  exit "${apt_failed}"
}

mirror() {
  if [[ -n "${TPRIMAT_ROCM_MIRROR:-}" ]]; then
    echo "${TPRIMAT_ROCM_MIRROR}"
    return
  fi
  # The archive the host's apt already uses (deb822 or one-line sources), else deb.debian.org.
  local uri
  uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  if [[ -z "${uri}" ]]; then
    uri=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  fi
  if [[ -z "${uri}" || "${uri}" == *security* ]]; then
    uri=http://deb.debian.org/debian
  fi
  echo "${uri}"
}

# What a complete root of this script holds: compared with the root's stamp to reuse it.
stamp_text() {
  echo "packages: ${rocm_packages[*]} ${build_packages[*]}"
  echo "experimental sources: ${experimental_sources[*]}"
  echo "mirror: $(mirror)"
}
stamp="${sysroot}/.tprimat-rocm-sysroot"

ensure_mmdebstrap() {
  command -v mmdebstrap >/dev/null 2>&1 && return
  echo "rocm-sysroot: installing mmdebstrap with apt"
  export DEBIAN_FRONTEND=noninteractive
  local log
  log=$(mktemp)
  if ! { apt-get update -q && apt-get install -y -q --no-install-recommends mmdebstrap; } \
      >"${log}" 2>&1; then
    cat "${log}" >&2
    die_apt "apt-get install mmdebstrap: $(grep -E '^(E|Err):' "${log}" | head -3 | tr '\n' ' ')"
  fi
  rm -f "${log}"
}

# The apt pin that takes experimental_sources from experimental.
write_pin() {
  {
    echo "Package: $(printf 'src:%s ' "${experimental_sources[@]}")"
    echo "Pin: release a=experimental"
    echo "Pin-Priority: 990"
  } >"$1"
}

# Checks that the root holds one ROCm set: hipcc (rocm-llvm), the runtime, hipBLASLt, rocBLAS and
# RCCL of one upstream version (major.minor), else the pin no longer selects a coherent set;
# then writes the stamp that says the root is complete.
record_root() {
  local versions upstreams
  versions=$(chroot "${sysroot}" dpkg-query -W -f='${Package} ${Version}\n' "${rocm_packages[@]}")
  upstreams=$(awk '{split($2, v, /[.~+-]/); print v[1] "." v[2]}' <<<"${versions}" | sort -u)
  if [[ $(wc -l <<<"${upstreams}") != 1 ]]; then
    echo "${versions}" >&2
    rm -rf "${sysroot}"
    die_apt "the ROCm packages installed are not one upstream version (${upstreams//$'\n'/, })"
  fi
  { stamp_text; echo "installed:"; sed 's/^/  /' <<<"${versions}"; } >"${stamp}"
  ROCM_UPSTREAM="${upstreams}"
}

# A complete root of an earlier package list (same mirror) gets the missing packages with apt
# inside it, instead of a new root: only the new packages are downloaded, and a root another job
# is reading is not removed under it.
top_up_root() {
  local started log
  started=$(date +%s)
  log=$(mktemp)
  echo "rocm-sysroot: adding this script's package set to ${sysroot} (made for an earlier one)"
  write_pin "${sysroot}/etc/apt/preferences.d/tprimat-rocm"
  cp -L /etc/resolv.conf "${sysroot}/etc/resolv.conf" 2>/dev/null || true
  if ! run_inside sh -c "apt-get -q -o Acquire::Check-Valid-Until=false update &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $* &&
      apt-get clean && rm -rf /var/lib/apt/lists/*" 2>&1 | tee "${log}"; then
    die_apt "apt-get install in ${sysroot}: $(grep -E '^(E|Err):' "${log}" | head -5 | tr '\n' ' ')"
  fi
  rm -f "${log}"
  record_root
  echo "rocm-sysroot: added to ${sysroot} in $(($(date +%s) - started)) s; ROCm ${ROCM_UPSTREAM}"
}

make_root() {
  if [[ -f "${stamp}" ]] && diff -q <(stamp_text) <(sed '/^installed:/,$d' "${stamp}") \
      >/dev/null 2>&1; then
    echo "rocm-sysroot: reusing ${sysroot} ($(grep -c '^  ' "${stamp}") ROCm packages recorded)"
    return
  fi
  if (($(id -u) != 0)); then
    echo "rocm-sysroot: making the root needs root (mmdebstrap, chroot); run as root" >&2
    exit 1
  fi
  if [[ -f "${stamp}" ]] && grep -qxF "mirror: $(mirror)" "${stamp}"; then
    top_up_root "${rocm_packages[@]}" "${build_packages[@]}"
    return
  fi
  ensure_mmdebstrap
  local started uri work log
  started=$(date +%s)
  uri=$(mirror)
  work=$(mktemp -d)
  log="${work}/mmdebstrap.log"
  write_pin "${work}/tprimat-rocm.pref"
  echo "rocm-sysroot: making ${sysroot} from ${uri} (sid + experimental); log ${log}"
  rm -rf "${sysroot}"
  mkdir -p "$(dirname "${sysroot}")"
  local include
  include=$(IFS=,; echo "${rocm_packages[*]},${build_packages[*]}")
  # The download size is taken before mmdebstrap's cleanup empties apt's archive cache. The
  # Release files' signatures are checked, not their Valid-Until: the archive a CI machine
  # reaches may be a frozen mirror whose sid Release has expired (seen: "expired (invalid since
  # 18d)"), and a stale sid is still a ROCm 7 toolchain.
  if ! mmdebstrap --mode=root --variant=apt --include="${include}" \
      --aptopt='Acquire::Check-Valid-Until "false"' \
      --setup-hook="mkdir -p \"\$1/etc/apt/preferences.d\" &&
                    cp '${work}/tprimat-rocm.pref' \"\$1/etc/apt/preferences.d/tprimat-rocm\"" \
      --customize-hook="du -sm \"\$1/var/cache/apt/archives\" | cut -f1 > '${work}/download_mb'" \
      sid "${sysroot}" "deb ${uri} sid main" "deb ${uri} experimental main" 2>&1 |
      tee "${log}"; then
    rm -rf "${sysroot}"
    die_apt "mmdebstrap: $(grep -E '^(E|Err|W):|unmet|Unable' "${log}" | head -5 | tr '\n' ' ')"
  fi
  record_root
  echo "rocm-sysroot: made ${sysroot} in $(($(date +%s) - started)) s; download" \
       "$(cat "${work}/download_mb") MB, disk $(du -sm "${sysroot}" | cut -f1) MB; ROCm ${ROCM_UPSTREAM}"
  sed -n '/^installed:/,$p' "${stamp}"
  rm -rf "${work}"
}

# Runs "$@" inside the root, the source and build trees at their own paths (so the paths cmake
# and compilers record agree inside and out). The mounts live in a private mount namespace and
# go with the command.
run_inside() {
  local binds=("${TPRIMAT_ROOT}" "${build_tree}" /tmp)
  [[ -n "${ROCM_BUILD_DIR:-}" ]] && binds+=("${ROCM_BUILD_DIR}")
  mkdir -p "${build_tree}"
  local script="mount --rbind /dev '${sysroot}/dev' && mount -t proc proc '${sysroot}/proc'"
  local b
  for b in "${binds[@]}"; do
    if [[ "$(realpath -m "${b}")" == / ]]; then
      echo "rocm-sysroot: refusing to bind-mount / into the root (source or build tree is /)" >&2
      exit 1
    fi
    script+=" && mkdir -p '${sysroot}${b}' && mount --bind '${b}' '${sysroot}${b}'"
  done
  unshare --mount --propagation private -- sh -c \
    "${script} && exec chroot '${sysroot}' /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root \
     LANG=C.UTF-8 \"\$@\"" sh "$@"
}

case "${1:-}" in
  "")
    make_root
    echo "${sysroot}"
    ;;
  run)
    shift
    make_root >&2
    run_inside "$@"
    ;;
  build)
    shift
    ROCM_BUILD_DIR="$(realpath -m "${1:-${build_tree}/build-rocm7}")"
    shift || true
    make_root
    mkdir -p "${ROCM_BUILD_DIR}"
    started=$(date +%s)
    run_inside env TPRIMAT_JOBS="${TPRIMAT_JOBS:-$(nproc 2>/dev/null || echo 2)}" \
      TPRIMAT_ROCM_TARGETS="${TPRIMAT_ROCM_TARGETS:-${default_targets}}" \
      TPRIMAT_ROCM_ARCHS="${TPRIMAT_ROCM_ARCHS:-gfx942;gfx90a;gfx950}" \
      TPRIMAT_ROCM_CTEST="${TPRIMAT_ROCM_CTEST:-.}" \
      bash "${TPRIMAT_ROOT}/scripts/rocm-sysroot.sh" inside-build "${ROCM_BUILD_DIR}" "$@"
    echo "rocm-sysroot: ROCm 7 build in ${ROCM_BUILD_DIR} took $(($(date +%s) - started)) s"
    ;;
  inside-build)
    # The build itself, run by `build` inside the root. clang++-22 compiles the host code: ROCm
    # 7's hip_bf16.h is clang's alone (cmake/hip.cmake). The HIP checks (label hip) are -Werror
    # compiles, links, the step check and the resource budgets (no kernel spills; within
    # tests/hip/budgets/<arch>.txt where the file is this compiler's).
    shift
    dir=$1
    shift
    cli="${dir}/apps/tprimat/tprimat"
    cmake -S "${TPRIMAT_ROOT}" -B "${dir}" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_COMPILER=clang++-22 -DTPRIMAT_CUDA=OFF -DTPRIMAT_HIP=ON -DTPRIMAT_ROCM_ROOT=/usr \
      "-DCMAKE_HIP_ARCHITECTURES=${TPRIMAT_ROCM_ARCHS}" -DTPRIMAT_BUILD_BENCHMARKS=OFF "$@" >/dev/null
    # shellcheck disable=SC2086  # a list of targets
    cmake --build "${dir}" --parallel "${TPRIMAT_JOBS}" --target ${TPRIMAT_ROCM_TARGETS}
    ctest --test-dir "${dir}" --output-on-failure --no-tests=error --parallel "${TPRIMAT_JOBS}" \
      -L '^hip$' -R "${TPRIMAT_ROCM_CTEST}"
    # The GPU test binaries (label gpu) were built: without an AMD GPU each test skips with the
    # reason; the mpirun ones (np 2, RCCL and host-staged) start their ranks and skip too.
    if [[ " ${TPRIMAT_ROCM_TARGETS} " == *" tprimat_gpu_step_tests "* ]]; then
      ctest --test-dir "${dir}" --output-on-failure --no-tests=error \
        --parallel "${TPRIMAT_JOBS}" -L '^gpu$' -E '_np4$'
      # Captured, not piped into grep -q: grep stops reading at the first match, and the test
      # binary's next write then dies of SIGPIPE (exit 141 under pipefail).
      skipped=$("${dir}/tests/gpu/tprimat_gpu_step_tests" \
        --gtest_filter='GpuStep.TinyMatchesCpuWithFlashAttention')
      if [[ "${skipped}" != *"no AMD GPU"* ]]; then
        echo "rocm-sysroot: the GPU step test did not skip for want of an AMD GPU:" >&2
        echo "${skipped}" >&2
        exit 1
      fi
      ldd "${dir}/tests/gpu/tprimat_gpu_model_parallel_tests" | grep -E 'librccl|libmpi'
    fi
    # The CLI links the root's HIP runtime (and RCCL, MPI); without an AMD GPU it refuses
    # --backend hip with the reason (exit 2) and runs the CPU backend.
    ldd "${cli}" | grep -E 'libamdhip64|librccl|libmpi'
    if out=$("${cli}" bench --backend hip 2>&1) || [[ "${out}" != *"no AMD GPU is visible"* ]]; then
      echo "rocm-sysroot: --backend hip without an AMD GPU said: ${out}" >&2
      exit 1
    fi
    "${cli}" bench --steps 1 --warmup-steps 0 --seq 32 --output-dir "${dir}/smoke" >/dev/null
    ;;
  *)
    echo "usage: $0 [run CMD... | build [DIR] [CMAKE ARGS...]]" >&2
    exit 2
    ;;
esac
