// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The benchmark loop and the result files of one job (runner.hpp).
#include "cli/runner.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "tprimat/bench/metrics.hpp"
#include "tprimat/bench/result.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/data/blend.hpp"
#include "tprimat/data/hf_weights.hpp"
#include "tprimat/data/safetensors.hpp"
#include "tprimat/data/synthetic.hpp"
#include "tprimat/profile/nvtx.hpp"
#include "tprimat/profile/result.hpp"
#include "tprimat/profile/step_profiler.hpp"
#include "tprimat/train/config.hpp"
#include "cli/interrupt.hpp"
#include "cli/options.hpp"

namespace tprimat::cli {

namespace {

/// "predicted memory per GPU 75.21 GiB of 79.10 GiB: weights 13.95, ..." (the job's plan).
std::string predicted_memory_text(const bench::ResultContext& c) {
  const auto& p = c.predicted;
  std::string out = "predicted memory per GPU " + detail::gib_text(p.total) + " of " +
                    detail::gib_text(c.device.total_memory_gb * bench::gib) + ":";
  const std::pair<const char*, double> parts[] = {
      {"weights", p.weights},           {"gradients", p.gradients},     {"master", p.master},
      {"adam_moments", p.adam_moments}, {"activations", p.activations}, {"logits", p.logits},
      {"scratch", p.scratch},           {"workspace", p.workspace}};
  for (const auto& [name, bytes] : parts) {
    if (bytes == 0 && std::string_view(name) == "scratch") continue;  // the CPU engine's: none
    char buf[64];
    std::snprintf(buf, sizeof buf, " %s %.2f,", name, bytes / bench::gib);
    out += buf;
  }
  out.back() = ' ';
  return out + "GiB";
}

/// Writes what `prof` recorded to profile_<stack>_<model>_<rank>.json[.gz] in the output dir.
void write_profile(const Job& job, const StepDriver& d, profile::StepProfiler& prof,
                          Reporter& rep) {
  const auto& c = job.ctx;
  prof.finish();
  nlohmann::json meta = {{"tprimat_version", version_string}, {"platform", c.device.platform},
                         {"software_stack", c.device.software_stack},
                         {"device_name", c.device.device_name}, {"model", c.full.cli_name},
                         {"layers", c.dims.layers}, {"strategy", c.plan.strategy_name},
                         {"rank", d.rank}, {"world", c.plan.world()}, {"mbs", c.mbs},
                         {"seq", c.seq}, {"grad_accum", c.plan.grad_accum},
                         {"cuda_graph", d.graph_captured && d.graph_captured()}};
  if (d.make_collector)  // device GEMMs: 2 FLOPs per multiply-add, forward + 2 backward GEMMs
    meta["gemm_flops_per_step"] = 6.0 * double(model::matmul_params(c.dims)) * c.mbs * c.seq *
                                  c.plan.grad_accum / double(c.plan.tp * c.plan.pp);
  const auto path = job.output_dir / profile::trace_file_name(c.device.software_stack,
                                                              c.full.cli_name, d.rank,
                                                              job.profile.gzip);
  prof.write(path, job.profile.gzip, meta, "tprimat rank " + std::to_string(d.rank));
  rep.line("tprimat: wrote profile " + path.string() + " (" +
           std::to_string(prof.recorded_steps().size()) + " steps recorded, " +
           prof.collector_name() + "); tprimat profile-summary " + path.string());
}

/// One line per measured statistic, for the console and the log.
void report_summary(const nlohmann::json& doc, Reporter& rep) {
  const auto& p = doc["performance_metrics"];
  auto num = [](const nlohmann::json& v, const char* fmt) {
    if (!v.is_number()) return std::string("n/a");
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v.get<double>());
    return std::string(buf);
  };
  rep.line("tokens/s " + num(p["tokens_per_second"], "%.1f") + " (" +
           num(p["tokens_per_second_per_gpu"], "%.1f") + " per GPU), step time mean " +
           num(p["avg_step_time_seconds"], "%.4fs") + " median " +
           num(p["median_step_time_seconds"], "%.4fs") + " std " +
           num(p["std_step_time_seconds"], "%.4fs") + ", model TFLOP/s per GPU " +
           num(p["model_tflops_per_gpu"], "%.4f") + " (PaLM) " +
           num(p["tflops_per_gpu_causal"], "%.4f") + " (causal), MFU " +
           (p["mfu"].is_number()
                ? num(p["mfu"], "%.4f") + " (PaLM) " + num(p["mfu_causal"], "%.4f") + " (causal)"
                : "n/a (peak unknown)"));
  if (const auto w = doc.find("warnings"); w != doc.end() && w->is_array())
    for (const auto& line : *w) rep.line("tprimat: warning: " + line.get<std::string>());
  if (doc["raw_step_times"].is_array()) {  // said where it is seen, and kept in step_outliers
    std::vector<double> seconds;
    for (const auto& t : doc["raw_step_times"])
      if (t.is_number()) seconds.push_back(t.get<double>());
    std::vector<std::string> lines;
    (void)bench::step_outliers_json(seconds, &lines);
    for (const auto& line : lines) rep.alert("tprimat: notice: " + line);
  }
}

/// The result's `profiling` block: run 1's step times, warm-up steps first, as the schedule saw.
nlohmann::json profile_result(const Job& job, const bench::RunRecord& run1) {
  std::vector<double> seconds = run1.warmup_step_times;
  seconds.insert(seconds.end(), run1.step_times.begin(), run1.step_times.end());
  const auto& c = job.ctx;
  return profile::result_json(job.profile, c.plan.world(), job.output_dir,
                              c.device.software_stack, c.full.cli_name,
                              c.device.platform == "cpu" ? "host" : "cupti", c.warmup_steps,
                              seconds);
}

bool nothing_ran(const std::vector<bench::RunRecord>& records) {
  return std::all_of(records.begin(), records.end(), [](const bench::RunRecord& r) {
    return r.step_times.empty() && r.warmup_step_times.empty();
  });
}

bench::RunRecord interrupted_record(int signo) {
  bench::RunRecord r;
  r.interrupted_by = signo;
  r.error = interruption_reason(signo);
  return r;
}

}  // namespace

/// Why a run failed, for the console and the result's `error`. Running out of memory carries the
/// memory plan beside it (whether the plan or the allocator was wrong is then visible at once)
/// and the flags that take less.
std::string failure_reason(const std::exception& e, const bench::ResultContext& c) {
  if (dynamic_cast<const core::OutOfMemoryError*>(&e) != nullptr)
    return std::string(e.what()) + "; " + predicted_memory_text(c) +
           "; to fit: --layers, a smaller --mbs, --recompute-granularity full or more GPUs "
           "(tprimat plan with these flags lists the single changes that fit)";
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr)  // the CPU backend's device is the host
    return "tprimat: out of host memory (" + std::string(e.what()) + "); " +
           predicted_memory_text(c);
  return e.what();
}

/// Runs warm-up then measured steps on this rank's share of the global batch (synthetic or
/// indexed data, split by the one rule of data::fill_rank_batch).
/// A failure (exception, non-finite loss) ends the run with `complete` false and the reason.
bench::RunRecord run_steps(const Job& job, int run, const StepDriver& d, Reporter& rep) {
  const auto& c = job.ctx;
  bench::RunRecord rec;
  const int total = c.warmup_steps + c.steps;
  const bench::MetricsInput figures = bench::detail::metrics_input(c);  // FLOPs, GPUs, peak
  double elapsed = 0;  // seconds of the steps so far, the line's "elapsed"
  std::optional<data::SyntheticTokens> synthetic;
  std::optional<data::BlendedSamples> indexed;
  if (job.data.synthetic())
    synthetic.emplace(c.dims.vocab, static_cast<std::uint64_t>(c.seed));
  else
    indexed.emplace(job.data, c.seq, static_cast<std::uint64_t>(c.seed));
  std::vector<std::int32_t> batch(static_cast<std::size_t>(c.gbs / c.plan.dp) * (c.seq + 1));
  rep.line("run " + std::to_string(run + 1) + "/" + std::to_string(job.runs) + ": " +
           std::to_string(c.warmup_steps) + " warm-up + " + std::to_string(c.steps) +
           " measured steps");
  double measured_sum = 0;
  // --profile: run 1 of a recording rank. Otherwise no profiler exists: no collector, no
  // allocation, and profile::Range finds no sink.
  std::optional<profile::StepProfiler> prof;
  if (run == 0 && job.profile.profiles(d.rank))
    prof.emplace(job.profile.schedule, c.warmup_steps,
                 d.make_collector ? d.make_collector() : nullptr);
  try {
    for (int s = 0; s < total; ++s) {
      // Between steps, never inside one: a step cut short would be neither timed nor the same on
      // every rank. The handler only noted the signal (cli/interrupt.hpp).
      if (const int signo = d.agree_on_stop(interrupt_signal()); signo != 0) {
        rec.interrupted_by = signo;
        rec.error = interruption_reason(signo);
        break;
      }
      const bool warm = s < c.warmup_steps;
      if (prof) prof->step_begin(s);
      // Data for step s is the same in every run, so runs repeat one workload.
      if (synthetic)
        data::fill_rank_batch(*synthetic, s, c.gbs, d.dp_rank, c.plan.dp, c.seq, batch);
      else
        data::fill_rank_batch(*indexed, s, c.gbs, d.dp_rank, c.plan.dp, c.seq, batch);
      const auto t0 = std::chrono::steady_clock::now();
      const train::StepStats st = [&] {
        const profile::Range range("train_step");
        return d.step(batch);
      }();
      // A GPU step reports its CUDA-event time (first upload to result download); the CPU's
      // measure is the wall clock around the call.
      const double dt = st.device_seconds > 0
                            ? st.device_seconds
                            : std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
                                  .count();
      if (prof) prof->step_end(s, dt);
      if (!std::isfinite(st.loss))
        throw core::RunError("loss is not finite at step " + std::to_string(s + 1) +
                             " (numerical blow-up)");
      const double mem = double(d.peak_bytes()) / bench::gib;
      if (warm) {
        rec.warmup_step_times.push_back(dt);
      } else {
        rec.step_times.push_back(dt);
        rec.losses.push_back(st.loss);
        rec.learning_rates.push_back(st.lr);
        rec.grad_norms.push_back(st.grad_norm);
        rec.memory_gb.push_back(mem);
        measured_sum += dt;
      }
      rec.peak_bytes = std::max(rec.peak_bytes, double(d.peak_bytes()));
      const double per_step = rec.step_times.empty() ? dt : measured_sum / rec.step_times.size();
      StepLine line;
      line.warmup = warm;
      line.k = warm ? s + 1 : s + 1 - c.warmup_steps;
      line.n = warm ? c.warmup_steps : c.steps;
      line.loss = st.loss;
      line.lr = st.lr;
      line.grad_norm = st.grad_norm;
      line.seconds = dt;
      const bench::Metrics step_metrics =  // the result's own formulas, over this one step
          bench::compute_metrics(std::span<const double>(&dt, 1), figures);
      line.tokens_per_second = step_metrics.tokens_per_second;
      line.tokens_per_second_per_gpu = step_metrics.tokens_per_second_per_gpu;
      line.tflops_per_gpu = step_metrics.model_tflops_per_gpu;
      line.mfu = step_metrics.mfu;
      line.mfu_causal = step_metrics.mfu_causal;
      line.memory_gib = mem;
      elapsed += dt;
      line.elapsed_seconds = elapsed;
      line.eta_seconds = per_step * (total - s - 1 + (job.runs - run - 1) * total);
      // --log-interval: every Nth line of each phase on the console, its first and last always.
      const bool shown = line.k == 1 || line.k == line.n || line.k % job.log_interval == 0;
      rep.step(line, shown ? StepShown::everywhere : StepShown::log_only);
    }
    rec.complete = rec.interrupted_by == 0;
  } catch (const std::exception& e) {
    rec.error = failure_reason(e, c);
  }
  if (prof) {  // also after a failure: the steps recorded may show why
    try {
      write_profile(job, d, *prof, rep);
    } catch (const std::exception& e) {
      if (rec.error.empty()) rec.error = e.what();
      rec.complete = false;
    }
  }
  try {  // what a device run used, read even after a failure (it is part of the record)
    if (d.peak_reserved_bytes) rec.peak_reserved_bytes = double(d.peak_reserved_bytes());
    if (d.attention) rec.attention = d.attention();
    if (d.graph_captured) rec.cuda_graph = d.graph_captured();
  } catch (const std::exception& e) {
    if (rec.error.empty()) rec.error = e.what();
    rec.complete = false;
  }
  rep.end_progress();
  return rec;
}

/// `--init PATH`: this rank's part (`table`: its TP block and pipeline stage) of the checkpoint,
/// in table order. Every run starts from it, so runs repeat one workload.
std::vector<float> init_weights(const Job& job, const train::ParameterTable& table) {
  const data::SafetensorsCheckpoint ckpt(job.ctx.init);
  std::vector<float> params(static_cast<std::size_t>(table.total()));
  (void)data::load_hf_weights<float>(ckpt, table, job.ctx.full.name, params);
  return params;
}

/// The step every rank of the job runs: the shape its memory plan was computed from.
train::StepShape step_shape(const Job& job) { return job.memory_input.shape; }

/// Whether `--save` writes after this run: the job's last.
bool saves_after(const Job& job, int run) {
  return !job.ctx.save.empty() && run == job.runs - 1;
}

/// Before the first job runs: rank 0 locks the result and log of every job (output_lock.hpp) for
/// the whole command, so that a second tprimat writing any of them is refused up front, and a
/// `--model all` or `--parallel all` run holds what it writes later too. Only rank 0 writes, so
/// only it locks; `max_over_ranks` carries its verdict to the others, which then stop as well
/// (one collective, reached by every rank). Throws core::InputError on every rank when refused.
std::vector<OutputLock> hold_outputs(const JobList& list, int rank,
                                            std::string_view command_line,
                                            const std::function<int(int)>& max_over_ranks,
                                            std::vector<std::string>& notices) {
  std::vector<std::filesystem::path> files;
  for (const auto& job : list.jobs)
    for (const auto& f : job_files(job).locked())
      if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
  std::vector<OutputLock> locks;
  std::string refused;
  if (rank == 0) {
    try {
      locks = lock_outputs(files, lock_owner_text(command_line), notices);
    } catch (const core::InputError& e) {
      refused = e.what();
    }
  }
  if (max_over_ranks(refused.empty() ? 0 : 1) != 0)
    throw core::InputError(refused.empty() ? "rank 0's output files are held by another run"
                                           : refused);
  return locks;
}

/// Runs every run of a job and (rank 0) writes the result atomically. Returns the exit code:
/// 0; 1 when a run failed after starting (the file then says "complete": false); 128 + signo
/// when SIGINT/SIGTERM stopped it (the file holds the steps completed); 2 when the result file
/// holds another configuration and --overwrite was not given (nothing runs, nothing is written).
/// A core::InputError from the first construction (layout the backend cannot run) propagates.
int run_job(const Job& job, int rank, const RunOnce& once, Reporter& rep) {
  namespace fs = std::filesystem;
  const InterruptGuard guard;
  const auto& c = job.ctx;
  const JobFiles files = job_files(job);
  const auto& file = files.result;
  const auto& log = files.log;
  const auto& live_log = files.live_log;
  // One process may stop between runs and jobs on its own; ranks only stop together, inside
  // run_steps, where they agree on it.
  const bool alone = c.plan.world() == 1;
  if (alone && interrupt_signal() != 0) {
    rep.alert("tprimat: skipping " + std::string(c.full.cli_name) + " (" + c.plan.strategy_name +
              "): interrupted by " + signal_name(interrupt_signal()));
    rep.close_log();
    return core::exit_interrupted(interrupt_signal());
  }
  // The log grows under a temporary name and replaces the previous one when the job ends, so the
  // log beside a result is always that result's whole log, and a refused or interrupted job
  // leaves the previous pair as it was.
  const bool logging = rep.open_log(live_log);
  const auto discard_log = [&] {
    rep.close_log();
    std::error_code ec;
    if (logging) fs::remove(live_log, ec);
  };
  std::vector<bench::RunRecord> records;
  for (int r = 0; r < job.runs; ++r) {
    if (r > 0 && alone && interrupt_signal() != 0) {
      records.push_back(interrupted_record(interrupt_signal()));
      break;
    }
    try {
      try {
        records.push_back(once(job, r, rep));
      } catch (const core::SettingError& e) {  // the library's setting, told as our flag
        throw with_flag_advice(e);
      }
    } catch (const bench::ResultConflict& e) {
      discard_log();
      if (rank == 0) std::fprintf(stderr, "%s\n", e.what());
      return core::exit_bad_input;
    } catch (const core::InputError& e) {
      if (r == 0) {  // nothing ran yet: bad input, not a failed run
        discard_log();
        throw;
      }
      bench::RunRecord failed;
      failed.error = e.what();
      records.push_back(std::move(failed));
    } catch (const std::exception& e) {  // building the step failed, e.g. out of memory
      bench::RunRecord failed;
      failed.error = failure_reason(e, c);
      records.push_back(std::move(failed));
    }
    if (!records.back().complete) break;
  }
  // A signal that arrived during the last step still ends the process as interrupted, so that a
  // calling script stops too; the result is then complete.
  const int signo =
      records.back().interrupted_by != 0 ? records.back().interrupted_by : interrupt_signal();
  if (signo != 0 && nothing_ran(records)) {
    rep.alert("tprimat: interrupted by " + signal_name(signo) + " before the first step: " +
              "nothing to write, " + file.string() + " is left as it was");
    discard_log();
    return core::exit_interrupted(signo);
  }
  const bool complete = records.size() == static_cast<std::size_t>(job.runs) &&
                        records.back().complete;
  auto doc = bench::make_result(c, records);
  if (job.profile.enabled) doc["profiling"] = profile_result(job, records.front());
  if (records.back().interrupted_by != 0) {
    const auto measured = doc["raw_step_times"].size();
    const std::string why = "tprimat: interrupted by " + signal_name(signo) + ": writing the " +
                            std::to_string(measured) + " measured step(s) completed, marked " +
                            "incomplete (a second SIGINT or SIGTERM ends tprimat at once)";
    rep.alert(why);
  } else {
    if (!complete) {
      const std::string why = core::without_prefix(doc.value("error", std::string("unknown")));
      rep.alert("tprimat: run failed: " + why);
    }
    if (signo != 0)
      rep.line("tprimat: " + signal_name(signo) + " arrived during the last step; no further run " +
               "or job starts");
  }
  report_summary(doc, rep);
  if (rank == 0) {
    // Checked again at the write: the refusal was run 0's view of the file, before any step.
    const auto replaced = bench::existing_result_differences(file, c);
    try {
      bench::write_result(file, doc, result_fixes);
    } catch (const core::RunError& e) {  // a full disk: the steps are not lost, say where they are
      if (!logging || dynamic_cast<const bench::InvalidResult*>(&e) != nullptr) throw;
      rep.close_log();
      throw core::RunError(std::string(e.what()) + "; the " +
                           std::to_string(doc["raw_step_times"].size()) +
                           " measured step(s) are kept in " + live_log.string());
    }
    std::string note;
    if (replaced && replaced->empty()) {
      note = "; replaced the previous result of this configuration";
    } else if (replaced) {
      note = std::string("; replaced a result of another configuration") +
             (c.overwrite ? " (--overwrite):" : ":");
      for (const auto& d : *replaced) note += " " + d + ",";
      note.pop_back();
    }
    rep.line("wrote " + file.string() + (complete ? "" : " (incomplete)") + note);
  }
  rep.close_log();
  if (logging) {
    try {
      core::publish_written_file(live_log, log, "remove it, or pass another --output-dir");
    } catch (const std::exception& e) {  // the result is written; a lost log is not a failed run
      std::fprintf(stderr, "%s (the log stays at %s)\n", e.what(), live_log.string().c_str());
    }
  }
  if (signo != 0) return core::exit_interrupted(signo);
  return complete ? 0 : core::exit_run_failed;
}

}  // namespace tprimat::cli
