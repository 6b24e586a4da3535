// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The launchers each HIP check TU instantiates, by address, for the link check's main.
#pragma once

#include <span>

namespace tprimat::hip_check {

/// Any launcher's address (a function pointer converts to any other and back; never called).
using AnyLauncher = void (*)();

/// `f` as an AnyLauncher: the one cast every TU's table makes.
template <class F>
AnyLauncher any(F* f) {
  return reinterpret_cast<AnyLauncher>(f);
}

/// Each TU mirrors one kernel TU of src/cuda: the same kernel headers and launchers, with the
/// template arguments the CUDA backend instantiates. Taking a launcher's address instantiates
/// it and every kernel it launches for the device; the link check then needs them all resolved.
std::span<const AnyLauncher> elementwise_launchers();      // src/cuda/elementwise.cu
std::span<const AnyLauncher> flash_attention_launchers();  // src/cuda/flash_attention.cu
std::span<const AnyLauncher> init_launchers();             // src/cuda/init.cu
std::span<const AnyLauncher> gemm_tiled_launchers();       // src/cuda/gemm_tiled.cu

}  // namespace tprimat::hip_check
