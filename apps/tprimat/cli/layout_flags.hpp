// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Megatron's layout flags (--tp, --pp, --gradient-accumulation-steps) beside strategy names and
// config files: what they choose alone, and the contradictions they are refused for.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "tprimat/core/error.hpp"
#include "tprimat/parallel/pipeline_split.hpp"
#include "tprimat/parallel/strategy.hpp"
#include "cli/options.hpp"

namespace tprimat::cli {

/// Whether --tp or --pp was given.
inline bool layout_flags_given(const BenchOptions& o) { return o.tp > 0 || o.pp > 0; }

/// The strategy name of a layout given by --tp/--pp alone: "tp2_pp1".
inline std::string layout_flags_name(const BenchOptions& o) {
  return "tp" + std::to_string(std::max(o.tp, 1)) + "_pp" + std::to_string(std::max(o.pp, 1));
}

/// The layout --tp/--pp give alone (an unset one is 1).
inline parallel::TpPp layout_from_flags(const BenchOptions& o) {
  return {std::max(o.tp, 1), std::max(o.pp, 1)};
}

/// --tp/--pp beside --parallel all, which runs every strategy: a contradiction.
inline void check_layout_flags_one_strategy(const BenchOptions& o) {
  if (o.parallel == "all" && layout_flags_given(o))
    throw core::InputError("--tp/--pp pick one layout, and --parallel all runs every strategy",
                           "drop --tp/--pp, or pass one --parallel strategy");
}

/// --tp/--pp and --gradient-accumulation-steps against what `strategy` sets (`accum` 0: the
/// strategy leaves accumulation to follow from the batch). Given beside --parallel, a flag may
/// only agree with it: a contradiction is bad input, not a choice between the two.
inline void check_layout_flags(const BenchOptions& o, const std::string& strategy,
                               parallel::TpPp layout, int accum) {
  const auto refuse = [&](const std::string& flag, int given, const std::string& what, int is) {
    throw core::InputError(flag + " " + std::to_string(given) + " contradicts strategy " +
                               strategy + ", whose " + what + " is " + std::to_string(is),
                           "drop " + flag + ", or pass a --parallel strategy (or config) with " +
                               what + " " + std::to_string(given));
  };
  if (o.tp > 0 && o.tp != layout.tp) refuse("--tp", o.tp, "TP", layout.tp);
  if (o.pp > 0 && o.pp != layout.pp) refuse("--pp", o.pp, "PP", layout.pp);
  if (o.grad_accum > 0 && accum > 0 && o.grad_accum != accum)
    refuse("--gradient-accumulation-steps", o.grad_accum, "gradient_accumulation_steps", accum);
}

/// The context-parallel size a job runs: --cp, else the config file's context_parallel_size
/// (`file_cp`, 1 where silent). A flag beside the file may only agree with it. 2 x CP must
/// divide --seq (Megatron's load-balanced split), checked here to name the flags.
inline int context_parallel_size(const BenchOptions& o, const std::string& strategy, int file_cp,
                                 int seq) {
  if (o.cp > 0 && file_cp > 1 && o.cp != file_cp)
    throw core::InputError("--cp " + std::to_string(o.cp) + " contradicts strategy " + strategy +
                               ", whose context_parallel_size is " + std::to_string(file_cp),
                           "drop --cp, or change context_parallel_size in the config");
  const int cp = o.cp > 0 ? o.cp : file_cp;
  if (auto err = parallel::context_parallel_error(seq, cp))
    throw core::InputError(*err + " [strategy " + strategy + "]",
                           "pass a --seq that is a multiple of " + std::to_string(2 * cp) +
                               ", or a smaller --cp");
  return cp;
}

/// --pipeline-split takes even or auto; checked before any strategy reads it.
inline void check_pipeline_split_flag(const BenchOptions& o) {
  if (!o.pipeline_split.empty() && o.pipeline_split != "even" && o.pipeline_split != "auto")
    throw core::InputError("unknown --pipeline-split '" + core::shown(o.pipeline_split) + "'",
                           "pass --pipeline-split even (layers / PP each) or auto (balanced)");
}

/// The pipeline split a job asks for: Megatron's first/last-stage flags and --pipeline-split,
/// over a config file's decoder_first/last_pipeline_num_layers and pipeline_split (`file_*`, 0 or
/// "": not stated). As with --tp, a flag beside the file may only agree with it; and "even"
/// beside a stage count asks for two splits.
inline parallel::PipelineSplitRequest pipeline_split_request(const BenchOptions& o,
                                                             const std::string& strategy,
                                                             int file_first, int file_last,
                                                             const std::string& file_split) {
  check_pipeline_split_flag(o);
  const auto refuse = [&](const std::string& flag, const std::string& given, const std::string& key,
                          const std::string& is) {
    throw core::InputError(
        flag + " " + given + " contradicts strategy " + strategy + "'s " + key + " " + is,
        "drop " + flag + ", or change " + key + " in the config");
  };
  if (o.first_stage_layers > 0 && file_first > 0 && o.first_stage_layers != file_first)
    refuse("--decoder-first-pipeline-num-layers", std::to_string(o.first_stage_layers),
           "decoder_first_pipeline_num_layers", std::to_string(file_first));
  if (o.last_stage_layers > 0 && file_last > 0 && o.last_stage_layers != file_last)
    refuse("--decoder-last-pipeline-num-layers", std::to_string(o.last_stage_layers),
           "decoder_last_pipeline_num_layers", std::to_string(file_last));
  if (!o.pipeline_split.empty() && !file_split.empty() && o.pipeline_split != file_split)
    refuse("--pipeline-split", o.pipeline_split, "pipeline_split", file_split);
  parallel::PipelineSplitRequest r;
  r.first = o.first_stage_layers > 0 ? o.first_stage_layers : file_first;
  r.last = o.last_stage_layers > 0 ? o.last_stage_layers : file_last;
  const std::string mode = o.pipeline_split.empty() ? file_split : o.pipeline_split;
  r.balanced = mode == "auto";
  // even and auto each decide every stage's layers: given ends would contradict either.
  if ((mode == "even" || mode == "auto") && (r.first > 0 || r.last > 0))
    throw core::InputError("--pipeline-split " + mode +
                               (mode == "even" ? " gives every stage layers / PP"
                                               : " chooses every stage's layers") +
                               ", and --decoder-first/last-pipeline-num-layers (or the config's "
                               "keys) give the end stages theirs",
                           "pass one of the two");
  return r;
}

/// The global batch of a job with data-parallel size `dp`: --gbs; else mbs x DP x
/// --gradient-accumulation-steps; else the default (mbs x DP for tiny, the seeds' 64 for the
/// full models). A --gbs that disagrees with the accumulation flag is refused, and so is a batch
/// past limits::batch or limits::batch_tokens (counted in 64 bits: the flags' product may not
/// fit an int).
inline int global_batch(const BenchOptions& o, std::string_view model, int dp) {
  dp = std::max(dp, 1);
  const std::int64_t per_step = std::int64_t{o.mbs} * dp;
  std::int64_t gbs = o.gbs;
  if (o.grad_accum > 0) {
    const std::int64_t derived = per_step * o.grad_accum;
    const std::string product = "--mbs " + std::to_string(o.mbs) + " x DP " + std::to_string(dp) +
                                " x --gradient-accumulation-steps " + std::to_string(o.grad_accum) +
                                " = " + std::to_string(derived);
    if (o.gbs > 0 && o.gbs != derived)
      throw core::InputError("--gbs " + std::to_string(o.gbs) + " disagrees with " + product,
                             "pass one of --gbs and --gradient-accumulation-steps");
    gbs = derived;
  } else if (gbs == 0) {
    gbs = model == "tiny" ? per_step : 64;
  }
  if (gbs > limits::batch)
    throw core::InputError(
        "global batch " + std::to_string(gbs) + " (--mbs " + std::to_string(o.mbs) + " x DP " +
            std::to_string(dp) +
            (o.grad_accum > 0 ? " x --gradient-accumulation-steps " + std::to_string(o.grad_accum)
                              : std::string()) +
            ") exceeds " + std::to_string(limits::batch) + " sequences",
        "pass a smaller --mbs or --gradient-accumulation-steps");
  if (gbs * o.seq > limits::batch_tokens)
    throw core::InputError("a global batch of " + std::to_string(gbs) + " x --seq " +
                               std::to_string(o.seq) + " = " + std::to_string(gbs * o.seq) +
                               " tokens exceeds " + std::to_string(limits::batch_tokens) +
                               " (2^30), more than any training step takes",
                           "pass a smaller --gbs or --seq");
  return static_cast<int>(gbs);
}

}  // namespace tprimat::cli
