// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// What would make a job that does not fit fit: each of tprimat's own memory options applied to
// the job's memory plan, computed, not a generic hint.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tprimat/bench/memory_plan.hpp"
#include "tprimat/parallel/validate.hpp"

namespace tprimat::cli {

/// One change to a job and the busiest GPU's memory with it.
struct FitOption {
  std::string flags;  ///< what to add to the command line, e.g. "--cp 2"
  double total = 0;   ///< bytes per GPU with it
};

namespace detail {

/// The plan input with DP taken from `world` for its layout, and the accumulation from the
/// global batch; false when the layout or the batch does not divide.
inline bool with_world(bench::MemoryPlanInput& in, int world, std::int64_t gbs) {
  const int model_ranks = in.tp * in.pp * in.cp;
  if (model_ranks < 1 || world % model_ranks != 0) return false;
  in.dp = world / model_ranks;
  const std::int64_t per_step = std::int64_t{in.mbs} * in.dp;
  if (gbs % per_step != 0) return false;
  in.grad_accum = static_cast<int>(gbs / per_step);
  return true;
}

/// Whether the layout rules hold for `in` (heads, KV heads, layers over PP with the even split,
/// 2 x CP over seq, sequence parallelism's rows).
inline bool layout_holds(const bench::MemoryPlanInput& in) {
  return !parallel::layout_error(in.dims, in.tp, in.pp) &&
         !parallel::context_parallel_error(in.seq, in.cp) &&
         !(in.sequence_parallel && parallel::sequence_parallel_error(in.mbs, in.seq, in.tp, in.cp));
}

}  // namespace detail

/// The single changes that make `in` fit `capacity_bytes` on the same `world` GPUs and global
/// batch `gbs`, smallest plan first: the distributed optimizer (where DP x CP > 1), full
/// recomputation, a larger CP, TP or PP (each a valid layout over the same GPUs, the even
/// pipeline split). A job with an uneven pipeline split is varied with the even one.
inline std::vector<FitOption> single_changes_that_fit(const bench::MemoryPlanInput& in, int world,
                                                      std::int64_t gbs, double capacity_bytes) {
  std::vector<FitOption> out;
  const auto consider = [&](bench::MemoryPlanInput changed, std::string flags) {
    changed.stage_layers.clear();
    if (!detail::layout_holds(changed) || !detail::with_world(changed, world, gbs)) return;
    const double total = bench::plan_memory(changed).total;
    if (total <= capacity_bytes) out.push_back({std::move(flags), total});
  };
  if (!in.distributed_optimizer && in.dp * in.cp > 1) {
    auto z = in;
    z.distributed_optimizer = true;
    consider(z, "--distributed-optimizer");
  }
  if (!in.recompute.on()) {
    auto r = in;
    r.recompute.granularity = train::RecomputeGranularity::full;
    r.recompute.method = train::RecomputeMethod::uniform;
    r.recompute.num_layers = 1;
    consider(r, "--recompute-granularity full");
  }
  for (const int n : {2, 4, 8}) {
    auto c = in;
    c.cp = n;
    if (n > in.cp) consider(c, "--cp " + std::to_string(n));
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
/// optimizer fits (its optimizer state shards over more DP ranks); 0 when none does.
inline int gpus_that_fit(bench::MemoryPlanInput in, int world, std::int64_t gbs,
                         double capacity_bytes) {
  in.distributed_optimizer = true;
  in.stage_layers.clear();
  if (!detail::layout_holds(in)) return 0;
  for (int n = world * 2; n <= world * 64; n *= 2) {
    auto more = in;
    if (detail::with_world(more, n, gbs) && bench::plan_memory(more).total <= capacity_bytes)
      return n;
  }
  return 0;
}

}  // namespace tprimat::cli
