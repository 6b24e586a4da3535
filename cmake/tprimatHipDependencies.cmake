# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# What tprimat::hip links: the HIP runtime (libamdhip64 and its headers) as the target
# tprimat::hip_runtime, found under TPRIMAT_ROCM_ROOT, ROCM_PATH, /opt/rocm or the system (Debian's HIP). Included by
# cmake/hip.cmake and by the installed package's config.
if(NOT TARGET tprimat::hip_runtime)
  set(_tprimat_rocm_hints)
  if(TPRIMAT_ROCM_ROOT)
    list(APPEND _tprimat_rocm_hints ${TPRIMAT_ROCM_ROOT})
  endif()
  if(DEFINED ENV{ROCM_PATH})
    list(APPEND _tprimat_rocm_hints $ENV{ROCM_PATH})
  endif()
  list(APPEND _tprimat_rocm_hints /opt/rocm)
  find_path(TPRIMAT_HIP_INCLUDE_DIR hip/hip_runtime.h HINTS ${_tprimat_rocm_hints}
            PATH_SUFFIXES include)
  find_library(TPRIMAT_AMDHIP64 amdhip64 HINTS ${_tprimat_rocm_hints} PATH_SUFFIXES lib)
  add_library(tprimat::hip_runtime INTERFACE IMPORTED GLOBAL)
  if(TPRIMAT_HIP_INCLUDE_DIR AND TPRIMAT_AMDHIP64)
    set_property(TARGET tprimat::hip_runtime PROPERTY INTERFACE_LINK_LIBRARIES ${TPRIMAT_AMDHIP64})
    # The system's include directory is searched already; naming it again would break
    # libstdc++'s #include_next.
    if(NOT TPRIMAT_HIP_INCLUDE_DIR STREQUAL "/usr/include")
      set_property(TARGET tprimat::hip_runtime PROPERTY INTERFACE_INCLUDE_DIRECTORIES
                                                        ${TPRIMAT_HIP_INCLUDE_DIR})
    endif()
    # The platform the HIP headers take when a C++ compiler (not hipcc) includes them.
    set_property(TARGET tprimat::hip_runtime PROPERTY INTERFACE_COMPILE_DEFINITIONS
                                                      __HIP_PLATFORM_AMD__=1)
    message(STATUS "tprimat: HIP runtime ${TPRIMAT_AMDHIP64}")
  else()
    message(STATUS "tprimat: no HIP runtime (libamdhip64, hip/hip_runtime.h) found; set ROCM_PATH")
  endif()
endif()
