# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# What tprimat::cuda and tprimat::nccl link besides the CUDA toolkit, found beside it as in the
# build: cuDNN 9 (fused attention), NCCL (collectives), CUPTI (--profile's collector), NVTX3
# (ranges for Nsight Systems). Each becomes a target tprimat::<name>_library carrying its headers,
# library and TPRIMAT_HAVE_<NAME> define, or an empty one where it is missing (the code then takes
# its fallback: flash attention, one GPU, host ranges). Included by cmake/cuda.cmake and by the
# installed package's config, after find_package(CUDAToolkit).

# tprimat_cuda_optional(NAME DEFINE [HEADER h LIBRARY l] [TARGET t]): the target of one dependency.
function(tprimat_cuda_optional name define)
  cmake_parse_arguments(D "" "HEADER;LIBRARY;TARGET" "" ${ARGN})
  set(target tprimat::${name}_library)
  string(TOUPPER ${name} upper)
  if(TARGET ${target})
    return()
  endif()
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  set(found OFF)
  if(D_TARGET AND TARGET ${D_TARGET})
    set_property(TARGET ${target} PROPERTY INTERFACE_LINK_LIBRARIES ${D_TARGET})
    set(found ON)
  elseif(D_HEADER)
    find_path(TPRIMAT_${upper}_INCLUDE_DIR ${D_HEADER} HINTS ${CUDAToolkit_INCLUDE_DIRS}
              PATH_SUFFIXES cuda/include)
    find_library(TPRIMAT_${upper}_LIBRARY ${D_LIBRARY} HINTS ${CUDAToolkit_LIBRARY_DIR})
    if(TPRIMAT_${upper}_INCLUDE_DIR AND TPRIMAT_${upper}_LIBRARY)
      set_property(TARGET ${target} PROPERTY INTERFACE_INCLUDE_DIRECTORIES
                                             ${TPRIMAT_${upper}_INCLUDE_DIR})
      set_property(TARGET ${target} PROPERTY INTERFACE_LINK_LIBRARIES ${TPRIMAT_${upper}_LIBRARY})
      set(found ON)
    endif()
  endif()
  if(found)
    set_property(TARGET ${target} PROPERTY INTERFACE_COMPILE_DEFINITIONS ${define}=1)
  endif()
  message(STATUS "tprimat: ${name} ${found}")
  set(TPRIMAT_${upper}_FOUND ${found} PARENT_SCOPE)
endfunction()

tprimat_cuda_optional(cudnn TPRIMAT_HAVE_CUDNN HEADER cudnn.h LIBRARY cudnn)
tprimat_cuda_optional(nccl TPRIMAT_HAVE_NCCL HEADER nccl.h LIBRARY nccl)
tprimat_cuda_optional(cupti TPRIMAT_HAVE_CUPTI TARGET CUDA::cupti)
tprimat_cuda_optional(nvtx TPRIMAT_HAVE_NVTX TARGET CUDA::nvtx3)
