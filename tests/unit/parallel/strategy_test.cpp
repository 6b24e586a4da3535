// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The seeds' five strategies per model and platform, and make_plan's checks and messages.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tprimat/core/error.hpp"
#include "tprimat/model/all.hpp"
#include "tprimat/parallel/strategy.hpp"

namespace tprimat::parallel {
namespace {

// name, model, platform, TP, PP: the seeds' table (tprimat README "Parallelism Strategies
// Explained"); Mistral and Tiny take Llama's column; "cpu" takes the NVIDIA one.
struct Row {
  const char* strategy;
  const char* model;
  const char* platform;
  int tp, pp;
};
constexpr Row table[] = {
    {"maximum_performance", "llama", "nvd", 4, 1},   {"maximum_performance", "qwen", "nvd", 4, 2},
    {"maximum_performance", "llama", "amd", 1, 1},   {"maximum_performance", "qwen", "amd", 1, 1},
    {"truly_identical", "llama", "nvd", 4, 1},       {"truly_identical", "qwen", "nvd", 4, 2},
    {"truly_identical", "llama", "amd", 4, 1},       {"truly_identical", "qwen", "amd", 4, 2},
    {"memory_optimized", "llama", "nvd", 4, 2},      {"memory_optimized", "qwen", "amd", 4, 2},
    {"minimal_communication", "llama", "nvd", 1, 1}, {"minimal_communication", "qwen", "amd", 1, 1},
    {"balanced", "llama", "nvd", 2, 1},              {"balanced", "qwen", "nvd", 2, 2},
    {"balanced", "llama", "amd", 2, 1},              {"balanced", "qwen", "amd", 2, 2},
    {"balanced", "mistral", "nvd", 2, 1},            {"balanced", "tiny", "cpu", 2, 1},
    {"maximum_performance", "mistral", "amd", 1, 1}, {"maximum_performance", "tiny", "cpu", 4, 1},
};

TEST(ParallelStrategy, SeedsTable) {
  for (const Row& r : table) {
    const Strategy* s = find_strategy(r.strategy);
    ASSERT_NE(s, nullptr) << r.strategy;
    const TpPp got = s->for_model(r.model, r.platform);
    EXPECT_EQ(got.tp, r.tp) << r.strategy << " " << r.model << " " << r.platform;
    EXPECT_EQ(got.pp, r.pp) << r.strategy << " " << r.model << " " << r.platform;
  }
}

TEST(ParallelStrategy, OrderAndNames) {
  ASSERT_EQ(strategies.size(), 5u);
  const char* names[] = {"maximum_performance", "truly_identical", "memory_optimized",
                         "minimal_communication", "balanced"};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(strategies[i].name, names[i]);
    EXPECT_EQ(strategies[i].index, "0" + std::to_string(i));
  }
  EXPECT_EQ(default_strategy, "minimal_communication");
  EXPECT_EQ(find_strategy("fastest"), nullptr);
  EXPECT_EQ(strategy_names(),
            "maximum_performance, truly_identical, memory_optimized, minimal_communication, "
            "balanced");
}

TEST(ParallelStrategy, EveryEntryFitsEveryModel) {
  for (const auto& s : strategies)
    for (const auto& d : model::Models::all)
      for (const char* platform : {"nvd", "amd", "cpu"}) {
        const TpPp t = s.for_model(d.cli_name, platform);
        EXPECT_FALSE(layout_error(d, t.tp, t.pp).has_value())
            << s.name << " " << d.name << " " << platform;
      }
}

TEST(ParallelPlan, DpDerivedFromWorld) {
  const auto d = model::dims<model::Llama31_8B>();
  const Plan p = make_plan(d, "maximum_performance", {4, 1}, 8, 1, 128);
  EXPECT_EQ(p.strategy_name, "maximum_performance");
  EXPECT_EQ(p.tp, 4);
  EXPECT_EQ(p.pp, 1);
  EXPECT_EQ(p.dp, 2);
  EXPECT_EQ(p.grad_accum, 64);  // 128 / (1 x 2)
  EXPECT_EQ(p.world(), 8);

  const Plan q = make_plan(model::dims<model::Qwen25_7B>(), "truly_identical", {4, 2}, 8, 2, 8);
  EXPECT_EQ(q.dp, 1);
  EXPECT_EQ(q.grad_accum, 4);

  const Plan single = make_plan(model::dims<model::Tiny>(), "minimal_communication", {1, 1}, 1, 1, 8);
  EXPECT_EQ(single.dp, 1);
  EXPECT_EQ(single.grad_accum, 8);
}

std::string plan_error(const model::Dims& d, TpPp t, int world, int mbs, int gbs, int dp = 0,
                       int accum = 0) {
  try {
    make_plan(d, "s", t, world, mbs, gbs, dp, accum);
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ParallelPlan, WorldNotAMultipleOfModelParallelNamesTheFix) {
  const std::string e = plan_error(model::dims<model::Qwen25_7B>(), {4, 2}, 4, 1, 8);
  EXPECT_EQ(e.rfind("tprimat: strategy s needs a multiple of TP=4 x PP=2 = 8 GPUs", 0), 0u) << e;
  EXPECT_NE(e.find("this run has 4"), std::string::npos) << e;
  EXPECT_NE(e.find("launch with mpirun -np 8"), std::string::npos) << e;
}

TEST(ParallelPlan, BadLayoutIsRejectedWithTheRule) {
  const std::string e = plan_error(model::dims<model::Qwen25_7B>(), {7, 1}, 7, 1, 7);
  EXPECT_NE(e.find("TP must divide the KV heads"), std::string::npos) << e;
  EXPECT_NE(e.find("[strategy s]"), std::string::npos) << e;
}

TEST(ParallelPlan, GlobalBatchNotDivisible) {
  const std::string e = plan_error(model::dims<model::Tiny>(), {1, 1}, 2, 2, 6);
  EXPECT_NE(e.find("global batch 6 is not divisible by micro batch x DP = 2 x 2"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("multiple of 4"), std::string::npos) << e;
  // In the layout's terms, each naming its setting (the program tells its flag instead).
  const auto setting_of = [](int mbs, int gbs) -> std::string {
    try {
      (void)make_plan(model::dims<model::Tiny>(), "s", {1, 1}, 1, mbs, gbs);
    } catch (const core::SettingError& err) {
      EXPECT_EQ(std::string(err.what()).find("--"), std::string::npos) << err.what();
      return err.setting();
    }
    return "accepted";
  };
  EXPECT_EQ(setting_of(0, 8), "micro_batch_size");
  EXPECT_EQ(setting_of(1, 0), "global_batch_size");
  EXPECT_EQ(setting_of(2, 3), "global_batch_size");
}

TEST(ParallelPlan, RequestedDpMustMatch) {
  const auto d = model::dims<model::Llama31_8B>();
  const std::string e = plan_error(d, {4, 1}, 8, 1, 128, /*dp=*/4);
  EXPECT_NE(e.find("GPU count does not match TP x PP x DP: TP=4 x PP=1 x DP=4 = 16 GPUs, this "
                   "run has 8"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("mpirun -np 16"), std::string::npos) << e;
  EXPECT_EQ(make_plan(d, "s", {4, 1}, 8, 1, 128, 2).dp, 2);
}

TEST(ParallelPlan, RequestedAccumulationMustMatch) {
  const auto d = model::dims<model::Tiny>();
  EXPECT_NE(plan_error(d, {1, 1}, 1, 1, 8, 0, 4).find("gradient_accumulation_steps=4"),
            std::string::npos);
  EXPECT_EQ(make_plan(d, "s", {1, 1}, 1, 1, 8, 0, 8).grad_accum, 8);
}

}  // namespace
}  // namespace tprimat::parallel
