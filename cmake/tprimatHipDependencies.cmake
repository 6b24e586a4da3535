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

# AMD's optional libraries, beside the runtime: tprimat::hipblaslt_library (the HIP backend's GEMMs,
# TPRIMAT_HAVE_HIPBLASLT) and tprimat::rccl_library (comm::Nccl over RCCL's NCCL API,
# TPRIMAT_HAVE_NCCL and TPRIMAT_HAVE_RCCL), each empty where missing or switched off
# (TPRIMAT_HIPBLASLT, TPRIMAT_RCCL: AUTO, ON or OFF), when the code takes its fallback: the tiled
# GEMM, one GPU a job. Searched under the root of the hipcc the build uses (TPRIMAT_ROCM_PATH),
# TPRIMAT_ROCM_ROOT, ROCM_PATH and /opt/rocm first.
#
# tprimat_hip_optional(NAME SWITCH HEADER h LIBRARY l [NEEDS header package] DEFINES d...): the
# target of one optional ROCm library; sets TPRIMAT_<NAME>_FOUND and TPRIMAT_<NAME>_INCLUDE_DIR.
# NEEDS: a header the library's own header includes from another package, checked too (Debian's
# libhipblaslt-dev 7.2.4 does not depend on libhipblas-common-dev, whose header hipblaslt.h
# includes first: without the check the build would stop inside hipblaslt.h).
function(tprimat_hip_optional name switch)
  cmake_parse_arguments(D "" "HEADER;LIBRARY" "DEFINES;NEEDS" ${ARGN})
  string(TOUPPER ${name} upper)
  set(target tprimat::${name}_library)
  set(found OFF)
  if(NOT TARGET ${target})
    add_library(${target} INTERFACE IMPORTED GLOBAL)
    if(NOT "${${switch}}" STREQUAL "OFF")
      set(hints)
      foreach(root IN ITEMS "${TPRIMAT_ROCM_PATH}" "${TPRIMAT_ROCM_ROOT}")
        if(root)
          list(APPEND hints ${root})
        endif()
      endforeach()
      if(DEFINED ENV{ROCM_PATH})
        list(APPEND hints $ENV{ROCM_PATH})
      endif()
      list(APPEND hints /opt/rocm)
      find_path(TPRIMAT_${upper}_INCLUDE_DIR ${D_HEADER} HINTS ${hints} PATH_SUFFIXES include)
      find_library(TPRIMAT_${upper}_LIBRARY ${D_LIBRARY} HINTS ${hints} PATH_SUFFIXES lib lib64
                   lib/${CMAKE_LIBRARY_ARCHITECTURE})
      set(missing)
      if(D_NEEDS)
        list(GET D_NEEDS 0 needed_header)
        list(GET D_NEEDS 1 needed_package)
        find_path(TPRIMAT_${upper}_NEEDED_INCLUDE_DIR ${needed_header} HINTS ${hints}
                  PATH_SUFFIXES include)
        if(TPRIMAT_${upper}_INCLUDE_DIR AND NOT TPRIMAT_${upper}_NEEDED_INCLUDE_DIR)
          set(missing "${needed_header} (${needed_package}), which ${D_HEADER} includes")
          message(NOTICE "tprimat: NOTICE: ${D_HEADER} was found but not ${missing}: ${name} is "
                         "left out; install ${needed_package}")
        endif()
      endif()
      if(TPRIMAT_${upper}_INCLUDE_DIR AND TPRIMAT_${upper}_LIBRARY AND NOT missing)
        set(found ON)
        set_property(TARGET ${target} PROPERTY INTERFACE_LINK_LIBRARIES ${TPRIMAT_${upper}_LIBRARY})
        # The system's include directory is searched already (naming it would break libstdc++'s
        # #include_next).
        set(dirs ${TPRIMAT_${upper}_INCLUDE_DIR} ${TPRIMAT_${upper}_NEEDED_INCLUDE_DIR})
        list(REMOVE_DUPLICATES dirs)
        list(REMOVE_ITEM dirs /usr/include)
        set_property(TARGET ${target} PROPERTY INTERFACE_INCLUDE_DIRECTORIES ${dirs})
        set_property(TARGET ${target} PROPERTY INTERFACE_COMPILE_DEFINITIONS ${D_DEFINES})
      elseif("${${switch}}" STREQUAL "ON")
        message(FATAL_ERROR "tprimat: ${switch}=ON but ${D_HEADER}, lib${D_LIBRARY} or what "
                            "they need (${D_NEEDS}) was not found "
                            "(searched ${hints} and the system); install it (Debian: "
                            "lib${D_LIBRARY}-dev from unstable), set ROCM_PATH, or configure with "
                            "-D${switch}=AUTO or OFF")
      endif()
    endif()
    set_property(TARGET ${target} PROPERTY TPRIMAT_FOUND ${found})
  else()
    get_property(found TARGET ${target} PROPERTY TPRIMAT_FOUND)
  endif()
  set(TPRIMAT_${upper}_FOUND ${found} PARENT_SCOPE)
endfunction()

if(NOT DEFINED TPRIMAT_HIPBLASLT)
  set(TPRIMAT_HIPBLASLT AUTO)
endif()
if(NOT DEFINED TPRIMAT_RCCL)
  set(TPRIMAT_RCCL AUTO)
endif()
tprimat_hip_optional(hipblaslt TPRIMAT_HIPBLASLT HEADER hipblaslt/hipblaslt.h LIBRARY hipblaslt
                     NEEDS hipblas-common/hipblas-common.h libhipblas-common-dev
                     DEFINES TPRIMAT_HAVE_HIPBLASLT=1)
tprimat_hip_optional(rccl TPRIMAT_RCCL HEADER rccl/rccl.h LIBRARY rccl
                     DEFINES TPRIMAT_HAVE_NCCL=1 TPRIMAT_HAVE_RCCL=1)
