# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Checks every HIP kernel's register, LDS and scratch figures (check.cmake's figures files) for
# one architecture: no kernel may spill; where -DBUDGETS names a file made by the same compiler,
# each kernel must have a line there and stay within it. -DARCH -DFIGURES=a|b -DBUDGETS
# -DCOMPILER_ID.
#
# Regenerate after a deliberate change (a new kernel, a bigger tile):
#   TPRIMAT_UPDATE_HIP_BUDGETS=1 ctest --test-dir build -R 'hip[.]gfx90a[.]budgets'
# (gfx942.txt and gfx950.txt are ROCm 7.2's, regenerated inside scripts/rocm-sysroot.sh's root:
# README.md's ROCm 7 section gives the command)
# writes the budgets as the current figures plus headroom: registers + max(4, 10%) (one more
# allocation granule, so a compiler update's noise passes but a new live array does not), LDS and
# scratch exactly (they follow from the source; scratch 0 means no private-memory stack).
cmake_policy(VERSION 3.25)
function(fail text)
  message(FATAL_ERROR "tprimat HIP budgets FAILED for ${ARCH}: ${text}")
endfunction()

find_program(CXXFILT c++filt)
function(demangle mangled var)
  set(${var} "${mangled}" PARENT_SCOPE)
  if(CXXFILT)
    execute_process(COMMAND ${CXXFILT} -p ${mangled} OUTPUT_VARIABLE out
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    set(${var} "${out}" PARENT_SCOPE)
  endif()
endfunction()

function(headroom x var)
  math(EXPR extra "${x} / 10")
  if(extra LESS 4)
    set(extra 4)
  endif()
  math(EXPR out "${x} + ${extra}")
  set(${var} ${out} PARENT_SCOPE)
endfunction()

# The figures, one variable per (kernel, field). Kernels seen in several TUs keep their largest.
string(REPLACE "|" ";" figure_files "${FIGURES}")
set(kernels)
foreach(f IN LISTS figure_files)
  if(NOT EXISTS ${f})
    fail("${f} is missing (its compile test failed or did not run)")
  endif()
  file(STRINGS ${f} lines)
  foreach(line IN LISTS lines)
    string(REPLACE " " ";" parts "${line}")
    list(POP_FRONT parts kernel)
    list(APPEND kernels ${kernel})
    foreach(part IN LISTS parts)
      string(REPLACE "=" ";" kv "${part}")
      list(GET kv 0 key)
      list(GET kv 1 value)
      if(NOT DEFINED ${kernel}.${key})
        set(${kernel}.${key} ${value})
      elseif(value GREATER ${kernel}.${key})
        set(${kernel}.${key} ${value})
      endif()
    endforeach()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES kernels)
list(SORT kernels)
list(LENGTH kernels kernel_count)

set(problems)
foreach(k IN LISTS kernels)
  # gfx90a shares one register file between VGPRs and AGPRs (MFMA accumulators): budget the sum.
  math(EXPR ${k}.vregs "${${k}.vgprs} + ${${k}.agprs}")
  if(${k}.vgpr_spill GREATER 0 OR ${k}.sgpr_spill GREATER 0)
    demangle(${k} name)
    list(APPEND problems "${name} spills (${${k}.vgpr_spill} VGPRs, ${${k}.sgpr_spill} SGPRs)")
  endif()
endforeach()

# Budgets: "<vregs> <sgprs> <lds> <scratch> <mangled> # <demangled>" lines under a
# "# compiler: <id>" line.
set(compare OFF)
if(EXISTS ${BUDGETS})
  file(STRINGS ${BUDGETS} budget_compiler REGEX "^# compiler: ")
  string(REGEX REPLACE "^# compiler: " "" budget_compiler "${budget_compiler}")
  if(budget_compiler STREQUAL COMPILER_ID)
    set(compare ON)
  else()
    message("NOTE: ${BUDGETS} holds figures of '${budget_compiler}', this is '${COMPILER_ID}': "
            "only spills are checked (regenerate the budgets for this compiler to compare)")
  endif()
else()
  message("NOTE: no budget file ${BUDGETS}: only spills are checked")
endif()

if(compare)
  file(STRINGS ${BUDGETS} budget_lines REGEX "^ *[0-9]")
  set(budgeted)
  foreach(line IN LISTS budget_lines)
    if(NOT line MATCHES "^ *([0-9]+) +([0-9]+) +([0-9]+) +([0-9]+) +([^ #]+)")
      fail("unreadable line in ${BUDGETS}: ${line}")
    endif()
    set(k ${CMAKE_MATCH_5})
    list(APPEND budgeted ${k})
    set(budget.${k}.vregs ${CMAKE_MATCH_1})
    set(budget.${k}.sgprs ${CMAKE_MATCH_2})
    set(budget.${k}.lds ${CMAKE_MATCH_3})
    set(budget.${k}.scratch ${CMAKE_MATCH_4})
  endforeach()
  foreach(k IN LISTS budgeted)
    if(NOT k IN_LIST kernels)
      demangle(${k} name)
      list(APPEND problems "${name} has a budget but was not compiled (stale line: regenerate)")
    endif()
  endforeach()
endif()

message("kernel figures for ${ARCH} (${COMPILER_ID}); budget in brackets where compared")
foreach(k IN LISTS kernels)
  demangle(${k} name)
  if(compare AND NOT DEFINED budget.${k}.vregs)
    list(APPEND problems "${name} has no budget (a new kernel? regenerate the budgets)")
  endif()
  foreach(field vregs sgprs lds scratch)
    set(value ${${k}.${field}})
    if(compare AND DEFINED budget.${k}.${field})
      set(limit ${budget.${k}.${field}})
      string(APPEND cells " ${field} ${value} [${limit}]")
      if(value GREATER limit)
        list(APPEND problems "${name}: ${field} ${value} exceeds its budget ${limit}")
      endif()
    else()
      string(APPEND cells " ${field} ${value}")
    endif()
  endforeach()
  message("  ${name}:${cells}, occupancy ${${k}.occupancy} waves/SIMD")
  set(cells)
endforeach()

if("$ENV{TPRIMAT_UPDATE_HIP_BUDGETS}" STREQUAL "1")
  set(text "# SPDX-License-Identifier: Apache-2.0\n# SPDX-FileCopyrightText: 2026 tprimat authors\n")
  string(APPEND text "# Register, LDS and scratch budgets of the HIP kernels for ${ARCH}: checked by "
                     "hip.${ARCH}.budgets,\n# generated (figures + headroom) and regenerated as "
                     "tests/hip/budgets.cmake says.\n"
                     "# compiler: ${COMPILER_ID}\n"
                     "# vregs (VGPRs + AGPRs), sgprs, LDS bytes/block, scratch bytes/lane, kernel "
                     "(mangled) # demangled\n")
  foreach(k IN LISTS kernels)
    headroom(${${k}.vregs} vregs)
    headroom(${${k}.sgprs} sgprs)
    demangle(${k} name)
    string(APPEND text "${vregs} ${sgprs} ${${k}.lds} ${${k}.scratch} ${k} # ${name}\n")
  endforeach()
  file(WRITE ${BUDGETS} "${text}")
  message("wrote ${BUDGETS} (${kernel_count} kernels)")
endif()

if(problems)
  list(JOIN problems "\n  " text)
  fail("\n  ${text}")
endif()
message("tprimat HIP budgets passed: ${kernel_count} kernels for ${ARCH}")
