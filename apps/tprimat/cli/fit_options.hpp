// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// What would make a job that does not fit fit: each of tprimat's own memory options applied to
// the job's memory plan, computed, not a generic hint.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "tprimat/bench/memory_plan.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/parallel/strategy.hpp"
#include "tprimat/parallel/validate.hpp"
#include "tprimat/train/config.hpp"

namespace tprimat::cli {

/// One change to a job and the busiest GPU's memory with it.
struct FitOption {
  std::string flags;  ///< what to add to the command line, e.g. "--cp 2"
  double total = 0;   ///< bytes per GPU with it
};

namespace detail {

/// `in` laid out over `world` GPUs for the global batch `gbs` by the CLI's own rule
/// (parallel::make_plan: the layout rules with the even pipeline split, DP from the ranks,
/// accumulation from the batch) and context and sequence parallelism's rules: its DP and
/// accumulation set, or false where a rule does not hold.
inline bool laid_out(bench::MemoryPlanInput& in, int world, int gbs) {
  const train::StepShape& s = in.shape;
  if (parallel::context_parallel_error(s.seq, s.context_parallel) ||
      (s.sequence_parallel &&
       parallel::sequence_parallel_error(s.mbs, s.seq, in.tp, s.context_parallel)))
    return false;
  try {
    const auto plan = parallel::make_plan(in.dims, "", {in.tp, in.pp}, world, s.mbs, gbs, 0, 0,
                                          parallel::PipelineSplit::even, s.context_parallel);
    in.dp = plan.dp;
    in.shape.grad_accum = plan.grad_accum;
    return true;
  } catch (const core::InputError&) {
    return false;
  }
}

}  // namespace detail

/// The single changes that make `in` fit `capacity_bytes` on the same `world` GPUs and global
/// batch `gbs`, smallest plan first: the distributed optimizer (where DP x CP > 1), full
/// recomputation, a larger CP, TP or PP (each a valid layout over the same GPUs, the even
/// pipeline split). A job with an uneven pipeline split is varied with the even one.
inline std::vector<FitOption> single_changes_that_fit(const bench::MemoryPlanInput& in, int world,
                                                      int gbs, double capacity_bytes) {
  std::vector<FitOption> out;
  const auto consider = [&](bench::MemoryPlanInput changed, std::string flags) {
    changed.shape.stage_layers.clear();
    if (!detail::laid_out(changed, world, gbs)) return;
    const double total = bench::plan_memory(changed).total;
    if (total <= capacity_bytes) out.push_back({std::move(flags), total});
  };
  if (in.dp * in.shape.context_parallel > 1) {
    using train::ShardingStrategy;
    if (in.sharding == ShardingStrategy::no_shard) {
      auto z = in;
      z.sharding = ShardingStrategy::optim;
      consider(z, "--distributed-optimizer");
    }
    if (in.sharding == ShardingStrategy::no_shard || in.sharding == ShardingStrategy::optim) {
      auto z = in;
      z.sharding = ShardingStrategy::optim_grads;
      consider(z, "--data-parallel-sharding-strategy optim_grads");
    }
    if (in.sharding != ShardingStrategy::optim_grads_params) {
      auto z = in;
      z.sharding = ShardingStrategy::optim_grads_params;
      // FP8: each weight cast after its gather.
      z.precision.fp8.copies = train::fp8_copies_under(z.sharding, z.precision.fp8.copies);
      consider(z, "--data-parallel-sharding-strategy optim_grads_params");
    }
  }
  if (!in.shape.recompute.on()) {
    // Selective first: two GEMMs a layer more against full's whole forward. The device engines
    // run it (bf16 plans), the CPU engine not.
    if (in.compute_bytes < 4) {
      auto r = in;
      r.shape.recompute =
          train::selective_recompute(static_cast<unsigned>(train::RecomputeModule::mlp) |
                                     static_cast<unsigned>(train::RecomputeModule::layernorm));
      consider(r, "--recompute-granularity selective --recompute-modules layernorm,mlp");
    }
    auto r = in;
    r.shape.recompute = train::full_recompute_every_layer;
    consider(r, "--recompute-granularity full");
  }
  for (const int n : {2, 4, 8}) {
    auto c = in;
    c.shape.context_parallel = n;
    if (n > in.shape.context_parallel) consider(c, "--cp " + std::to_string(n));
    auto t = in;
    t.tp = n;
    if (n > in.tp) consider(t, "--tp " + std::to_string(n));
    auto p = in;
    p.pp = n;
    if (n > in.pp) consider(p, "--pp " + std::to_string(n));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const FitOption& a, const FitOption& b) { return a.total < b.total; });
  return out;
}

/// The fewest GPUs, up to 64 times `world`, on which `in`'s layout with the distributed
/// optimizer (or the sharding it already asks for, if more) fits (its optimizer state shards over
/// more DP ranks); 0 when none does.
inline int gpus_that_fit(bench::MemoryPlanInput in, int world, int gbs, double capacity_bytes) {
  if (in.sharding == train::ShardingStrategy::no_shard) in.sharding = train::ShardingStrategy::optim;
  in.shape.stage_layers.clear();
  for (int n = world * 2; n <= world * 64; n *= 2) {
    auto more = in;
    if (detail::laid_out(more, n, gbs) && bench::plan_memory(more).total <= capacity_bytes)
      return n;
  }
  return 0;
}

}  // namespace tprimat::cli
