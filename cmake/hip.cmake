# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Finds the HIP compilers of tier-2 HIP support: backend::Gpu on HIP compile-checked for AMD (tests/hip)
# and, in a build without the CUDA backend, built for the CLI (src/hip). Sets TPRIMAT_HAVE_HIP,
# TPRIMAT_HIPCC, TPRIMAT_HIP_CLANG, TPRIMAT_ROCM_PATH, TPRIMAT_HIP_INCLUDE_FLAGS (the include
# flags of a hipcc compile of tprimat's sources), TPRIMAT_HIP_BACKEND, and splits
# CMAKE_HIP_ARCHITECTURES by what the compilers here can do: TPRIMAT_HIP_LINK_ARCHS (hipcc
# compiles and links them) and TPRIMAT_HIP_CODEGEN_ARCHS (only clang's device code generation:
# no device libraries for them, so no link).
set(TPRIMAT_HAVE_HIP OFF)
# The ROCm installation to build against: its bin/hipcc first, and its prefix searched by
# find_package (hip, hipblaslt, rccl configs). /opt/rocm for AMD's packages, /usr for Debian's
# (scripts/rocm-sysroot.sh builds inside a Debian sid root with -DTPRIMAT_ROCM_ROOT=/usr).
set(TPRIMAT_ROCM_ROOT "" CACHE PATH
    "ROCm root (bin/hipcc, include/hip, lib): empty = $ROCM_PATH, /opt/rocm, then PATH")
if(NOT TPRIMAT_HIP STREQUAL "OFF")
  set(_hints /opt/rocm/bin)
  if(DEFINED ENV{ROCM_PATH})
    list(PREPEND _hints $ENV{ROCM_PATH}/bin)
  endif()
  if(TPRIMAT_ROCM_ROOT)
    list(PREPEND _hints ${TPRIMAT_ROCM_ROOT}/bin)
    list(PREPEND CMAKE_PREFIX_PATH ${TPRIMAT_ROCM_ROOT})
  endif()
  find_program(TPRIMAT_HIPCC hipcc HINTS ${_hints} DOC "hipcc that compiles and links the HIP checks")
  if(TPRIMAT_HIPCC)
    set(TPRIMAT_HAVE_HIP ON)
  elseif(TPRIMAT_HIP STREQUAL "ON")
    message(FATAL_ERROR "tprimat: TPRIMAT_HIP=ON but hipcc was not found; install ROCm (or on "
                        "Debian: hipcc libamdhip64-dev rocm-device-libs), set TPRIMAT_HIPCC, or "
                        "configure with -DTPRIMAT_HIP=OFF")
  endif()
endif()
message(STATUS "tprimat: HIP compile checks ${TPRIMAT_HAVE_HIP} (${TPRIMAT_HIPCC})")
if(NOT TPRIMAT_HAVE_HIP)
  return()
endif()

# MI300X first, then MI250; a ROCm user builds for their own GPU only (-DCMAKE_HIP_ARCHITECTURES).
set(CMAKE_HIP_ARCHITECTURES "gfx942;gfx90a" CACHE STRING "AMD GPU architectures (gfx...) of the HIP checks")
# hipcc lives in <root>/bin: /usr on Debian, /opt/rocm with ROCm. clang needs the root to find
# the HIP headers.
get_filename_component(_bin "${TPRIMAT_HIPCC}" DIRECTORY)
get_filename_component(_bin "${_bin}" REALPATH)  # /bin -> /usr/bin on merged-/usr systems
get_filename_component(TPRIMAT_ROCM_PATH "${_bin}" DIRECTORY)
# A clang++ new enough for gfx942 (17+), for the architectures hipcc rejects (Debian's HIP 5.2
# ships clang 15, which predates gfx942).
find_program(TPRIMAT_HIP_CLANG NAMES clang++-19 clang++-20 clang++-18 clang++-17
             DOC "clang++ that generates device code for architectures hipcc does not know")

# Probes, cached per compiler and architecture (a few seconds each, once): can hipcc compile and
# link a kernel for it, else can clang generate its device code.
set(_dir ${CMAKE_BINARY_DIR}/CMakeFiles/tprimat_hip_probe)
file(WRITE ${_dir}/probe.cpp "#include <hip/hip_runtime.h>\n__global__ void k(float* p) { *p = 1; }\n"
     "int main() { hipLaunchKernelGGL(k, 1, 1, 0, 0, nullptr); }\n")
set(TPRIMAT_HIP_LINK_ARCHS)
set(TPRIMAT_HIP_CODEGEN_ARCHS)
foreach(arch IN LISTS CMAKE_HIP_ARCHITECTURES)
  set(key "${TPRIMAT_HIPCC}|${TPRIMAT_HIP_CLANG}|${arch}")
  if(NOT "${TPRIMAT_HIP_PROBE_KEY_${arch}}" STREQUAL "${key}")
    execute_process(COMMAND ${TPRIMAT_HIPCC} -std=c++20 --offload-arch=${arch} -x hip probe.cpp
                            -o probe_${arch}
                    WORKING_DIRECTORY ${_dir} RESULT_VARIABLE link_rc OUTPUT_QUIET ERROR_QUIET)
    set(result none)
    if(link_rc EQUAL 0)
      set(result link)
    elseif(TPRIMAT_HIP_CLANG)
      execute_process(COMMAND ${TPRIMAT_HIP_CLANG} -x hip -std=c++20 --rocm-path=${TPRIMAT_ROCM_PATH}
                              -nogpulib --offload-arch=${arch} --cuda-device-only -S probe.cpp
                              -o probe_${arch}.s
                      WORKING_DIRECTORY ${_dir} RESULT_VARIABLE codegen_rc OUTPUT_QUIET ERROR_QUIET)
      if(codegen_rc EQUAL 0)
        set(result codegen)
      endif()
    endif()
    set(TPRIMAT_HIP_PROBE_KEY_${arch} "${key}" CACHE INTERNAL "")
    set(TPRIMAT_HIP_PROBE_${arch} "${result}" CACHE INTERNAL "")
  endif()
  set(result "${TPRIMAT_HIP_PROBE_${arch}}")
  if(result STREQUAL "link")
    list(APPEND TPRIMAT_HIP_LINK_ARCHS ${arch})
  elseif(result STREQUAL "codegen")
    list(APPEND TPRIMAT_HIP_CODEGEN_ARCHS ${arch})
  else()
    message(WARNING "tprimat: no HIP compiler here builds ${arch} (hipcc ${TPRIMAT_HIPCC}, clang "
                    "${TPRIMAT_HIP_CLANG}): it is not checked")
  endif()
endforeach()
message(STATUS "tprimat: HIP compile + link: ${TPRIMAT_HIP_LINK_ARCHS}; device code only "
               "(${TPRIMAT_HIP_CLANG}): ${TPRIMAT_HIP_CODEGEN_ARCHS}")

# tprimat's headers and their dependencies (Eigen, nlohmann-json) as a hipcc command line wants
# them; the dependencies as system headers (-Werror is for our code), never /usr/include itself
# (already searched; -isystem would break libstdc++'s #include_next).
get_target_property(_eigen Eigen3::Eigen INTERFACE_INCLUDE_DIRECTORIES)
get_target_property(_json nlohmann_json::nlohmann_json INTERFACE_INCLUDE_DIRECTORIES)
set(TPRIMAT_HIP_INCLUDE_FLAGS -I${PROJECT_SOURCE_DIR}/include -I${PROJECT_SOURCE_DIR}/kernels)
foreach(dir IN LISTS _eigen _json)
  if(dir AND NOT dir STREQUAL "/usr/include")
    list(APPEND TPRIMAT_HIP_INCLUDE_FLAGS -isystem ${dir})
  endif()
endforeach()

# ROCm 7's HIP headers are clang's alone (hip_bf16.h's __hip_bfloat16 is built on clang's __bf16
# vector types and builtins): the host code that includes them (the CLI, tests/headers) must then
# be compiled by clang, not GCC. Checked here so the build does not stop in amd_hip_bf16.h.
if(NOT TPRIMAT_HAVE_CUDA AND TPRIMAT_HIP_LINK_ARCHS AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_DEFINITIONS -D__HIP_PLATFORM_AMD__=1)
  if(NOT TPRIMAT_ROCM_PATH STREQUAL "/usr")  # never -I/usr/include (libstdc++'s #include_next)
    set(CMAKE_REQUIRED_INCLUDES ${TPRIMAT_ROCM_PATH}/include)
  endif()
  set(CMAKE_REQUIRED_QUIET ON)
  check_cxx_source_compiles("#include <hip/hip_runtime.h>
#if __has_include(<hip/hip_bf16.h>)
#include <hip/hip_bf16.h>
#endif
int main() { return 0; }" TPRIMAT_HIP_HEADERS_WITH_CXX)
  unset(CMAKE_REQUIRED_DEFINITIONS)
  unset(CMAKE_REQUIRED_INCLUDES)
  if(NOT TPRIMAT_HIP_HEADERS_WITH_CXX)
    message(FATAL_ERROR "tprimat: the HIP headers of ${TPRIMAT_ROCM_PATH} (ROCm 7: hip_bf16.h) do "
                        "not compile with ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER}, and the "
                        "CLI's host code includes them; configure a fresh build directory with "
                        "ROCm's clang as the C++ compiler: -DCMAKE_CXX_COMPILER="
                        "/opt/rocm/llvm/bin/clang++ (AMD's packages) or clang++-22 (Debian's "
                        "ROCm 7), or with -DTPRIMAT_HIP=OFF")
  endif()
endif()

# A build has one GPU platform: backend::Gpu is CUDA or HIP. Without the CUDA backend, and with
# an architecture hipcc can link, backend::Gpu on HIP is built (src/hip) and the CLI gets --backend hip.
set(TPRIMAT_HIP_BACKEND OFF)
if(NOT TPRIMAT_HAVE_CUDA AND TPRIMAT_HIP_LINK_ARCHS)
  set(TPRIMAT_HIP_BACKEND ON)
endif()
message(STATUS "tprimat: HIP backend ${TPRIMAT_HIP_BACKEND} (${TPRIMAT_HIP_LINK_ARCHS})")

# AMD's libraries of the HIP build, each AUTO (used where found), ON (required) or OFF (the
# fallback): hipBLASLt for the HIP backend's GEMMs (else the tiled kernel), RCCL for comm::Nccl
# (else one GPU a job). HIP only: the CUDA backend has cuBLASLt and NCCL.
set(TPRIMAT_HIPBLASLT AUTO CACHE STRING "the HIP backend's GEMMs through hipBLASLt: AUTO, ON or OFF")
set_property(CACHE TPRIMAT_HIPBLASLT PROPERTY STRINGS AUTO ON OFF)
set(TPRIMAT_RCCL AUTO CACHE STRING "Several AMD GPUs a job through RCCL: AUTO, ON or OFF")
set_property(CACHE TPRIMAT_RCCL PROPERTY STRINGS AUTO ON OFF)

# tprimat::hip: what a project that compiles backend::Gpu on HIP with hipcc links (the headers, the HIP
# runtime and, where found, hipBLASLt: the HIP backend's GEMMs), exported with the package.
include(${CMAKE_CURRENT_LIST_DIR}/tprimatHipDependencies.cmake)
add_library(tprimat_hip INTERFACE)
add_library(tprimat::hip ALIAS tprimat_hip)
set_target_properties(tprimat_hip PROPERTIES EXPORT_NAME hip)
target_link_libraries(tprimat_hip INTERFACE tprimat tprimat::hip_runtime
                                            tprimat::hipblaslt_library)

# hipBLASLt and RCCL on the hipcc command lines of src/hip and tests/hip (custom commands, which
# see no target's usage requirements): TPRIMAT_HIP_INCLUDE_FLAGS gains their defines and
# headers, TPRIMAT_HIP_LINK_LIBRARIES their libraries. Debian 12's HIP 5.2 has neither (the tiled
# GEMM and one GPU a job, as before); ROCm 6.2+ or Debian unstable's ROCm 7 (a sid root,
# scripts/rocm-sysroot.sh) has both.
set(TPRIMAT_HIP_LINK_LIBRARIES)
foreach(lib HIPBLASLT RCCL)
  if(TPRIMAT_${lib}_FOUND)
    string(TOLOWER ${lib} _name)
    get_target_property(_defines tprimat::${_name}_library INTERFACE_COMPILE_DEFINITIONS)
    foreach(d IN LISTS _defines)
      list(APPEND TPRIMAT_HIP_INCLUDE_FLAGS -D${d})
    endforeach()
    get_target_property(_dirs tprimat::${_name}_library INTERFACE_INCLUDE_DIRECTORIES)
    foreach(d IN LISTS _dirs)
      if(d)
        list(APPEND TPRIMAT_HIP_INCLUDE_FLAGS -isystem ${d})
      endif()
    endforeach()
    list(APPEND TPRIMAT_HIP_LINK_LIBRARIES ${TPRIMAT_${lib}_LIBRARY})
  endif()
endforeach()
if(TPRIMAT_HIPBLASLT_FOUND)
  message(STATUS "tprimat: the HIP backend's GEMMs through hipBLASLt (${TPRIMAT_HIPBLASLT_LIBRARY})")
else()
  message(NOTICE "tprimat: NOTICE: hipBLASLt not found (TPRIMAT_HIPBLASLT=${TPRIMAT_HIPBLASLT}): "
                 "the HIP backend's GEMMs run the portable tiled kernel, correct and far slower than "
                 "hipBLASLt on an MI300X (results say gpu_info.gemm \"fallback\"), and "
                 "--precision fp8 is refused on HIP; install hipBLASLt (ROCm 6.2+) or set "
                 "ROCM_PATH")
endif()
if(TPRIMAT_RCCL_FOUND)
  message(STATUS "tprimat: comm::Nccl over RCCL (${TPRIMAT_RCCL_LIBRARY})")
else()
  message(NOTICE "tprimat: NOTICE: RCCL not found (TPRIMAT_RCCL=${TPRIMAT_RCCL}): a parallel "
                 "layout on --backend hip stops at start (one GPU a job); install RCCL or set "
                 "ROCM_PATH")
endif()

# tprimat::nccl on AMD: comm::Nccl compiled against RCCL's NCCL API (backend/gpu/nccl.hpp), for the
# HIP backend's build (a build has one GPU platform: with CUDA, tprimat::nccl is NCCL's).
if(TPRIMAT_RCCL_FOUND AND TPRIMAT_HIP_BACKEND AND NOT TARGET tprimat_nccl)
  add_library(tprimat_nccl INTERFACE)
  add_library(tprimat::nccl ALIAS tprimat_nccl)
  set_target_properties(tprimat_nccl PROPERTIES EXPORT_NAME nccl)
  target_link_libraries(tprimat_nccl INTERFACE tprimat_hip tprimat::rccl_library)
endif()
