// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The HIP link check's main: the whole TrainingStep on backend::Gpu for every model, linked with
// the backend's sources (src/gpu, src/hip) compiled by hipcc. Here it is built, never run (no
// ROCm runtime or AMD GPU); on a ROCm machine it runs two Tiny steps as a smoke test.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <vector>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/model/all.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/train/device/training_step.hpp"
#include "tprimat/train/training_step.hpp"

namespace {

using tprimat::backend::Gpu;using One = tprimat::parallel::Layout<1, 1>;

/// Two steps of model M (its first `layers` layers, 0: all) on the current device; returns the
/// last loss.
template <class M>
double two_steps(int layers, int seq) {
  tprimat::train::StepShape shape;
  shape.seq = seq;
  shape.layers = layers;
  tprimat::train::TrainingStep<Gpu, M, One> step(shape, {});
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(seq) + 1);
  for (std::size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = static_cast<std::int32_t>((i * 7919) % M::vocab);
  step.run(tokens);
  return step.run(tokens).loss;
}

}  // namespace

int main(int argc, char**) {
  using namespace tprimat::model;
  if (Gpu::device_count() == 0) {
    std::printf("no HIP device: built only\n");
    return 0;
  }
  try {
    const auto info = Gpu::device_info();
    std::printf("%s, gemm %s\n", info.device_name.c_str(), info.gemm.c_str());
    std::printf("Tiny: loss after 2 steps %.4f\n", two_steps<Tiny>(0, 256));
    if (argc > 1) {  // any argument: one layer of each full-width model too
      std::printf("Llama 3.1 8B, 1 layer: %.4f\n", two_steps<Llama31_8B>(1, 2048));
      std::printf("Qwen 2.5 7B, 1 layer: %.4f\n", two_steps<Qwen25_7B>(1, 2048));
      std::printf("Mistral 7B, 1 layer: %.4f\n", two_steps<Mistral7B>(1, 2048));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tprimat HIP smoke test: %s\n", e.what());
    return 1;
  }
  return 0;
}
