# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Writes result files under hostile/ whose every label (model, platform, device, strategy, file
# and folder names) tries to make gnuplot run a command: `cmake -P` in the test's directory.
# Each payload would create a file named PWNED* in gnuplot's working directory (the report's
# --output-dir) or the test's; the tests assert that none appears and the figures still render.
cmake_minimum_required(VERSION 3.25)

# Text as a JSON string literal: backslash, double quote and control characters escaped.
function(json_string out text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  string(REPLACE "\n" "\\n" text "${text}")
  string(REPLACE "\r" "\\r" text "${text}")
  string(REPLACE "\t" "\\t" text "${text}")
  set(${out} "\"${text}\"" PARENT_SCOPE)
endfunction()

# hostile_result(DIR FILE PLATFORM MODEL DEVICE STRATEGY TOKENS_PER_GPU)
function(hostile_result dir file platform model device strategy per_gpu)
  foreach(v platform model device strategy)
    json_string(${v} "${${v}}")
  endforeach()
  if(model STREQUAL "\"\"")
    set(model_json "")  # no model: the reader takes it from the file name
  else()
    set(model_json "\"model\": {\"cli_name\": ${model}},\n")
  endif()
  math(EXPR total "${per_gpu} * 8")
  # mkdir and mv, not file(): CMake would turn a backslash in a path into a separator.
  execute_process(COMMAND mkdir -p -- "${dir}" COMMAND_ERROR_IS_FATAL ANY)
  file(WRITE "hostile.json.tmp" "{\n\"platform\": ${platform},\n${model_json}\
\"gpu_info\": {\"device_name\": ${device}, \"device_count\": 8, \"software_stack\": \"cuda\"},\n\
\"parallelism_config\": {\"strategy_name\": ${strategy}},\n\
\"training_config\": {\"global_batch_size\": 64, \"sequence_length\": 2048, \"num_gpus\": 8},\n\
\"performance_metrics\": {\"tokens_per_second\": ${total}, \"tokens_per_second_per_gpu\": ${per_gpu},\n\
  \"avg_step_time_seconds\": 2.5, \"flops_per_token_palm\": 4.8e10},\n\
\"memory_metrics\": {\"peak_allocated_gb\": 60.5},\n\
\"raw_step_times\": [2.4, 2.5, 2.6],\n\
\"raw_loss_values\": [11.0, 10.5, 10.1],\n\
\"raw_learning_rates\": [1e-5, 2e-5, 3e-5],\n\
\"raw_memory_values\": [60.1, 60.3, 60.5]\n}\n")
  execute_process(COMMAND mv -- hostile.json.tmp "${dir}/${file}" COMMAND_ERROR_IS_FATAL ANY)
endfunction()

# Folder names: a newline, both quotes, a backslash, a backtick command, a macro, non-ASCII.
set(dir_a "hostile/runs `touch PWNED_DIR` @fmt \"dq\" 'sq' back\\slash\nsecond line ü")
set(dir_b "hostile/system(\"touch PWNED_DIR2\") @bar_value µ")
hostile_result("${dir_a}" "benchmark_cuda_llama.json" "nvd" "`touch PWNED_MODEL`"
               "NVIDIA H100 `touch PWNED_DEVICE` \"dq\" 'sq' back\\slash @fmt é"
               "system(\"touch PWNED_STRATEGY\")" 5000)
# Breaking out of a double- or single-quoted gnuplot string, and a trailing backslash.
hostile_result("${dir_a}" "benchmark_rocm_llama.json" "amd" "x\" . system(\"touch PWNED_DQ\") . \""
               "AMD Instinct MI300X ' . system('touch PWNED_SQ') . '"
               "line1\nline2 `touch PWNED_NEWLINE`\\" 4000)
hostile_result("${dir_b}" "benchmark_cuda_qwen.json" "@fmt `touch PWNED_PLATFORM`" "qwen\\"
               "NaN" "@x @fmt ü" 3000)
# No model field: the model comes from the file name (after its last underscore), a command.
hostile_result("${dir_b}" "benchmark_cuda_`touch PWNEDFILE`.json" "nvd" "" "NVIDIA H200"
               "'single' \"double\"" 2000)
# The same names once more without a newline (a command line cannot pass one): for positional
# and --results-dir arguments.
set(dir_c "hostile/arg `touch PWNED_ARG` @fmt \"dq\" 'sq' back\\slash ü")
hostile_result("${dir_c}" "benchmark_cuda_mistral.json" "nvd" "mistral" "NVIDIA H100 80GB HBM3"
               "`touch PWNED_C`" 4500)
# A broken file in the folder whose name holds a newline: its one line on stderr stays one line.
file(WRITE "hostile.json.tmp" "{\"platform\": ")
execute_process(COMMAND mv -- hostile.json.tmp "${dir_a}/benchmark_cuda_broken.json"
                COMMAND_ERROR_IS_FATAL ANY)
