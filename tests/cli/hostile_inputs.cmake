# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Hostile inputs at every reader (included by cli/CMakeLists.txt): JSON nested 100,000 levels
# deep where each reader looks, a FIFO, /dev/zero and a directory where a file is expected. Each
# is refused with exit 2 and one line naming the path (core/input_file.hpp: regular files only,
# opened without blocking, size-capped; core/json_input.hpp: 64 levels at most). None may crash,
# hang (the 60 s timeout fails it) or read without bound. The deep files are written at test time
# by tprimat_hostile_input.
add_executable(tprimat_hostile_input hostile_input.cpp)
set(input_work ${CMAKE_CURRENT_BINARY_DIR}/hostile)  # apart from cli_work, which the schema reads
set(hostile $<TARGET_FILE:tprimat_hostile_input>)
set(deep 100000)
set(too_deep "nests arrays and objects deeper than the 64 levels tprimat reads")
set(small_jsonl ${PROJECT_SOURCE_DIR}/tests/data/inputs/small.jsonl)

# tprimat_input_test(NAME ...): the keywords of tests/cmake/run_tprimat.cmake.
function(tprimat_input_test name)
  cmake_parse_arguments(T "${TPRIMAT_RUN_FLAGS}" "${TPRIMAT_RUN_ONE}" "${TPRIMAT_RUN_MANY}"
                        ${ARGN})
  tprimat_add_run_test(cli.input_${name} ${input_work}/${name})
  set_tests_properties(cli.input_${name} PROPERTIES LABELS cli TIMEOUT 60)
endfunction()

set(bench bench --model tiny --steps 1 --warmup-steps 0)

# ---- --parallel config --------------------------------------------------------------------------
tprimat_input_test(parallel_deep SETUP "${hostile}|config|${deep}|deep.json"
  ARGS ${bench} --parallel deep.json EXPECT_RC 2
  STDERR_REGEX "^tprimat: config file deep.json: ${too_deep} \\(line 1, column 146\\); ")
tprimat_input_test(parallel_deep_objects SETUP "${hostile}|object|${deep}|deep.json"
  ARGS ${bench} --parallel deep.json EXPECT_RC 2
  STDERR_REGEX "^tprimat: config file deep.json: ${too_deep} \\(column 321\\); ")
tprimat_input_test(parallel_fifo SETUP "mkfifo|cfg.json" ARGS ${bench} --parallel cfg.json
  EXPECT_RC 2
  STDERR_REGEX "^tprimat: cfg.json: is a FIFO \\(named pipe\\), not a config file; pass an existing JSON or YAML file, or a strategy name")
tprimat_input_test(parallel_dev_zero ARGS ${bench} --parallel /dev/zero EXPECT_RC 2
  STDERR_REGEX "^tprimat: /dev/zero: is a character device, not a config file; ")
tprimat_input_test(parallel_directory SETUP "${CMAKE_COMMAND}|-E|make_directory|cfg"
  ARGS ${bench} --parallel cfg/ EXPECT_RC 2
  STDERR_REGEX "^tprimat: --parallel cfg/ is a directory, not a config file. pass a config .json or .yaml file, a strategy name, or all\n$")
tprimat_input_test(plan_parallel_fifo SETUP "mkfifo|cfg.json" ARGS plan --parallel cfg.json
  EXPECT_RC 2 STDERR_REGEX "^tprimat: cfg.json: is a FIFO \\(named pipe\\), not a config file")

# ---- the result a run would replace in --output-dir --------------------------------------------
set(result out/benchmark_cpu_tiny.json)
tprimat_input_test(existing_result_deep
  SETUP "${CMAKE_COMMAND}|-E|make_directory|out" "${hostile}|result|${deep}|${result}"
  ARGS ${bench} --output-dir out EXPECT_RC 2 RESULT_COUNT 1
  STDERR_REGEX "^tprimat: ${result} holds the result of another configuration \\(not a tprimat result: ${too_deep} \\(line 1, column 77\\)\\); refused to overwrite it, nothing ran"
  FILE_REGEX "${result}=^\\{\"platform\": \\[\\[\\[")
tprimat_input_test(existing_result_deep_overwritten
  SETUP "${CMAKE_COMMAND}|-E|make_directory|out" "${hostile}|result|${deep}|${result}"
  ARGS ${bench} --output-dir out --overwrite RESULT ${result} JSON_EQUALS model.cli_name=tiny
  STDOUT_REGEX "replaced a result of another configuration \\(--overwrite\\): not a tprimat result: ${too_deep}")
foreach(overwrite "" --overwrite)
  string(REPLACE "--" "_" suffix "${overwrite}")
  tprimat_input_test(existing_result_directory${suffix}
    SETUP "${CMAKE_COMMAND}|-E|make_directory|${result}"
    ARGS ${bench} --output-dir out ${overwrite} EXPECT_RC 2
    STDERR_REGEX "^tprimat: ${result} is a directory, where the run writes its result; nothing ran; remove it, or pass another --output-dir\n$")
  tprimat_input_test(existing_result_fifo${suffix}
    SETUP "${CMAKE_COMMAND}|-E|make_directory|out" "mkfifo|${result}"
    ARGS ${bench} --output-dir out ${overwrite} EXPECT_RC 2 RESULT_COUNT 1
    STDERR_REGEX "^tprimat: ${result} is a FIFO \\(named pipe\\), where the run writes its result; nothing ran")
  tprimat_input_test(existing_result_dev_zero${suffix}
    SETUP "${CMAKE_COMMAND}|-E|make_directory|out" "${CMAKE_COMMAND}|-E|create_symlink|/dev/zero|${result}"
    ARGS ${bench} --output-dir out ${overwrite} EXPECT_RC 2 RESULT_COUNT 1
    STDERR_REGEX "^tprimat: ${result} is a character device, where the run writes its result; nothing ran")
endforeach()

# ---- safetensors: a header's "shape", an index, --init -----------------------------------------
tprimat_input_test(safetensors_deep_shape SETUP "${hostile}|safetensors|${deep}|deep.safetensors"
  ARGS data inspect-weights deep.safetensors EXPECT_RC 2
  STDERR_REGEX "^tprimat: deep.safetensors: the header ${too_deep} \\(column 91\\); re-download")
tprimat_input_test(init_deep_shape SETUP "${hostile}|safetensors|${deep}|deep.safetensors"
  ARGS ${bench} --init deep.safetensors EXPECT_RC 2
  STDERR_REGEX "^tprimat: deep.safetensors: the header ${too_deep}")
tprimat_input_test(safetensors_deep_index
  SETUP "${hostile}|index|${deep}|model.safetensors.index.json"
  ARGS data inspect-weights model.safetensors.index.json EXPECT_RC 2
  STDERR_REGEX "^tprimat: model.safetensors.index.json: ${too_deep} \\(line 1, column 331\\)")
tprimat_input_test(safetensors_fifo SETUP "mkfifo|w.safetensors"
  ARGS data inspect-weights w.safetensors EXPECT_RC 2
  STDERR_REGEX "^tprimat: w.safetensors: is a FIFO \\(named pipe\\), not a safetensors file; ")
tprimat_input_test(safetensors_index_fifo
  SETUP "${CMAKE_COMMAND}|-E|make_directory|ckpt" "mkfifo|ckpt/model.safetensors.index.json"
  ARGS ${bench} --init ckpt EXPECT_RC 2
  STDERR_REGEX "^tprimat: ckpt/model.safetensors.index.json: is a FIFO \\(named pipe\\), not a safetensors index; ")
tprimat_input_test(init_dev_zero ARGS ${bench} --init /dev/zero EXPECT_RC 2
  STDERR_REGEX "^tprimat: /dev/zero: is a character device, not a safetensors file; ")
tprimat_input_test(safetensors_index_directory
  SETUP "${CMAKE_COMMAND}|-E|make_directory|ckpt/model.safetensors.index.json"
  ARGS data inspect-weights ckpt EXPECT_RC 2
  STDERR_REGEX "^tprimat: ckpt/model.safetensors.index.json: is a directory, not a safetensors index; ")

# ---- Megatron .bin/.idx: mapped, but opened as every input is ----------------------------------
tprimat_input_test(data_bin_fifo
  SETUP "tprimat|data|write|--input|${small_jsonl}|--output|ds" "${CMAKE_COMMAND}|-E|rm|ds.bin"
        "mkfifo|ds.bin"
  ARGS data inspect ds EXPECT_RC 2
  STDERR_REGEX "^tprimat: ds.bin: is a FIFO \\(named pipe\\), not a Megatron data file; pass the prefix of a .bin/.idx pair")
tprimat_input_test(data_idx_dev_zero
  SETUP "tprimat|data|write|--input|${small_jsonl}|--output|ds" "${CMAKE_COMMAND}|-E|rm|ds.idx"
        "${CMAKE_COMMAND}|-E|create_symlink|/dev/zero|ds.idx"
  ARGS ${bench} --data ds EXPECT_RC 2
  STDERR_REGEX "^tprimat: ds.idx: is a character device, not a Megatron data file")

# ---- data write --input / --text -----------------------------------------------------------------
tprimat_input_test(data_write_deep SETUP "${hostile}|jsonl|${deep}|deep.jsonl"
  ARGS data write --input deep.jsonl --output ds EXPECT_RC 2 ABSENT ds.bin|ds.idx
  STDERR_REGEX "^tprimat: deep.jsonl line 2: ${too_deep} \\(column 72\\); ")
foreach(flag input text)
  tprimat_input_test(data_write_${flag}_fifo SETUP "mkfifo|in.txt"
    ARGS data write --${flag} in.txt --output ds EXPECT_RC 2 ABSENT ds.bin|ds.idx
    STDERR_REGEX "^tprimat: in.txt: is a FIFO \\(named pipe\\), not a [A-Za-z]+ file; ")
  tprimat_input_test(data_write_${flag}_dev_zero ARGS data write --${flag} /dev/zero --output ds
    EXPECT_RC 2 ABSENT ds.bin|ds.idx
    STDERR_REGEX "^tprimat: /dev/zero: is a character device, not a [A-Za-z]+ file; ")
  tprimat_input_test(data_write_${flag}_directory SETUP "${CMAKE_COMMAND}|-E|make_directory|in"
    ARGS data write --${flag} in --output ds EXPECT_RC 2 ABSENT ds.bin|ds.idx
    STDERR_REGEX "^tprimat: in: is a directory, not a [A-Za-z]+ file; ")
endforeach()

# ---- profile-summary ---------------------------------------------------------------------------
tprimat_input_test(trace_deep_args SETUP "${hostile}|trace|${deep}|deep.json"
  ARGS profile-summary deep.json EXPECT_RC 2
  STDERR_REGEX "^tprimat: trace deep.json: ${too_deep} \\(line 1, column 395\\); ")
tprimat_input_test(trace_fifo SETUP "mkfifo|t.json" ARGS profile-summary t.json EXPECT_RC 2
  STDERR_REGEX "^tprimat: t.json: is a FIFO \\(named pipe\\), not a trace; pass a Chrome trace")
tprimat_input_test(trace_dev_zero ARGS profile-summary /dev/zero EXPECT_RC 2
  STDERR_REGEX "^tprimat: /dev/zero: is a character device, not a trace; ")
tprimat_input_test(trace_directory SETUP "${CMAKE_COMMAND}|-E|make_directory|t.json"
  ARGS profile-summary t.json EXPECT_RC 2
  STDERR_REGEX "^tprimat: t.json: is a directory, not a trace; ")

# ---- compare and peak read results; import reads logs -------------------------------------------
foreach(command compare peak)
  set(verb ${command})
  if(command STREQUAL "peak")
    set(verb analyse)
  endif()
  tprimat_input_test(${command}_deep SETUP "${hostile}|result|${deep}|r.json"
    ARGS ${command} r.json --output-dir rep EXPECT_RC 2
    STDERR_REGEX "^tprimat: no usable result to ${verb}: r.json: ${too_deep} \\(line 1, column 77\\) \\(skipped\\)\n$")
  tprimat_input_test(${command}_fifo SETUP "mkfifo|r.json"
    ARGS ${command} r.json --output-dir rep EXPECT_RC 2
    STDERR_REGEX "^tprimat: no usable result to ${verb}: r.json: is a FIFO \\(named pipe\\), not a result file \\(skipped\\)\n$")
  tprimat_input_test(${command}_dev_zero ARGS ${command} /dev/zero --output-dir rep EXPECT_RC 2
    STDERR_REGEX "^tprimat: no usable result to ${verb}: /dev/zero: is a character device, not a result file \\(skipped\\)\n$")
endforeach()
set(import import --format megatron --model llama)
tprimat_input_test(import_fifo SETUP "mkfifo|train.log" ARGS ${import} train.log EXPECT_RC 2
  STDERR_REGEX "^tprimat: nothing imported: train.log: is a FIFO \\(named pipe\\), not a log; ")
tprimat_input_test(import_dev_zero ARGS ${import} /dev/zero EXPECT_RC 2
  STDERR_REGEX "^tprimat: nothing imported: /dev/zero: is a character device, not a log; ")
tprimat_input_test(import_directory SETUP "${CMAKE_COMMAND}|-E|make_directory|logs"
  ARGS ${import} logs EXPECT_RC 2
  STDERR_REGEX "^tprimat: nothing imported: logs is a directory with no \\*.log file in it. pass the training logs, or a directory that holds them as \\*.log\n$")
