// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Activation recomputation on the device engine: the recomputed step reruns a group's forward
// (full) or a layer's selected modules (selective) with the same kernels on the same inputs
// (FP8: the same scales), so it equals the step that kept everything bit for bit (loss, gradient norm, every weight, the FP8 scales), replayed as a
// CUDA graph and eager, and holds less.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "../support/test_models.hpp"
#include "gpu_test.hpp"
#include "tprimat/backend/gpu.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/train/training_step.hpp"

namespace {

using namespace tprimat;
using backend::Gpu;
using One = parallel::Layout<1, 1>;
using train::Recompute;
using train::RecomputeMethod;

/// Four layers, so the current FP8 recipe (first and last layers in bf16) mixes both kinds.
struct Llama4 : tprimat::testing::LlamaNarrow {
  static constexpr int layers = 4;
};

Recompute full(RecomputeMethod method, int layers) {
  return Recompute{
      .granularity = train::RecomputeGranularity::full, .method = method, .num_layers = layers};
}

/// Three steps of three micro-batches with and without `recompute`, from the same weights.
void compare(Recompute recompute, train::DeviceOptions options, const std::string& what) {
  const std::uint64_t seed = tprimat::testing::fresh_seed();
  SCOPED_TRACE(what + ", seed " + std::to_string(seed));
  train::OptimizerConfig opt;
  opt.warmup_steps = 2;
  train::StepShape plain_shape{2, 64, 3, 0};
  train::StepShape recomputed_shape = plain_shape;
  recomputed_shape.recompute = recompute;
  train::TrainingStep<Gpu, Llama4, One> a(plain_shape, opt, seed, {}, options);
  train::TrainingStep<Gpu, Llama4, One> b(recomputed_shape, opt, seed, {}, options);
  b.engine().load_parameters(a.engine().parameters());
  const std::size_t per_step = std::size_t(3) * 2 * (64 + 1);
  for (int s = 0; s < 3; ++s) {
    SCOPED_TRACE("step " + std::to_string(s + 1));
    const auto tokens = tprimat::testing::random_tokens(per_step, Llama4::vocab, seed + 100 + s);
    const auto x = a.run(tokens), y = b.run(tokens);
    ASSERT_TRUE(std::isfinite(x.loss) && std::isfinite(x.grad_norm));
    EXPECT_EQ(x.loss, y.loss);
    EXPECT_EQ(x.grad_norm, y.grad_norm);
  }
  EXPECT_TRUE(a.engine().parameters() == b.engine().parameters()) << "weights differ";
  EXPECT_TRUE(a.engine().fp8_scales() == b.engine().fp8_scales()) << "FP8 scales differ";
  EXPECT_EQ(a.engine().graph_captured(), b.engine().graph_captured());
  std::printf("  %s: held %zu bytes, recomputed %zu\n", what.c_str(), a.engine().held_bytes(),
              b.engine().held_bytes());
}

/// Selective recomputation of `modules` (RecomputeModule bits).
Recompute selective(std::initializer_list<train::RecomputeModule> modules) {
  unsigned bits = 0;
  for (auto m : modules) bits |= static_cast<unsigned>(m);
  return train::selective_recompute(bits);
}
using enum train::RecomputeModule;

train::DeviceOptions options(train::PrecisionConfig precision, bool graph) {
  train::DeviceOptions o;
  o.precision = precision;
  o.graph = graph;
  return o;
}

TEST(GpuRecompute, Bf16IsTheKeptStepBitForBit) {
  TPRIMAT_REQUIRE_GPU();
  for (bool graph : {true, false}) {
    const std::string mode = graph ? "graph" : "eager";
    compare(full(RecomputeMethod::uniform, 1), options({}, graph), "bf16 uniform 1 " + mode);
    compare(full(RecomputeMethod::uniform, 3), options({}, graph), "bf16 uniform 3 " + mode);
    compare(full(RecomputeMethod::block, 2), options({}, graph), "bf16 block 2 " + mode);
  }
}

TEST(GpuRecompute, Fp8ReusesTheForwardsScalesBitForBit) {
  TPRIMAT_REQUIRE_GPU();
  for (auto recipe : {train::Fp8Recipe::delayed, train::Fp8Recipe::current}) {
    const auto p = train::PrecisionConfig::fp8_hybrid(recipe);
    const std::string name = std::string("fp8 ") + train::recipe_name(recipe);
    compare(full(RecomputeMethod::uniform, 1), options(p, true), name + " uniform 1");
    compare(full(RecomputeMethod::uniform, 2), options(p, true), name + " uniform 2");
    compare(full(RecomputeMethod::block, 1), options(p, false), name + " block 1 eager");
  }
}

TEST(GpuRecompute, SelectiveIsTheKeptStepBitForBit) {
  TPRIMAT_REQUIRE_GPU();
  for (bool graph : {true, false}) {
    const std::string mode = graph ? "graph" : "eager";
    compare(selective({layernorm}), options({}, graph), "bf16 selective layernorm " + mode);
    compare(selective({mlp}), options({}, graph), "bf16 selective mlp " + mode);
    compare(selective({layernorm, mlp}), options({}, graph), "bf16 selective both " + mode);
  }
  for (auto recipe : {train::Fp8Recipe::delayed, train::Fp8Recipe::current}) {
    const auto p = train::PrecisionConfig::fp8_hybrid(recipe);
    const std::string name = std::string("fp8 ") + train::recipe_name(recipe);
    compare(selective({mlp}), options(p, true), name + " selective mlp");
    compare(selective({layernorm, mlp}), options(p, false), name + " selective both eager");
  }
}

TEST(GpuRecompute, SelectiveHoldsLessThanTheKeptStep) {
  TPRIMAT_REQUIRE_GPU();
  train::StepShape plain{2, 256, 1, 0};
  std::size_t previous = 0;
  for (auto modules : {std::initializer_list<train::RecomputeModule>{},
                       std::initializer_list<train::RecomputeModule>{layernorm},
                       std::initializer_list<train::RecomputeModule>{layernorm, mlp}}) {
    train::StepShape shape = plain;
    if (modules.size() > 0) shape.recompute = selective(modules);
    train::TrainingStep<Gpu, Llama4, One> step(shape, {}, 1);
    const std::size_t held = step.engine().held_bytes();
    if (previous > 0) EXPECT_LT(held, previous) << modules.size() << " modules";
    previous = held;
  }
}

TEST(GpuRecompute, HoldsLessWhereGroupsAreSmallerThanTheStage) {
  TPRIMAT_REQUIRE_GPU();
  train::StepShape plain{2, 256, 1, 0};
  train::StepShape recomputed = plain;
  recomputed.recompute = full(RecomputeMethod::uniform, 1);
  train::TrainingStep<Gpu, Llama4, One> a(plain, {}, 1);
  train::TrainingStep<Gpu, Llama4, One> b(recomputed, {}, 1);
  EXPECT_LT(b.engine().held_bytes(), a.engine().held_bytes());
}

}  // namespace
