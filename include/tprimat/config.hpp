// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Compiler and vendor detection: the only host header besides backend/ that may see a vendor header.
#pragma once

#define TPRIMAT_VERSION_MAJOR 0
#define TPRIMAT_VERSION_MINOR 1
#define TPRIMAT_VERSION_PATCH 0
#define TPRIMAT_VERSION_STRING "0.1.0"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define TPRIMAT_HOST_DEVICE __host__ __device__
#else
#define TPRIMAT_HOST_DEVICE
#endif

namespace tprimat {
inline constexpr const char* version_string = TPRIMAT_VERSION_STRING;
}  // namespace tprimat
