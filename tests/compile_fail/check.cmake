# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Builds one compile test's target and checks the outcome against the source's `// EXPECT:` lines.
# -DBUILD_DIR -DTARGET -DSOURCE [-DCONFIG]. No EXPECT line: the build must succeed.
file(STRINGS ${SOURCE} expects REGEX "^// EXPECT: ")
set(config_args)
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET} ${config_args}
  RESULT_VARIABLE status
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out)
message("${out}")

set(problems)
if(expects)
  if(status EQUAL 0)
    list(APPEND problems "it compiled, but must not")
  endif()
  foreach(line IN LISTS expects)
    string(REGEX REPLACE "^// EXPECT: " "" regex "${line}")
    if(NOT out MATCHES "${regex}")
      list(APPEND problems "no diagnostic matches `${regex}`")
    endif()
  endforeach()
elseif(NOT status EQUAL 0)
  list(APPEND problems "positive control failed to compile")
endif()

if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "tprimat compile-fail check FAILED for ${SOURCE}:\n  ${text}")
endif()
message("tprimat compile-fail check passed: ${SOURCE}")
