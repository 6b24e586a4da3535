// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// A second TU including the whole header-only GPU backend: linking it with main.cpp proves that
// the headers can meet in several TUs of one program (no duplicate symbols).
#include "llama_proxy.hpp"

#include <cstdint>
#include <numeric>
#include <tprimat/tprimat.hpp>
#include <vector>

StepRate run_llama_proxy(int layers, int mbs, int gbs, int warmup, int steps) {
  namespace tp = tprimat;
  using Model = tp::model::Llama31_8B;
  using Backend = tp::backend::Gpu;  // CUDA under nvcc, HIP under hipcc
  const tp::train::StepShape shape{
      .mbs = mbs, .seq = 2048, .grad_accum = gbs / mbs, .layers = layers};
  tp::train::TrainingStep<Backend, Model, tp::parallel::Layout<1, 1>> step(
      shape, tp::train::OptimizerConfig{});
  const tp::data::SyntheticTokens tokens(Model::vocab, 42);
  std::vector<std::int32_t> batch(static_cast<std::size_t>(gbs) * (shape.seq + 1));
  std::vector<double> seconds;
  StepRate rate;
  for (int s = 0; s < warmup + steps; ++s) {
    tp::data::fill_rank_batch(tokens, s, gbs, 0, 1, shape.seq, batch);
    const tp::train::StepStats st = step.run(batch);
    if (s >= warmup) seconds.push_back(st.device_seconds);
    rate.last_loss = st.loss;
  }
  const double mean = std::accumulate(seconds.begin(), seconds.end(), 0.0) / seconds.size();
  rate.tokens_per_second = double(gbs) * shape.seq / mean;
  return rate;
}
