# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# The seeds' config.yaml read as it is (issue 38 §3): configs/seeds_config.yaml has every section
# of the seeds' file. Its training/benchmarking keys stand for flags (a flag given wins), the
# running platform's platform_optimizations set precision and recomputation, the keys of the
# seeds' Python reports are named as not applied, and what tprimat cannot honour is refused.
# A key given twice is refused in JSON configs too.
tprimat_cli_test(config_json_key_given_twice
  ARGS plan --model llama --parallel ${cli_configs}/duplicate_key.json --device H100 EXPECT_RC 2
  STDERR_REGEX "^tprimat: config file .*duplicate_key.json: key \"tensor_model_parallel_size\" under llama is given twice; give each key once")

if(NOT TARGET tprimat_yaml)  # a build without libyaml refuses YAML, naming the fix
  tprimat_cli_test(seeds_yaml_without_libyaml
    ARGS plan --parallel ${cli_configs}/seeds_config.yaml:balanced --device H100 EXPECT_RC 2
    STDERR_REGEX "is YAML, and this tprimat was built without a YAML reader.*install libyaml-dev")
  return()
endif()

tprimat_cli_test(seeds_yaml_runs_as_it_says PRODUCES
  ARGS bench --model tiny --backend cpu --parallel ${cli_configs}/seeds_config.yaml:one_rank
  STDOUT_REGEX "config .*seeds_config.yaml: not applied: benchmarking.output.filename_format, benchmarking.metrics, benchmarking.runs.cooldown_seconds, comparison, paths, logging, platform_optimizations.nvidia.cuda_alloc_conf \\(they configured the seeds' Python reports"
  RESULT seeds_out/benchmark_cpu_tiny.json
  JSON_EQUALS training_config.micro_batch_size=1 training_config.global_batch_size=8
              training_config.sequence_length=32 training_config.measured_steps=3
              training_config.warmup_steps=1 training_config.seed=7)
tprimat_cli_test(seeds_yaml_flags_win PRODUCES
  ARGS bench --model tiny --backend cpu --parallel ${cli_configs}/seeds_config.yaml:one_rank
       --train-iters 2 --seq 16 --output-dir flags_out
  RESULT flags_out/benchmark_cpu_tiny.json
  JSON_EQUALS training_config.measured_steps=2 training_config.sequence_length=16
              training_config.global_batch_size=8)
tprimat_cli_test(seeds_yaml_nvidia_platform_block
  ARGS plan --model llama --parallel ${cli_configs}/seeds_config.yaml:balanced --device H100
       --num-gpus 8
  STDOUT_REGEX "strategy balanced: TP=2 PP=1 DP=4 GradAccum=2 recompute full uniform 1, mbs 1 gbs 8 seq 32, fp8-hybrid-delayed on H100")
tprimat_cli_test(seeds_yaml_amd_platform_block
  ARGS plan --model llama --parallel ${cli_configs}/seeds_config.yaml:balanced --device MI300X
       --device-memory 190 --num-gpus 8
  STDOUT_REGEX "strategy balanced: TP=1 PP=1 DP=8 GradAccum=1, mbs 1 gbs 8 seq 32, bf16 on MI300X")
tprimat_cli_test(seeds_yaml_needs_a_strategy_name
  ARGS plan --model llama --parallel ${cli_configs}/seeds_config.yaml --device H100 EXPECT_RC 2
  STDERR_REGEX "holds several strategies \\(balanced, one_rank\\); pick one with --parallel .*seeds_config.yaml:balanced")
tprimat_cli_test(seeds_yaml_misspelled_key
  ARGS plan --parallel ${cli_configs}/seeds_misspelled.yaml --device H100 EXPECT_RC 2
  STDERR_REGEX "^tprimat: config .*seeds_misspelled.yaml: training.data.micro_batch_sise is not a key tprimat reads \\(did you mean micro_batch_size\\?\\); write \"micro_batch_size\"\n$")
tprimat_cli_test(seeds_yaml_fp8_param_refused
  ARGS plan --model llama --parallel ${cli_configs}/seeds_fp8_param.yaml --device H100 EXPECT_RC 2
  STDERR_REGEX "^tprimat: config .*: platform_optimizations.nvidia.fp8_param is true \\(weights kept in FP8\\), and tprimat keeps bf16 weights")
tprimat_cli_test(seeds_yaml_other_model_shape
  ARGS plan --model llama --parallel ${cli_configs}/seeds_wrong_model.yaml --device H100 EXPECT_RC 2
  STDERR_REGEX "models.llama.num_layers is 30; tprimat's llama \\(Llama 3.1 8B\\) has 32")
tprimat_cli_test(yaml_key_given_twice
  ARGS plan --parallel ${cli_configs}/duplicate_key.yaml --device H100 EXPECT_RC 2
  STDERR_REGEX "^tprimat: config file .*duplicate_key.yaml: key \"tensor_model_parallel_size\" is given twice at line 3, column 1")
tprimat_cli_test(yaml_alias_refused
  ARGS plan --parallel ${cli_configs}/alias.yaml --device H100 EXPECT_RC 2
  STDERR_REGEX "an alias \\(\\*base\\) at line 3, column 8; write the value out")
