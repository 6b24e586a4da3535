# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Context parallelism from the command line (issue 35): --cp and the config key, the rules a
# request must meet (exit 2, naming the fix), the plan of NVIDIA's recipe on 8 x H100 in its own
# layout, and a CP run over MPI. Included by cli/CMakeLists.txt.
set(tiny_cp bench --model tiny --steps 1 --warmup-steps 0 --output-dir out)
tprimat_cli_test(cp_seq_not_split ARGS ${tiny_cp} --seq 60 --cp 4 EXPECT_RC 2
  STDERR_REGEX "^tprimat: context parallelism splits each sequence into 2 x CP = 8 chunks \\(Megatron's load-balanced causal split\\), and seq 60 is not a multiple of 8 \\[strategy minimal_communication\\]; pass a --seq that is a multiple of 8, or a smaller --cp")
tprimat_cli_test(cp_needs_its_ranks ARGS ${tiny_cp} --seq 64 --context-parallel-size 2
  EXPECT_RC 2
  STDERR_REGEX "^tprimat: strategy minimal_communication needs a multiple of TP=1 x PP=1 x CP=2 = 2 GPUs for Tiny, this run has 1; launch with mpirun -np 2")
tprimat_cli_test(cp_contradicts_config
  ARGS ${tiny_cp} --seq 64 --parallel ${CMAKE_CURRENT_SOURCE_DIR}/configs/cp2.json --cp 4
  EXPECT_RC 2
  STDERR_REGEX "^tprimat: --cp 4 contradicts strategy cp2, whose context_parallel_size is 2; drop --cp, or change context_parallel_size in the config")
tprimat_cli_test(cp_flag_out_of_range ARGS ${tiny_cp} --seq 64 --cp 0 EXPECT_RC 2
  STDERR_REGEX "^tprimat: .*--cp")
# SP under CP splits this rank's seq / CP rows over TP.
tprimat_cli_test(plan_cp_sequence_parallel_rows
  ARGS plan --model tiny --tp 4 --cp 2 --sequence-parallel --seq 12 --num-gpus 8 EXPECT_RC 2
  STDERR_REGEX "^tprimat: sequence parallelism splits a micro-batch's mbs x seq / CP = 1 x 12 / 2 = 6 token rows over the TP ranks, and TP=4 does not divide them \\[strategy tp4_pp1\\]; pass a --seq \\(or --mbs\\) that TP=4 x CP=2 divides, or drop --sequence-parallel")
# NVIDIA's Llama 3.1 8B recipe (seq 8192, gbs 128, mbs 1, distributed optimizer) on 8 x H100 in
# its own layout, CP 2: 88.2 GiB without CP, 71.9 with it, under the 79.1 GiB of the device.
tprimat_cli_test(plan_nvidia_recipe_h100_cp2_fits
  ARGS plan --device "NVIDIA H100 80GB HBM3" --device-memory 79.1 --layers full --model llama
       --num-gpus 8 --distributed-optimizer --seq 8192 --gbs 128 --cp 2
  STDOUT_REGEX "TP=1 PP=1 CP=2 DP=4 GradAccum=32 ZeRO-1, mbs 1 gbs 128 seq 8192.*activations +15\\.[0-9]+ GiB.*total +71\\.[0-9]+ GiB\n  device +79\\.100 GiB\n  fits")

if(TARGET tprimat::mpi AND MPIEXEC_EXECUTABLE)
  # Two ranks share each sequence: DP 1, two GPUs, one result (tests/mpi proves the steps equal
  # one process's).
  tprimat_cli_test(mpi_bench_cp2 PRODUCES LABELS mpi
    PRE ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${TPRIMAT_MPIRUN_FLAGS}
    ARGS bench --model tiny --cp 2 --steps 3 --seq 64 --output-dir cp
    ENV ${TPRIMAT_MPI_TEST_ENV}
    RESULT cp/benchmark_cpu_tiny.json RESULT_COUNT 1
    STDOUT_REGEX "TP=1 PP=1 CP=2 DP=1 GradAccum=1,"
    JSON_EQUALS parallelism_config.data_parallel_size=1 training_config.num_gpus=2 complete=ON)
endif()
