// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// cli/fit_options.hpp: what would make a plan fit, computed from the memory plan itself.
#include "cli/fit_options.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tprimat/model/llama31_8b.hpp"

namespace {

using namespace tprimat;

/// NVIDIA's Llama 3.1 8B recipe (seq 8192, mbs 1, gbs 128, distributed optimizer) on 8 GPUs,
/// DP 8: 88.2 GiB a GPU.
bench::MemoryPlanInput nvidia_recipe() {
  bench::MemoryPlanInput in;
  in.dims = model::dims<model::Llama31_8B>();
  in.dp = 8;
  in.shape.mbs = 1;
  in.shape.seq = 8192;
  in.shape.grad_accum = 16;
  in.sharding = train::ShardingStrategy::optim;
  return in;
}

std::vector<std::string> flags_of(const std::vector<cli::FitOption>& options) {
  std::vector<std::string> out;
  for (const auto& o : options) out.push_back(o.flags);
  return out;
}

TEST(FitOptions, EachSingleChangeIsPlannedOnTheSameGpusAndBatch) {
  const auto in = nvidia_recipe();
  const double h100 = 79.1 * bench::gib;
  ASSERT_GT(bench::plan_memory(in).total, h100);
  const auto options = cli::single_changes_that_fit(in, 8, 128, h100);
  const auto flags = flags_of(options);
  for (const char* expected : {"--cp 2", "--cp 4", "--recompute-granularity full", "--tp 2", "--pp 2"})
    EXPECT_NE(std::find(flags.begin(), flags.end(), expected), flags.end()) << expected;
  // ZeRO-1 is on already; CP 8 would leave DP 1 and is valid; CP 16 is not tried.
  EXPECT_EQ(std::find(flags.begin(), flags.end(), "--distributed-optimizer"), flags.end());
  // Smallest plan first, each the plan of its change: CP 2 is the one NVIDIA runs.
  for (std::size_t i = 1; i < options.size(); ++i)
    EXPECT_LE(options[i - 1].total, options[i].total);
  auto cp2 = in;
  cp2.shape.context_parallel = 2;
  cp2.dp = 4;
  cp2.shape.grad_accum = 32;
  const auto it = std::find_if(options.begin(), options.end(),
                               [](const cli::FitOption& o) { return o.flags == "--cp 2"; });
  ASSERT_NE(it, options.end());
  EXPECT_EQ(it->total, bench::plan_memory(cp2).total);
  EXPECT_LE(it->total, h100);
}

TEST(FitOptions, OnlyValidLayoutsAreOffered) {
  auto in = nvidia_recipe();
  in.shape.seq = 8190;  // no 2 x CP divides it: no --cp is offered
  const auto flags = flags_of(cli::single_changes_that_fit(in, 8, 128, 79.1 * bench::gib));
  for (const auto& f : flags) EXPECT_NE(f.rfind("--cp", 0), 0u) << f;
  // One GPU: no layout change fits the same GPU count, ZeRO-1 has no DP to shard over.
  auto one = nvidia_recipe();
  one.dp = 1;
  one.sharding = train::ShardingStrategy::no_shard;
  one.shape.seq = 2048;
  const auto alone = flags_of(cli::single_changes_that_fit(one, 1, 64, 79.1 * bench::gib));
  for (const auto& f : alone) EXPECT_EQ(f, "--recompute-granularity full");
  // More GPUs with the distributed optimizer: 4 H100s hold its sharded state.
  EXPECT_EQ(cli::gpus_that_fit(one, 1, 64, 79.1 * bench::gib), 4);
}

TEST(FitOptions, ShardingTheGradientsIsOfferedWhereItShardsMoreAndPlannedSo) {
  const auto in = nvidia_recipe();  // ZeRO-1
  auto zero2 = in;
  zero2.sharding = train::ShardingStrategy::optim_grads;
  const double total = bench::plan_memory(zero2).total;
  const auto options = cli::single_changes_that_fit(in, 8, 128, total);
  const auto it = std::find_if(options.begin(), options.end(), [](const cli::FitOption& o) {
    return o.flags == "--data-parallel-sharding-strategy optim_grads";
  });
  ASSERT_NE(it, options.end());
  EXPECT_EQ(it->total, total);
  // Asked for already: neither it nor ZeRO-1 (which shards less) is offered.
  const auto flags = flags_of(cli::single_changes_that_fit(zero2, 8, 128, total));
  for (const auto& f : flags) {
    EXPECT_NE(f, "--data-parallel-sharding-strategy optim_grads");
    EXPECT_NE(f, "--distributed-optimizer");
  }
  // FSDP shards the bf16 weights too: offered in bf16, and with FP8 planned with its copies
  // recast (each weight cast after its gather).
  auto fsdp = in;
  fsdp.sharding = train::ShardingStrategy::optim_grads_params;
  const double fsdp_total = bench::plan_memory(fsdp).total;
  EXPECT_LT(fsdp_total, total);
  const auto with_fsdp = flags_of(cli::single_changes_that_fit(in, 8, 128, fsdp_total));
  EXPECT_NE(std::find(with_fsdp.begin(), with_fsdp.end(),
                      "--data-parallel-sharding-strategy optim_grads_params"),
            with_fsdp.end());
  auto fp8 = in;
  fp8.precision = train::PrecisionConfig::fp8_hybrid(train::Fp8Recipe::delayed);
  auto fp8_fsdp = fp8;
  fp8_fsdp.sharding = train::ShardingStrategy::optim_grads_params;
  fp8_fsdp.precision.fp8.copies = train::Fp8Copies::recast;
  const double fp8_fsdp_total = bench::plan_memory(fp8_fsdp).total;
  const auto fp8_options = cli::single_changes_that_fit(fp8, 8, 128, 1e15);
  const auto fp8_it = std::find_if(fp8_options.begin(), fp8_options.end(), [](const auto& o) {
    return o.flags == "--data-parallel-sharding-strategy optim_grads_params";
  });
  ASSERT_NE(fp8_it, fp8_options.end());
  EXPECT_EQ(fp8_it->total, fp8_fsdp_total);
  fp8_fsdp.precision.fp8.copies = train::Fp8Copies::kept;
  EXPECT_LT(fp8_fsdp_total, bench::plan_memory(fp8_fsdp).total);
}

}  // namespace
