// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// How `--parallel all` ends: a table of what became of each strategy (the seeds'
// run_all_configs.sh summary), read from the results the jobs wrote.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tprimat/bench/result.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/input_file.hpp"
#include "tprimat/core/json_input.hpp"
#include "cli/jobs.hpp"

namespace tprimat::cli {

/// One strategy x model of --parallel all and what became of it.
struct StrategyOutcome {
  std::string strategy;
  std::string model;
  std::filesystem::path result;  ///< the result file it wrote, or would have written
  enum class Status { ran, failed, refused, interrupted, skipped } status = Status::skipped;
  std::string why;  ///< skipped, refused or failed: the reason, one line
  int tp = 0, pp = 0, dp = 0, grad_accum = 0;
  double tokens_per_second = 0;  ///< ran (or failed after some steps): the result's figure
  double step_seconds = 0;
};

/// A job's outcome from its exit code and the result file it wrote (read back for its figures).
inline StrategyOutcome job_outcome(const Job& job, int code) {
  using S = StrategyOutcome::Status;
  const auto& c = job.ctx;
  StrategyOutcome o{c.plan.strategy_name, std::string(c.full.cli_name),
                    job.output_dir / bench::result_file_name(c.device, c.full.cli_name)};
  o.tp = c.plan.tp;
  o.pp = c.plan.pp;
  o.dp = c.plan.dp;
  o.grad_accum = c.plan.grad_accum;
  o.status = code == 0                       ? S::ran
             : code == core::exit_run_failed ? S::failed
             : code == core::exit_bad_input  ? S::refused
                                             : S::interrupted;
  if (o.status == S::refused) o.why = "refused before it ran (see above)";
  if (o.status == S::ran || o.status == S::failed) {
    // Read as every input is (core/input_file.hpp): a FIFO or device put there meanwhile is
    // refused at once, never waited on.
    std::string text;
    try {
      text = core::read_input_file(o.result, bench::existing_result_input);
    } catch (const core::InputError&) {
    }
    const auto doc = core::json_text_problem(text).empty()
                         ? nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false)
                         : nlohmann::json();
    const auto number = [&](const char* a, const char* b) {
      return doc.is_object() && doc.contains(a) && doc[a].contains(b) && doc[a][b].is_number()
                 ? doc[a][b].get<double>()
                 : 0.0;
    };
    o.tokens_per_second = number("performance_metrics", "tokens_per_second");
    o.step_seconds = number("performance_metrics", "avg_step_time_seconds");
    if (o.status == S::failed && doc.is_object() && doc.contains("error") &&
        doc["error"].is_string())
      o.why = core::without_prefix(doc["error"].get<std::string>());
  }
  return o;
}

/// The outcome of a strategy resolve_jobs skipped.
inline StrategyOutcome skipped_outcome(const SkippedJob& s) {
  StrategyOutcome o{s.strategy, s.model, s.result};
  o.why = s.why;
  return o;
}

/// The closing table, one line per strategy, in the order the strategies are numbered.
inline std::string outcome_table(const std::vector<StrategyOutcome>& outcomes) {
  using S = StrategyOutcome::Status;
  int ran = 0;
  for (const auto& o : outcomes) ran += o.status == S::ran;
  char buf[512];
  std::string out = "tprimat: --parallel all: " + std::to_string(ran) + " of " +
                    std::to_string(outcomes.size()) + " ran\n";
  std::snprintf(buf, sizeof buf, "  %-22s %-7s %3s %3s %3s %4s %12s %10s  %s\n", "strategy",
                "model", "TP", "PP", "DP", "GA", "tokens/s", "step (s)", "result");
  out += buf;
  for (const auto& o : outcomes) {
    if (o.status == S::ran) {
      std::snprintf(buf, sizeof buf, "  %-22s %-7s %3d %3d %3d %4d %12.1f %10.4f  %s\n",
                    o.strategy.c_str(), o.model.c_str(), o.tp, o.pp, o.dp, o.grad_accum,
                    o.tokens_per_second, o.step_seconds, o.result.string().c_str());
    } else {
      const char* what = o.status == S::failed        ? "failed"
                         : o.status == S::refused     ? "refused"
                         : o.status == S::interrupted ? "interrupted"
                                                      : "skipped";
      std::snprintf(buf, sizeof buf, "  %-22s %-7s %s: ", o.strategy.c_str(), o.model.c_str(),
                    what);
      out += buf + (o.why.empty() ? std::string("-") : o.why) + "\n";
      continue;
    }
    out += buf;
  }
  return out;
}

}  // namespace tprimat::cli
