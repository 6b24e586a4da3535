#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# On a GPU machine: builds the CUDA backend and runs what CI cannot (GPU tests, benchmarks, the
# PyTorch peer, compute-sanitizer). Logs go to $OUT (default ./gpu-check).
#   scripts/gpu-check.sh [build] [test] [nccl] [dp] [mp] [bench] [bench-micro] [bench-step] [peer]
#                        [peer-compile] [peer-mbs2] [compare] [sanitize] [cli] [profile]
#                        [scaling] [scaling-full] [scaling-full-mbs2] [profile-full]
#                        [fp8-proxy] [fp8-full] [fp8-curves] [fp8-profile]
#                        [scaling-balanced] [scaling-balanced-full] [scaling-sp] [scaling-4gpu]
#                        [scaling-4gpu-full] [nvidia-recipe] [recompute] [cp] [cp-cost]
#                        [cp-recipe] [cp-long] [deterministic]
#                        (default: build test)
# bench = bench-micro + bench-step (Google Benchmark JSON in $OUT/bench_*.json); compare: tprimat
# and the PyTorch peer back to back (benchmarks/peer/compare.py, table in $OUT/compare/).
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
  # TPRIMAT_GPU_CMAKE_ARGS: more cache entries (-DTPRIMAT_FLASH_SCALAR=ON checks HIP's flash path).
  # shellcheck disable=SC2206  # a list of arguments
  args+=(${TPRIMAT_GPU_CMAKE_ARGS:-})
  # cuDNN and NCCL from the system, else from the pip wheels.
  local lib var dir
  for lib in cudnn nccl; do
    var=${lib^^}
    ls /usr/include/$lib.h /usr/include/*/$lib.h /usr/local/cuda/include/$lib.h >/dev/null 2>&1 &&
      continue
    dir=$(pip_lib $lib)
    [ -n "$dir" ] && args+=("-DTPRIMAT_${var}_INCLUDE_DIR=$dir/include"
                            "-DTPRIMAT_${var}_LIBRARY=$(compgen -G "$dir/lib/lib$lib.so*" | sort | sed -n 1p)")
  done
  cmake -B "$build" -G Ninja "${args[@]}"
}

if has build; then
  # TPRIMAT_GPU_TARGETS: build only these (a quicker call that needs a few binaries).
  { configure && ninja -C "$build" -j"$jobs" ${TPRIMAT_GPU_TARGETS:-tprimat_cli tprimat_gpu_gemm_tests \
      tprimat_gpu_elementwise_tests tprimat_gpu_attention_tests tprimat_gpu_step_tests \
      tprimat_gpu_init_checkpoint_tests tprimat_gpu_gemm_tiled_tests tprimat_gpu_profile_tests \
      tprimat_gpu_fp8_cast_tests tprimat_gpu_fp8_gemm_tests tprimat_gpu_fp8_step_tests \
      tprimat_gpu_recompute_tests tprimat_bench_gpu_micro tprimat_bench_step_cuda tprimat_example_02_gpu_step \
      $(ninja -C "$build" -t targets all 2>/dev/null |
          grep -o '^tprimat_gpu_\(nccl\|data_parallel\|model_parallel\|context_parallel\)_tests' | sort -u)}; } 2>&1 |
    tee "$out/build.log" | tail -30
fi
# Wheel libraries after the system's: found when CMake took the wheel, unused otherwise.
for lib in cudnn nccl; do
  dir=$(pip_lib $lib)
  [ -n "$dir" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:$dir/lib"
done
if has test; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/gpu.txt" 2>&1
  for t in gemm elementwise attention step init_checkpoint gemm_tiled profile fp8_cast fp8_gemm \
    fp8_step recompute; do
    "$build/tests/gpu/tprimat_gpu_${t}_tests" --gtest_brief=0 2>&1 | tee "$out/test_${t}.log" | tail -25
  done
  # The numbered GPU example (examples/02_gpu_step): runs, its loss finite.
  "$build/examples/02_gpu_step/tprimat_example_02_gpu_step" 2>&1 | tee "$out/example_02.log"
fi
# mpirun as root on this machine, the wheel libraries and NVLink multicast's setting forwarded.
gpu_mpirun() {
  local np=$1
  shift
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --allow-run-as-root \
    --oversubscribe -np "$np" -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE "$@"
}
# GPU test suite $1 under mpirun at each rank count that follows (a suite that was not built is
# skipped): NCCL where every rank has a GPU, host-staged MPI collectives with the ranks sharing
# the GPUs there are. TPRIMAT_GPU_TEST_FILTER: only the tests it matches (a gtest filter).
mpi_suite() {
  local suite=$1 np
  shift
  [ -x "$build/tests/gpu/tprimat_gpu_${suite}_tests" ] || return 0
  for np in "$@"; do
    gpu_mpirun "$np" "$build/tests/gpu/tprimat_gpu_${suite}_tests" \
      ${TPRIMAT_GPU_TEST_FILTER:+--gtest_filter=$TPRIMAT_GPU_TEST_FILTER} 2>&1 |
      tee -a "$out/test_${suite}.log" | grep -v '^\[ *\(RUN\|OK\) ' | tail -30
  done
}
# comm::Nccl alone, then on every GPU.
has nccl && mpi_suite nccl 1 "$(nvidia-smi -L | wc -l)"
# Data parallelism against one GPU (np 3 takes the single padded bucket; np 4 hybrid sharding's
# two instances of two).
has dp && mpi_suite data_parallel 2 3 4
# TP 2, PP 2 and both against one GPU: alone (np 2) and with DP 2 (np 4).
has mp && mpi_suite model_parallel 2 4
# Context parallelism against one GPU: CP 2 (np 2); CP 4, CP 2 with DP, TP or PP (np 4).
has cp && mpi_suite context_parallel 2 4
if has bench || has bench-micro; then
  "$build/benchmarks/micro/tprimat_bench_gpu_micro" --benchmark_out="$out/bench_micro.json" \
    --benchmark_out_format=json 2>&1 | tee "$out/bench_micro.log" | tail -25
fi
if has bench || has bench-step; then
  "$build/benchmarks/step/tprimat_bench_step_cuda" --benchmark_out="$out/bench_step.json" \
    --benchmark_out_format=json 2>&1 | tee "$out/bench_step.log"
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
if has compare; then  # TPRIMAT_COMPARE_ARGS: more flags, e.g. "--modes eager" (compare.py -h)
  python3 benchmarks/peer/compare.py --cli "$build/apps/tprimat/tprimat" --output-dir "$out/compare" \
    ${TPRIMAT_COMPARE_ARGS:-} 2>&1 | tee "$out/compare.log" | tail -14
fi
# --deterministic: two processes of one configuration (the 8-layer Llama proxy, gbs 16) agree
# on every loss, gradient norm and learning rate to the last bit; deterministic.log says which.
if has deterministic; then
  for n in 1 2; do
    "$build/apps/tprimat/tprimat" bench --model llama --layers 8 --mbs 2 --gbs 16 --steps 4 \
      --warmup-steps 1 --deterministic --output-dir "$out/deterministic/$n" \
      >"$out/deterministic_$n.log" 2>&1
  done
  python3 - "$out/deterministic" <<'PY' 2>&1 | tee "$out/deterministic.log"
import json, sys
docs = [json.load(open(f"{sys.argv[1]}/{n}/benchmark_cuda_llama.json")) for n in (1, 2)]
keys = ("raw_loss_values", "raw_grad_norms", "raw_learning_rates")
same = all(docs[0][k] == docs[1][k] and docs[0][k] for k in keys)
print("deterministic:", "identical" if same else "DIFFERENT",
      *(f"{k} {docs[0][k]} / {docs[1][k]}" for k in keys))
sys.exit(0 if same else 1)
PY
fi
if has cli; then
  for m in llama qwen; do
    "$build/apps/tprimat/tprimat" bench --model $m --layers auto --gbs 1 --steps 10 \
      --output-dir "$out/cli" 2>&1 | tee -a "$out/cli.log" | tail -8
  done
fi
# Several GPUs, Llama 3.1 8B at seq 2048, gbs 64 (issue 6's table): scaling = one GPU and every
# layout over all the GPUs at 8 layers (the same per-GPU work: efficiency = tokens/s/GPU of the
# layout / one GPU's), at mbs 1 and 2; scaling-full = the full model under each layout at mbs 1,
# DP with and without overlap; scaling-full-mbs2 = the same at mbs 2 (each call under 10 minutes).
# Results in $out/scaling/<name>/benchmark_cuda_llama.json, one line each in scaling.log with
# the measured peak beside the plan (both the busiest rank's, or stage's).
scale_run() {
  local name=$1 np=$2
  shift 2
  gpu_mpirun "$np" "$build/apps/tprimat/tprimat" bench --model llama --seq 2048 --steps 5 \
    --warmup-steps 2 --output-dir "$out/scaling/$name" "$@" >"$out/scaling/$name.log" 2>&1
  echo "$name (np $np $*): $(grep -E '^tokens/s [0-9.]+ \(' "$out/scaling/$name.log" || tail -2 \
    "$out/scaling/$name.log")$(memory_of "$out/scaling/$name/benchmark_cuda_llama.json")" |
    tee -a "$out/scaling.log"
}
# Issue 35: recomputation's cost on one GPU, Llama 3.1 8B width, 8 layers, seq 8192, mbs 1,
# gbs 16: none against full (uniform 1, block 4) and selective (layernorm, mlp, both), BF16 and
# FP8 delayed, each line with its peak beside the plan. TPRIMAT_RECOMPUTE_SPREAD=1: each
# precision's rows on a GPU of its own, at once (rows compared within a precision share a GPU).
recompute_run() {
  local name=$1
  shift
  "$build/apps/tprimat/tprimat" bench --model llama --layers 8 --seq 8192 --mbs 1 --gbs 16 \
    --steps 5 --warmup-steps 2 --output-dir "$out/recompute/$name" "$@" \
    >"$out/recompute/$name.log" 2>&1
  echo "$name ($*): $(grep -E '^tokens/s [0-9.]+ \(' "$out/recompute/$name.log" || tail -2 \
    "$out/recompute/$name.log")$(memory_of "$out/recompute/$name/benchmark_cuda_llama.json")" |
    tee -a "$out/recompute.log"
}
# ", peak P GiB (reserved R), plan Q GiB" from a result JSON ("" without one).
memory_of() {
  [ -f "$1" ] || return 0
  python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["memory_metrics"]
print(", peak %.2f GiB (reserved %.2f), plan %.2f GiB" % (m["peak_allocated_gib"],
      m["peak_reserved_gib"], m["predicted_gib"]))' "$1" 2>/dev/null
}
recompute_rows() {
  local precision=$1
  recompute_run ${precision}_none --precision $precision
  recompute_run ${precision}_uniform1 --precision $precision --recompute-granularity full
  recompute_run ${precision}_block4 --precision $precision --recompute-granularity full \
    --recompute-method block --recompute-num-layers 4
  for modules in layernorm mlp layernorm,mlp; do
    recompute_run "${precision}_selective_${modules/,/_}" --precision $precision \
      --recompute-granularity selective --recompute-modules $modules
  done
}
if has recompute; then
  mkdir -p "$out/recompute"
  gpu=0
  for precision in ${TPRIMAT_RECOMPUTE_PRECISIONS:-bf16 fp8}; do
    if [ "${TPRIMAT_RECOMPUTE_SPREAD:-0}" = 1 ]; then
      CUDA_VISIBLE_DEVICES=$gpu recompute_rows $precision &
      gpu=$((gpu + 1))
    else
      recompute_rows $precision
    fi
  done
  wait
fi
if has scaling || has scaling-full || has scaling-full-mbs2 || has scaling-balanced ||
  has scaling-balanced-full || has scaling-sp || has scaling-4gpu || has scaling-4gpu-full; then
  gpus=$(nvidia-smi -L | wc -l)
  mkdir -p "$out/scaling"
  echo '{"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": '"$gpus"'}' \
    >"$out/scaling/pp.json"
  echo '{"tensor_model_parallel_size": '"$gpus"', "pipeline_model_parallel_size": 1}' \
    >"$out/scaling/tp.json"
  echo '{"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": 1}' >"$out/scaling/tp2.json"
  echo '{"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 2}' >"$out/scaling/pp2.json"
  echo '{"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": 2}' \
    >"$out/scaling/tp2pp2.json"
  if has scaling; then
    scale_run one_gpu_l8_per_gpu_share 1 --layers 8 --gbs $((64 / gpus))
    scale_run one_gpu_l8 1 --layers 8 --gbs 64
    scale_run dp_zero_l8 "$gpus" --layers 8 --gbs 64 --distributed-optimizer
    scale_run tp_l8 "$gpus" --layers 8 --gbs 64 --parallel "$out/scaling/tp.json"
    scale_run pp_l8 "$gpus" --layers 8 --gbs 64 --parallel "$out/scaling/pp.json"
    scale_run one_gpu_l8_mbs2_per_gpu_share 1 --layers 8 --mbs 2 --gbs $((64 / gpus))
    scale_run dp_zero_l8_mbs2 "$gpus" --layers 8 --mbs 2 --gbs 64 --distributed-optimizer
    scale_run tp_l8_mbs2 "$gpus" --layers 8 --mbs 2 --gbs 64 --parallel "$out/scaling/tp.json"
    scale_run pp_l8_mbs2 "$gpus" --layers 8 --mbs 2 --gbs 64 --parallel "$out/scaling/pp.json"
  fi
  if has scaling-full; then
    scale_run dp_zero_full "$gpus" --layers full --gbs 64 --distributed-optimizer
    scale_run dp_zero_full_no_overlap "$gpus" --layers full --gbs 64 --distributed-optimizer \
      --no-overlap
    scale_run tp_full "$gpus" --layers full --gbs 64 --parallel "$out/scaling/tp.json"
    scale_run pp_full "$gpus" --layers full --gbs 64 --parallel "$out/scaling/pp.json"
    # The issue's peer in the same call: PyTorch eager, full model, one GPU, mbs 1, updating
    # after every micro-batch (accumulating over 64 does not fit one GPU with fp32 state).
    PYTHONUNBUFFERED=1 python3 benchmarks/peer/pytorch_step.py --model llama --layers 32 --steps 5 \
      >"$out/scaling/peer_full.json" 2>"$out/scaling/peer_full.log"
    echo "peer_full: $(cat "$out/scaling/peer_full.json" || tail -2 "$out/scaling/peer_full.log")" |
      tee -a "$out/scaling.log"
  fi
  if has scaling-full-mbs2; then
    scale_run dp_zero_full_mbs2 "$gpus" --layers full --mbs 2 --gbs 64 --distributed-optimizer
    scale_run tp_full_mbs2 "$gpus" --layers full --mbs 2 --gbs 64 --parallel "$out/scaling/tp.json"
    scale_run pp_full_mbs2 "$gpus" --layers full --mbs 2 --gbs 64 --parallel "$out/scaling/pp.json"
  fi
  # Issue 26: TP with sequence parallelism and PP with the balanced (auto) split against one GPU
  # and the plain layouts, in one call: 8 layers at mbs 1 and 2 (scaling-balanced), the full
  # model at mbs 1 and 2 beside one GPU's share of it (scaling-balanced-full; TPRIMAT_FULL_MBS
  # picks the mbs).
  if has scaling-balanced; then
    for mbs in 1 2; do
      scale_run one_gpu_l8_mbs${mbs}_per_gpu_share 1 --layers 8 --mbs $mbs --gbs $((64 / gpus))
      scale_run tp_l8_mbs$mbs "$gpus" --layers 8 --mbs $mbs --gbs 64 --parallel "$out/scaling/tp.json"
      scale_run tp_sp_l8_mbs$mbs "$gpus" --layers 8 --mbs $mbs --gbs 64 \
        --parallel "$out/scaling/tp.json" --sequence-parallel
      scale_run pp_l8_mbs$mbs "$gpus" --layers 8 --mbs $mbs --gbs 64 --parallel "$out/scaling/pp.json"
      scale_run pp_auto_l8_mbs$mbs "$gpus" --layers 8 --mbs $mbs --gbs 64 \
        --parallel "$out/scaling/pp.json" --pipeline-split auto
    done
  fi
  # Sequence parallelism's overlapped collectives (TensorParallel::gather_rows_then, the TP 2
  # exchange) against the same TP=2 + SP in line (--no-overlap) and one GPU's share, on two of
  # the machine's GPUs: 8 layers at mbs 1 and 2, the full model at mbs 2 (TPRIMAT_SP_FULL=0: not).
  if has scaling-sp; then
    for mbs in 1 2; do
      scale_run one_gpu_l8_mbs${mbs}_gbs32 1 --layers 8 --mbs $mbs --gbs 32
      scale_run tp2_sp_l8_mbs$mbs 2 --layers 8 --mbs $mbs --gbs 64 \
        --parallel "$out/scaling/tp2.json" --sequence-parallel
      scale_run tp2_sp_in_line_l8_mbs$mbs 2 --layers 8 --mbs $mbs --gbs 64 \
        --parallel "$out/scaling/tp2.json" --sequence-parallel --no-overlap
    done
    if [ "${TPRIMAT_SP_FULL:-1}" = 1 ]; then
      scale_run one_gpu_full_mbs2_gbs32 1 --layers full --mbs 2 --gbs 32
      scale_run tp2_sp_full_mbs2 2 --layers full --mbs 2 --gbs 64 \
        --parallel "$out/scaling/tp2.json" --sequence-parallel
    fi
  fi
  # Four GPUs (issue 26 part 4): one GPU's share (gbs 16) beside DP=4, TP=2 + SP x DP=2,
  # PP=2 balanced x DP=2 (ZeRO-1 where DP > 1) and TP=2 + SP x PP=2 balanced: 8 layers at mbs 1
  # and 2 (scaling-4gpu), the full model at mbs 2 (scaling-4gpu-full).
  four_gpu_rows() {
    local tag=$1
    shift
    scale_run one_gpu_${tag}_gbs16 1 "$@" --gbs 16
    scale_run dp4_zero_$tag 4 "$@" --gbs 64 --distributed-optimizer
    scale_run tp2_sp_dp2_zero_$tag 4 "$@" --gbs 64 --parallel "$out/scaling/tp2.json" \
      --sequence-parallel --distributed-optimizer
    scale_run pp2_auto_dp2_zero_$tag 4 "$@" --gbs 64 --parallel "$out/scaling/pp2.json" \
      --pipeline-split auto --distributed-optimizer
    scale_run tp2_sp_pp2_auto_$tag 4 "$@" --gbs 64 --parallel "$out/scaling/tp2pp2.json" \
      --sequence-parallel --pipeline-split auto
  }
  if has scaling-4gpu || has scaling-4gpu-full; then
    [ "$gpus" -ge 4 ] || echo "scaling-4gpu: $gpus GPUs here, the rows need 4" | tee -a "$out/scaling.log"
  fi
  if has scaling-4gpu && [ "$gpus" -ge 4 ]; then
    four_gpu_rows l8_mbs1 --layers 8 --mbs 1
    four_gpu_rows l8_mbs2 --layers 8 --mbs 2
  fi
  has scaling-4gpu-full && [ "$gpus" -ge 4 ] && four_gpu_rows full_mbs2 --layers full --mbs 2
  if has scaling-balanced-full; then
    for mbs in ${TPRIMAT_FULL_MBS:-1 2}; do
      scale_run one_gpu_full_mbs${mbs}_per_gpu_share 1 --layers full --mbs $mbs --gbs $((64 / gpus))
      scale_run tp_sp_full_mbs$mbs "$gpus" --layers full --mbs $mbs --gbs 64 \
        --parallel "$out/scaling/tp.json" --sequence-parallel
      scale_run pp_auto_full_mbs$mbs "$gpus" --layers full --mbs $mbs --gbs 64 \
        --parallel "$out/scaling/pp.json" --pipeline-split auto
    done
  fi
fi
# NVIDIA's published Llama 3.1 8B configuration (seq 8192, gbs 128, mbs 1, DP with the
# distributed optimizer) over every GPU, in the precisions of TPRIMAT_RECIPE_PRECISIONS (default
# fp8: the bf16 row is in RESULTS.md); results in $out/recipe/<precision>/.
if has nvidia-recipe; then
  gpus=$(nvidia-smi -L | wc -l)
  mkdir -p "$out/recipe"
  for p in ${TPRIMAT_RECIPE_PRECISIONS:-fp8}; do
    gpu_mpirun "$gpus" "$build/apps/tprimat/tprimat" bench --model llama --layers full --seq 8192 \
      --gbs 128 --mbs 1 --distributed-optimizer --precision $p --steps 2 --warmup-steps 2 \
      --output-dir "$out/recipe/$p" >"$out/recipe/$p.log" 2>&1
    echo "recipe $p: $(grep -E '^tokens/s [0-9.]+ \(' "$out/recipe/$p.log" || tail -3 \
      "$out/recipe/$p.log")" | tee -a "$out/recipe.log"
  done
fi
# Issue 35: context parallelism's cost over every GPU, Llama 3.1 8B, seq 8192, mbs 1, gbs 16 a GPU
# (NVIDIA's gbs 128 over 8), distributed optimizer: CP over all the GPUs against DP over them at
# the same tokens a GPU, in the precisions of TPRIMAT_CP_PRECISIONS (default bf16 fp8). cp-long:
# seq TPRIMAT_CP_SEQ (default 32768), CP over every GPU, gbs 2 (two micro-batches of one
# sequence), with the bench flags of TPRIMAT_CP_FLAGS (e.g. full recomputation).
cp_run() {
  local name=$1 np=$2
  shift 2
  mkdir -p "$out/cp"
  gpu_mpirun "$np" "$build/apps/tprimat/tprimat" bench --model llama --layers full --mbs 1 \
    --distributed-optimizer --steps 2 --warmup-steps 2 --output-dir "$out/cp/$name" "$@" \
    >"$out/cp/$name.log" 2>&1
  echo "$name (np $np $*): $(grep -E '^tokens/s [0-9.]+ \(' "$out/cp/$name.log" || tail -3 \
    "$out/cp/$name.log")$(memory_of "$out/cp/$name/benchmark_cuda_llama.json")" |
    tee -a "$out/cp.log"
}
if has cp-cost; then
  gpus=$(nvidia-smi -L | wc -l)
  for p in ${TPRIMAT_CP_PRECISIONS:-bf16 fp8}; do
    cp_run "dp${gpus}_$p" "$gpus" --seq 8192 --gbs $((16 * gpus)) --precision $p
    cp_run "cp${gpus}_$p" "$gpus" --seq 8192 --gbs $((16 * gpus)) --precision $p --cp "$gpus"
  done
fi
# NVIDIA's Llama 3.1 8B recipe in its own layout over every GPU: seq 8192, mbs 1, gbs 128 scaled
# to the GPU count (16 a GPU), distributed optimizer, CP 2 and DP over the rest, against DP over
# every GPU at the same global batch, in the precisions of TPRIMAT_CP_PRECISIONS.
if has cp-recipe; then
  gpus=$(nvidia-smi -L | wc -l)
  for p in ${TPRIMAT_CP_PRECISIONS:-bf16 fp8}; do
    cp_run "recipe_dp${gpus}_$p" "$gpus" --seq 8192 --gbs $((16 * gpus)) --precision $p
    cp_run "recipe_cp2_dp$((gpus / 2))_$p" "$gpus" --seq 8192 --gbs $((16 * gpus)) --precision $p \
      --cp 2
  done
fi
if has cp-long; then
  gpus=$(nvidia-smi -L | wc -l)
  cp_run "long_${TPRIMAT_CP_SEQ:-32768}" "$gpus" --seq "${TPRIMAT_CP_SEQ:-32768}" --gbs 2 \
    --cp "$gpus" --precision bf16 ${TPRIMAT_CP_FLAGS:-}
fi
# FP8 against bf16 in one call (issue 24): `tprimat bench` at each precision, one line each in
# fp8.log, results in $out/fp8/<name>/. fp8-proxy: the 8-layer proxies at seq 2048, mbs 2, gbs 64
# (H100); fp8-full: the full models at mbs 2, gbs 64 (H200);
# fp8-curves: 300 steps of the 8-layer Llama proxy on real text (TPRIMAT_FP8_DATA: a .bin/.idx
# prefix; bytes as tokens) in each precision, then `tprimat compare` of the three into
# $out/fp8/curves/compare.
fp8_run() {
  local name=$1
  shift
  mkdir -p "$(dirname "$out/fp8/$name")"
  "$build/apps/tprimat/tprimat" bench --seq 2048 --output-dir "$out/fp8/$name" "$@" \
    >"$out/fp8/$name.log" 2>&1
  echo "$name ($*): $(grep -E '^tokens/s [0-9.]+ \(' "$out/fp8/$name.log" || tail -2 \
    "$out/fp8/$name.log")" | tee -a "$out/fp8.log"
}
fp8_precisions() {  # name prefix, then bench flags for all three precisions
  local name=$1
  shift
  fp8_run "${name}_bf16" "$@" --precision bf16
  fp8_run "${name}_fp8_delayed" "$@" --precision fp8 --fp8-recipe delayed
  fp8_run "${name}_fp8_current" "$@" --precision fp8 --fp8-recipe current
}
if has fp8-proxy || has fp8-full || has fp8-curves; then
  mkdir -p "$out/fp8"
  if has fp8-proxy; then
    for m in llama qwen; do
      fp8_precisions "proxy_$m" --model $m --layers 8 --mbs 2 --gbs 64 --steps 5 --warmup-steps 2
    done
  fi
  if has fp8-full; then
    # The full models in each precision: on one H200 FP8 fits with recast copies only (the plan
    # picks them: docs/fp8.md), so the FP8 runs include the recasts' cost.
    for m in ${TPRIMAT_FP8_FULL_MODELS:-llama qwen}; do
      fp8_precisions "full_$m" --model $m --layers full --mbs 2 --gbs 64 --steps 3 \
        --warmup-steps 2
    done
  fi
  if has fp8-curves; then
    fp8_precisions curves/curve --model llama --layers 8 --mbs 1 --gbs 8 --steps 300 \
      --warmup-steps 0 --data "${TPRIMAT_FP8_DATA:?a .bin/.idx prefix of real text}"
    "$build/apps/tprimat/tprimat" compare --results-dir "$out/fp8/curves/curve_bf16" \
      --results-dir "$out/fp8/curves/curve_fp8_delayed" \
      --results-dir "$out/fp8/curves/curve_fp8_current" --output-dir "$out/fp8/curves/compare" \
      2>&1 | tee "$out/fp8/curves/compare.log" | tail -12
    # The three results one level up, where the device tool's file limits let them come back.
    for p in bf16 fp8_delayed fp8_current; do
      cp "$out/fp8/curves/curve_$p/benchmark_cuda_llama.json" "$out/fp8_curve_$p.json"
    done
  fi
fi
# A profiled Llama run into $out/$1 (more bench flags after it) and its summary, both logged to
# $out/$2.
profile_run() {
  local dir="$out/$1" log="$out/$2"
  shift 2
  "$build/apps/tprimat/tprimat" bench --model llama --profile --output-dir "$dir" "$@" 2>&1 |
    tee -a "$log" | tail -6
  "$build/apps/tprimat/tprimat" profile-summary "$dir/profile_cuda_llama_0.json" --markdown \
    --top "${TPRIMAT_PROFILE_TOP:-10}" 2>&1 | tee "$dir/summary.md" | tee -a "$log"
}
if has profile; then
  # Layers auto, the seeds' schedule; then the same with eager steps, whose trace ties kernels to
  # layers and GEMMs to their FLOPs.
  for graph in "" --no-graph; do
    profile_run "profile${graph}" profile.log --layers auto --gbs 1 --steps 10 $graph
  done
fi
if has fp8-profile; then
  # Where an FP8 step's time goes (issue 24): the 8-layer Llama proxy at mbs 2, gbs 16, one replay
  # of each recipe's graph recorded; summaries (kernels by time, GEMM TFLOP/s) in
  # $out/fp8_profile_<recipe>.md.
  for recipe in delayed current; do
    profile_run "fp8-profile-$recipe" fp8-profile.log --layers 8 --mbs 2 --gbs 16 --precision fp8 \
      --fp8-recipe $recipe --warmup-steps 2 --steps 2 --profile-wait 1 --profile-warmup 1 \
      --profile-active 1
    cp "$out/fp8-profile-$recipe/summary.md" "$out/fp8_profile_$recipe.md"
    rm -rf "$out/fp8-profile-$recipe"
  done
fi
if has profile-full; then
  # Where the time of one full-model step goes (issue 6's breakdown): Llama 3.1 8B, all 32 layers,
  # seq 2048, gbs 64, on one GPU; step 2 recorded, a replay of the CUDA graph (step 0 runs
  # eagerly, step 1 captures the graph and readies the collector).
  profile_run profile-full profile-full.log --layers full --seq 2048 --gbs 64 --warmup-steps 2 \
    --steps 2 --profile-wait 1 --profile-warmup 1 --profile-active 1
fi
if has sanitize; then
  # compute-sanitizer on a Tiny CUDA step (graph and eager; cuDNN and our flash attention), then
  # on each kernel's test binary. memcheck checks every kernel. racecheck and synccheck check
  # tprimat's kernels only: cuBLASLt's nvjet and cuDNN's SDPA kernels on sm_90 synchronise
  # through TMA and mbarriers, which racecheck reports as shared-memory hazards and synccheck
  # cannot track (its barrier table overflows and the GEMM then fails to launch).
  # sanitize_summary.txt: one line per tool, target, rc.
  ours=(--kernel-name kns=tprimat)
  for tool in memcheck racecheck synccheck; do
    filter=()
    [ $tool = memcheck ] || filter=("${ours[@]}")
    for variant in graph eager flash-eager; do
      flags=()
      case $variant in
        eager) flags=(--no-graph) ;;
        flash-eager) flags=(--no-graph --attention flash) ;;
      esac
      compute-sanitizer --tool $tool "${filter[@]}" --error-exitcode 9 \
        "$build/apps/tprimat/tprimat" bench --model tiny --backend cuda --seq 256 --steps 2 \
        --warmup-steps 1 "${flags[@]}" --output-dir "/tmp/san/$tool-$variant" \
        >"$out/sanitize_${tool}_step_${variant}.log" 2>&1
      echo "$tool step ($variant) rc=$?" | tee -a "$out/sanitize_summary.txt"
    done
  done
  for t in ${TPRIMAT_SANITIZE_SUITES:-gemm elementwise attention init_checkpoint gemm_tiled}; do
    for tool in memcheck racecheck synccheck; do
      filter=()
      [ $tool = memcheck ] || filter=("${ours[@]}")
      timeout "${TPRIMAT_SANITIZE_TIMEOUT:-120}" compute-sanitizer --tool $tool "${filter[@]}" \
        --error-exitcode 9 "$build/tests/gpu/tprimat_gpu_${t}_tests" \
        >"$out/sanitize_${tool}_${t}.log" 2>&1
      echo "$tool ${t}_tests rc=$?" | tee -a "$out/sanitize_summary.txt"
    done
  done
fi
