# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Driver of the install test (see CMakeLists.txt): configure, install, build the consumer, run it.
# -DSOURCE_DIR -DWORK_DIR -DCONSUMER_DIR -DGENERATOR -DCXX_COMPILER -DBUILD_TYPE, and for the GPU
# consumer (tests/install/gpu_consumer, built where the compiler is here) -DGPU_CONSUMER_DIR,
# -DCUDA_COMPILER -DCUDA_GENCODE (nvcc, tprimat::cuda) and -DHIPCC -DHIP_ARCH (tprimat::hip).
cmake_minimum_required(VERSION 3.25)

function(run step)
  message(STATUS "install test: ${step}: ${ARGN}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "install test: ${step} failed (${status})")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

if(NOT BUILD_TYPE)
  set(BUILD_TYPE Release)
endif()
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
set(common "-G${GENERATOR}" -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=${BUILD_TYPE})

# A fresh configure of the project with only the library: nothing to compile, just install.
run(configure ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/project ${common}
    -DCMAKE_INSTALL_PREFIX=${prefix} -DTPRIMAT_BUILD_TESTS=OFF -DTPRIMAT_BUILD_CLI=OFF
    -DTPRIMAT_BUILD_EXAMPLES=OFF -DTPRIMAT_BUILD_BENCHMARKS=OFF)
run(install ${CMAKE_COMMAND} --install ${WORK_DIR}/project)

# What must be there, and what must not leak into the exported configuration.
foreach(file include/tprimat/tprimat.hpp include/tprimat/model/counts.hpp
             include/tprimat/kernels/README.md share/cmake/tprimat/tprimatConfig.cmake
             share/cmake/tprimat/tprimatConfigVersion.cmake
             share/cmake/tprimat/tprimatTargets.cmake)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "install test: ${file} was not installed")
  endif()
endforeach()
# The program (apps/tprimat) is not the library: none of its headers is installed.
file(GLOB_RECURSE program_headers ${prefix}/include/cli/* ${prefix}/include/*/options.hpp
     ${prefix}/include/*/jobs.hpp ${prefix}/include/*/progress.hpp)
if(program_headers)
  message(FATAL_ERROR "install test: the program's headers were installed: ${program_headers}")
endif()
file(GLOB config_files ${prefix}/share/cmake/tprimat/*.cmake)
foreach(file IN LISTS config_files)
  file(READ ${file} text)
  foreach(private GTest benchmark CLI11 fmt::)
    string(FIND "${text}" "${private}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "install test: ${file} mentions ${private}, a private dependency")
    endif()
  endforeach()
endforeach()

# The consumer: find_package against the prefix only.
run(consumer-configure ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer ${common}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON)
run(consumer-build ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
run(consumer-run ${WORK_DIR}/consumer/tprimat_consumer)
if(NOT last_output MATCHES "tprimat [0-9]+\\.[0-9]+\\.[0-9]+ consumer: Llama 3.1 8B has 8030261248 parameters")
  message(FATAL_ERROR "install test: unexpected consumer output")
endif()
if(EXISTS ${WORK_DIR}/consumer/tprimat_consumer_mpi)
  run(consumer-mpi-run ${WORK_DIR}/consumer/tprimat_consumer_mpi)
endif()

# The GPU consumer: the whole GPU backend and TrainingStep from the installed headers, compiled
# by nvcc (tprimat::cuda) and by hipcc (tprimat::hip), each linked from two TUs that include them
# and run: one step of a one-layer Llama proxy on a GPU, "no GPU: built only" without one.
function(gpu_consumer name)
  set(dir ${WORK_DIR}/${name})
  run(${name}-configure ${CMAKE_COMMAND} -S ${GPU_CONSUMER_DIR} -B ${dir} ${ARGN}
      -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON)
  run(${name}-build ${CMAKE_COMMAND} --build ${dir})
  run(${name}-run ${dir}/tprimat_gpu_consumer 1 1 2 1)
  if(NOT last_output MATCHES "GPU consumer .*(no GPU: built only|tokens/s over 1 steps)")
    message(FATAL_ERROR "install test: unexpected ${name} output")
  endif()
endfunction()
if(CUDA_COMPILER)
  foreach(file share/cmake/tprimat/tprimatCudaDependencies.cmake
               include/tprimat/backend/gpu/all.cuh include/tprimat/train/device/engine.hpp)
    if(NOT EXISTS ${prefix}/${file})
      message(FATAL_ERROR "install test: ${file} was not installed")
    endif()
  endforeach()
  gpu_consumer(cuda-consumer "-G${GENERATOR}" -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
               -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}
               -DGPU_LANGUAGE=CUDA "-DGPU_ARCH_FLAGS=${CUDA_GENCODE}")
endif()
if(HIPCC)
  gpu_consumer(hip-consumer "-G${GENERATOR}" -DCMAKE_CXX_COMPILER=${HIPCC}
               -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DGPU_LANGUAGE=HIP
               "-DGPU_ARCH_FLAGS=--offload-arch=${HIP_ARCH}")
endif()
message(STATUS "install test: passed")
