// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The seeds' five named strategies and the run-time parallel plan (TP, PP, DP, accumulation).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/validate.hpp"

namespace tprimat::parallel {

/// TP and PP of one strategy for one model family on one platform.
struct TpPp {
  int tp = 1;
  int pp = 1;
};

/// A named strategy from the seeds' table (their config.yaml `parallelism` block). The seeds
/// list Llama and Qwen; Mistral and Tiny have Llama's block shape and take its column.
/// `index` is the seeds' output-NN number used by `--parallel all`.
struct Strategy {
  std::string_view name;
  std::string_view index;
  std::string_view goal;
  TpPp llama_nvd, qwen_nvd, llama_amd, qwen_amd;

  /// Platform "amd" takes the AMD column; "nvd" and "cpu" take the NVIDIA one.
  constexpr TpPp for_model(std::string_view cli_name, std::string_view platform) const {
    const bool amd = platform == "amd";
    if (cli_name == "qwen") return amd ? qwen_amd : qwen_nvd;
    return amd ? llama_amd : llama_nvd;
  }
};

/// Ordered by the seeds' output directory numbers (run_all_configs.sh).
inline constexpr std::array<Strategy, 5> strategies{{
    {"maximum_performance", "00", "best raw speed per platform (platform-specific)",
     {4, 1}, {4, 2}, {1, 1}, {1, 1}},
    {"truly_identical", "01", "the same layout on every platform (fair comparison)",
     {4, 1}, {4, 2}, {4, 1}, {4, 2}},
    {"memory_optimized", "02", "least memory per GPU", {4, 2}, {4, 2}, {4, 2}, {4, 2}},
    {"minimal_communication", "03", "no model parallelism: pure data parallel",
     {1, 1}, {1, 1}, {1, 1}, {1, 1}},
    {"balanced", "04", "middle ground between memory and communication",
     {2, 1}, {2, 2}, {2, 1}, {2, 2}},
}};

inline constexpr std::string_view default_strategy = "minimal_communication";

inline const Strategy* find_strategy(std::string_view name) {
  for (const auto& s : strategies)
    if (s.name == name) return &s;
  return nullptr;
}

inline std::string strategy_names() {
  std::string out;
  for (const auto& s : strategies) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

/// A complete run-time parallel plan for one model on `world` ranks.
struct Plan {
  std::string strategy_name;
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int grad_accum = 1;  ///< micro-batches per replica per optimizer step
  /// Layers of each pipeline stage (PP entries, parallel/pipeline_split.hpp); empty until the
  /// layers run are known (bench::make_job fills it).
  std::vector<int> stage_layers = {};
  int cp = 1;  ///< context parallelism: the ranks each sequence is split over
  int world() const { return tp * pp * dp * cp; }
};

/// Checks (model, TP, PP, DP, batch) against `world` ranks and fills DP and accumulation.
/// `requested_dp` 0 derives DP from the world; `requested_accum` 0 derives it from the batch;
/// `split` given: the stages' layer counts are checked once known (stage_layers_error); `cp`:
/// context parallelism's ranks per sequence, which take their share of the world before DP.
/// Throws InputError naming the problem and the fix.
inline Plan make_plan(const model::Dims& d, std::string name, TpPp tp_pp, int world, int mbs,
                      int gbs, int requested_dp = 0, int requested_accum = 0,
                      PipelineSplit split = PipelineSplit::even, int cp = 1) {
  if (auto err = layout_error(d, tp_pp.tp, tp_pp.pp, split))
    throw core::InputError(*err + " [strategy " + name + "]");
  const int mp = tp_pp.tp * tp_pp.pp * cp;
  const std::string layout = "TP=" + std::to_string(tp_pp.tp) + " x PP=" +
                             std::to_string(tp_pp.pp) + (cp > 1 ? " x CP=" + std::to_string(cp) : "");
  if (world % mp != 0)
    throw core::InputError("strategy " + name + " needs a multiple of " + layout + " = " +
                               std::to_string(mp) + " GPUs for " + std::string(d.name) +
                               ", this run has " + std::to_string(world),
                           "launch with mpirun -np " + std::to_string(mp) +
                               " (or a multiple), or pick a strategy whose TP x PP" +
                               (cp > 1 ? " x CP" : "") + " divides " + std::to_string(world));
  const int dp = world / mp;
  if (requested_dp != 0 && requested_dp != dp)
    throw core::InputError(
        "GPU count does not match TP x PP" + std::string(cp > 1 ? " x CP" : "") + " x DP: " +
            layout + " x DP=" +
            std::to_string(requested_dp) + " = " + std::to_string(std::int64_t{mp} * requested_dp) +
            " GPUs, this run has " + std::to_string(world),
        "launch with mpirun -np " + std::to_string(std::int64_t{mp} * requested_dp) +
            " or drop data_parallel_size to derive it");
  if (mbs < 1)
    throw core::SettingError("micro_batch_size",
                             "the micro-batch size must be at least 1, got " + std::to_string(mbs),
                             "1 or more");
  if (gbs < 1)
    throw core::SettingError("global_batch_size",
                             "the global batch must be at least 1, got " + std::to_string(gbs),
                             "1 or more");
  const std::int64_t per_step = std::int64_t{mbs} * dp;  // 64 bits: sizes may not fit an int
  if (gbs % per_step != 0)
    throw core::SettingError(
        "global_batch_size",
        "global batch " + std::to_string(gbs) + " is not divisible by micro batch x DP = " +
            std::to_string(mbs) + " x " + std::to_string(dp),
        std::to_string((gbs / per_step + 1) * per_step) + " (a multiple of " +
            std::to_string(per_step) + ")");
  const int accum = static_cast<int>(gbs / per_step);
  if (requested_accum != 0 && requested_accum != accum)
    throw core::InputError(
        "gradient_accumulation_steps=" + std::to_string(requested_accum) +
            " does not match gbs / (mbs x DP) = " + std::to_string(gbs) + " / (" +
            std::to_string(mbs) + " x " + std::to_string(dp) + ") = " + std::to_string(accum),
        "drop gradient_accumulation_steps to derive it, or change the global batch");
  return Plan{std::move(name), tp_pp.tp, tp_pp.pp, dp, accum, {}, cp};
}

}  // namespace tprimat::parallel
