// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The uneven pipeline split from flags and config files to the job, its memory plan per stage,
// and the result document (cli/jobs.hpp, layout_flags.hpp, memory_plan.hpp, result*.hpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../unit/bench/result_fixtures.hpp"
#include "jobs_fixture.hpp"
#include "tprimat/bench/memory_plan.hpp"
#include "tprimat/bench/result.hpp"
#include "tprimat/bench/result_check.hpp"
#include "tprimat/model/all.hpp"
#include "cli/jobs.hpp"
#include "cli/layout_flags.hpp"
#include "cli/options.hpp"

namespace {

using namespace tprimat;
namespace fs = std::filesystem;
using V = std::vector<int>;

/// Two CPU ranks with unknown memory (no out-of-memory check: the plans still print), gbs 2.
class SplitJobs : public tprimat::testing::JobsTest {
 protected:
  void SetUp() override {
    JobsTest::SetUp();
    env_.device.total_memory_gb = 0;
    env_.world = 2;
    opts_.gbs = 2;
  }
};

#define EXPECT_ERROR_HAS(o, text)                                           \
  do {                                                                      \
    const std::string e_ = error_of(o);                                     \
    EXPECT_NE(e_.find(text), std::string::npos) << "error: '" << e_ << "'"; \
  } while (0)

TEST(SplitOptions, FlagsParseWithTheirRanges) {
  cli::BenchOptions o;
  std::vector<std::string_view> args{"--pp",
                                     "2",
                                     "--decoder-first-pipeline-num-layers",
                                     "3",
                                     "--decoder-last-pipeline-num-layers=1",
                                     "--pipeline-split",
                                     "even"};
  ASSERT_TRUE(cli::parse_args(o, args, true));
  EXPECT_EQ(o.first_stage_layers, 3);
  EXPECT_EQ(o.last_stage_layers, 1);
  EXPECT_EQ(o.pipeline_split, "even");
  cli::BenchOptions z;
  std::vector<std::string_view> zero{"--decoder-last-pipeline-num-layers", "0"};
  EXPECT_THROW(cli::parse_args(z, zero, true), core::InputError);
  EXPECT_NE(cli::usage("tprimat", true).find("--pipeline-split"), std::string::npos);
}

TEST_F(SplitJobs, DefaultIsTheEvenSplitRecordedPerStage) {
  auto o = opts_;
  o.pp = 2;
  const auto j = job(o);
  EXPECT_EQ(j.ctx.plan.stage_layers, (V{2, 2}));
  ASSERT_EQ(j.predicted_stages.size(), 2u);
  const auto doc = bench::make_result(j.ctx, {});
  EXPECT_EQ(doc["parallelism_config"]["pipeline_layers"], nlohmann::json({2, 2}));
  // One stage: its layers.
  o.pp = 0;
  EXPECT_EQ(job(o).ctx.plan.stage_layers, (V{4}));
}

TEST_F(SplitJobs, MegatronFlagsReachThePlanTheMemoryPlanAndTheResult) {
  auto o = opts_;
  o.pp = 2;
  o.first_stage_layers = 3;
  const auto j = job(o);
  EXPECT_EQ(j.ctx.plan.stage_layers, (V{3, 1}));
  ASSERT_EQ(j.predicted_stages.size(), 2u);
  // The first stage holds 3 layers and the embedding: the larger plan, and the one predicted.
  EXPECT_EQ(j.predicted_stages[0].params,
            3 * model::layer_params(j.ctx.dims) + model::embedding_params(j.ctx.dims));
  EXPECT_EQ(j.predicted_stages[1].params, 1 * model::layer_params(j.ctx.dims) +
                                              model::head_params(j.ctx.dims) + j.ctx.dims.hidden);
  EXPECT_DOUBLE_EQ(j.ctx.predicted.total,
                   std::max(j.predicted_stages[0].total, j.predicted_stages[1].total));
  const auto doc = bench::make_result(j.ctx, {});
  EXPECT_EQ(doc["parallelism_config"]["pipeline_layers"], nlohmann::json({3, 1}));
  o.first_stage_layers = 0;
  o.last_stage_layers = 3;
  EXPECT_EQ(job(o).ctx.plan.stage_layers, (V{1, 3}));
  // A layer count PP does not divide runs when the split is given: 3 layers as 2+1.
  o.layers = "3";
  o.last_stage_layers = 0;
  o.first_stage_layers = 2;
  EXPECT_EQ(job(o).ctx.plan.stage_layers, (V{2, 1}));
  o.first_stage_layers = 0;
  EXPECT_ERROR_HAS(o, "PP must divide the layers");
}

TEST_F(SplitJobs, AutoBalancesTheFullModelsAndLeavesTinyEven) {
  auto o = opts_;
  o.pp = 2;
  o.pipeline_split = "auto";
  EXPECT_EQ(job(o).ctx.plan.stage_layers, (V{2, 2}));  // tiny's head is a fraction of a layer
  o.model = "llama";
  o.seq = 8192;
  o.gbs = 64;
  EXPECT_EQ(job(o).ctx.plan.stage_layers, (V{17, 15}));
  o.layers = "8";  // the issue's 8-layer proxy
  EXPECT_EQ(job(o).ctx.plan.stage_layers, (V{5, 3}));
  o.model = "qwen";
  o.layers = "";
  env_.world = 4;
  o.pp = 4;
  EXPECT_EQ(job(o).ctx.plan.stage_layers, (V{7, 8, 8, 5}));
}

TEST_F(SplitJobs, LayersAutoSearchesCountsTheSplitAccepts) {
  auto o = opts_;
  env_.device.total_memory_gb = 1e6;  // everything fits: the full depth
  o.layers = "auto";
  o.pp = 2;
  o.first_stage_layers = 3;
  const auto j = job(o);
  EXPECT_EQ(j.ctx.dims.layers, 4);
  EXPECT_EQ(j.ctx.plan.stage_layers, (V{3, 1}));
}

TEST_F(SplitJobs, BadRequestsNameTheProblemAndTheFix) {
  auto o = opts_;
  o.first_stage_layers = 3;  // PP=1, one layout
  EXPECT_ERROR_HAS(o, "has PP=1 (one stage)");
  EXPECT_ERROR_HAS(o, "--pp 2 or more");
  o.pp = 2;
  o.first_stage_layers = 4;  // nothing left for the last stage
  EXPECT_ERROR_HAS(o, "leave 0 layer(s)");
  o.first_stage_layers = 3;
  o.last_stage_layers = 2;
  EXPECT_ERROR_HAS(o, "make the two sum to 4");
  o.last_stage_layers = 0;
  o.pipeline_split = "auto";
  EXPECT_ERROR_HAS(o, "pass one of the two");
  o.pipeline_split = "even";
  EXPECT_ERROR_HAS(o, "--pipeline-split even gives every stage layers / PP");
  o.first_stage_layers = 0;
  o.pipeline_split = "fast";
  EXPECT_ERROR_HAS(o, "unknown --pipeline-split 'fast'");
  o.parallel = "all";  // a bad value is refused, not a reason to skip every strategy
  o.pp = 0;
  EXPECT_ERROR_HAS(o, "unknown --pipeline-split 'fast'");
}

TEST_F(SplitJobs, ParallelAllAppliesTheSplitWherePpIsAboveOne) {
  auto o = opts_;
  o.parallel = "all";
  o.first_stage_layers = 3;
  env_.world = 8;
  o.gbs = 8;
  const auto list = cli::resolve_jobs(o, env_);
  ASSERT_EQ(list.jobs.size(), 5u) << "the split skips no strategy";
  for (const auto& j : list.jobs) {
    const V want = j.ctx.plan.pp == 2 ? V{3, 1} : V{4};
    EXPECT_EQ(j.ctx.plan.stage_layers, want) << j.ctx.plan.strategy_name;
  }
}

TEST_F(SplitJobs, ConfigFileKeysAndFlagsThatContradictThem) {
  auto o = opts_;
  o.parallel = write("split.json", R"({"tensor_model_parallel_size": 1,
      "pipeline_model_parallel_size": 2, "decoder_last_pipeline_num_layers": 3})");
  EXPECT_EQ(job(o).ctx.plan.stage_layers, (V{1, 3}));
  o.last_stage_layers = 3;  // agreeing: fine
  EXPECT_EQ(job(o).ctx.plan.stage_layers, (V{1, 3}));
  o.last_stage_layers = 2;
  EXPECT_ERROR_HAS(o,
                   "--decoder-last-pipeline-num-layers 2 contradicts strategy split's "
                   "decoder_last_pipeline_num_layers 3");
  o = opts_;
  o.parallel = write("auto.json", R"({"tensor_model_parallel_size": 1,
      "pipeline_model_parallel_size": 2, "pipeline_split": "auto"})");
  EXPECT_EQ(job(o).ctx.plan.stage_layers, (V{2, 2}));
  o.pipeline_split = "even";
  EXPECT_ERROR_HAS(o, "--pipeline-split even contradicts strategy auto's pipeline_split auto");
  o = opts_;
  o.parallel = write("bad.json", R"({"tensor_model_parallel_size": 1,
      "pipeline_model_parallel_size": 2, "pipeline_split": "fast"})");
  EXPECT_ERROR_HAS(o, "pipeline_split must be \"even\" or \"auto\", got \"fast\"");
  o.parallel = write("zero.json", R"({"tensor_model_parallel_size": 1,
      "pipeline_model_parallel_size": 2, "decoder_first_pipeline_num_layers": 0})");
  EXPECT_ERROR_HAS(o, "decoder_first_pipeline_num_layers must be an integer from 1 to");
}

TEST(SplitMemoryPlan, EachStageHoldsItsLayersAndTheBusiestIsPredicted) {
  bench::MemoryPlanInput in;
  in.dims = model::dims<model::Llama31_8B>();
  in.pp = 2;
  in.shape.seq = 8192;
  in.shape.grad_accum = 8;
  const bench::MemoryPlan even = bench::plan_memory(in);
  in.shape.stage_layers = {16, 16};  // written out, the even split plans the same
  EXPECT_DOUBLE_EQ(bench::plan_memory(in).total, even.total);
  in.shape.stage_layers = {17, 15};
  const auto stages = bench::plan_stages(in);
  ASSERT_EQ(stages.size(), 2u);
  in.shape.stage_layers.clear();
  const auto even_stages = bench::plan_stages(in);
  // Activations follow the stage's layers: the first stage keeps 2 micro-batches in flight, so
  // its 17th layer adds 2 x 8192 tokens of one layer's saved bytes; the last keeps 1.
  // A bf16 layer's buffers a token (train/buffer_table.hpp).
  const double layer_bytes =
      4.0 * 2 * 4096 + 2.0 * 2 * 4096 + 4.0 * 2 + 2.0 * (2 * 4096 + 2 * 1024) + 4.0 * 32 +
      2.0 * 2 * 14336;
  EXPECT_DOUBLE_EQ(stages[0].activations - even_stages[0].activations, 2 * 8192 * layer_bytes);
  EXPECT_DOUBLE_EQ(even_stages[1].activations - stages[1].activations, 1 * 8192 * layer_bytes);
  // ... and the weights by a layer's parameters per layer moved.
  EXPECT_EQ(stages[0].params - even_stages[0].params, model::layer_params(in.dims));
  EXPECT_EQ(even_stages[1].params - stages[1].params, model::layer_params(in.dims));
  in.shape.stage_layers = {17, 15};
  EXPECT_DOUBLE_EQ(bench::plan_memory(in).total, std::max(stages[0].total, stages[1].total));
  // PP=4: a middle stage keeps pp - stage micro-batches in flight: 3 and 2.
  in.pp = 4;
  in.shape.stage_layers = {8, 8, 8, 8};
  const auto four = bench::plan_stages(in);
  ASSERT_EQ(four.size(), 4u);
  EXPECT_NEAR(four[1].activations / four[2].activations, 3.0 / 2.0, 1e-9);
  EXPECT_NEAR(four[0].activations / four[1].activations, 4.0 / 3.0, 1e-9);
}

TEST(SplitResult, CheckedAndComparedWithResultsThatPredateIt) {
  bench::ResultContext c = tprimat::testing::cpu_result_context(
      parallel::Plan{"tp1_pp2", 1, 2, 1, 2, {2, 2}}, "tprimat bench --pp 2");
  const bench::RunRecord r = tprimat::testing::complete_cpu_run();
  nlohmann::json old = bench::make_result(c, {r});
  EXPECT_EQ(bench::result_error(old), std::nullopt);
  old["parallelism_config"].erase("pipeline_layers");  // as results before the key read
  EXPECT_TRUE(bench::configuration_differences(old, c).empty())
      << "a result without the key ran the even split";
  c.plan.stage_layers = {3, 1};
  const auto diff = bench::configuration_differences(old, c);
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0], "parallelism_config.pipeline_layers: [2,2] -> [3,1]");
  auto doc = bench::make_result(c, {r});
  EXPECT_EQ(bench::result_error(doc), std::nullopt);
  doc["parallelism_config"]["pipeline_layers"] = {4};
  EXPECT_EQ(
      bench::result_error(doc, false)
          .value_or("")
          .rfind("parallelism_config.pipeline_layers is [4], and must hold one count per pipeline "
                 "stage",
                 0),
      0u)
      << bench::result_error(doc, false).value_or("none");
  doc["parallelism_config"]["pipeline_layers"] = {3, 2};
  EXPECT_EQ(bench::result_error(doc, false).value_or(""),
            "parallelism_config.pipeline_layers is [3,2], and must sum to "
            "training_config.num_layers");
  doc["parallelism_config"]["pipeline_layers"] = {4, 0};
  EXPECT_EQ(bench::result_error(doc, false)
                .value_or("")
                .rfind("parallelism_config.pipeline_layers.1 is 0", 0),
            0u);
  constexpr auto stages = bench::experiment_field("/parallelism_config/pipeline_layers");
  EXPECT_EQ(bench::experiment_label(stages, nlohmann::json({17, 15})), "layers per stage 17+15");
}

}  // namespace
