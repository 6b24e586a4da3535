// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// `tprimat bench` and `tprimat plan` (driver.hpp): every check, then each job in turn.
#include "cli/driver.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tprimat/bench/memory_plan.hpp"
#include "tprimat/bench/result.hpp"
#include "tprimat/config.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/number_text.hpp"
#include "tprimat/parallel/pipeline_split.hpp"
#include "cli/all_strategies.hpp"
#include "cli/config_documents.hpp"
#include "cli/fit_options.hpp"
#include "cli/interrupt.hpp"
#include "cli/jobs.hpp"
#include "cli/output_lock.hpp"
#include "cli/profile_flags.hpp"
#include "cli/progress.hpp"
#include "cli/recompute_flags.hpp"
#include "cli/runner.hpp"
#include "cli/sharding_flags.hpp"

namespace tprimat::cli {

namespace {

std::string describe_job(const Job& job) {
  const auto& c = job.ctx;
  std::string s = "tprimat: " + std::string(c.full.name) + " (" + std::string(c.full.cli_name) +
                  "), strategy " + c.plan.strategy_name + ": TP=" + std::to_string(c.plan.tp) +
                  " PP=" + std::to_string(c.plan.pp) +
                  (c.plan.cp > 1 ? " CP=" + std::to_string(c.plan.cp) : "") +
                  " DP=" + std::to_string(c.plan.dp) +
                  " GradAccum=" + std::to_string(c.plan.grad_accum) + sharding_suffix(c.optimizer) +
                  (c.sequence_parallel ? " SP" : "") +
                  (c.recompute.on() ? " recompute " + recompute_text(c.recompute) : "") + ", mbs " +
                  std::to_string(c.mbs) + " gbs " + std::to_string(c.gbs) + " seq " +
                  std::to_string(c.seq) + ", " + c.precision + " on " + c.device.device_name;
  return s;
}

std::string describe_layers(const Job& job) {
  const auto& c = job.ctx;
  if (c.dims.layers == c.full.layers && job.recompute_chosen)
    return "tprimat: running all " + std::to_string(c.full.layers) +
           " layers with full recomputation (--layers auto: the whole model fits " +
           detail::gib_text(c.device.total_memory_gb * bench::gib) +
           " with a 10% margin only when its layers' activations are recomputed; --layers N "
           "runs a proxy without)";
  if (c.dims.layers == c.full.layers)
    return "tprimat: running all " + std::to_string(c.full.layers) + " layers";
  return "tprimat: running " + std::to_string(c.dims.layers) + " of " +
         std::to_string(c.full.layers) + " layers: a proxy of the full " +
         std::string(c.full.name) + (c.layers_auto ? " (--layers auto: the most that fit " +
                                                        detail::gib_text(c.device.total_memory_gb * bench::gib) +
                                                        " with a 10% margin)"
                                                  : "") +
         "; per-layer figures, not whole-model ones";
}

/// PP > 1: each stage's layers, its work in decoder layers (the last stage's head included,
/// parallel::stage_costs) and its predicted memory; "" without a pipeline.
std::string describe_pipeline(const Job& job) {
  const auto& c = job.ctx;
  if (c.plan.pp <= 1 || c.plan.stage_layers.empty()) return "";
  char buf[32];
  std::string work, memory;
  for (const double w : parallel::stage_costs(c.dims, c.seq, c.plan.stage_layers)) {
    std::snprintf(buf, sizeof buf, "%.2f", w);
    work += (work.empty() ? "" : ", ") + std::string(buf);
  }
  for (const auto& m : job.predicted_stages) {
    std::snprintf(buf, sizeof buf, "%.2f", m.total / bench::gib);
    memory += (memory.empty() ? "" : ", ") + std::string(buf);
  }
  return "tprimat: pipeline stages run " + parallel::stage_layers_text(c.plan.stage_layers) +
         " layers; work in layers' FLOPs (the last stage's head included): " + work +
         "; predicted memory per stage: " + memory + " GiB";
}

/// --profile and its flags over the `profiling` block of a --parallel config file, checked
/// against the job's steps and ranks.
profile::Settings profile_settings(const BenchOptions& o, const Job& job,
                                          const Environment& env) {
  nlohmann::json block;
  std::string file;
  if (!env.fixed && bench::is_config_path(o.parallel)) {
    const auto c = bench::load_config_strategy(config_document(o.parallel), job.ctx.full.cli_name,
                                                  job.ctx.device.platform);
    block = c.profiling;
    file = c.file;
  }
  return resolve_profile(o.profile, block, file, job.ctx.warmup_steps + job.ctx.steps,
                         env.world);
}

/// "tprimat: profiling steps 3-7 of 12 (run 1, rank 0, host ranges + CUPTI) ->
/// output/profile_cuda_llama_0.json": steps 1-based, as the progress lines count them.
std::string describe_profile(const Job& job) {
  const auto& p = job.profile;
  const auto& c = job.ctx;
  const int total = c.warmup_steps + c.steps;
  std::string steps;
  for (int i = 0; i < total; ++i)
    if (p.schedule.records(i) && (i == 0 || !p.schedule.records(i - 1)))
      steps += (steps.empty() ? "" : ", ") + std::to_string(i + 1);
    else if (p.schedule.records(i) && (i + 1 == total || !p.schedule.records(i + 1)))
      steps += "-" + std::to_string(i + 1);
  std::string ranks = p.all_ranks ? "every rank" : "rank";
  if (!p.all_ranks)
    for (std::size_t i = 0; i < p.ranks.size(); ++i)
      ranks += (i ? "," : " ") + std::to_string(p.ranks[i]);
  return "tprimat: profiling steps " + steps + " of " + std::to_string(total) + " (run 1, " +
         ranks + ", " + (c.device.platform == "cpu" ? "host ranges" : "host ranges + CUPTI") +
         ") -> " +
         (job.output_dir / profile::trace_file_name(c.device.software_stack, c.full.cli_name,
                                                    p.all_ranks ? 0 : p.ranks.front(), p.gzip))
             .string() +
         (p.all_ranks || p.ranks.size() > 1 ? " (one per rank)" : "");
}

/// --parallel all ends as the seeds' run_all_configs.sh and compare_all_configs.sh do: the table
/// of what became of each strategy, then the comparison of those that wrote a result (through
/// Runtime::compare), in <output-dir>-all. An interrupted run ends without them.
void close_parallel_all(const BenchOptions& opts, const Runtime& rt,
                               std::vector<StrategyOutcome> outcomes) {
  using S = StrategyOutcome::Status;
  std::stable_sort(outcomes.begin(), outcomes.end(),
                   [](const auto& a, const auto& b) { return a.result < b.result; });
  std::vector<std::filesystem::path> dirs;
  for (const auto& o : outcomes) {
    if (o.status == S::interrupted) return;
    const auto dir = o.result.parent_path();
    if ((o.status == S::ran || o.status == S::failed) &&
        std::find(dirs.begin(), dirs.end(), dir) == dirs.end())
      dirs.push_back(dir);
  }
  std::fputs(outcome_table(outcomes).c_str(), stdout);
  std::fflush(stdout);
  if (dirs.empty() || !rt.compare || interrupt_signal() != 0) return;
  std::string base = opts.output_dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  try {
    rt.compare(dirs, base + "-all");
  } catch (const std::exception& e) {  // the results stand; only their comparison failed
    std::fprintf(stderr, "tprimat: comparing the strategies failed: %s\n",
                 core::without_prefix(e.what()).c_str());
  }
}

}  // namespace

int run_bench(const BenchOptions& opts, const Runtime& rt) {
  Reporter rep(rt.rank == 0, opts.progress_redraw ? ProgressStyle::redraw : ProgressStyle::lines);
  JobList list;
  std::vector<OutputLock> locks;  // every job's result and log, until the last job has written
  try {
    list = resolve_jobs(opts, rt.env);
    for (auto& job : list.jobs) job.profile = profile_settings(opts, job, rt.env);
    locks = hold_outputs(list, rt.rank, rt.env.command_line, rt.max_over_ranks, list.notices);
  } catch (const core::InputError& e) {
    return report_input_error(e, rt.rank);
  }
  const InterruptGuard guard;  // from the first line printed: signals stop between steps
  const std::string git = rt.rank == 0 ? bench::git_describe(rt.git_dir) : "unknown";
  for (const auto& n : list.notices) rep.line(n);
  int code = 0;
  const bool all = opts.parallel == "all" && !rt.env.fixed;
  std::vector<StrategyOutcome> outcomes;
  for (const auto& s : list.skipped) outcomes.push_back(skipped_outcome(s));
  for (auto& job : list.jobs) {
    job.ctx.git_describe = git;
    job.ctx.timestamp = bench::utc_timestamp();
    rep.line(describe_job(job));
    rep.line(describe_layers(job));
    if (const std::string stages = describe_pipeline(job); !stages.empty()) rep.line(stages);
    if (const std::string copies = describe_fp8_copies(job); !copies.empty()) rep.line(copies);
    rep.line("tprimat: predicted memory " + detail::gib_text(job.ctx.predicted.total) +
             " per GPU of " + detail::gib_text(job.ctx.device.total_memory_gb * bench::gib));
    if (job.profile.enabled) rep.line(describe_profile(job));
    try {
      const int job_code = run_job(job, rt.rank, rt.run_once, rep);
      code = std::max(code, job_code);
      if (all && rt.rank == 0) outcomes.push_back(job_outcome(job, job_code));
    } catch (const core::InputError& e) {
      rep.close_log();
      if (list.jobs.size() == 1) return report_input_error(e, rt.rank);
      const std::string why = core::without_prefix(e.what());
      rep.line("tprimat: skipping " + job.ctx.plan.strategy_name + " for " +
               std::string(job.ctx.full.cli_name) + ": " + why);
      if (all)
        outcomes.push_back(skipped_outcome(
            {job.ctx.plan.strategy_name, std::string(job.ctx.full.cli_name),
             job.output_dir / bench::result_file_name(job.ctx.device, job.ctx.full.cli_name), why}));
    } catch (const std::exception& e) {
      // Writing the result failed (disk full, directory removed mid-run).
      rep.close_log();
      if (rt.rank == 0) std::fprintf(stderr, "%s\n", e.what());
      code = core::exit_run_failed;
      if (all && rt.rank == 0) {
        auto o = job_outcome(job, core::exit_bad_input);
        o.status = StrategyOutcome::Status::failed;
        o.why = core::without_prefix(e.what());
        outcomes.push_back(std::move(o));
      }
    }
  }
  if (all && rt.rank == 0) close_parallel_all(opts, rt, outcomes);
  // A signal noted during the closing table or comparison ends the command as any interruption
  // does (exit 128 + signo), never as a success.
  if (const int signo = interrupt_signal(); signo != 0) return core::exit_interrupted(signo);
  return code;
}

/// Why a pipeline job does not fit when its split is the problem: the busiest stage is over the
/// device while the stages on average are not, so a more even split (not fewer layers or a
/// smaller batch) would fit. "" otherwise.
std::string uneven_split_problem(const Job& job, double capacity_bytes) {
  const auto& stages = job.predicted_stages;
  const auto& layers = job.ctx.plan.stage_layers;
  if (stages.size() < 2 || layers.size() != stages.size() || capacity_bytes <= 0) return "";
  std::size_t busiest = 0;
  double sum = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    sum += stages[i].total;
    if (stages[i].total > stages[busiest].total) busiest = i;
  }
  if (stages[busiest].total <= capacity_bytes || sum / double(stages.size()) > capacity_bytes)
    return "";
  return "stage " + std::to_string(busiest + 1) + " of " + std::to_string(stages.size()) +
         " runs " + std::to_string(layers[busiest]) + " of the layers (split " +
         parallel::stage_layers_text(layers) + ") and needs " +
         detail::gib_text(stages[busiest].total) +
         ", though the stages average less than the device holds: split the layers more evenly "
         "(--pipeline-split auto, or fewer layers on that stage with "
         "--decoder-first/last-pipeline-num-layers)";
}

/// The memory plan as a table, in GiB per GPU. `problem`: why it does not fit, where known
/// better than the generic advice.
inline std::string format_plan(const bench::MemoryPlan& p, double capacity_bytes,
                               const std::string& problem = "") {
  std::string out;
  auto row = [&](const char* name, double bytes) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "  %-14s %10.3f GiB\n", name, bytes / bench::gib);
    out += buf;
  };
  row("weights", p.weights);
  row("gradients", p.gradients);
  row("master", p.master);
  row("adam_moments", p.adam_moments);
  row("activations", p.activations);
  row("logits", p.logits);
  if (p.fp8 > 0) row("fp8", p.fp8);
  if (p.scratch > 0) row("scratch", p.scratch);
  row("workspace", p.workspace);
  row("total", p.total);
  if (capacity_bytes > 0) {
    row("device", capacity_bytes);
    char full[160];
    std::snprintf(full, sizeof full,
                  "  fits, at %.1f%% of the device: above 95%%, little room for the allocator's "
                  "fragmentation\n",
                  100.0 * p.total / capacity_bytes);
    out += p.total <= bench::nearly_full * capacity_bytes ? "  fits\n"
           : p.total <= capacity_bytes                    ? full
           : problem.empty() ? "  does NOT fit\n"
                             : "  does NOT fit: " + problem + "\n";
  }
  return out;
}

/// What would make a job that does not fit fit, computed from its plan: each single change of
/// the project's memory options that fits on the same GPUs and batch, else the GPUs it needs
/// with the distributed optimizer, and the proxy --layers auto would run.
std::string fit_advice(const Job& job, double capacity_bytes) {
  const auto& c = job.ctx;
  if (capacity_bytes <= 0 || c.predicted.total <= capacity_bytes) return "";
  std::string out;
  const auto options =
      single_changes_that_fit(job.memory_input, c.plan.world(), c.gbs, capacity_bytes);
  if (!options.empty()) {
    out += "  each of these alone makes it fit (the same " + std::to_string(c.plan.world()) +
           " GPU(s) and global batch):\n";
    std::size_t width = 32;  // the longest flags set the column
    for (const auto& o : options) width = std::max(width, o.flags.size());
    for (const auto& o : options) {
      char figure[32];
      std::snprintf(figure, sizeof figure, " %10.3f GiB\n", o.total / bench::gib);
      out += "    " + o.flags + std::string(width - o.flags.size(), ' ') + figure;
    }
  } else if (const int gpus = gpus_that_fit(job.memory_input, c.plan.world(), c.gbs,
                                            capacity_bytes);
             gpus > 0) {
    out += "  no single change fits " + std::to_string(c.plan.world()) +
           " GPU(s); with the distributed optimizer it fits on --num-gpus " +
           std::to_string(gpus) + "\n";
  } else {
    out += "  no single change of --distributed-optimizer, --data-parallel-sharding-strategy, "
           "--recompute-granularity, --cp, --tp or --pp fits, nor more GPUs with the distributed "
           "optimizer\n";
  }
  bench::MemoryPlanInput in = job.memory_input;
  in.dims = c.full.with_layers(c.full.layers);
  if (const int proxy = bench::max_layers_that_fit(in, capacity_bytes); proxy > 0)
    out += "  or --layers auto: a proxy of " + std::to_string(proxy) + " of the " +
           std::to_string(c.full.layers) + " layers fits (per-layer figures, not the whole "
           "model's)\n";
  return out;
}

/// One line of `plan`'s closing table: a job's layout and verdict, or why it could not be planned.
struct PlanRow {
  std::string model, strategy, layout, verdict;
  double total_bytes = -1;  ///< < 0: not planned
};

/// The closing table of a plan over several strategies or models: one line each, so that they
/// can be read side by side (the plans above hold the terms).
std::string format_plan_summary(const std::vector<PlanRow>& rows, const Environment& env) {
  const double capacity = env.device.total_memory_gb;
  char head[200];
  std::snprintf(head, sizeof head, "summary: predicted GiB per GPU%s\n",
                capacity > 0 ? (" of " + env.device.device_name + "'s " +
                                core::num(capacity, 1) + " GiB").c_str()
                             : "");
  std::string out = head;
  std::size_t model_w = 5, strategy_w = 8, layout_w = 6;
  for (const auto& r : rows) {
    model_w = std::max(model_w, r.model.size());
    strategy_w = std::max(strategy_w, r.strategy.size());
    layout_w = std::max(layout_w, r.layout.size());
  }
  auto line = [&](const std::string& model, const std::string& strategy,
                  const std::string& layout, const std::string& total,
                  const std::string& verdict) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "  %-*s  %-*s  %-*s  %9s  %s\n", int(model_w), model.c_str(),
                  int(strategy_w), strategy.c_str(), int(layout_w), layout.c_str(),
                  total.c_str(), verdict.c_str());
    out += buf;
  };
  line("model", "strategy", "layout", "total", capacity > 0 ? "verdict" : "");
  for (const auto& r : rows)
    line(r.model, r.strategy, r.layout,
         r.total_bytes < 0 ? "-" : core::num(r.total_bytes / bench::gib, 3), r.verdict);
  return out;
}

int run_plan(BenchOptions opts, Environment env) {
  if (opts.num_gpus > 0) env.world = opts.num_gpus;
  try {
    detail::check_backend(opts.backend, env.device);
    std::vector<std::string> notices;
    const auto models = detail::resolve_models(opts, env.device.platform, notices);
    detail::add_config_notice(opts.parallel, notices);
    for (const auto& n : notices) std::printf("%s\n", n.c_str());
    const auto strategies = detail::resolve_strategies(opts, env);
    std::vector<PlanRow> rows;
    const double capacity = env.device.total_memory_gb * bench::gib;
    for (const auto& m : models) {
      for (const auto& s : strategies) {
        Environment e = env;
        if (opts.num_gpus == 0) {
          // Default: one replica of the strategy's layout (DP 1), or the config's own DP.
          parallel::TpPp tp_pp = s.fixed;
          int dp = 1, cp = std::max(opts.cp, 1);
          if (s.kind == detail::StrategyChoice::Kind::builtin) {
            tp_pp = parallel::find_strategy(s.name)->for_model(m, env.device.platform);
          } else if (s.kind == detail::StrategyChoice::Kind::config) {
            const auto c =
                bench::load_config_strategy(config_document(s.name), m, env.device.platform);
            tp_pp = {c.tp, c.pp};
            dp = std::max(c.dp, 1);
            if (opts.cp == 0) cp = c.cp;
          }
          e.world = tp_pp.tp * tp_pp.pp * cp * dp;
        }
        Job job;
        try {
          job = detail::make_job(opts, e, m, s, detail::JobPurpose::plan);
        } catch (const core::InputError& err) {
          if (strategies.size() == 1 && models.size() == 1) throw;
          std::printf("%s: %s\n", s.name.c_str(), err.what());
          rows.push_back({m, s.name, "-", "not planned: see above"});
          continue;
        }
        const auto& plan = job.ctx.plan;
        PlanRow row{
            m, plan.strategy_name,
            "TP=" + std::to_string(plan.tp) + " PP=" + std::to_string(plan.pp) +
                (plan.cp > 1 ? " CP=" + std::to_string(plan.cp) : "") +
                " DP=" + std::to_string(plan.dp) + " GA=" + std::to_string(plan.grad_accum) +
                (plan.dp * plan.cp > 1 ? sharding_suffix(job.ctx.optimizer) : std::string()),
            "", job.ctx.predicted.total};
        if (capacity > 0)
          row.verdict = row.total_bytes > capacity ? "does NOT fit"
                        : row.total_bytes > bench::nearly_full * capacity
                            ? "fits, at " + core::percent(row.total_bytes / capacity)
                            : "fits";
        rows.push_back(row);
        std::printf("%s\n%s\n", describe_job(job).c_str(), describe_layers(job).c_str());
        if (const std::string stages = describe_pipeline(job); !stages.empty())
          std::printf("%s\n", stages.c_str());
        std::printf("predicted memory per GPU (busiest pipeline stage):\n%s",
                    format_plan(job.ctx.predicted, env.device.total_memory_gb * bench::gib,
                                uneven_split_problem(job, env.device.total_memory_gb * bench::gib))
                        .c_str());
        std::printf("%s", fit_advice(job, env.device.total_memory_gb * bench::gib).c_str());
        if (const std::string copies = describe_fp8_copies(job); !copies.empty())
          std::printf("%s\n", copies.c_str());
      }
    }
    if (rows.size() > 1) std::printf("%s", format_plan_summary(rows, env).c_str());
  } catch (const core::InputError& e) {
    return report_input_error(e, 0);
  }
  return 0;
}
}  // namespace tprimat::cli
