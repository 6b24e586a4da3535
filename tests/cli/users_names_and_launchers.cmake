# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# What users bring from Megatron and PyTorch (issue 38 §3): Megatron's flag names as aliases of
# tprimat's in bench and plan, one option each (the long and the short name together count as one
# flag given twice), --fp8-format, hints that never point to a flag of another meaning, and the
# launchers whose ranks tprimat would not join.

# The same run under Megatron's names: the result records what the short names would.
tprimat_cli_test(bench_megatron_flag_names PRODUCES
  ARGS bench --model tiny --micro-batch-size 2 --global-batch-size 4 --seq-length 32
       --train-iters 2 --warmup-steps 0 --lr-warmup-iters 1 --num-layers 1
       --tensor-model-parallel-size 1 --output-dir megatron_names
  RESULT megatron_names/benchmark_cpu_tiny.json
  JSON_EQUALS training_config.micro_batch_size=2 training_config.global_batch_size=4
              training_config.sequence_length=32 training_config.num_layers=1
              training_config.measured_steps=2 training_config.max_steps=2)
tprimat_cli_test(plan_megatron_flag_names
  ARGS plan --model llama --num-layers full --num-gpus 8 --use-distributed-optimizer
       --micro-batch-size 1 --global-batch-size 128 --seq-length 8192 --device H100
  STDOUT_REGEX "TP=1 PP=1 DP=8 GradAccum=16 ZeRO-1, mbs 1 gbs 128 seq 8192, bf16 on H100")
tprimat_cli_test(megatron_name_beside_tprimat_name ARGS bench --mbs 1 --micro-batch-size 2
  EXPECT_RC 2 STDERR_REGEX "^tprimat: --mbs was given 2 times \\(1, 2\\); pass it once")
tprimat_cli_test(plan_fp8_format_hybrid
  ARGS plan --model llama --layers 4 --fp8-format hybrid --device H100
  STDOUT_REGEX "mbs 1 gbs 64 seq 2048, fp8-hybrid-delayed on H100")
tprimat_cli_test(fp8_format_e4m3_refused ARGS bench --fp8-format e4m3 EXPECT_RC 2
  STDERR_REGEX "^tprimat: --fp8-format e4m3 \\(E4M3 for the gradients too\\) is not a recipe tprimat runs: its FP8 is the hybrid one \\(E4M3 forward, E5M2 gradients\\); use --fp8-format hybrid \\(or --precision fp8\\)")
tprimat_cli_test(fp8_format_unknown ARGS plan --fp8-format hybird --device H100 EXPECT_RC 2
  STDERR_REGEX "^tprimat: unknown --fp8-format 'hybird'; pick hybrid")
tprimat_cli_test(fp8_format_contradicts_precision
  ARGS plan --fp8-format hybrid --precision bf16 --device H100 EXPECT_RC 2
  STDERR_REGEX "^tprimat: --fp8-format hybrid asks for FP8, and --precision bf16 for none; drop one of the two")

# A near name of another meaning is never the hint: what tprimat calls the thing asked for is.
tprimat_cli_test(hint_fp8_is_precision ARGS bench --fp8 EXPECT_RC 2
  STDERR_REGEX "^tprimat: unknown option '--fp8' for tprimat bench; did you mean --precision fp8 \\(FP8's hybrid recipe\\)\\?")
tprimat_cli_test(hint_warmup_iters_is_the_lr_warmup ARGS bench --warmup-iters 5 EXPECT_RC 2
  STDERR_REGEX "^tprimat: unknown option '--warmup-iters' for tprimat bench; did you mean --warmup N \\(the learning-rate warm-up; --warmup-steps are the unmeasured steps before timing\\)\\?")

# Launchers whose ranks tprimat would not join (issue 38 §3): refused with the command that works,
# never run as separate DP=1 jobs.
tprimat_cli_test(torchrun_refused ARGS bench --steps 1 --output-dir torchrun
  ENV WORLD_SIZE=2 RANK=0 LOCAL_RANK=0 EXPECT_RC 2 ABSENT torchrun
  STDERR_REGEX "^tprimat: WORLD_SIZE=2 says torchrun \\(or another torch.distributed launcher\\) started this process as one of 2, but tprimat's ranks join over MPI: each would run alone; launch the 2 ranks with mpirun -np 2 tprimat")
if(TARGET tprimat::mpi)
  # srun without a PMI Open MPI speaks: each task is an MPI singleton of one rank (labelled mpi:
  # Open MPI's own allocations are no leak of ours, and sanitizer runs of mpi tests say so).
  tprimat_cli_test(srun_tasks_mpi_cannot_join LABELS mpi ARGS bench --steps 1 --output-dir srun
    ENV SLURM_NTASKS=2 SLURM_PROCID=0 ${TPRIMAT_MPI_TEST_ENV} EXPECT_RC 2 ABSENT srun
    STDERR_REGEX "^tprimat: srun started 2 ranks, but MPI joined 1 \\(srun without a PMI this MPI speaks\\); srun --mpi=pmix -n 2 tprimat ..., or mpirun -np 2 tprimat ... inside the allocation")
endif()

# `plan --parallel all` (or several models) ends with one table (issue 38 §4): each strategy's
# layout, total and verdict side by side.
tprimat_cli_test(plan_parallel_all_closing_table
  ARGS plan --model llama --parallel all --num-gpus 8 --device H100 --layers full
  STDOUT_REGEX "\nsummary: predicted GiB per GPU of H100's 79.1 GiB\n  model  strategy +layout +total  verdict\n  llama  maximum_performance +TP=4 PP=1 DP=2 GA=32 +34\\.[0-9]+  fits\n.*  llama  minimal_communication +TP=1 PP=1 DP=8 GA=8 +128\\.[0-9]+  does NOT fit\n  llama  balanced +TP=2 PP=1 DP=4 GA=16 +65\\.[0-9]+  fits\n$")
