// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// From bench options to validated jobs (model x strategy): every input check happens here, before
// anything runs or any result file is written.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "cli/config_documents.hpp"
#include "cli/config_settings.hpp"
#include "cli/fit_options.hpp"
#include "cli/layout_flags.hpp"
#include "cli/options.hpp"
#include "cli/output_lock.hpp"
#include "cli/precision_flags.hpp"
#include "cli/recompute_flags.hpp"
#include "cli/sharding_flags.hpp"
#include "tprimat/backend/cpu.hpp"
#include "tprimat/backend/device_info.hpp"
#include "tprimat/backend/environment.hpp"
#include "tprimat/bench/config_file.hpp"
#include "tprimat/bench/memory_plan.hpp"
#include "tprimat/bench/result.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/output_file.hpp"
#include "tprimat/data/blend.hpp"
#include "tprimat/data/hf_weights.hpp"
#include "tprimat/data/safetensors.hpp"
#include "tprimat/model/all.hpp"
#include "tprimat/parallel/pipeline_split.hpp"
#include "tprimat/parallel/strategy.hpp"
#include "tprimat/parallel/validate.hpp"
#include "tprimat/profile/settings.hpp"
#include "tprimat/train/parameters.hpp"
#include "tprimat/train/step_checks.hpp"

namespace tprimat::cli {

/// One model under one strategy, checked and ready to run `runs` times.
struct Job {
  bench::ResultContext ctx;
  int runs = 1;
  std::filesystem::path output_dir;
  data::DataSpec data;  ///< what the runner feeds the step; ctx.data is its text
  profile::Settings profile;  ///< --profile (set by run_bench); off: nothing is recorded
  /// Each pipeline stage's predicted memory, first to last (ctx.predicted is the busiest).
  std::vector<bench::MemoryPlan> predicted_stages;
  /// What the plan was computed from: `plan` varies it to say what would make a job fit. Its
  /// `shape` is the step every rank runs (runner's step_shape), derived here once.
  bench::MemoryPlanInput memory_input;
  /// --layers auto chose full recomputation: the whole model fits only with it.
  bool recompute_chosen = false;
  int log_interval = 1;  ///< --log-interval: every Nth step line on the console
};

/// Every file a job writes into its output directory. The result and the log are locked for the
/// whole run (one run writes them at a time); `--save` may be none of these.
struct JobFiles {
  std::filesystem::path dir;
  std::filesystem::path result;               ///< benchmark_<stack>_<model>.json
  std::filesystem::path log;                  ///< training_<model>.log, once the job ends
  std::filesystem::path live_log;             ///< training_<model>.log.partial, while it runs
  std::vector<std::filesystem::path> traces;  ///< --profile: any rank's, .json or .json.gz

  std::vector<std::filesystem::path> locked() const { return {result, log}; }

  /// Each path the run may create or replace, with what it is. Files written through a
  /// temporary (".NAME.tmp-XXXXXXXXXXXX" beside them) stand for their temporaries too.
  std::vector<std::pair<std::string, std::filesystem::path>> written() const {
    std::vector<std::pair<std::string, std::filesystem::path>> out = {
        {"the output directory", dir},
        {"the result file", result},
        {"the log", log},
        {"the log being written", live_log},
        {"the result's lock file", lock_file_of(result)},
        {"the log's lock file", lock_file_of(log)}};
    for (const auto& t : traces) out.emplace_back("a profile trace", t);
    return out;
  }
};

inline JobFiles job_files(const Job& job) {
  const auto& c = job.ctx;
  JobFiles f;
  f.dir = job.output_dir;
  f.result = job.output_dir / bench::result_file_name(c.device, c.full.cli_name);
  f.log = job.output_dir / bench::log_file_name(c.full.cli_name);
  f.live_log = job.output_dir / (f.log.filename().string() + ".partial");
  for (int rank = 0; rank < c.plan.world(); ++rank)
    for (const bool gzip : {false, true})
      f.traces.push_back(job.output_dir / profile::trace_file_name(c.device.software_stack,
                                                                   c.full.cli_name, rank, gzip));
  return f;
}

/// What the running binary brings: its device, its ranks, and which layouts it has compiled.
struct Environment {
  backend::DeviceInfo device;
  int world = 1;
  /// True when this binary can run (TP, PP); the CLI compiles TP, PP in {1, 2, 4, 8}.
  std::function<bool(int, int)> compiled = [](int, int) { return true; };
  /// Set by an example binary: its one strategy name and layout; `--parallel` is then unused.
  std::optional<std::pair<std::string, parallel::TpPp>> fixed;
  std::string command_line;
  int nodes = 1;  ///< nodes the ranks run on (parallel::Launch::nodes)
  std::vector<std::string> collective_settings;  ///< parallel::collective_settings()
};

/// A strategy x model that --parallel all leaves out, and why.
struct SkippedJob {
  std::string strategy;
  std::string model;
  std::filesystem::path result;  ///< the result file it would have written
  std::string why;
};

struct JobList {
  std::vector<Job> jobs;
  std::vector<std::string> notices;  ///< one line each, for the console and the log
  std::vector<SkippedJob> skipped;   ///< --parallel all: the strategies that cannot run here
};

/// Models `--model all` runs: the three full models (tiny is the test and no-GPU model).
inline std::vector<std::string> all_models() { return {"llama", "qwen", "mistral"}; }

/// The LR schedule of a run of `total` steps. A run of 500 steps or more gets the seeds' settings
/// (warm-up 50, cosine to 500, their train_iters); a shorter one keeps their shape, 10% warm-up
/// then cosine to its last step, so a short run still trains (timing does not depend on it).
/// The sharding strategy rides here too (cli/sharding_flags.hpp); at DP 1 the step has nothing
/// to shard.
inline train::OptimizerConfig optimizer_for(const BenchOptions& o, int total) {
  train::OptimizerConfig c;
  if (total < c.decay_steps) {
    c.decay_steps = total;
    c.warmup_steps = std::clamp(total / 10, 1, c.warmup_steps);
  }
  if (o.lr > 0) c.lr_peak = o.lr;
  if (o.lr_warmup >= 0) c.warmup_steps = o.lr_warmup;
  c.sharding = sharding_strategy(o);
  return c;
}

namespace detail {

/// The precision the flags ask for (--precision or --fp8-format, --fp8-recipe, the bf16 layers
/// at each end) over `base`, a config file's (precision_from_flags).
inline train::PrecisionConfig precision_of(const BenchOptions& o,
                                           train::PrecisionConfig base = {}) {
  return precision_from_flags(
      with_fp8_format(o.precision, o.fp8_format), o.fp8_recipe, base,
      Fp8BoundaryLayers{o.fp8_bf16_layers_at_start, o.fp8_bf16_layers_at_end});
}

struct StrategyChoice {
  std::string name;        ///< built-in name, or the config spec, or the example's name
  std::string dir_suffix;  ///< "-00".."-04" for --parallel all, else ""
  enum class Kind { builtin, config, fixed } kind = Kind::builtin;
  parallel::TpPp fixed{};
};

/// The `--backend` name of a software stack: the HIP backend runs on ROCm ("rocm" in gpu_info).
inline std::string backend_flag_of(const std::string& software_stack) {
  return software_stack == "rocm" ? "hip" : software_stack;
}

/// `b` must name a backend; the binary already picked `running` (its software stack) from it.
inline void check_backend(const std::string& b, const backend::DeviceInfo& running) {
  if (b != "auto" && b != "cpu" && b != "cuda" && b != "hip")
    throw core::InputError("unknown backend '" + core::shown(b) + "'", "pick one of auto, cpu, cuda, hip");
  const std::string running_flag = backend_flag_of(running.software_stack);
  if (b != "auto" && b != running_flag)
    throw core::InputError("--backend " + b + " was asked but this run uses the " + running_flag +
                               " backend",
                           "use --backend " + running_flag + " or auto");
}

inline void check_attention(const std::string& a) {
  if (a != "auto" && a != "flash" && a != "cudnn")
    throw core::InputError("unknown attention '" + core::shown(a) + "'", "pick one of auto, flash, cudnn");
}

/// The attention the run asks for: --deterministic's is the flash kernels (check_deterministic
/// refuses it beside --attention cudnn).
inline std::string attention_asked(const BenchOptions& o) {
  return o.deterministic ? "flash" : o.attention;
}

/// --deterministic beside a setting that undoes it is refused, not overridden.
inline void check_deterministic(const BenchOptions& o) {
  if (!o.deterministic) return;
  if (o.attention == "cudnn")
    throw core::InputError(
        "--deterministic with --attention cudnn: cuDNN's attention backward is not "
        "bit-reproducible run to run",
        "drop one of them (--deterministic runs attention through tprimat's flash kernels)");
  if (backend::gemm_tuning_setting().value_or(false))
    throw core::InputError(
        "--deterministic with TPRIMAT_GEMM_TUNING on: which timed GEMM candidate wins can differ "
        "run to run",
        "unset TPRIMAT_GEMM_TUNING, or drop --deterministic");
}

/// The data checks' settings, named by this program's flags (setting_flags).
inline data::SettingNames data_setting_flags() {
  return {.data = flag_of_setting("data"),
          .global_batch_size = flag_of_setting("global_batch_size"),
          .seq = flag_of_setting("seq")};
}

/// Parses `--data` and, for indexed data, opens every data set (index checked against its .bin)
/// and scans its token ids once; the per-job checks (vocab, size) then read the result.
inline std::unique_ptr<data::DataCheck> open_data(const BenchOptions& o, data::DataSpec& spec) {
  spec = data::parse_data_spec(o.data, data_setting_flags());
  return std::make_unique<data::DataCheck>(spec, o.seq, static_cast<std::uint64_t>(o.seed));
}

inline std::vector<std::string> resolve_models(const BenchOptions& o, const std::string& platform,
                                               std::vector<std::string>& notices) {
  if (o.model.empty()) {
    if (platform != "cpu") {
      notices.push_back("tprimat: no --model given; running llama (--model all runs the three)");
      return {"llama"};
    }
    // A full model does not fit a CPU run.
    notices.push_back("tprimat: no GPU backend found; running the CPU reference backend on model tiny");
    return {"tiny"};
  }
  if (o.model == "all") return all_models();
  if (!model::find(o.model))
    throw core::InputError("unknown model '" + core::shown(o.model) + "'",
                           "pick one of " + model::known_names() + ", all");
  return {o.model};
}

inline std::vector<StrategyChoice> resolve_strategies(const BenchOptions& o,
                                                      const Environment& env) {
  using K = StrategyChoice::Kind;
  if (env.fixed) return {{env.fixed->first, "", K::fixed, env.fixed->second}};
  if (o.parallel == "all") {
    check_layout_flags_one_strategy(o);
    std::vector<StrategyChoice> out;
    for (const auto& s : parallel::strategies)
      out.push_back({std::string(s.name), "-" + std::string(s.index), K::builtin, {}});
    return out;
  }
  // Megatron's way: the layout flags alone, else the seeds' default. (Two returns, not one
  // conditional in a braced list: nvcc 13.0's device front end crashes on that.)
  if (o.parallel.empty() && layout_flags_given(o))
    return {{layout_flags_name(o), "", K::fixed, layout_from_flags(o)}};
  if (o.parallel.empty()) return {{std::string(parallel::default_strategy), "", K::builtin, {}}};
  if (parallel::find_strategy(o.parallel)) return {{o.parallel, "", K::builtin, {}}};
  if (bench::is_config_path(o.parallel)) return {{o.parallel, "", K::config, {}}};
  throw core::InputError("unknown strategy '" + core::shown(o.parallel) + "'",
                         "pick one of " + parallel::strategy_names() +
                             ", all, or a config file ending in .json, .yaml or .yml");
}

inline int parse_layers(const std::string& s) {
  if (s == "full" || s.empty()) return 0;
  if (s == "auto") return -1;
  int n = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc{} || p != s.data() + s.size() || n < 1)
    throw core::InputError("--layers takes full, auto or a positive count, got '" + s + "'",
                           "pass e.g. --layers 2 or --layers auto");
  return n;
}

inline std::string gib_text(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / bench::gib);
  return buf;
}

/// `path` as the kernel would reach it: absolute, `.`/`..`/`//` folded and symlinks followed,
/// a dangling last one included (writing through it would land at its target).
inline std::filesystem::path resolved(const std::filesystem::path& path) {
  std::error_code ec;
  auto p = std::filesystem::absolute(path, ec);
  for (int hops = 0; hops < 40; ++hops) {  // Linux's own limit on symlinks in one lookup
    p = std::filesystem::weakly_canonical(p, ec);
    if (!std::filesystem::is_symlink(p, ec)) break;
    const auto target = std::filesystem::read_symlink(p, ec);
    if (ec) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return p;
}

/// --save PATH: one checkpoint, so one job; a file path whose directory exists, and none that
/// the run writes itself (it would replace the weights, or they it), whatever its spelling.
inline void check_save(const std::filesystem::path& path, const std::vector<Job>& jobs) {
  if (jobs.size() != 1)
    throw core::InputError("--save writes one checkpoint, but this command runs " +
                               std::to_string(jobs.size()) + " jobs (models x strategies)",
                           "pass one --model and one --parallel strategy with --save");
  const Job& job = jobs.front();
  const auto elsewhere = job.output_dir / (std::string(job.ctx.full.cli_name) + ".safetensors");
  const auto target = resolved(path);
  for (const auto& [what, file] : job_files(job).written()) {
    const auto f = resolved(file);
    const bool temporary =
        target.parent_path() == f.parent_path() &&
        target.filename().string().starts_with("." + f.filename().string() + ".tmp");
    if (target == f || temporary)
      throw core::InputError(
          "--save " + path.string() + " is " + (temporary ? "a temporary of " : "") + what +
              " of this run (" + file.string() + "): the weights and it would replace each other",
          "save the weights to a path of their own, e.g. --save " + elsewhere.string());
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw core::InputError("--save " + path.string() + " is a directory",
                           "pass a file path, e.g. " + (path / "model.safetensors").string());
  const auto dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  if (!std::filesystem::is_directory(dir, ec))
    throw core::InputError("--save " + path.string() + ": directory " + dir.string() +
                               " does not exist",
                           "create it first, or save elsewhere");
  // Now, not after the run: a link, a device, an input of this run or a directory that takes no
  // new file is refused before any step (a probe file beside it, removed at once).
  try {
    const core::NewFile probe(path, "save the weights to a path of their own, e.g. --save " +
                                        elsewhere.string());
  } catch (const core::InputError& e) {
    throw core::InputError("--save " + core::without_prefix(e.what()));
  }
}

/// --parallel all runs layouts of its own choosing: a flag that none of its jobs applies (ZeRO-1
/// where every DP is 1, sequence parallelism where every TP is 1, an uneven pipeline split where
/// every PP is 1) would be taken and silently do nothing, so it is refused.
inline void check_flags_apply_to_all(const BenchOptions& o, const std::vector<Job>& jobs) {
  const auto none = [&](auto&& applies) {
    return std::none_of(jobs.begin(), jobs.end(), [&](const Job& j) { return applies(j.ctx.plan); });
  };
  const auto refuse = [&](const std::string& flag, const std::string& needs) {
    throw core::InputError(flag + " applies to no strategy --parallel all runs here: every one " +
                               "has " + needs,
                           "drop " + flag + ", or pass one --parallel strategy (or --tp/--pp) it "
                           "applies to");
  };
  if (sharding_strategy(o) != train::ShardingStrategy::no_shard &&
      none([](const auto& p) { return p.dp * p.cp > 1; }))
    refuse(o.sharding_strategy.empty() ? std::string("--distributed-optimizer")
                                       : "--data-parallel-sharding-strategy " + o.sharding_strategy,
           "DP 1 (" + sharding_label(sharding_strategy(o)) + " shards over DP ranks)");
  if (o.optimizer_instances > 1 &&
      none([&](const auto& p) { return instances_split(o, p.dp * p.cp); }))
    refuse("--num-distributed-optimizer-instances " + std::to_string(o.optimizer_instances),
           "DP x CP that it does not divide (hybrid sharding splits the DP x CP ranks)");
  if (o.sequence_parallel && none([](const auto& p) { return p.tp > 1; }))
    refuse("--sequence-parallel", "TP 1 (sequence parallelism splits over TP ranks)");
  const bool split = o.first_stage_layers > 0 || o.last_stage_layers > 0 ||
                     o.pipeline_split == "auto";
  if (split && none([](const auto& p) { return p.pp > 1; }))
    refuse(o.pipeline_split == "auto" ? "--pipeline-split auto"
                                      : "--decoder-first/last-pipeline-num-layers",
           "PP 1 (one pipeline stage)");
}

/// Creates the directory and proves it writable with a probe file (removed at once).
inline void check_output_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw core::InputError("cannot create output directory " + dir.string() +
                               (ec ? " (" + ec.message() + ")" : " (not a directory)"),
                           "pass a writable --output-dir (or set OUTPUT_DIR)");
  try {
    const core::NewFile probe(dir / ".tprimat-probe", "");
  } catch (const std::exception&) {
    throw core::InputError("output directory " + dir.string() + " is not writable",
                           "pass a writable --output-dir (or set OUTPUT_DIR)");
  }
}

/// `--init PATH`: the checkpoint must hold every tensor of the model as the job runs it (whole
/// tensors: each rank slices its block on load), checked now, from the headers, so a wrong file
/// fails before anything runs, and alike on every rank. Returns the one-line notice.
inline std::string check_init(const data::SafetensorsCheckpoint& init, Job& job) {
  job.ctx.init = init.path();
  const auto table = train::make_parameter_table(job.ctx.dims, train::Shard{});
  return data::check_hf_weights(init, table, job.ctx.full.name).notice(init.path());
}

/// Where a strategy's result goes: --output-dir, with "-00".."-04" under --parallel all.
inline std::filesystem::path job_output_dir(const BenchOptions& o, const StrategyChoice& choice) {
  std::string dir = o.output_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir + choice.dir_suffix;
}

/// `--parallel` names a config file (not a built-in strategy, not all).
inline bool names_config_file(const std::string& parallel) {
  return !parallel.empty() && !parallel::find_strategy(parallel) && bench::is_config_path(parallel);
}

/// The notice of the keys a --parallel config file names but tprimat does not apply.
inline void add_config_notice(const std::string& parallel, std::vector<std::string>& notices) {
  if (!names_config_file(parallel)) return;
  if (auto n = not_applied_notice(bench::load_config_run(config_document(parallel))); !n.empty())
    notices.push_back(std::move(n));
}

/// What a job is made for: to run on this machine (its memory and its platform checked), or to be
/// planned for another (`tprimat plan`: a plan that does not fit says what would).
enum class JobPurpose { run, plan };

/// make_job's work, in the library's terms: a setting it refuses is a core::SettingError.
inline Job assemble_job(const BenchOptions& o, const Environment& env, const std::string& cli_model,
                        const StrategyChoice& choice, JobPurpose purpose,
                        const data::DataCheck* data_check, const data::DataSpec* data_spec) {
  using K = StrategyChoice::Kind;
  const bool runs_here = purpose == JobPurpose::run;
  const model::Dims full = *model::find(cli_model);
  const std::string& platform = env.device.platform;
  std::string name = choice.name;
  parallel::TpPp tp_pp = choice.fixed;
  int want_dp = 0, want_accum = 0;
  train::PrecisionConfig file_precision;  // a config file's fp8 keys; flags override them
  int file_first = 0, file_last = 0;      // a config file's pipeline split
  std::string file_split;
  bool want_sp = o.sequence_parallel;     // or the config file's sequence_parallel
  std::optional<train::ShardingStrategy> file_sharding;  // its data_parallel_sharding_strategy
  std::optional<int> file_instances;                     // its num_distributed_optimizer_instances
  int file_cp = 1;                        // a config file's context_parallel_size
  std::optional<train::Recompute> file_recompute;  // a config file's recompute_* keys
  if (choice.kind == K::builtin) {
    tp_pp = parallel::find_strategy(choice.name)->for_model(cli_model, platform);
  } else if (choice.kind == K::config) {
    const auto c = bench::load_config_strategy(config_document(choice.name), cli_model, platform);
    name = c.name;
    tp_pp = {c.tp, c.pp};
    want_dp = c.dp;
    want_accum = c.grad_accum;
    if (c.precision) file_precision = *c.precision;
    file_first = c.first_stage_layers;
    file_last = c.last_stage_layers;
    file_split = c.pipeline_split;
    if (c.sequence_parallel) want_sp = want_sp || *c.sequence_parallel;
    file_sharding = c.sharding;
    file_instances = c.optimizer_instances;
    file_cp = c.cp;
    file_recompute = c.recompute;
  }
  const train::PrecisionConfig precision = precision_of(o, file_precision);
  check_layout_flags(o, name, tp_pp, want_accum);
  if (o.grad_accum > 0) want_accum = o.grad_accum;
  const int cp = context_parallel_size(o, name, file_cp, o.seq);
  const train::ShardingStrategy sharding = sharding_strategy(o, file_sharding, name);
  // An uneven pipeline split: asked of one layout with PP 1, it is refused; --parallel all
  // applies it to its strategies with PP > 1 and runs the others' one stage.
  const parallel::PipelineSplitRequest split_request =
      pipeline_split_request(o, name, file_first, file_last, file_split);
  if (split_request.given() && tp_pp.pp == 1 && !(o.parallel == "all" && !env.fixed))
    throw core::InputError(
        "--decoder-first/last-pipeline-num-layers and --pipeline-split auto (or their config "
        "keys) split the layers over pipeline stages, and strategy " +
            name + " has PP=1 (one stage)",
        "drop them, or pass a layout with --pp 2 or more");
  const bool uneven = split_request.given() && tp_pp.pp > 1;
  const auto split_rule = uneven ? parallel::PipelineSplit::given : parallel::PipelineSplit::even;
  // Layout rules first: they explain more than a rank-count mismatch would.
  if (auto err = parallel::layout_error(full, tp_pp.tp, tp_pp.pp, split_rule))
    throw core::InputError(*err + " [strategy " + name + "]");
  const int mp = tp_pp.tp * tp_pp.pp * cp;
  const int gbs = global_batch(o, cli_model, env.world / mp);
  parallel::Plan plan = parallel::make_plan(full, name, tp_pp, env.world, o.mbs, gbs, want_dp,
                                            want_accum, split_rule, cp);
  if (data_check != nullptr) data_check->check(full.vocab, full.name, gbs, data_setting_flags());
  // --parallel all runs hybrid sharding where its instances divide a strategy's replicas, as it
  // runs ZeRO where DP > 1; check_flags_apply_to_all refuses it where it applies to none.
  const bool every_strategy = o.parallel == "all" && !env.fixed;
  const int instances =
      every_strategy && o.optimizer_instances > 1 && !instances_split(o, plan.dp * cp)
          ? 1
          : optimizer_instances(o, file_instances, sharding, plan.dp * cp, name);
  // Sequence parallelism where TP > 1 only: a --parallel all run's TP=1 strategies run without.
  const bool sequence_parallel = want_sp && plan.tp > 1;
  if (sequence_parallel) {
    if (auto err = parallel::sequence_parallel_error(o.mbs, o.seq, plan.tp, cp))
      throw core::InputError(*err + " [strategy " + name + "]",
                             "pass a --seq (or --mbs) that TP=" + std::to_string(plan.tp) +
                                 (cp > 1 ? " x CP=" + std::to_string(cp) : "") +
                                 " divides, or drop --sequence-parallel");
  }
  if (!env.compiled(plan.tp, plan.pp))
    throw core::InputError("layout TP=" + std::to_string(plan.tp) + " x PP=" +
                               std::to_string(plan.pp) + " is not compiled into this binary",
                           "use TP and PP in 1, 2, 4, 8, or add the layout to the dispatch");

  bench::MemoryPlanInput mem;
  mem.dims = full;
  mem.tp = plan.tp;
  mem.pp = plan.pp;
  mem.dp = plan.dp;
  mem.shape.context_parallel = cp;
  mem.shape.mbs = o.mbs;
  mem.shape.seq = o.seq;
  mem.shape.grad_accum = plan.grad_accum;
  mem.sharding = sharding;
  mem.optimizer_instances = instances;
  mem.shape.sequence_parallel = sequence_parallel;
  // The --recompute-* flags, given, replace the config file's recompute_* keys.
  const bool recompute_flags = !o.recompute_granularity.empty() || !o.recompute_method.empty() ||
                               o.recompute_num_layers != 0 || !o.recompute_modules.empty();
  mem.shape.recompute = recompute_flags || !file_recompute
                      ? recompute_from_flags(o.recompute_granularity, o.recompute_method,
                                             o.recompute_num_layers, o.recompute_modules)
                      : *file_recompute;
  const bool cpu = platform == "cpu";
  if (cpu && mem.shape.recompute.on() && !mem.shape.recompute.full())
    throw core::InputError(
        "--recompute-granularity selective runs on the GPU backends: the CPU engine keeps every "
        "activation",
        "use --recompute-granularity full on the CPU, or drop it");
  if (!cpu) mem.precision = precision;  // the FP8 buffers
  // The attention backward's workspace: cuDNN's (auto's choice on NVIDIA GPUs) or the flash
  // kernels' (AMD GPUs, or asked).
  mem.attention_kernel = platform == "hip" || attention_asked(o) == "flash"
                             ? train::AttentionKernel::flash
                             : train::AttentionKernel::cudnn;
  mem.compute_bytes = cpu ? 4 : 2;
  mem.logits_rows = cpu ? 0 : train::loss_chunk_rows;
  // The CPU engine's attention keeps no S x S matrix, only a tile of query rows (its workspace);
  // under CP a block's score tiles (the plan counts the ring's buffers).
  if (cpu)
    mem.workspace_bytes =
        4.0 * double(cp > 1 ? backend::Cpu::attention_block_workspace(o.seq / cp, o.seq / cp)
                            : backend::Cpu::attention_workspace(o.seq));
  const double capacity = env.device.total_memory_gb * bench::gib;

  // No --layers: the whole model on the CPU (tiny) and in a plan, which says what would make it
  // fit rather than plan a proxy unasked; a GPU run takes the largest count that fits.
  const bool planning = purpose == JobPurpose::plan;
  int layers =
      parse_layers(o.layers.empty() && !cpu && !planning ? std::string("auto") : o.layers);
  const bool layers_auto = layers < 0;
  bool recompute_chosen = false;  // by --layers auto, to run the whole model
  if (layers_auto) {
    // FP8 at the depth its least memory allows; the copies are chosen for that depth below.
    if (mem.precision.is_fp8()) mem.precision.fp8.copies = train::Fp8Copies::recast;
    layers = !uneven ? bench::max_layers_that_fit(mem, capacity)
                     : bench::max_layers_that_fit(mem, capacity, [&](int n) {
                         try {
                           return std::optional<std::vector<int>>(parallel::resolve_stage_layers(
                               full.with_layers(n), plan.pp, o.seq, split_request));
                         } catch (const core::InputError&) {
                           return std::optional<std::vector<int>>();
                         }
                       });
    // The whole model with full recomputation before a proxy, when that fits with the margin
    // and no recomputation was asked for: whole-model figures at a third more compute.
    if (layers < full.layers && !mem.shape.recompute.on() && !uneven) {
      bench::MemoryPlanInput recomputed = mem;
      recomputed.dims = full;
      recomputed.shape.recompute = train::full_recompute_every_layer;
      if (bench::plan_memory(recomputed).total * bench::fit_margin <= capacity) {
        mem.shape.recompute = recomputed.shape.recompute;
        layers = full.layers;
        recompute_chosen = true;
      }
    }
    if (layers == 0) {
      mem.dims = full.with_layers(plan.pp);
      throw core::InputError(
          "not even " + std::to_string(plan.pp) + " layer(s) of " + std::string(full.name) +
              " fit the device: predicted " + gib_text(bench::plan_memory(mem).total) + " per GPU x " +
              std::to_string(bench::fit_margin) + " margin > " + gib_text(capacity) + " of device memory",
          "pass a smaller --seq or --mbs, or a strategy with more TP/PP");
    }
  } else if (layers == 0) {
    layers = full.layers;
  } else if (layers > full.layers) {
    throw core::InputError("--layers " + std::to_string(layers) + " exceeds the " +
                               std::to_string(full.layers) + " layers of " +
                               std::string(full.name),
                           "pass --layers " + std::to_string(full.layers) + " or fewer");
  }
  const model::Dims dims = full.with_layers(layers);
  if (auto err = parallel::layout_error(dims, plan.tp, plan.pp, split_rule))
    throw core::InputError(*err + "; pass --layers as a multiple of PP=" +
                           std::to_string(plan.pp));
  // Every stage's layers, recorded in the result: the even split unless one was asked for.
  plan.stage_layers = parallel::resolve_stage_layers(
      dims, plan.pp, o.seq, uneven ? split_request : parallel::PipelineSplitRequest{});
  check_precision(precision, platform, dims, plan.tp, o.mbs, o.seq);
  train::check_recompute(mem.shape.recompute, layers);
  mem.dims = dims;
  mem.shape.layers = layers;
  mem.shape.stage_layers = plan.stage_layers;
  // FP8 keeps the weights' copies when they fit (with --layers auto's margin), else recasts them
  // at each use: the same numbers in less memory and a little more time (docs/fp8.md).
  train::PrecisionConfig run_precision = precision;
  if (!cpu && precision.is_fp8()) {
    run_precision.fp8.copies =
        fp8_copies_that_fit(mem, capacity, layers_auto ? bench::fit_margin : 1.0);
    mem.precision = run_precision;
  }
  // Each stage's plan once: the job keeps them, the busiest decides the fit.
  std::vector<bench::MemoryPlan> stages = bench::plan_stages(mem);
  const bench::MemoryPlan predicted = bench::busiest_stage(stages);
  if (runs_here && capacity > 0 && predicted.total > capacity) {
    // The smallest plan of one change that fits, computed (cli/fit_options.hpp).
    const auto options = single_changes_that_fit(mem, plan.world(), gbs, capacity);
    const std::string option = options.empty() ? "" : options.front().flags + " (" +
                                                          gib_text(options.front().total) + "), ";
    throw core::InputError(
        "predicted out of memory: " + std::string(full.name) + " with " + std::to_string(layers) +
            " layers, mbs " + std::to_string(o.mbs) + ", seq " + std::to_string(o.seq) +
            " needs " + gib_text(predicted.total) + " per GPU, the device has " +
            gib_text(capacity),
        "pass " + option + "--layers auto (runs a proxy of the model that fits), or a smaller "
        "--seq/--mbs; tprimat plan lists every option that fits");
  }

  Job job;
  auto& c = job.ctx;
  c.device = env.device;
  c.full = full;
  c.dims = dims;
  c.plan = plan;
  c.mbs = o.mbs;
  c.gbs = gbs;
  c.seq = o.seq;
  c.steps = o.steps;
  c.warmup_steps = o.warmup_steps;
  c.layers_auto = layers_auto;
  c.data = data_spec != nullptr ? data_spec->text : o.data;
  if (data_spec != nullptr) job.data = *data_spec;
  c.seed = o.seed;
  // The CPU backend computes in fp32 (an FP8 CPU run is refused above until it emulates FP8).
  c.precision = cpu && !precision.is_fp8() ? std::string(train::precision_names::fp32)
                                           : precision.name();
  c.device_options.precision = run_precision;
  c.device_options.graph = !o.no_graph;
  c.device_options.overlap = !o.no_overlap;
  c.deterministic = o.deterministic;
  const std::string attention = detail::attention_asked(o);
  c.device_options.attention = attention == "flash"   ? train::AttentionChoice::flash
                               : attention == "cudnn" ? train::AttentionChoice::cudnn
                                                      : train::AttentionChoice::automatic;
  c.optimizer = optimizer_for(o, o.warmup_steps + o.steps);
  c.optimizer.sharding = sharding;  // the config file's, where it states one
  c.optimizer.optimizer_instances = instances;
  train::check_sharding_built(c.optimizer, run_precision);
  c.sequence_parallel = sequence_parallel;
  c.recompute = mem.shape.recompute;
  c.predicted = predicted;
  c.command_line = env.command_line;
  c.nodes = env.nodes;
  c.collective_settings = env.collective_settings;
  c.overwrite = o.overwrite;
  c.save = o.save;
  job.predicted_stages = std::move(stages);
  job.memory_input = mem;
  job.recompute_chosen = recompute_chosen;
  job.runs = o.runs;
  job.log_interval = o.log_interval;
  job.output_dir = job_output_dir(o, choice);
  return job;
}

/// The job of `cli_model` under `choice`, every check made; a setting the library refuses is told
/// as this program's flag (with_flag_advice).
inline Job make_job(const BenchOptions& o, const Environment& env, const std::string& cli_model,
                    const StrategyChoice& choice, JobPurpose purpose = JobPurpose::run,
                    const data::DataCheck* data_check = nullptr,
                    const data::DataSpec* data_spec = nullptr) {
  try {
    return assemble_job(o, env, cli_model, choice, purpose, data_check, data_spec);
  } catch (const core::SettingError& e) {
    throw with_flag_advice(e);
  }
}

}  // namespace detail

/// Checks every option and builds the jobs; throws core::InputError naming the problem and fix.
/// With `--parallel all`, a strategy that cannot run here is skipped with a one-line notice.
inline JobList resolve_jobs(const BenchOptions& o, const Environment& env) {
  JobList out;
  detail::check_backend(o.backend, env.device);
  detail::check_attention(o.attention);
  detail::check_deterministic(o);
  // Before any engine plans a GEMM: the whole process keeps the first algorithms.
  if (o.deterministic) backend::keep_first_gemm_algorithms();
  // The precision flags before anything else reads them: with --parallel all a job's bad input
  // skips its strategy, and a bad flag must not skip them all. A config file may still set fp8
  // under a lone --fp8-recipe, so the pair is judged here only without one.
  check_precision_flag_values(o.precision, o.fp8_recipe);
  if (!bench::is_config_path(o.parallel) || env.fixed)
    check_precision_backend(detail::precision_of(o), env.device.platform);
  check_pipeline_split_flag(o);  // before --parallel all could skip every strategy for it
  check_ranges(o);  // the flags' own ranges, for options filled in code as for typed ones
  check_totals(o);
  (void)detail::parse_layers(o.layers);
  // --init PATH: found and readable now (headers checked), before the data sets are scanned.
  std::unique_ptr<data::SafetensorsCheckpoint> init;
  if (o.init != "random") init = std::make_unique<data::SafetensorsCheckpoint>(o.init);
  data::DataSpec spec;
  const auto data_check = detail::open_data(o, spec);
  const auto models = detail::resolve_models(o, env.device.platform, out.notices);
  // A GPU step runs eagerly once, then captures its CUDA graph and replays it: both are slower
  // than the replays, and a warm-up shorter than them puts them among the measured steps.
  if (env.device.platform != "cpu" && !o.no_graph && o.warmup_steps < 2)
    out.notices.push_back("tprimat: --warmup-steps " + std::to_string(o.warmup_steps) +
                          ": the eager first step and the CUDA graph's capture (steps 1 and 2) "
                          "are slower than the replays and are measured; use --warmup-steps 2 "
                          "(the default) or more, or --no-graph");
  const auto strategies = detail::resolve_strategies(o, env);
  const bool skip_bad = o.parallel == "all" && !env.fixed;
  for (const auto& m : models) {
    for (const auto& s : strategies) {
      Job job;
      try {
        job = detail::make_job(o, env, m, s, detail::JobPurpose::run, data_check.get(), &spec);
      } catch (const core::InputError& e) {
        if (!skip_bad) throw;
        const std::string why = core::without_prefix(e.what());
        out.notices.push_back("tprimat: skipping " + s.name + " for " + m +
                              " (nothing written to " + detail::job_output_dir(o, s).string() +
                              "): " + why);
        out.skipped.push_back(
            {s.name, m,
             detail::job_output_dir(o, s) / bench::result_file_name(env.device, model::find(m)->cli_name),
             why});
        continue;
      }
      if (init) {  // a checkpoint that does not fit the model fails every strategy: never skipped
        const std::string notice = detail::check_init(*init, job);
        if (std::find(out.notices.begin(), out.notices.end(), notice) == out.notices.end())
          out.notices.push_back(notice);
      }
      out.jobs.push_back(std::move(job));
    }
  }
  if (out.jobs.empty())
    throw core::InputError("no strategy of --parallel all can run here on " +
                               std::to_string(env.world) + " rank(s)",
                           "launch with mpirun -np 4 or 8, or pick one strategy");
  if (skip_bad) detail::check_flags_apply_to_all(o, out.jobs);
  if (!env.fixed) detail::add_config_notice(o.parallel, out.notices);
  if (!o.save.empty()) detail::check_save(o.save, out.jobs);
  std::vector<std::filesystem::path> dirs;
  for (const auto& j : out.jobs)
    if (std::find(dirs.begin(), dirs.end(), j.output_dir) == dirs.end())
      dirs.push_back(j.output_dir);
  for (const auto& d : dirs) detail::check_output_dir(d);
  return out;
}

/// An FP8 job's copies, when the plan or FSDP chose to recast them ("" otherwise): the user sees
/// why the step casts more than a kept run would.
inline std::string describe_fp8_copies(const Job& job) {
  const auto& p = job.ctx.device_options.precision;
  if (!p.is_fp8() || p.fp8.copies == train::Fp8Copies::kept) return "";
  if (job.ctx.optimizer.shards_weights())
    return std::string(
        "tprimat: FP8 copies recast: under FSDP no rank holds a whole weight to "
        "cast once a step, so each is cast after its gather, where it is read (the "
        "same numbers; docs/fp8.md)");
  return "tprimat: FP8 copies recast: the weights' FP8 copies kept for a whole step do not fit " +
         detail::gib_text(job.ctx.device.total_memory_gb * bench::gib) +
         ", so each is cast again where it is read (the same numbers; docs/fp8.md)";
}

}  // namespace tprimat::cli
