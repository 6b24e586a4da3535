#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# On a GPU machine: builds the CUDA backend and runs what CI cannot (GPU tests, benchmarks, the
# PyTorch peer, compute-sanitizer). Logs go to $OUT (default ./gpu-check).
#   scripts/gpu-check.sh [build] [test] [nccl] [bench] [bench-step] [peer] [peer-compile]
#                        [peer-mbs2] [sanitize] [cli]                       (default: build test)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-check}
mkdir -p "$out"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build test)
build=${TPRIMAT_GPU_BUILD:-build-gpu}
jobs=$(nproc)
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on shared hosts

has() { for s in "${steps[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }

# The directory of NVIDIA's pip wheel for library $1 (cudnn, nccl), the one PyTorch uses.
pip_lib() {
  python3 -c "import nvidia.$1, os; print(os.path.dirname(nvidia.$1.__file__))" 2>/dev/null
}

configure() {
  local args=(-DCMAKE_BUILD_TYPE=Release -DTPRIMAT_CUDA=ON)
  # Header-only dependencies carried in .devdeps/ where the machine lacks the packages.
  [ -d .devdeps ] && args+=("-DCMAKE_PREFIX_PATH=$PWD/.devdeps")
  # cuDNN and NCCL from the system, else from the pip wheels.
  local lib var dir
  for lib in cudnn nccl; do
    var=${lib^^}
    ls /usr/include/$lib.h /usr/include/*/$lib.h /usr/local/cuda/include/$lib.h >/dev/null 2>&1 &&
      continue
    dir=$(pip_lib $lib)
    [ -n "$dir" ] && args+=("-DTPRIMAT_${var}_INCLUDE_DIR=$dir/include"
                            "-DTPRIMAT_${var}_LIBRARY=$(ls "$dir"/lib/lib$lib.so* | head -1)")
  done
  cmake -B "$build" -G Ninja "${args[@]}"
}

if has build; then
  { configure && ninja -C "$build" -j"$jobs" tprimat_cli tprimat_gpu_gemm_tests \
      tprimat_gpu_elementwise_tests tprimat_gpu_attention_tests tprimat_gpu_step_tests \
      tprimat_gpu_init_checkpoint_tests \
      tprimat_bench_gpu_micro tprimat_bench_step_cuda \
      $(ninja -C "$build" -t targets all 2>/dev/null | grep -o '^tprimat_gpu_nccl_tests' | head -1); } 2>&1 | tee "$out/build.log" | tail -30
fi
# Wheel libraries after the system's: found when CMake took the wheel, unused otherwise.
for lib in cudnn nccl; do
  dir=$(pip_lib $lib)
  [ -n "$dir" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:$dir/lib"
done
if has test; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/gpu.txt" 2>&1
  for t in gemm elementwise attention step init_checkpoint; do
    "$build/tests/gpu/tprimat_gpu_${t}_tests" --gtest_brief=0 2>&1 | tee "$out/test_${t}.log" | tail -25
  done
fi
if has nccl && [ -x "$build/tests/gpu/tprimat_gpu_nccl_tests" ]; then
  gpus=$(nvidia-smi -L | wc -l)
  for np in 1 "$gpus"; do
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --allow-run-as-root \
      --oversubscribe -np "$np" -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE \
      "$build/tests/gpu/tprimat_gpu_nccl_tests" 2>&1 | tee -a "$out/test_nccl.log" | tail -12
  done
fi
if has bench; then
  "$build/benchmarks/micro/tprimat_bench_gpu_micro" --benchmark_min_time=0.2s 2>&1 | tee "$out/bench_micro.log"
fi
if has bench || has bench-step; then
  "$build/benchmarks/step/tprimat_bench_step_cuda" 2>&1 | tee "$out/bench_step.log"
fi
# The PyTorch peer at the step benchmark's shapes: eager at mbs 1 (peer), torch.compile at
# mbs 1 (peer-compile), eager at mbs 2 (peer-mbs2).
peer() {
  for m in llama qwen; do
    PYTHONUNBUFFERED=1 python3 benchmarks/peer/pytorch_step.py --model $m --layers 8 "$@" 2>&1 |
      grep -v '^pytorch_step: step' | tee -a "$out/peer.log"
  done
}
has peer && peer
has peer-compile && peer --compile
has peer-mbs2 && peer --mbs 2
if has cli; then
  for m in llama qwen; do
    "$build/examples/cli/tprimat" bench --model $m --layers auto --gbs 1 --steps 10 \
      --output-dir "$out/cli" 2>&1 | tee -a "$out/cli.log" | tail -8
  done
fi
if has sanitize; then
  compute-sanitizer --tool memcheck --error-exitcode 9 "$build/examples/cli/tprimat" bench \
    --model tiny --backend cuda --seq 256 --steps 2 --warmup-steps 1 --output-dir /tmp/san \
    2>&1 | tee "$out/sanitize.log" | tail -15
fi
