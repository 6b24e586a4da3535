// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// `tprimat import`: per-iteration numbers from Megatron/Primus/NeMo training logs, as a result.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <istream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tprimat/bench/memory_plan.hpp"
#include "tprimat/bench/result.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/input_file.hpp"
#include "tprimat/model/all.hpp"
#include "tprimat/parallel/strategy.hpp"
#include "tprimat/report/peaks.hpp"

namespace tprimat::report {

/// What a log does not say and the user must (the seeds' extract_primus_metrics.py arguments).
struct ImportOptions {
  std::string format;  ///< megatron, primus, nemo
  std::string model;   ///< cli name: the FLOPs need the architecture
  int num_gpus = 8;
  int gbs = 128;
  int mbs = 1;
  int seq = 2048;
  int tp = 1, pp = 1;
  int warmup_steps = 1;       ///< leading iterations left out of the statistics
  std::string platform;       ///< "" = by format: primus amd, megatron/nemo nvd
  std::string device_name = "unknown";
  std::string strategy = "imported";
};

inline constexpr std::string_view import_formats = "megatron, primus, nemo";

/// One value per logged iteration; memory only where the log printed it.
struct LogSeries {
  std::vector<double> step_times;  ///< seconds
  std::vector<double> losses, learning_rates, tflops_per_gpu;
  std::vector<double> memory_gb;
};

namespace detail {

/// The number right after `key` (skipping blanks, '=' and ':'); nullopt if absent.
inline std::optional<double> number_after(std::string_view line, std::string_view key) {
  const auto at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + key.size();
  while (i < line.size() && (line[i] == ' ' || line[i] == ':' || line[i] == '=' || line[i] == '\t'))
    ++i;
  const std::string rest(line.substr(i, 40));
  char* end = nullptr;
  const double v = std::strtod(rest.c_str(), &end);
  if (end == rest.c_str()) return std::nullopt;
  return v;
}

}  // namespace detail

/// Megatron-LM and Primus (Megatron backend) iteration lines:
///   ... iteration 10/ 100 | ... | elapsed time per iteration (ms): 2345.6 |
///   throughput per GPU (TFLOP/s/GPU): 400.1 | learning rate: 3.0E-04 | ... | lm loss: 1.03E+01 |
/// memory: Megatron's "memory (MB) | ... | max allocated: 1234.5" and Primus's
/// "mem usage...: 90.06GB" (the first GB figure), each attached to the latest iteration.
inline LogSeries parse_megatron_log(std::istream& in) {
  LogSeries s;
  std::string line;
  while (std::getline(in, line)) {
    if (auto ms = detail::number_after(line, "elapsed time per iteration (ms)")) {
      s.step_times.push_back(*ms / 1000);
      s.losses.push_back(detail::number_after(line, "lm loss").value_or(NAN));
      s.learning_rates.push_back(detail::number_after(line, "learning rate").value_or(NAN));
      s.tflops_per_gpu.push_back(
          detail::number_after(line, "throughput per GPU (TFLOP/s/GPU)").value_or(NAN));
      s.memory_gb.push_back(NAN);
      // Primus prints memory on the iteration line itself.
      // (A "mem usage" with no ':' after it carries no figure.)
      if (const auto mem = line.find("mem usage"); mem != std::string::npos) {
        const auto colon = line.find(':', mem);
        if (colon != std::string::npos)
          if (auto gb = detail::number_after(std::string_view(line).substr(colon), ":"))
            s.memory_gb.back() = *gb;
      }
    } else if (line.find("memory (MB)") != std::string::npos && !s.memory_gb.empty()) {
      if (auto mb = detail::number_after(line, "max allocated")) s.memory_gb.back() = *mb / 1024;
    }
  }
  return s;
}

/// NeMo (Lightning) progress lines: "... reduced_train_loss=10.30, lr=3e-05, ...,
/// train_step_timing in s=2.350]". One step per line with train_step_timing.
inline LogSeries parse_nemo_log(std::istream& in) {
  LogSeries s;
  std::string line;
  while (std::getline(in, line)) {
    // A progress bar redraws in place: a line may hold several updates separated by '\r'.
    std::size_t start = 0;
    while (start <= line.size()) {
      const auto end = std::min(line.find('\r', start), line.size());
      const std::string_view part(line.data() + start, end - start);
      if (auto t = detail::number_after(part, "train_step_timing in s")) {
        s.step_times.push_back(*t);
        s.losses.push_back(detail::number_after(part, "reduced_train_loss").value_or(NAN));
        s.learning_rates.push_back(detail::number_after(part, " lr").value_or(NAN));
        s.tflops_per_gpu.push_back(NAN);
        s.memory_gb.push_back(NAN);
      }
      start = end + 1;
    }
  }
  return s;
}

inline std::string default_platform(std::string_view format) {
  return format == "primus" ? "amd" : "nvd";
}

/// The result document for the log `log` read from `in`: our schema, with what the log cannot
/// tell left null and listed under `imported.assumptions`. Throws InputError naming the log on
/// any problem (a stream that failed to open is "cannot read", after the options are checked).
inline nlohmann::json import_log(std::istream& in, const std::string& log,
                                 const ImportOptions& o, const std::string& command_line) {
  if (o.format != "megatron" && o.format != "primus" && o.format != "nemo")
    throw core::InputError("unknown import format '" + o.format + "'",
                           "pick one of " + std::string(import_formats));
  const auto dims = model::find(o.model);
  if (!dims)
    throw core::InputError("unknown model '" + o.model + "'",
                           "pick one of " + model::known_names() + " with --model");
  if (!in) throw core::InputError(log + ": cannot read the log");
  const LogSeries all = o.format == "nemo" ? parse_nemo_log(in) : parse_megatron_log(in);
  if (all.step_times.empty())
    throw core::InputError(log + ": no iterations found for format " + o.format,
                           o.format == "nemo"
                               ? "expected lines with 'train_step_timing in s='"
                               : "expected lines with 'elapsed time per iteration (ms)'");
  const std::size_t skip = std::min<std::size_t>(std::max(o.warmup_steps, 0),
                                                 all.step_times.size() - 1);

  const auto tail = [&](const std::vector<double>& v) {
    return std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(skip), v.end());
  };
  const auto finite = [](const std::vector<double>& v) {
    std::vector<double> out;
    for (double x : v)
      if (std::isfinite(x)) out.push_back(x);
    return out;
  };
  bench::RunRecord run;
  run.warmup_step_times = std::vector<double>(all.step_times.begin(),
                                              all.step_times.begin() + static_cast<std::ptrdiff_t>(skip));
  run.step_times = tail(all.step_times);
  run.losses = tail(all.losses);
  run.learning_rates = tail(all.learning_rates);
  run.memory_gb = finite(tail(all.memory_gb));
  run.peak_bytes = run.memory_gb.empty()
                       ? 0
                       : *std::max_element(run.memory_gb.begin(), run.memory_gb.end()) * bench::gib;
  run.complete = true;

  bench::ResultContext c;
  c.device.platform = o.platform.empty() ? default_platform(o.format) : o.platform;
  c.device.software_stack = c.device.platform == "amd" ? "rocm"
                            : c.device.platform == "nvd" ? "cuda" : "cpu";
  c.device.device_name = o.device_name;
  c.device.device_count = o.num_gpus;
  c.device.peak_tflops_dense = dense_peak_tflops(o.device_name);
  c.full = *dims;
  c.dims = *dims;
  const int mp = o.tp * o.pp;
  if (mp <= 0 || o.num_gpus % mp != 0)
    throw core::InputError("--num-gpus " + std::to_string(o.num_gpus) +
                           " is not a multiple of TP x PP = " + std::to_string(mp));
  c.plan = parallel::Plan{o.strategy, o.tp, o.pp, o.num_gpus / mp, 1};
  c.plan.grad_accum = std::max(1, o.gbs / std::max(1, o.mbs * c.plan.dp));
  c.mbs = o.mbs;
  c.gbs = o.gbs;
  c.seq = o.seq;
  c.steps = static_cast<int>(run.step_times.size());
  c.warmup_steps = static_cast<int>(skip);
  c.data = "unknown (imported " + o.format + " log)";
  c.seed = 0;
  bench::MemoryPlanInput mi;
  mi.dims = *dims;
  mi.tp = o.tp;
  mi.pp = o.pp;
  mi.dp = c.plan.dp;
  mi.mbs = o.mbs;
  mi.seq = o.seq;
  mi.grad_accum = c.plan.grad_accum;
  c.predicted = bench::plan_memory(mi);
  c.command_line = command_line;
  c.timestamp = bench::utc_timestamp();
  const auto lrs = finite(run.learning_rates);
  if (!lrs.empty()) c.optimizer.lr_peak = *std::max_element(lrs.begin(), lrs.end());

  nlohmann::json doc = bench::make_result(c, {run});
  // What the log does not say is null, never our defaults passed off as the run's.
  for (const char* k : {"lr_min", "lr_warmup_steps", "lr_decay_steps", "beta1", "beta2", "eps",
                        "weight_decay", "clip_norm", "init_std"})
    doc["optimizer"][k] = nullptr;
  if (lrs.empty()) doc["optimizer"]["lr_peak"] = nullptr;
  doc["training_config"]["seed"] = nullptr;
  doc["reproduce"]["seed"] = nullptr;
  doc["gpu_info"]["total_memory_gb"] = nullptr;
  doc["gpu_info"]["cores"] = nullptr;
  doc["memory_metrics"]["device_memory_gb"] = nullptr;
  if (run.memory_gb.empty()) {
    doc["memory_metrics"]["peak_allocated_gb"] = nullptr;
    doc["memory_metrics"]["peak_reserved_gb"] = nullptr;
    doc["runs"][0]["peak_allocated_gb"] = nullptr;
  }
  const auto logged = finite(tail(all.tflops_per_gpu));
  doc["imported"] = {
      {"format", o.format},
      {"log", log},
      {"iterations_found", all.step_times.size()},
      {"warmup_iterations_excluded", skip},
      {"log_tflops_per_gpu_mean",
       logged.empty() ? nlohmann::json(nullptr) : nlohmann::json(core::mean(logged))},
      {"assumptions",
       {"global batch, sequence, micro batch, GPU count, TP and PP as given on the command line",
        "precision bf16",
        "optimizer settings other than the peak learning rate are unknown (null)",
        "memory_metrics.predicted_gb is tprimat's memory plan for this configuration, not a "
        "measurement"}}};
  return doc;
}

/// How `tprimat import` reads a log: a regular file of at most core::max_log_bytes.
inline constexpr core::InputKind log_input{"log", core::max_log_bytes,
                                           "pass a training log file"};

/// import_log of the file `log`.
inline nlohmann::json import_log(const std::string& log, const ImportOptions& o,
                                 const std::string& command_line) {
  std::istringstream in(core::read_input_file(log, log_input));
  return import_log(in, log, o, command_line);
}

}  // namespace tprimat::report
