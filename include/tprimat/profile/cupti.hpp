// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The CUDA backend's collector: CUPTI's activity API (defined in backend/cuda/cupti_collector.hpp).
// No CUDA or CUPTI header here, so host code may include it anywhere.
#pragma once

#include <memory>

#include "tprimat/kernels/platform.hpp"
#include "tprimat/profile/collector.hpp"

namespace tprimat::backend {
struct Gpu;  // backend::Gpu in a CUDA build
}

namespace tprimat::profile {

/// Records concurrent kernels, memcpys and memsets, and ties each launch to the innermost
/// profile::Range open at the time (CUPTI external correlation). Registers CUPTI's buffer
/// callbacks when constructed (before the step is captured as a CUDA graph); enables activity
/// kinds only between start() and stop(). Returns nullptr where the build has no CUPTI.
std::unique_ptr<ActivityCollector> make_cupti_collector();

#if !TPRIMAT_GPU_HIP  // a HIP build's Gpu has no collector yet (roctracer): host ranges only
template <>
inline std::unique_ptr<ActivityCollector> make_collector<backend::Gpu>() {
  return make_cupti_collector();
}
#endif

}  // namespace tprimat::profile
