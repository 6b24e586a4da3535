// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Example 02: the same step on a GPU: two layers of Llama 3.1 8B at seq 2048, timed on the device.
// In this tree it links the GPU engine compiled once (tprimat_cuda_ops); a project of your own
// may instead compile this file with nvcc (or hipcc), and the umbrella header then brings the
// whole GPU backend as headers (tests/install/gpu_consumer does exactly that).
//   build/examples/02_gpu_step/tprimat_example_02_gpu_step
#include <tprimat/backend/gpu.hpp>
#include <tprimat/tprimat.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace tp = tprimat;

int main() {
  if (tp::backend::Gpu::device_count() == 0) {
    std::printf("no GPU here: this example needs an NVIDIA (or AMD) GPU\n");
    return 77;  // CTest's skip code
  }
  using Model = tp::model::Llama31_8B;
  const tp::train::StepShape shape{.mbs = 1, .seq = 2048, .grad_accum = 4, .layers = 2};
  tp::train::TrainingStep<tp::backend::Gpu, Model, tp::parallel::Layout<1, 1>> step(
      shape, tp::train::OptimizerConfig{});
  const int gbs = shape.mbs * shape.grad_accum;
  const tp::data::SyntheticTokens tokens(Model::vocab, 42);
  std::vector<std::int32_t> batch(static_cast<std::size_t>(gbs) * (shape.seq + 1));
  for (int s = 0; s < 4; ++s) {  // the first steps warm up (plans, graph capture)
    tp::data::fill_rank_batch(tokens, s, gbs, 0, 1, shape.seq, batch);
    const tp::train::StepStats st = step.run(batch);
    std::printf("step %d: loss %.4f, %.1f ms on the device, %.0f tokens/s\n", s + 1, st.loss,
                1e3 * st.device_seconds, double(gbs) * shape.seq / st.device_seconds);
  }
  const auto info = tp::backend::Gpu::device_info();
  std::printf("%s: peak %.1f GiB allocated\n", info.device_name.c_str(),
              double(step.peak_bytes()) / double(1ull << 30));
  return 0;
}
