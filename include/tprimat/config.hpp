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

// The GPU backend's non-template definitions (backend/gpu/, backend/cuda/, backend/hip/) are
// inline: a header-only consumer compiles them where it includes them. The in-tree build compiles
// each once (src/) with TPRIMAT_GPU_LIBRARY_TU defined, as the ordinary external definitions its
// binaries link (see src/README.md).
#if defined(TPRIMAT_GPU_LIBRARY_TU)
#define TPRIMAT_GPU_INLINE
#else
#define TPRIMAT_GPU_INLINE inline
#endif

// The compiler that built this code, as the result's `reproduce.compiler` names it.
#if defined(__clang__)
#define TPRIMAT_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define TPRIMAT_COMPILER "gcc " __VERSION__
#else
#define TPRIMAT_COMPILER "unknown compiler"
#endif

namespace tprimat {
inline constexpr const char* version_string = TPRIMAT_VERSION_STRING;
inline constexpr const char* compiler_version = TPRIMAT_COMPILER;
}  // namespace tprimat
