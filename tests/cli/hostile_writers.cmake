# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Hostile inputs, round 2 (issue 38 §5), included by cli/CMakeLists.txt: what a run writes, the
# waits it makes, the flags and config keys it could take silently. Every writer creates new
# files only (core/output_file.hpp): a link, FIFO, device or directory planted at a name it writes
# is refused, never followed or replaced, and nothing the run reads is overwritten. Links and FIFOs
# are planted in each test's own directory, never in /dev.
set(writer_work ${CMAKE_CURRENT_BINARY_DIR}/hostile-writers)
set(report_fixtures ${PROJECT_SOURCE_DIR}/tests/report/fixtures)
set(tiny bench --model tiny --seq 32 --steps 1 --warmup-steps 0)
set(mkdir_out "${CMAKE_COMMAND}|-E|make_directory|out")
string(JOIN "|" tiny_setup tprimat ${tiny} --output-dir out)  # the same run, as a SETUP step
set(with_empty ${CMAKE_CURRENT_SOURCE_DIR}/with_empty_arg.py)
set(with_latin1 ${CMAKE_CURRENT_SOURCE_DIR}/with_latin1_arg.py)

# tprimat_writer_test(NAME ...): the keywords of tests/cmake/run_tprimat.cmake.
function(tprimat_writer_test name)
  cmake_parse_arguments(T "${TPRIMAT_RUN_FLAGS}" "${TPRIMAT_RUN_ONE}" "${TPRIMAT_RUN_MANY}"
                        ${ARGN})
  tprimat_add_run_test(cli.writer_${name} ${writer_work}/${name})
  set_tests_properties(cli.writer_${name} PROPERTIES LABELS cli TIMEOUT 60)
endfunction()

# A file outside the output directory that a planted link points to: it must stay as it was.
set(plant_victim "${CMAKE_COMMAND}|-E|copy|${CMAKE_CURRENT_SOURCE_DIR}/configs/tp1.json|victim")
set(victim_kept "victim=^\\{\"tensor_model_parallel_size\": 1\\}\n$")

# ---- --save: never through a link, never a device or FIFO, never an input ------------------------
# As root, `--save /dev/null` replaced the system's /dev/null; here a link to it stands in.
tprimat_writer_test(save_link_to_dev_null SETUP "${CMAKE_COMMAND}|-E|create_symlink|/dev/null|null"
  ARGS ${tiny} --output-dir out --save null EXPECT_RC 2
  STDERR_REGEX "^tprimat: --save null is a symbolic link; tprimat writes no file through a link, nothing was written to it; save the weights")
tprimat_writer_test(save_fifo SETUP "mkfifo|w.safetensors"
  ARGS ${tiny} --output-dir out --save w.safetensors EXPECT_RC 2
  STDERR_REGEX "^tprimat: --save w.safetensors is a FIFO \\(named pipe\\); tprimat writes regular files only")
tprimat_writer_test(save_onto_config SETUP "${CMAKE_COMMAND}|-E|copy|${CMAKE_CURRENT_SOURCE_DIR}/configs/tp1.json|cfg.json"
  ARGS ${tiny} --output-dir out --parallel cfg.json --save cfg.json EXPECT_RC 2
  STDERR_REGEX "^tprimat: --save cfg.json is a file this run reads; writing it would destroy the input"
  FILE_REGEX "cfg.json=^\\{\"tensor_model_parallel_size\": 1\\}\n$")
tprimat_writer_test(save_onto_data
  SETUP "tprimat|data|write|--input|${PROJECT_SOURCE_DIR}/tests/data/inputs/small.jsonl|--output|ds"
  ARGS ${tiny} --output-dir out --data ds --save ds.bin EXPECT_RC 2
  STDERR_REGEX "^tprimat: --save ds.bin is a file this run reads"
  MIN_BYTES ds.bin=1)
# Found before the run, not after it (the run was then marked failed although its result was good).
# /proc takes no new file, even from root.
tprimat_writer_test(save_unwritable_before_run ARGS ${tiny} --output-dir out --save /proc/w.safetensors
  EXPECT_RC 2 ABSENT out/training_tiny.log
  STDERR_REGEX "^tprimat: --save cannot create a file in /proc to write /proc/w.safetensors")

# ---- the result, the log, the lock -----------------------------------------------------------------
tprimat_writer_test(result_link SETUP ${mkdir_out} ${plant_victim}
  "${CMAKE_COMMAND}|-E|create_symlink|../victim|out/benchmark_cpu_tiny.json"
  ARGS ${tiny} --output-dir out EXPECT_RC 2 RESULT_COUNT 1  # the link itself
  STDERR_REGEX "^tprimat: out/benchmark_cpu_tiny.json is a symbolic link, where the run writes its result; tprimat writes no file through a link; nothing ran"
  FILE_REGEX ${victim_kept})
# The live log and the log: a link planted at either is left alone, the run goes on (its result
# is written) and says it writes no log there.
tprimat_writer_test(live_log_link SETUP ${mkdir_out} ${plant_victim}
  "${CMAKE_COMMAND}|-E|create_symlink|../victim|out/training_tiny.log.partial"
  ARGS ${tiny} --output-dir out RESULT out/benchmark_cpu_tiny.json JSON_EQUALS complete=ON
  STDERR_REGEX "tprimat: no log is written: out/training_tiny.log.partial is a symbolic link"
  FILE_REGEX ${victim_kept})
# A .partial log that is a directory: warned, not lost in silence.
tprimat_writer_test(live_log_directory SETUP "${CMAKE_COMMAND}|-E|make_directory|out/training_tiny.log.partial"
  ARGS ${tiny} --output-dir out RESULT out/benchmark_cpu_tiny.json JSON_EQUALS complete=ON
  STDERR_REGEX "tprimat: no log is written: out/training_tiny.log.partial is a directory; tprimat writes regular files only")
tprimat_writer_test(log_link SETUP ${mkdir_out} ${plant_victim}
  "${CMAKE_COMMAND}|-E|create_symlink|../victim|out/training_tiny.log"
  ARGS ${tiny} --output-dir out RESULT out/benchmark_cpu_tiny.json JSON_EQUALS complete=ON
  STDERR_REGEX "out/training_tiny.log is a symbolic link; tprimat writes no file through a link.*\\(the log stays at out/training_tiny.log.partial\\)"
  FILE_REGEX ${victim_kept} "out/training_tiny.log.partial=step 1/1")
# A hard link planted at the lock's name: the lock was opened and truncated, and with it the
# previous result.
tprimat_writer_test(lock_hard_link
  SETUP "${tiny_setup}" "ln|out/benchmark_cpu_tiny.json|out/.benchmark_cpu_tiny.json.lock"
  ARGS ${tiny} --output-dir out EXPECT_RC 2 RESULT_COUNT 1
  STDERR_REGEX "^tprimat: the lock file out/.benchmark_cpu_tiny.json.lock is a hard link to another file; nothing ran"
  RESULT out/benchmark_cpu_tiny.json JSON_EQUALS complete=ON)

# ---- import: its lock, its folders --------------------------------------------------------------
set(import_llama import --format megatron --model llama --num-gpus 8 --sequence-length 2048)
set(megatron_log ${report_fixtures}/logs/megatron_llama.log)
# Several logs: one folder each, named after the log; "...log" made OUT/.. before.
tprimat_writer_test(import_dot_dot_log
  SETUP "${CMAKE_COMMAND}|-E|copy|${megatron_log}|...log"
        "${CMAKE_COMMAND}|-E|copy|${megatron_log}|b.log"
  ARGS ${import_llama} ...log b.log --output-dir out/sub RESULT_COUNT 2
  EXISTS out/sub/log/benchmark_cuda_llama.json out/sub/b/benchmark_cuda_llama.json
  ABSENT out/benchmark_cuda_llama.json)
# import holds the output lock as bench does: while another holds it (flock(1) here, as a bench
# run would), import refuses instead of writing under it.
tprimat_writer_test(import_takes_the_lock SETUP ${mkdir_out}
  PRE "flock|out/.benchmark_cuda_llama.json.lock"
  ARGS ${import_llama} ${megatron_log} --output-dir out EXPECT_RC 2
  STDERR_REGEX "^tprimat: out/benchmark_cuda_llama.json is being written by another tprimat run")
# CR line ends (a log copied from Windows, or a console's redraws): read as line ends.
tprimat_writer_test(import_cr_line_ends
  SETUP "python3|-c|open('cr.log','wb').write(open('${megatron_log}','rb').read().replace(b'\\n',b'\\r'))"
  ARGS ${import_llama} cr.log --output-dir out
  RESULT out/benchmark_cuda_llama.json JSON_EQUALS imported.iterations_found=4)

# ---- data write ------------------------------------------------------------------------------------
set(small ${PROJECT_SOURCE_DIR}/tests/data/inputs/small.jsonl)
# A prefix that names no file wrote the hidden out/.bin and out/.idx.
tprimat_writer_test(data_write_directory_prefix SETUP ${mkdir_out}
  ARGS data write --input ${small} --output out/ EXPECT_RC 2 ABSENT out/.bin out/.idx
  STDERR_REGEX "^tprimat: --output 'out/' names no file prefix .it would write the hidden files out/.bin and out/.idx.; pass a prefix that ends in a file name, e.g. --output data/my_set .writes data/my_set.bin and data/my_set.idx.\n$")
tprimat_writer_test(data_write_empty_prefix PRE "${with_empty}|--output"
  ARGS data write --input ${small} EXPECT_RC 2 ABSENT .bin .idx
  STDERR_REGEX "^tprimat: --output is given an empty value")
tprimat_writer_test(data_write_link SETUP ${plant_victim} "${CMAKE_COMMAND}|-E|create_symlink|victim|ds.idx"
  ARGS data write --input ${small} --output ds EXPECT_RC 2 ABSENT ds.bin
  STDERR_REGEX "^tprimat: ds.idx is a symbolic link. tprimat writes no file through a link, nothing was written to it. pass another --output prefix\n$"
  FILE_REGEX ${victim_kept})
tprimat_writer_test(data_write_onto_input SETUP "tprimat|data|write|--input|${small}|--output|ds"
  ARGS data write --text ds.bin --output ds EXPECT_RC 2
  STDERR_REGEX "^tprimat: ds.bin is a file this run reads")
# A float32 token id out of range names the range float32 holds exactly: +-2^24.
tprimat_writer_test(data_write_float32_range
  SETUP "python3|-c|open('big.jsonl','w').write('{\"ids\": [16777217]}\\n')"
  ARGS data write --input big.jsonl --output ds --dtype float32 EXPECT_RC 2
  STDERR_REGEX "does not fit dtype float32 \\(-16777216 to 16777216\\)")

# ---- plots: gnuplot.log and the figures, the waits -------------------------------------------------
set(compare_seeds compare --results-dir seeds --output-dir out)
tprimat_writer_test(gnuplot_log_link FIXTURES ${report_fixtures}
  SETUP ${mkdir_out} ${plant_victim} "${CMAKE_COMMAND}|-E|create_symlink|../victim|out/gnuplot.log"
  ENV TPRIMAT_GNUPLOT=${CMAKE_CURRENT_SOURCE_DIR}/gnuplot_exits_at_once.sh
  ARGS ${compare_seeds}
  STDOUT_REGEX "tprimat: no compare.png drawn: out/gnuplot.log is a symbolic link"
  FILE_REGEX ${victim_kept})
tprimat_writer_test(figure_fifo FIXTURES ${report_fixtures} SETUP ${mkdir_out} "mkfifo|out/compare.png"
  ENV TPRIMAT_GNUPLOT=${CMAKE_CURRENT_SOURCE_DIR}/gnuplot_exits_at_once.sh
  ARGS ${compare_seeds}
  STDOUT_REGEX "tprimat: no compare.png drawn: out/compare.png is a FIFO")
# A FIFO, link or directory at a report's own name is refused before any report is written (exit
# 2): never the Markdown report written and then exit 1 at the CSV.
tprimat_writer_test(compare_csv_fifo FIXTURES ${report_fixtures} SETUP ${mkdir_out} "mkfifo|out/compare.csv"
  ARGS ${compare_seeds} --csv EXPECT_RC 2 ABSENT out/comparison_report.md
  STDERR_REGEX "^tprimat: out/compare.csv is a FIFO [(]named pipe[)]; tprimat writes regular files only, nothing was written to it; remove it, or pass another --output-dir\n$")
tprimat_writer_test(peak_report_link FIXTURES ${report_fixtures} SETUP ${mkdir_out} ${plant_victim}
  "${CMAKE_COMMAND}|-E|create_symlink|../victim|out/peak_throughput_analysis.txt"
  ARGS peak seeds --output-dir out EXPECT_RC 2 FILE_REGEX ${victim_kept}
  STDERR_REGEX "^tprimat: out/peak_throughput_analysis.txt is a symbolic link")
# A gnuplot that never exits is stopped after TPRIMAT_GNUPLOT_TIMEOUT seconds, and said.
tprimat_writer_test(gnuplot_never_exits FIXTURES ${report_fixtures}
  ENV TPRIMAT_GNUPLOT=${CMAKE_CURRENT_SOURCE_DIR}/gnuplot_never_exits.sh TPRIMAT_GNUPLOT_TIMEOUT=1
  ARGS ${compare_seeds}
  STDOUT_REGEX "tprimat: gnuplot did not finish out/compare.png in 1 s and was stopped; its script and data are in out/compare.gp")
# SIGCHLD ignored: waitpid answered ECHILD forever after the plot was drawn.
tprimat_writer_test(compare_sigchld_ignored FIXTURES ${report_fixtures}
  ENV TPRIMAT_GNUPLOT=${CMAKE_CURRENT_SOURCE_DIR}/gnuplot_exits_at_once.sh
  PRE "${CMAKE_CURRENT_SOURCE_DIR}/with_sigchld_ignored.py"
  ARGS ${compare_seeds}
  STDOUT_REGEX "wrote out/compare.png\nwrote out/compare.svg\n$")
set_tests_properties(cli.writer_gnuplot_never_exits cli.writer_compare_sigchld_ignored
  PROPERTIES TIMEOUT 30)

# ---- inputs taken silently: flags twice, empty values, config keys ---------------------------------
# A switch given twice was taken; a value given twice CLI11 refuses itself (the same words).
tprimat_writer_test(flag_twice ARGS ${tiny} --distributed-optimizer --distributed-optimizer
  EXPECT_RC 2 STDERR_REGEX "^tprimat: --distributed-optimizer was given 2 times; pass it once: tprimat does not pick one of several values\n$")
tprimat_writer_test(plan_flag_twice ARGS plan --model tiny --sequence-parallel --sequence-parallel
  EXPECT_RC 2 STDERR_REGEX "^tprimat: --sequence-parallel was given 2 times")
foreach(flag precision pipeline-split save output-dir)
  tprimat_writer_test(empty_${flag} PRE "${with_empty}|--${flag}" ARGS ${tiny} EXPECT_RC 2
    STDERR_REGEX "^tprimat: --${flag} is given an empty value \\(''\\); give --${flag} a value, or leave the flag out for its default\n$")
endforeach()
# A value that is not UTF-8 cannot be recorded in a JSON result: refused before anything runs,
# not a library's exception after the run (exit 1, the measured steps lost).
foreach(flag data output-dir)
  tprimat_writer_test(latin1_${flag} PRE "${with_latin1}|--${flag}" ARGS ${tiny} EXPECT_RC 2
    STDERR_REGEX "^tprimat: --${flag} 'caf[?]' holds bytes that are not UTF-8 [(]shown as [?][)], which a result cannot record; write it in UTF-8 [(]rename a file or directory that has such a name[)]\n$")
endforeach()
tprimat_writer_test(latin1_import_device_name PRE "${with_latin1}|--device-name"
  ARGS import --format megatron ${CMAKE_SOURCE_DIR}/tests/report/fixtures/logs/megatron_llama.log --model llama
  EXPECT_RC 2 STDERR_REGEX "^tprimat: --device-name 'caf[?]' holds bytes that are not UTF-8")
tprimat_writer_test(config_misspelled_key
  SETUP "python3|-c|open('cfg.json','w').write('{\"tensor_model_parallel_size\": 1, \"pipline_model_parallel_size\": 2}')"
  ARGS plan --model tiny --parallel cfg.json EXPECT_RC 2
  STDERR_REGEX "^tprimat: config cfg.json: pipline_model_parallel_size is not a key tprimat reads \\(did you mean pipeline_model_parallel_size\\?\\)")
tprimat_writer_test(config_fp8_in_strategy
  SETUP "python3|-c|open('cfg.json','w').write('{\"parallelism\": {\"x\": {\"tensor_model_parallel_size\": 1, \"fp8\": \"hybrid\"}}}')"
  ARGS ${tiny} --parallel cfg.json EXPECT_RC 2
  STDERR_REGEX "^tprimat: config cfg.json: parallelism.x.fp8 is a precision key inside a strategy block")

# ---- names from a trace reach the terminal escaped ------------------------------------------------
foreach(markdown "" --markdown)
  string(MAKE_C_IDENTIFIER "profile_names${markdown}" id)
  tprimat_writer_test(${id} ARGS profile-summary ${CMAKE_CURRENT_SOURCE_DIR}/hostile_kernel_names.json ${markdown}
    STDOUT_REGEX "gemm\\\\n# injected heading\\\\x1b\\[2J\\\\x1b\\]0.title\\\\x07")
endforeach()

# ---- messages that named the wrong problem --------------------------------------------------------
# An uneven split whose busiest stage does not fit, where the stages on average would: the split
# is the problem, not the layers or the batch.
tprimat_writer_test(plan_uneven_split_does_not_fit
  ARGS plan --model llama --pp 2 --decoder-first-pipeline-num-layers 30 --layers full --seq 2048
       --device "NVIDIA H100 80GB HBM3" --device-memory 79.1
  STDOUT_REGEX "does NOT fit: stage 1 of 2 runs 30 of the layers \\(split 30\\+2\\) and needs 120.4[0-9] GiB, though the stages average less than the device holds: split the layers more evenly")
# A data prefix with a space is a path, not a blend whose first weight is "sp".
tprimat_writer_test(data_prefix_with_space
  SETUP "${CMAKE_COMMAND}|-E|make_directory|sp ace"
        "tprimat|data|write|--input|${small}|--output|sp ace/ds"
  ARGS ${tiny} --output-dir out --data "sp ace/ds"
  RESULT out/benchmark_cpu_tiny.json JSON_EQUALS "training_config.data=sp ace/ds")

# ---- memory inside the caps ------------------------------------------------------------------------
# A 1 MB gzip trace inflating to 150 MiB: read event by event, it stays near its text (a whole
# JSON tree of it took gigabytes; a 130 KB bomb of a GiB took 3.3 GB).
tprimat_writer_test(trace_bomb_within_memory
  SETUP "${CMAKE_CURRENT_SOURCE_DIR}/make_trace_bomb.py|bomb.json.gz|150"
  PRE "${CMAKE_CURRENT_SOURCE_DIR}/run_within_memory.py|1024"
  ARGS profile-summary bomb.json.gz STDOUT_REGEX "top 1 of 1 kernels by GPU time")
# Parsing 150 MiB of JSON takes ~10 s optimised and several times that instrumented; a sanitizer
# build late in a loaded ctest ran past 60 s (a timeout, not a fault).
if(TPRIMAT_SANITIZE)
  set_tests_properties(cli.writer_trace_bomb_within_memory PROPERTIES TIMEOUT 300)
endif()

# ---- a full disk at the end: the steps are kept and said where ---------------------------------------
# No file may pass 3000 bytes (the result takes ~6 kB, the log less): the result's write fails as
# on a full disk, and the live log, which holds every step, stays and is named.
tprimat_writer_test(result_write_fails_steps_kept
  PRE "${CMAKE_CURRENT_SOURCE_DIR}/with_file_size_limit.py|3000"
  ARGS bench --model tiny --seq 32 --steps 2 --warmup-steps 0 --output-dir out EXPECT_RC 1
  STDERR_REGEX "cannot write out/benchmark_cpu_tiny.json \\(File too large\\); the 2 measured step\\(s\\) are kept in out/training_tiny.log.partial"
  FILE_REGEX "out/training_tiny.log.partial=step 2/2")

# ---- --parallel all: a flag none of its strategies applies is refused, not taken ---------------------
# One CPU rank: every strategy --parallel all runs here has DP 1, TP 1, PP 1.
foreach(flag distributed-optimizer sequence-parallel)
  tprimat_writer_test(parallel_all_${flag} ARGS ${tiny} --parallel all --${flag} EXPECT_RC 2
    STDERR_REGEX "^tprimat: --${flag} applies to no strategy --parallel all runs here: every one has ")
endforeach()
