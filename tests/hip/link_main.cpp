// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The HIP link check's main: references every launcher, so the link must resolve them all.
// Built, never run: running needs a ROCm runtime and an AMD GPU.
#include <cstdio>

#include "launchers.hpp"

int main() {
  using namespace tprimat::hip_check;
  int count = 0;
  for (auto launchers : {elementwise_launchers(), flash_attention_launchers(), init_launchers(),
                         gemm_tiled_launchers()})
    for (AnyLauncher f : launchers) count += f != nullptr;
  std::printf("%d launchers linked\n", count);
  return 0;
}
