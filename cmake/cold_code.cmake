# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Code that runs once per process, not once per step: the tests' own TUs (their checks, readers
# and references; the engine they run is tprimat_cpu's and the GPU libraries') and the program's
# flags, reports and result files (apps/tprimat: main.cpp, driver.cpp, runner.cpp; the dispatch
# TUs, which instantiate the training step, keep the build type's flags). At -O3 these TUs were
# half of a 2-core build (main.cpp alone 124 s, 64 s at -O1) for no time a user or a test waits
# on: a whole 2-core build of the main stage went from 1,050 s to 615 s. A sanitizer build sets its own levels (cmake/sanitizers.cmake);
# a Debug build keeps -O0.
set(TPRIMAT_COLD_OPTIMIZE -O1 CACHE STRING
    "Optimisation flag of the tests' and the program's run-once TUs in an optimised build; empty: the build type's")

# tprimat_cold_optimize_flags(VAR): the compile options that lower a C++ TU to
# TPRIMAT_COLD_OPTIMIZE where it applies (none in a sanitizer or Debug build), in VAR.
function(tprimat_cold_optimize_flags var)
  if(TPRIMAT_SANITIZE OR NOT TPRIMAT_COLD_OPTIMIZE)
    set(${var} "" PARENT_SCOPE)
    return()
  endif()
  set(${var} "$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<NOT:$<CONFIG:Debug>>>:${TPRIMAT_COLD_OPTIMIZE}>"
      PARENT_SCOPE)
endfunction()
