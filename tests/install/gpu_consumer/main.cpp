// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// A project outside the tree that trains on the GPU with the installed headers alone:
// `tprimat_gpu_consumer [layers mbs gbs steps]` times an 8-layer Llama 3.1 8B proxy.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <tprimat/tprimat.hpp>

#include "llama_proxy.hpp"

using Gpu = tprimat::backend::Gpu;  // CUDA under nvcc, HIP under hipcc

int main(int argc, char** argv) {
  const int layers = argc > 1 ? std::atoi(argv[1]) : 8;
  const int mbs = argc > 2 ? std::atoi(argv[2]) : 1;
  const int gbs = argc > 3 ? std::atoi(argv[3]) : 64;
  const int steps = argc > 4 ? std::atoi(argv[4]) : 5;
  std::printf("tprimat %s GPU consumer (%s)\n", tprimat::version_string, Gpu::name.data());
  if (layers < 1 || mbs < 1 || gbs < mbs || gbs % mbs != 0 || steps < 1) {
    std::fprintf(stderr, "usage: %s [layers mbs gbs steps], gbs a multiple of mbs\n", argv[0]);
    return 2;
  }
  if (Gpu::device_count() == 0) {
    std::printf("no GPU: built only\n");
    return 0;
  }
  try {
    std::printf("%s\n", Gpu::device_info().device_name.c_str());
    // The warm-up of `tprimat bench`: an eager step, then the graph's capture.
    const StepRate r = run_llama_proxy(layers, mbs, gbs, 2, steps);
    std::printf(
        "Llama 3.1 8B, %d layers, seq 2048, mbs %d, gbs %d: %.1f tokens/s over %d steps "
        "(loss %.4f)\n",
        layers, mbs, gbs, r.tokens_per_second, steps, r.last_loss);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
