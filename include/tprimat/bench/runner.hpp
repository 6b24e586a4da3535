// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The benchmark loop (warm-up, timed steps, runs) and the result files of one job.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tprimat/bench/jobs.hpp"
#include "tprimat/bench/progress.hpp"
#include "tprimat/bench/result.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/data/blend.hpp"
#include "tprimat/data/hf_weights.hpp"
#include "tprimat/data/safetensors.hpp"
#include "tprimat/data/synthetic.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/training_step.hpp"

namespace tprimat::bench {

/// A constructed training step, type-erased so that the loop below is compiled once, not once
/// per (backend, model, layout, communicator).
struct StepDriver {
  std::function<train::StepStats(std::span<const std::int32_t>)> step;
  std::function<std::size_t()> peak_bytes;
  int dp_rank = 0;
  /// GPU backends: the pool's reserved high-water mark, the attention policy, whether the step
  /// now replays a CUDA graph. Unset on the CPU.
  std::function<std::size_t()> peak_reserved_bytes;
  std::function<std::string()> attention;
  std::function<bool()> graph_captured;
};

/// Runs warm-up then measured steps on this rank's share of the global batch (synthetic or
/// indexed data, split by the one rule of data::fill_rank_batch).
/// A failure (exception, non-finite loss) ends the run with `complete` false and the reason.
inline RunRecord run_steps(const Job& job, int run, const StepDriver& d, Reporter& rep) {
  const auto& c = job.ctx;
  RunRecord rec;
  const int total = c.warmup_steps + c.steps;
  const double tokens_per_step = double(c.gbs) * c.seq;
  std::optional<data::SyntheticTokens> synthetic;
  std::optional<data::BlendedSamples> indexed;
  if (job.data.synthetic())
    synthetic.emplace(c.dims.vocab, static_cast<std::uint64_t>(c.seed));
  else
    indexed.emplace(job.data, c.seq, static_cast<std::uint64_t>(c.seed));
  std::vector<std::int32_t> batch(static_cast<std::size_t>(c.gbs / c.plan.dp) * (c.seq + 1));
  if (run == 0) rep.open_log(job.output_dir / log_file_name(c.full.cli_name));
  rep.line("run " + std::to_string(run + 1) + "/" + std::to_string(job.runs) + ": " +
           std::to_string(c.warmup_steps) + " warm-up + " + std::to_string(c.steps) +
           " measured steps");
  double measured_sum = 0;
  try {
    for (int s = 0; s < total; ++s) {
      const bool warm = s < c.warmup_steps;
      // Data for step s is the same in every run, so runs repeat one workload.
      if (synthetic)
        data::fill_rank_batch(*synthetic, s, c.gbs, d.dp_rank, c.plan.dp, c.seq, batch);
      else
        data::fill_rank_batch(*indexed, s, c.gbs, d.dp_rank, c.plan.dp, c.seq, batch);
      const auto t0 = std::chrono::steady_clock::now();
      const train::StepStats st = d.step(batch);
      // A GPU step reports its CUDA-event time (first upload to result download); the CPU's
      // measure is the wall clock around the call.
      const double dt = st.device_seconds > 0
                            ? st.device_seconds
                            : std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
                                  .count();
      if (!std::isfinite(st.loss))
        throw core::RunError("loss is not finite at step " + std::to_string(s + 1) +
                             " (numerical blow-up)");
      const double mem = double(d.peak_bytes()) / gib;
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
      rep.step(warm ? s + 1 : s + 1 - c.warmup_steps, warm ? c.warmup_steps : c.steps, warm,
               st.loss, dt, tokens_per_step / dt,
               per_step * (total - s - 1 + (job.runs - run - 1) * total));
    }
    rec.complete = true;
  } catch (const std::exception& e) {
    rec.error = e.what();
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
inline std::vector<float> init_weights(const Job& job, const train::ParameterTable& table) {
  const data::SafetensorsCheckpoint ckpt(job.ctx.init);
  std::vector<float> params(static_cast<std::size_t>(table.total()));
  (void)data::load_hf_weights<float>(ckpt, table, job.ctx.full.name, params);
  return params;
}

/// The only code compiled per (backend, model, layout, communicator): build the step, hand it to
/// the loop. A layout the backend cannot run yet throws core::InputError from the constructor.
template <class Backend, model::ModelSpec M, parallel::LayoutSpec L, class Comm>
RunRecord run_once(const Job& job, int run, Comm comm, Reporter& rep) {
  const auto& c = job.ctx;
  // Megatron rank order (parallel/groups.hpp): every TP rank and PP stage of a replica reads
  // the same DP share.
  const int dp_rank = parallel::coords_of(comm.rank(), {c.plan.tp, c.plan.pp, c.plan.dp}).dp;
  train::StepShape shape;
  shape.mbs = c.mbs;
  shape.seq = c.seq;
  shape.grad_accum = c.plan.grad_accum;
  shape.layers = c.dims.layers;
  if constexpr (backend::DeviceBackend<Backend>) {
    train::TrainingStep<Backend, M, L, Comm> step(
        shape, c.optimizer, static_cast<std::uint64_t>(c.seed), comm, c.device_options);
    if (c.init != "random")  // one GPU per job: the table is the whole model
      step.engine().load_parameters(init_weights(job, step.engine().table()));
    StepDriver d{[&](std::span<const std::int32_t> t) { return step.run(t); },
                 [&] { return step.peak_bytes(); }, dp_rank};
    d.peak_reserved_bytes = [&] { return step.peak_reserved_bytes(); };
    d.attention = [&] { return step.engine().attention_name(); };
    d.graph_captured = [&] { return step.engine().graph_captured(); };
    return run_steps(job, run, d, rep);
  } else {
    train::TrainingStep<Backend, M, L, Comm> step(shape, c.optimizer,
                                                  static_cast<std::uint64_t>(c.seed), comm);
    if (c.init != "random") {
      auto& model = step.model();
      const auto w = init_weights(job, train::make_parameter_table(model.dims(), model.shard()));
      std::copy(w.begin(), w.end(), model.params().begin());
    }
    StepDriver d{[&](std::span<const std::int32_t> t) { return step.run(t); },
                 [&] { return step.peak_bytes(); }, dp_rank};
    return run_steps(job, run, d, rep);
  }
}

/// How a binary runs one run of a job: the CLI dispatches on model and layout, an example binary
/// has one fixed instantiation.
using RunOnce = std::function<RunRecord(const Job&, int run, Reporter&)>;

/// One line per measured statistic, for the console and the log.
inline void report_summary(const nlohmann::json& doc, Reporter& rep) {
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
           num(p["model_tflops_per_gpu"], "%.4f") + ", MFU " +
           (p["mfu"].is_number() ? num(p["mfu"], "%.4f") : "n/a (peak unknown)"));
}

/// Runs every run of a job and (rank 0) writes the result atomically. Returns the exit code:
/// 0, or 1 when a run failed after starting (the file then says "complete": false).
/// A core::InputError from the first construction (layout the backend cannot run) propagates.
inline int run_job(const Job& job, int rank, const RunOnce& once, Reporter& rep) {
  std::vector<RunRecord> records;
  for (int r = 0; r < job.runs; ++r) {
    try {
      records.push_back(once(job, r, rep));
    } catch (const core::InputError& e) {
      if (r == 0) throw;  // nothing ran yet: bad input, not a failed run
      RunRecord failed;
      failed.error = e.what();
      records.push_back(std::move(failed));
    } catch (const std::exception& e) {
      RunRecord failed;
      failed.error = e.what();
      records.push_back(std::move(failed));
    }
    if (!records.back().complete) break;
  }
  const bool complete = records.size() == static_cast<std::size_t>(job.runs) &&
                        records.back().complete;
  const auto doc = make_result(job.ctx, records);
  const auto file = job.output_dir / result_file_name(job.ctx.device, job.ctx.full.cli_name);
  if (!complete) {
    std::string why = doc.value("error", std::string("unknown"));
    if (why.rfind("tprimat: ", 0) == 0) why = why.substr(9);
    rep.line("tprimat: run failed: " + why);
    if (rank == 0) std::fprintf(stderr, "tprimat: run failed: %s\n", why.c_str());
  }
  report_summary(doc, rep);
  if (rank == 0) {
    write_result(file, doc);
    rep.line("wrote " + file.string() + (complete ? "" : " (incomplete)"));
  }
  rep.close_log();
  return complete ? 0 : core::exit_run_failed;
}

}  // namespace tprimat::bench
