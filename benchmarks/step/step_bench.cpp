// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// One CPU TrainingStep (forward, backward, AdamW) of Tiny per iteration, on synthetic tokens.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tprimat/backend/cpu.hpp"
#include "tprimat/data/synthetic.hpp"
#include "tprimat/model/counts.hpp"
#include "tprimat/model/tiny.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/train/training_step.hpp"

namespace {

namespace md = tprimat::model;

// Arg 0: sequence length; mbs 1, no accumulation, one rank.
template <md::ModelSpec M>
void BM_TrainingStep(benchmark::State& state) {
  tprimat::train::StepShape shape;
  shape.mbs = 1;
  shape.seq = static_cast<int>(state.range(0));
  tprimat::train::TrainingStep<tprimat::backend::Cpu, M, tprimat::parallel::Layout<1, 1>> step(
      shape, tprimat::train::OptimizerConfig{});
  const tprimat::data::SyntheticTokens corpus(M::vocab, 42);
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(shape.mbs) * (shape.seq + 1));
  std::int64_t index = 0;
  for (auto _ : state) {
    state.PauseTiming();  // data is not part of the step
    tprimat::data::fill_rank_batch(corpus, index++, shape.mbs, 0, 1, shape.seq, tokens);
    state.ResumeTiming();
    const auto stats = step.run(tokens);
    benchmark::DoNotOptimize(stats.loss);
  }
  const double tokens_per_step = static_cast<double>(shape.mbs) * shape.seq;
  const double flops = md::flops_per_token(md::dims<M>(), shape.seq) * tokens_per_step;
  state.counters["tokens/s"] =
      benchmark::Counter(tokens_per_step, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["FLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["params"] = static_cast<double>(step.parameter_count());
}

// Wall time is what a step costs (Eigen may use several threads); CPU time is reported beside it.
template <md::ModelSpec M>
void register_model() {
  benchmark::RegisterBenchmark(("TrainingStep/" + std::string(M::cli_name)).c_str(),
                               &BM_TrainingStep<M>)
      ->ArgName("seq")
      ->Arg(256)
      ->Arg(2048)
      ->Unit(benchmark::kMillisecond)
      ->MeasureProcessCPUTime()
      ->UseRealTime();
}
const bool registered = (register_model<md::Tiny>(), true);

}  // namespace
