// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Activation recomputation on the CPU reference: a recomputed step runs the same kernels on the
// same inputs, so its loss, gradient norm and every weight after three AdamW steps equal the
// step without recomputation bit for bit, in fp32 and under both FP8 recipes; and it holds less.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../../support/short_training.hpp"
#include "../../support/step_shape.hpp"
#include "tprimat/backend/cpu.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/model/tiny.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/train/training_step.hpp"

namespace tprimat {
namespace {

using tprimat::testing::short_schedule;
using tprimat::testing::step_shape;
using tprimat::testing::synthetic_batch;
using train::Recompute;
using train::RecomputeGranularity;
using train::RecomputeMethod;

template <class Layout>
using TinyStep = train::TrainingStep<backend::Cpu, model::Tiny, Layout>;


Recompute full(RecomputeMethod method, int layers) {
  return Recompute{
      .granularity = RecomputeGranularity::full, .method = method, .num_layers = layers};
}

struct StepsRun {
  std::vector<double> losses, norms;
  std::vector<float> params;
  std::size_t bytes = 0;
};

/// Three optimizer steps of two micro-batches each on the tiny model (4 layers).
StepsRun three_steps(Recompute recompute, train::PrecisionConfig precision = {}) {
  train::StepShape shape = step_shape(2, 16, 2);
  shape.recompute = recompute;
  TinyStep<parallel::Layout<1, 1>> step(shape, short_schedule(), 7, parallel::comm::Single{},
                                        precision);
  StepsRun r;
  for (int s = 0; s < 3; ++s) {
    const train::StepStats st = step.run(synthetic_batch(s, 4, 16));
    r.losses.push_back(st.loss);
    r.norms.push_back(st.grad_norm);
  }
  r.params.assign(step.model().params().begin(), step.model().params().end());
  r.bytes = step.model().bytes();
  return r;
}

void expect_identical(const StepsRun& a, const StepsRun& b, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(a.losses.size(), b.losses.size());
  for (std::size_t i = 0; i < a.losses.size(); ++i) {
    EXPECT_TRUE(std::isfinite(a.losses[i]));
    EXPECT_EQ(a.losses[i], b.losses[i]) << "loss of step " << i;
    EXPECT_EQ(a.norms[i], b.norms[i]) << "gradient norm of step " << i;
  }
  ASSERT_EQ(a.params.size(), b.params.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < a.params.size(); ++i) differ += a.params[i] != b.params[i];
  EXPECT_EQ(differ, 0u) << "weights that differ after three steps";
}

TEST(Recompute, FullRecomputationEqualsTheStepWithoutItBitForBit) {
  const StepsRun plain = three_steps({});
  for (const auto& [name, recompute] : std::vector<std::pair<std::string, Recompute>>{
           {"uniform 1", full(RecomputeMethod::uniform, 1)},
           {"uniform 2", full(RecomputeMethod::uniform, 2)},
           {"uniform 3 (a group cut by the stage's end)", full(RecomputeMethod::uniform, 3)},
           {"uniform 4", full(RecomputeMethod::uniform, 4)},
           {"block 1", full(RecomputeMethod::block, 1)},
           {"block 3", full(RecomputeMethod::block, 3)}}) {
    const StepsRun recomputed = three_steps(recompute);
    expect_identical(plain, recomputed, name);
  }
  // Memory: a micro-batch's layers (one in flight without a pipeline) against a group's
  // activations held once plus each group's input; less where groups are smaller than the stage.
  for (const Recompute& saves :
       {full(RecomputeMethod::uniform, 1), full(RecomputeMethod::uniform, 2),
        full(RecomputeMethod::block, 3)})
    EXPECT_LT(three_steps(saves).bytes, plain.bytes)
        << "uniform/block " << saves.num_layers << " holds no less memory";
}

TEST(Recompute, Fp8RecomputationReusesTheForwardsScales) {
  for (auto recipe : {train::Fp8Recipe::delayed, train::Fp8Recipe::current}) {
    const auto precision = train::PrecisionConfig::fp8_hybrid(recipe);
    const StepsRun plain = three_steps({}, precision);
    expect_identical(plain, three_steps(full(RecomputeMethod::uniform, 2), precision),
                     std::string("fp8 ") + train::recipe_name(recipe) + ", uniform 2");
    expect_identical(plain, three_steps(full(RecomputeMethod::block, 1), precision),
                     std::string("fp8 ") + train::recipe_name(recipe) + ", block 1");
  }
}

TEST(Recompute, PipelineStagesRecomputeTheirOwnLayers) {
  // TP 1 x PP 2 in one process is not possible; the layout's stage rule is what differs:
  // each stage's groups start at its own first layer.
  const Recompute r = full(RecomputeMethod::uniform, 2);
  EXPECT_EQ(r.group_begin(3), 2);
  EXPECT_TRUE(r.group_end(1, 3));
  EXPECT_TRUE(r.group_end(2, 3));  // the last group cut short by the stage's end
  const Recompute b = full(RecomputeMethod::block, 2);
  EXPECT_TRUE(b.recomputed(1, 4));
  EXPECT_FALSE(b.recomputed(2, 4));
  EXPECT_TRUE(b.group_end(0, 4));
  EXPECT_FALSE(Recompute{}.recomputed(0, 4));
}

TEST(Recompute, RefusesALayerCountOutsideTheLayersRun) {
  for (int layers : {0, 5}) {
    train::StepShape shape = step_shape(1, 8);
    shape.recompute = full(RecomputeMethod::block, layers);
    try {
      TinyStep<parallel::Layout<1, 1>> step(shape, short_schedule());
      ADD_FAILURE() << "recompute_num_layers " << layers << " accepted";
    } catch (const core::SettingError& e) {
      EXPECT_EQ(e.setting(), "recompute_num_layers");
      EXPECT_NE(std::string(e.what()).find("between 1 and 4"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tprimat
