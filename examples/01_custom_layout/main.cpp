// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Example 01: a model of your own and a layout of your choosing. The layout rules are checked at
// compile time (a TP that does not divide the heads does not compile), the same rules answer at
// run time with a message, and the step runs over MPI ranks, one process per rank:
//   mpirun -np 2 build/examples/01_custom_layout/tprimat_example_01_custom_layout
#include <tprimat/parallel/mpi.hpp>
#include <tprimat/tprimat.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace tp = tprimat;

/// A Llama-shaped model narrower than Llama 3.1 8B: the model is a struct of constants.
struct Narrow {
  static constexpr std::string_view name = "Narrow";
  static constexpr std::string_view cli_name = "narrow";
  static constexpr int hidden = 256;
  static constexpr int layers = 4;
  static constexpr int heads = 8;
  static constexpr int kv_heads = 2;
  static constexpr int head_dim = hidden / heads;  // 32
  static constexpr int ffn = 704;
  static constexpr int vocab = 512;
  static constexpr double rope_theta = 500000.0;
  static constexpr tp::model::RopeScaling rope_scaling{};
  static constexpr double norm_eps = 1e-5;
  static constexpr bool qkv_bias = false;
  static constexpr bool tied_embeddings = false;
};
static_assert(tp::model::ModelSpec<Narrow>);

// TP=2 splits the 8 heads, the 2 KV heads and the FFN; PP=1. Layout<4, 1> would not compile:
// 4 does not divide Narrow's 2 KV heads.
using TwoWayTensorParallel = tp::parallel::Layout<2, 1>;
static_assert(tp::parallel::LayoutFits<Narrow, TwoWayTensorParallel>::value);

int main(int argc, char** argv) {
  // The run-time form of the same rules, as a program reading a layout from its flags asks them.
  if (const auto why = tp::parallel::layout_error(tp::model::dims<Narrow>(), 4, 1))
    std::printf("TP=4 refused: %s\n", why->c_str());

  tp::parallel::MpiSession session(&argc, &argv);
  tp::parallel::comm::Mpi world;
  if (world.size() % TwoWayTensorParallel::tp != 0) {
    if (world.rank() == 0)
      std::printf("TP=2 needs a multiple of 2 ranks: mpirun -np 2 %s\n", argv[0]);
    return world.size() == 1 ? 0 : 2;  // one rank alone: shown the launch line, not an error
  }
  // TP=2 x DP=world/2; every rank of a DP replica reads the same share of the global batch.
  const tp::train::StepShape shape{.mbs = 1, .seq = 64, .grad_accum = 2};
  tp::train::TrainingStep<tp::backend::Cpu, Narrow, TwoWayTensorParallel, tp::parallel::comm::Mpi>
      step(shape, tp::train::OptimizerConfig{}, /*seed=*/42, world);
  const int dp = step.groups().shape.dp;
  const int gbs = shape.mbs * shape.grad_accum * dp;
  const tp::data::SyntheticTokens tokens(Narrow::vocab, 42);
  std::vector<std::int32_t> batch(static_cast<std::size_t>(gbs / dp) * (shape.seq + 1));
  for (int s = 0; s < 2; ++s) {
    tp::data::fill_rank_batch(tokens, s, gbs, step.groups().at.dp, dp, shape.seq, batch);
    const tp::train::StepStats st = step.run(batch);  // identical on every rank
    if (world.rank() == 0)
      std::printf("step %d over TP=2 x DP=%d: loss %.4f, gradient norm %.4f\n", s + 1, dp, st.loss,
                  st.grad_norm);
  }
  return 0;
}
