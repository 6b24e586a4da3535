// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Every definition of backend::Gpu for the platform this TU is compiled for: what a header-only
// consumer's nvcc or hipcc compiles (tprimat.hpp includes it there).
#pragma once

#include "tprimat/backend/gpu/device_info.hpp"
#include "tprimat/backend/gpu/elementwise.cuh"
#include "tprimat/backend/gpu/flash_attention.cuh"
#include "tprimat/backend/gpu/fp8_cast.cuh"
#include "tprimat/backend/gpu/gemm_tiled.cuh"
#include "tprimat/backend/gpu/host_staged_collectives.hpp"
#include "tprimat/backend/gpu/init.cuh"
#include "tprimat/backend/gpu/memory.hpp"

#if TPRIMAT_GPU_HIP
#include "tprimat/backend/hip/gemm.hpp"
#if defined(TPRIMAT_HAVE_HIPBLASLT)
#include "tprimat/backend/blaslt/fp8_gemm.hpp"
#endif
#else
#include "tprimat/backend/blaslt/fp8_gemm.hpp"
#include "tprimat/backend/cuda/cudnn_attention.hpp"
#include "tprimat/backend/cuda/cupti_collector.hpp"
#include "tprimat/backend/cuda/gemm.hpp"
#endif
