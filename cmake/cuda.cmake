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

# cuDNN 9 (fused attention). Optional: without it CudnnAttention::supports() is false.
find_path(TPRIMAT_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS}
          PATH_SUFFIXES cuda/include)
find_library(TPRIMAT_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
if(TPRIMAT_CUDNN_INCLUDE_DIR AND TPRIMAT_CUDNN_LIBRARY)
  set(TPRIMAT_HAVE_CUDNN ON)
else()
  set(TPRIMAT_HAVE_CUDNN OFF)
endif()
message(STATUS "tprimat: cuDNN ${TPRIMAT_HAVE_CUDNN} (${TPRIMAT_CUDNN_LIBRARY})")

add_library(tprimat_cuda INTERFACE)
add_library(tprimat::cuda ALIAS tprimat_cuda)
set_target_properties(tprimat_cuda PROPERTIES EXPORT_NAME cuda)
target_link_libraries(tprimat_cuda INTERFACE tprimat CUDA::cudart CUDA::cublasLt)
# Device code is C++20 too (concepts in the backend headers); nvcc 13 defaults to C++17, and
# CMake 3.25 does not know cuda_std_20 for nvcc 13, so the flag is spelled out.
target_compile_options(tprimat_cuda INTERFACE $<$<COMPILE_LANGUAGE:CUDA>:-std=c++20>)
if(TPRIMAT_HAVE_CUDNN)
  target_include_directories(tprimat_cuda INTERFACE $<BUILD_INTERFACE:${TPRIMAT_CUDNN_INCLUDE_DIR}>)
  target_link_libraries(tprimat_cuda INTERFACE $<BUILD_INTERFACE:${TPRIMAT_CUDNN_LIBRARY}>)
  target_compile_definitions(tprimat_cuda INTERFACE TPRIMAT_HAVE_CUDNN=1)
endif()

# NVTX ranges (profile/nvtx.hpp) for Nsight Systems: NVTX3 is header-only. CUPTI (the --profile
# collector, src/cuda/cupti_profiler.cpp) comes from FindCUDAToolkit as CUDA::cupti.
if(TARGET CUDA::nvtx3)
  target_link_libraries(tprimat_cuda INTERFACE $<BUILD_INTERFACE:CUDA::nvtx3>)
  target_compile_definitions(tprimat_cuda INTERFACE TPRIMAT_HAVE_NVTX=1)
endif()
message(STATUS "tprimat: CUPTI ${CUDA_cupti_LIBRARY}, NVTX3 ${CUDAToolkit_INCLUDE_DIRS}")

# NCCL (multi-GPU collectives, comm::Nccl). Optional: without it the CUDA backend runs one GPU.
find_path(TPRIMAT_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
find_library(TPRIMAT_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
if(TPRIMAT_NCCL_INCLUDE_DIR AND TPRIMAT_NCCL_LIBRARY)
  add_library(tprimat_nccl INTERFACE)
  add_library(tprimat::nccl ALIAS tprimat_nccl)
  set_target_properties(tprimat_nccl PROPERTIES EXPORT_NAME nccl)
  target_include_directories(tprimat_nccl INTERFACE $<BUILD_INTERFACE:${TPRIMAT_NCCL_INCLUDE_DIR}>)
  target_link_libraries(tprimat_nccl INTERFACE tprimat_cuda $<BUILD_INTERFACE:${TPRIMAT_NCCL_LIBRARY}>)
  target_compile_definitions(tprimat_nccl INTERFACE TPRIMAT_HAVE_NCCL=1)
endif()
message(STATUS "tprimat: NCCL ${TPRIMAT_NCCL_LIBRARY}")
