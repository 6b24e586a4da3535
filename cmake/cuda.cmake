# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Finds nvcc, the CUDA toolkit and cuDNN for the CUDA backend; sets TPRIMAT_HAVE_CUDA and the thin
# target tprimat::cuda (headers + CUDA runtime, cuBLASLt, cuDNN) that users link.
set(TPRIMAT_HAVE_CUDA OFF)
if(NOT TPRIMAT_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Architectures come from TPRIMAT_CUDA_GENCODE, not CMAKE_CUDA_ARCHITECTURES: sm_90a (Hopper's
    # wgmma/TMA features) is spelled the same by every CMake version this way.
    set(CMAKE_CUDA_ARCHITECTURES OFF)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(TPRIMAT_HAVE_CUDA ON)
  elseif(TPRIMAT_CUDA STREQUAL "ON")
    message(FATAL_ERROR "tprimat: TPRIMAT_CUDA=ON but no CUDA compiler was found; put nvcc on "
                        "PATH or set CMAKE_CUDA_COMPILER, or configure with -DTPRIMAT_CUDA=OFF")
  endif()
endif()
message(STATUS "tprimat: CUDA backend ${TPRIMAT_HAVE_CUDA}")
if(NOT TPRIMAT_HAVE_CUDA)
  return()
endif()

set(TPRIMAT_CUDA_GENCODE "-gencode=arch=compute_90a,code=sm_90a" CACHE STRING
    "nvcc -gencode flags of the CUDA kernels (default: H100/H200, sm_90a); add more to this list")

# cuDNN, NCCL, CUPTI and NVTX3 as tprimat::<name>_library targets, each empty where missing; the
# installed package's config finds them the same way.
include(${CMAKE_CURRENT_LIST_DIR}/tprimatCudaDependencies.cmake)

# tprimat::cuda: what a project that compiles the CUDA backend links (the headers, the CUDA
# runtime, cuBLASLt and the optional libraries above), exported with the package.
add_library(tprimat_cuda INTERFACE)
add_library(tprimat::cuda ALIAS tprimat_cuda)
set_target_properties(tprimat_cuda PROPERTIES EXPORT_NAME cuda)
target_link_libraries(tprimat_cuda INTERFACE tprimat CUDA::cudart CUDA::cublasLt
                      tprimat::cudnn_library tprimat::cupti_library tprimat::nvtx_library)
# Device code is C++20 too (concepts in the backend headers); nvcc 13 defaults to C++17, and
# CMake 3.25 does not know cuda_std_20 for nvcc 13, so the flag is spelled out. The kernels call
# constexpr host functions (std::numeric_limits, ...) from device code.
target_compile_options(tprimat_cuda INTERFACE
  $<$<COMPILE_LANGUAGE:CUDA>:-std=c++20 --expt-relaxed-constexpr>)

# tprimat::nccl: comm::Nccl, the collectives of several GPUs (NCCL optional: without it the CUDA
# backend runs one GPU a job).
if(TPRIMAT_NCCL_FOUND)
  add_library(tprimat_nccl INTERFACE)
  add_library(tprimat::nccl ALIAS tprimat_nccl)
  set_target_properties(tprimat_nccl PROPERTIES EXPORT_NAME nccl)
  target_link_libraries(tprimat_nccl INTERFACE tprimat_cuda tprimat::nccl_library)
endif()
