// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Example 00: three optimizer steps of the CPU reference engine on Tiny, one process, from the
// umbrella header alone. Run it: build/examples/00_cpu_step/tprimat_example_00_cpu_step
#include <tprimat/tprimat.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace tp = tprimat;

int main() {
  // Model and layout are types: a layout a model cannot split does not compile (example 01).
  using Step = tp::train::TrainingStep<tp::backend::Cpu, tp::model::Tiny, tp::parallel::Layout<1, 1>>;
  // Two micro-batches of two sequences of 64 tokens: one optimizer step sees 4 sequences.
  const tp::train::StepShape shape{.mbs = 2, .seq = 64, .grad_accum = 2};
  Step step(shape, tp::train::OptimizerConfig{});  // AdamW, cosine LR, the seeds' defaults

  const int gbs = shape.mbs * shape.grad_accum;
  const tp::data::SyntheticTokens tokens(tp::model::Tiny::vocab, /*seed=*/42);
  std::vector<std::int32_t> batch(static_cast<std::size_t>(gbs) * (shape.seq + 1));
  for (int s = 0; s < 3; ++s) {
    // This rank's share of step s's global batch: one process holds all of it.
    tp::data::fill_rank_batch(tokens, s, gbs, /*dp_rank=*/0, /*dp=*/1, shape.seq, batch);
    const tp::train::StepStats st = step.run(batch);
    std::printf("step %d: loss %.4f, gradient norm %.4f, learning rate %.3g\n", s + 1, st.loss,
                st.grad_norm, st.lr);
  }
  std::printf("Tiny: %lld parameters, %zu bytes held by the step\n",
              static_cast<long long>(step.parameter_count()), step.peak_bytes());
  return 0;
}
