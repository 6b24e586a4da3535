# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Install and export tprimat::tprimat (and tprimat::mpi, tprimat::cuda, tprimat::nccl, tprimat::hip
# where built) for find_package.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The export set's name, spelled here only: the config file and both export() calls read it.
set(TPRIMAT_EXPORT_SET tprimatTargets)
set(TPRIMAT_CONFIG_DESTINATION ${CMAKE_INSTALL_DATADIR}/cmake/tprimat)

# Headers and the device code next to them, so users write <tprimat/...> and
# <tprimat/kernels/...>. Both live under one include/ in the install tree.
install(DIRECTORY include/ kernels/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(tprimat_exported_targets tprimat)
# The MPI target is exported only when this build found MPI; the config then also asks for
# MPI (find_dependency), without which the exported tprimat::mpi could not resolve.
set(TPRIMAT_EXPORTS_MPI OFF)
if(TARGET tprimat_mpi)
  list(APPEND tprimat_exported_targets tprimat_mpi)
  set(TPRIMAT_EXPORTS_MPI ON)
endif()

# The GPU backends are headers too; their INTERFACE targets carry what they link. The config
# finds those dependencies again (tprimatCudaDependencies.cmake: cuDNN, NCCL, CUPTI, NVTX3 found
# or left out as in the build; tprimatHipDependencies.cmake: the HIP runtime, hipBLASLt and RCCL).
set(TPRIMAT_EXPORTS_CUDA OFF)
if(TARGET tprimat_cuda)
  list(APPEND tprimat_exported_targets tprimat_cuda)
  set(TPRIMAT_EXPORTS_CUDA ON)
  if(TARGET tprimat_nccl)
    list(APPEND tprimat_exported_targets tprimat_nccl)
  endif()
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/tprimatCudaDependencies.cmake
          DESTINATION ${TPRIMAT_CONFIG_DESTINATION})
endif()
set(TPRIMAT_EXPORTS_HIP OFF)
if(TARGET tprimat_hip)
  list(APPEND tprimat_exported_targets tprimat_hip)
  set(TPRIMAT_EXPORTS_HIP ON)
  if(TARGET tprimat_nccl AND NOT TARGET tprimat_cuda)  # comm::Nccl over RCCL
    list(APPEND tprimat_exported_targets tprimat_nccl)
  endif()
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/tprimatHipDependencies.cmake
          DESTINATION ${TPRIMAT_CONFIG_DESTINATION})
endif()

install(TARGETS ${tprimat_exported_targets} EXPORT ${TPRIMAT_EXPORT_SET})
install(EXPORT ${TPRIMAT_EXPORT_SET}
        NAMESPACE tprimat::
        DESTINATION ${TPRIMAT_CONFIG_DESTINATION})

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/tprimatConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/tprimatConfig.cmake
  INSTALL_DESTINATION ${TPRIMAT_CONFIG_DESTINATION})
# Header-only: one package serves every architecture.
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/tprimatConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion
  ARCH_INDEPENDENT)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tprimatConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/tprimatConfigVersion.cmake
        DESTINATION ${TPRIMAT_CONFIG_DESTINATION})

# Build-tree export: find_package(tprimat) with tprimat_DIR pointing at this build dir works
# without installing (the same config file reads the targets file next to it).
export(EXPORT ${TPRIMAT_EXPORT_SET}
       NAMESPACE tprimat::
       FILE ${CMAKE_CURRENT_BINARY_DIR}/${TPRIMAT_EXPORT_SET}.cmake)
