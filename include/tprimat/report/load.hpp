// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Reads result JSONs (ours, and the seeds' NeMo/Primus/Primus-Rival schema) into one record type.
#pragma once

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tprimat/backend/peaks.hpp"
#include "tprimat/bench/experiment.hpp"
#include "tprimat/bench/result_check.hpp"
#include "tprimat/bench/sanity.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/input_file.hpp"
#include "tprimat/core/json_input.hpp"
#include "tprimat/model/all.hpp"
#include "tprimat/model/counts.hpp"

namespace tprimat::report {

inline constexpr double unknown = std::numeric_limits<double>::quiet_NaN();
/// Most GPUs a result may name (2^20, as bench/config_file.hpp bounds its sizes).
inline constexpr int max_num_gpus = 1 << 20;

/// Most tokens/s one GPU may state: a billion, past any model on any device.
inline constexpr double max_tokens_per_second_per_gpu = 1e9;
/// Longest step a result may state (seconds): about four months.
inline constexpr double max_step_seconds = 1e7;
/// Most FLOPs per token a result may state: 6e15 is a quadrillion-parameter model's.
inline constexpr double max_flops_per_token = 1e18;
/// Most memory per GPU a result may state (GiB), far past any device's.
inline constexpr double max_memory_gb = 1e6;
/// Largest loss a result's series may hold, either sign: a diverged cross-entropy stays far
/// below it, and squares and sums of it stay finite.
inline constexpr double max_loss_magnitude = 1e6;
/// Largest learning rate a result's series may hold.
inline constexpr double max_learning_rate = 1e6;

/// One result file, whichever suite wrote it. NaN marks what the file could not tell.
struct Result {
  std::string file;
  std::string format;        ///< "tprimat" (has schema_version) or "seeds"
  std::string platform;      ///< nvd, amd, cpu
  std::string model;         ///< cli name ("llama"), from the file or its name
  std::string strategy;      ///< parallelism_config.strategy_name, else "unknown"
  std::string run;           ///< the directory holding the file (the seeds' output-NN); as many
                             ///< of its parents as tell two inputs' directories apart
  /// What produced the figures: "tprimat", the imported log's format ("megatron", "primus",
  /// "nemo"), or "" where the file does not say (the seeds').
  std::string framework;
  std::string device_name;
  std::string software_stack, driver_version, runtime_version;
  int num_gpus = 0;
  int tp = 0, pp = 0, dp = 0;
  int gbs = 0, seq = 0;
  bool layers_are_proxy = false;
  int layers = 0, layers_full = 0;  ///< layers run and of the full model; 0 where not recorded
  double tokens_per_second = unknown;
  double tokens_per_second_per_gpu = unknown;
  double avg_step_time = unknown;
  double std_step_time = unknown;
  double flops_per_token_palm = unknown;  ///< for the layers run
  /// The causal count (attention halved) for the layers run: from the file, else derived from
  /// the model and sequence; NaN where the model is unknown.
  double flops_per_token_causal = unknown;
  double flops_per_token_6n = unknown;
  std::string flops_source;               ///< where the FLOPs/token came from
  double peak_tflops_dense = 0;           ///< per device; 0 unknown
  double peak_tflops_fp8_dense = 0;       ///< dense FP8 peak per device; 0 unknown or none
  /// training_config.precision ("bf16", "fp8-hybrid-delayed", ...); "" where the file lacks it
  std::string precision;
  double memory_gb = unknown;             ///< peak allocated per GPU, GiB
  double predicted_memory_gb = unknown;
  std::vector<double> run_tokens_per_second_per_gpu;  ///< one sample per run
  double log_tflops_per_gpu = unknown;  ///< an imported log's own figure (imported.*), else NaN
  double log_tokens_per_second_per_gpu = unknown;  ///< the same for tokens/s/GPU (Primus)
  bool imported = false;  ///< written by `tprimat import`: a null there is "not in log"
  /// The value of each of bench::experiment_fields (null where the file lacks it): results
  /// equal in all of them are runs of one experiment, the only ones a report pools.
  std::vector<nlohmann::json> experiment;
  std::vector<double> step_times, losses, learning_rates, memory;
  /// Each run's own series (our `runs` array; one entry holding the arrays above otherwise), so
  /// a plot draws --runs N as N overlaid runs, each from its step 1.
  struct RunSeries {
    std::vector<double> step_times, losses, learning_rates, memory;
    bool operator==(const RunSeries&) const = default;
  };
  std::vector<RunSeries> run_series;
  /// The file's performance_metrics as written: with run_series, what tells a copy of a result
  /// from another run (no two runs time every step alike).
  nlohmann::json measured;

  /// Whether `other` holds the very measurements of this one (a copied file): pooling both
  /// would count one run twice.
  bool same_measurements(const Result& other) const {
    return !measured.is_null() && measured == other.measured && run_series == other.run_series;
  }

  double tflops_per_gpu() const { return tokens_per_second_per_gpu * flops_per_token_palm / 1e12; }
  double tflops_per_gpu_6n() const { return tokens_per_second_per_gpu * flops_per_token_6n / 1e12; }
  double tflops_per_gpu_causal() const {
    return tokens_per_second_per_gpu * flops_per_token_causal / 1e12;
  }
  /// Model FLOPs against the dense bf16 peak, whatever the precision.
  double mfu() const { return peak_tflops_dense > 0 ? tflops_per_gpu() / peak_tflops_dense : unknown; }
  /// The same model FLOPs against the dense FP8 peak.
  double mfu_fp8_peak() const {
    return peak_tflops_fp8_dense > 0 ? tflops_per_gpu() / peak_tflops_fp8_dense : unknown;
  }
  /// mfu() and mfu_fp8_peak() under the causal count: the work the kernels do.
  double mfu_causal() const {
    return peak_tflops_dense > 0 ? tflops_per_gpu_causal() / peak_tflops_dense : unknown;
  }
  double mfu_fp8_peak_causal() const {
    return peak_tflops_fp8_dense > 0 ? tflops_per_gpu_causal() / peak_tflops_fp8_dense : unknown;
  }
  bool fp8() const { return bench::is_fp8_precision(precision); }
  /// Impossible or contradicted figures, as every report shows them (bench/sanity.hpp).
  std::vector<std::string> warnings() const {
    bench::SanityFigures f{tflops_per_gpu(), peak_tflops_dense, device_name, log_tflops_per_gpu};
    f.fp8 = fp8();
    f.fp8_peak_tflops = peak_tflops_fp8_dense;
    // Every figure the check judges where the result was written, so no report drops a flag.
    f.tokens_per_gpu = tokens_per_second_per_gpu;
    f.log_tokens_per_gpu = log_tokens_per_second_per_gpu;
    f.tflops_per_gpu_causal = tflops_per_gpu_causal();
    f.tokens_per_second = tokens_per_second;
    f.num_gpus = num_gpus;
    if (gbs > 0 && seq > 0) f.tokens_per_step = double(gbs) * seq;
    f.step_time = avg_step_time;
    return bench::sanity_warnings(f);
  }
  /// The one predicate every report ranks by: a flagged result (an impossible or contradicted
  /// figure, warnings()) is never a peak, a winner or a projection's base; it is listed apart.
  bool usable_for_ranking() const { return warnings().empty(); }
};

namespace detail {

inline const nlohmann::json* at(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* p = &j;
  for (const char* k : path) {
    if (!p->is_object() || !p->contains(k)) return nullptr;
    p = &(*p)[k];
  }
  return p;
}
inline double number(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const auto* p = at(j, path);
  return p && p->is_number() ? p->get<double>() : unknown;
}
inline int integer(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const auto* p = at(j, path);
  if (!p || !p->is_number()) return 0;
  // A count outside int is garbage, and casting it would be undefined: "not recorded".
  const double v = p->get<double>();
  return v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max()
             ? static_cast<int>(v)
             : 0;
}
inline std::string string(const nlohmann::json& j, std::initializer_list<const char*> path,
                          std::string fallback = {}) {
  const auto* p = at(j, path);
  return p && p->is_string() ? p->get<std::string>() : fallback;
}

/// One of a result's per-step series, the names it may have and the values any run's can hold.
struct SeriesBounds {
  std::initializer_list<const char*> names;  ///< ours, then the seeds' name; the first present
  double low, high;
};
inline constexpr SeriesBounds step_time_series{
    {"raw_step_times", "step_times"}, 0, max_step_seconds};
inline constexpr SeriesBounds loss_series{
    {"raw_loss_values", "loss_values"}, -max_loss_magnitude, max_loss_magnitude};
inline constexpr SeriesBounds learning_rate_series{
    {"raw_learning_rates", "learning_rates"}, 0, max_learning_rate};
inline constexpr SeriesBounds memory_series{
    {"raw_memory_values", "memory_values"}, 0, max_memory_gb};

/// The numbers of a series' array (nulls skipped; the first of its names present), refused
/// (core::InputError naming `file`, the array and the element) when a value lies outside what
/// any run's can be: a step time of 1e308 or a loss of -1e300 would overflow the spreads, means
/// and plot ranges the reports draw from them.
inline std::vector<double> bounded_numbers(const nlohmann::json& j, const SeriesBounds& series,
                                           const std::string& file) {
  for (const char* name : series.names) {
    const auto* p = at(j, {name});
    if (!p || !p->is_array()) continue;
    std::vector<double> out;
    for (std::size_t i = 0; i < p->size(); ++i) {
      const auto& v = (*p)[i];
      if (!v.is_number()) continue;  // a null: a step the run did not record
      const double x = v.get<double>();
      if (!(x >= series.low && x <= series.high)) {
        std::ostringstream why;
        why << file << ": " << name << "[" << i << "] is " << x << ", not within " << series.low
            << " to " << series.high << " as a run's can be; not a benchmark result (skipped)";
        throw core::InputError(why.str());
      }
      out.push_back(x);
    }
    return out;
  }
  return {};
}

/// Where the file states the number at `path`, refuses it (core::InputError naming `file` and
/// the field) unless it lies in [low, high]: a figure past any run's reach would overflow what
/// the reports derive from it (TFLOP/s, MFU, ratios) and show as "n/a" on a ranked row.
inline void refuse_unless_within(const nlohmann::json& j, std::initializer_list<const char*> path,
                                 double low, double high, const std::string& file) {
  const auto* p = at(j, path);
  if (!p || !p->is_number()) return;
  const double v = p->get<double>();
  if (v >= low && v <= high) return;
  std::string field;
  for (const char* k : path) field += (field.empty() ? "" : ".") + std::string(k);
  std::ostringstream range;
  range << (low > 0 && low < 1 ? "above 0" : "at least " + std::to_string(int(low))) << ", at most "
        << high;
  std::ostringstream value;
  value << v;
  throw core::InputError(file + ": " + field + " is " + value.str() + ", not " + range.str() +
                         " as a run's can be; not a benchmark result (skipped)");
}

/// "benchmark_cuda_llama.json" -> "llama": the seeds keep the model only in the file name.
inline std::string model_from_file_name(const std::filesystem::path& p) {
  const std::string stem = p.stem().string();
  const auto us = stem.rfind('_');
  return us == std::string::npos ? stem : stem.substr(us + 1);
}

}  // namespace detail

/// Throws core::InputError naming `file` when the document is not a result we can compare.
inline Result from_json(const nlohmann::json& j, const std::filesystem::path& file) {
  using namespace detail;
  const std::string name = file.string();
  const auto missing = [&](const std::string& what) {
    return core::InputError(name + ": missing " + what + "; not a benchmark result (skipped)");
  };
  if (!j.is_object()) throw core::InputError(name + ": not a JSON object (skipped)");
  Result r;
  r.file = name;
  r.format = j.contains("schema_version") ? "tprimat" : "seeds";
  // Ours is read only with the values our writer allows: a file edited or damaged since (a
  // negative step time, a string for tokens/s, zero GPUs) would otherwise be shown as measured.
  // Keys an older tprimat did not write yet may be absent.
  if (r.format == "tprimat")
    if (const auto why = bench::result_error(j, /*keys_required=*/false))
      throw core::InputError(name + ": breaks schema/result.schema.json: " + *why + " (skipped)");
  r.platform = string(j, {"platform"});
  if (r.platform.empty()) throw missing("platform");
  r.model = string(j, {"model", "cli_name"}, string(j, {"model_name"}));
  if (r.model.empty()) r.model = model_from_file_name(file);
  r.strategy = string(j, {"parallelism_config", "strategy_name"}, "unknown");
  const auto parent = std::filesystem::absolute(file).parent_path().filename().string();
  r.run = parent.empty() ? "." : parent;
  r.device_name = string(j, {"gpu_info", "device_name"}, "unknown");
  r.software_stack = string(j, {"gpu_info", "software_stack"});
  r.driver_version = string(j, {"gpu_info", "driver_version"});
  r.runtime_version = string(j, {"gpu_info", "runtime_version"});
  r.num_gpus = integer(j, {"training_config", "num_gpus"});
  if (r.num_gpus == 0) r.num_gpus = integer(j, {"gpu_info", "device_count"});
  if (r.num_gpus <= 0) throw missing("training_config.num_gpus (or gpu_info.device_count)");
  // The reports multiply it (GPUs per node x nodes) in int: no real run is near this.
  if (r.num_gpus > max_num_gpus)
    throw core::InputError(name + ": " + std::to_string(r.num_gpus) + " GPUs is more than " +
                           std::to_string(max_num_gpus) +
                           "; not a benchmark result (skipped)");
  // Bounds no real run comes near, so only a damaged or edited file meets them.
  constexpr double above_zero = std::numeric_limits<double>::denorm_min();
  for (const char* size :
       {"tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size",
        "data_parallel_size", "gradient_accumulation_steps"})
    refuse_unless_within(j, {"parallelism_config", size}, 1, max_num_gpus, name);
  refuse_unless_within(j, {"performance_metrics", "tokens_per_second_per_gpu"}, above_zero,
                       max_tokens_per_second_per_gpu, name);
  refuse_unless_within(j, {"performance_metrics", "tokens_per_second"}, above_zero,
                       max_tokens_per_second_per_gpu * max_num_gpus, name);
  refuse_unless_within(j, {"performance_metrics", "avg_step_time_seconds"}, above_zero,
                       max_step_seconds, name);
  for (const char* flops : {"flops_per_token_palm", "flops_per_token_causal", "flops_per_token_6n"})
    refuse_unless_within(j, {"performance_metrics", flops}, above_zero, max_flops_per_token, name);
  for (const char* gb : {"peak_allocated_gb", "predicted_gb"})
    refuse_unless_within(j, {"memory_metrics", gb}, 0, max_memory_gb, name);
  for (const char* peak : {"peak_tflops_dense", "peak_tflops_fp8_dense"})
    refuse_unless_within(j, {"gpu_info", peak}, 0, bench::implausible_tflops_per_gpu, name);
  r.tp = integer(j, {"parallelism_config", "tensor_model_parallel_size"});
  r.pp = integer(j, {"parallelism_config", "pipeline_model_parallel_size"});
  r.dp = integer(j, {"parallelism_config", "data_parallel_size"});
  r.gbs = integer(j, {"training_config", "global_batch_size"});
  r.seq = integer(j, {"training_config", "sequence_length"});
  if (const auto* p = at(j, {"training_config", "layers_are_proxy"}); p && p->is_boolean())
    r.layers_are_proxy = p->get<bool>();
  r.layers = integer(j, {"training_config", "num_layers"});
  r.layers_full = integer(j, {"training_config", "num_layers_full_model"});

  const auto perf = [&](const char* k) { return number(j, {"performance_metrics", k}); };
  r.avg_step_time = perf("avg_step_time_seconds");
  r.std_step_time = perf("std_step_time_seconds");
  r.tokens_per_second = perf("tokens_per_second");
  if (!std::isfinite(r.tokens_per_second) && r.avg_step_time > 0 && r.gbs > 0 && r.seq > 0)
    r.tokens_per_second = double(r.gbs) * r.seq / r.avg_step_time;
  if (!std::isfinite(r.tokens_per_second)) throw missing("performance_metrics.tokens_per_second");
  if (!(r.tokens_per_second > 0))  // a seeds' file has no schema of ours to check
    throw core::InputError(name + ": performance_metrics.tokens_per_second is " +
                           std::to_string(r.tokens_per_second) +
                           ", not above 0; not a benchmark result (skipped)");
  r.tokens_per_second_per_gpu = perf("tokens_per_second_per_gpu");
  if (!std::isfinite(r.tokens_per_second_per_gpu))
    r.tokens_per_second_per_gpu = r.tokens_per_second / r.num_gpus;

  r.step_times = bounded_numbers(j, step_time_series, name);
  r.losses = bounded_numbers(j, loss_series, name);
  r.learning_rates = bounded_numbers(j, learning_rate_series, name);
  r.memory = bounded_numbers(j, memory_series, name);
  if (!std::isfinite(r.std_step_time) && r.step_times.size() >= 2) {
    double m = 0, ss = 0;
    for (double t : r.step_times) m += t;
    m /= r.step_times.size();
    for (double t : r.step_times) ss += (t - m) * (t - m);
    r.std_step_time = std::sqrt(ss / (r.step_times.size() - 1));
  }

  r.flops_per_token_palm = perf("flops_per_token_palm");
  r.flops_per_token_6n = perf("flops_per_token_6n");
  r.flops_per_token_causal = perf("flops_per_token_causal");
  if (std::isfinite(r.flops_per_token_palm)) {
    r.flops_source = "from the file (layers run)";
    // A result written before the causal count: PaLM's less half its attention term, for the
    // layers run.
    if (const auto d = model::find(r.model);
        !std::isfinite(r.flops_per_token_causal) && d && r.seq > 0)
      r.flops_per_token_causal =
          r.flops_per_token_palm -
          model::full_attention_flops_per_token(r.layers > 0 ? d->with_layers(r.layers) : *d,
                                                r.seq) /
              2;
    // A file whose FLOPs cannot hold its own attention term (edited) gets no causal figure.
    if (!(r.flops_per_token_causal > 0)) r.flops_per_token_causal = unknown;
  } else if (const auto d = model::find(r.model); d && r.seq > 0) {
    // The seeds store no FLOPs: count them for the full published model at this sequence.
    r.flops_per_token_palm = model::flops_per_token(*d, r.seq);
    r.flops_per_token_causal = model::flops_per_token_causal(*d, r.seq);
    r.flops_per_token_6n = model::flops_per_token_6n(*d);
    r.flops_source = "derived from the model name (full model)";
  } else {
    r.flops_source = "unknown model: no FLOPs";
  }
  const double peak = number(j, {"gpu_info", "peak_tflops_dense"});
  r.peak_tflops_dense = peak > 0 ? peak : backend::dense_peak_tflops(r.device_name);
  const double fp8_peak = number(j, {"gpu_info", "peak_tflops_fp8_dense"});
  r.peak_tflops_fp8_dense = fp8_peak > 0 ? fp8_peak : backend::dense_fp8_peak_tflops(r.device_name);
  r.precision = string(j, {"training_config", "precision"});

  r.memory_gb = number(j, {"memory_metrics", "peak_allocated_gb"});
  if (!std::isfinite(r.memory_gb) && !r.memory.empty())
    r.memory_gb = *std::max_element(r.memory.begin(), r.memory.end());
  r.predicted_memory_gb = number(j, {"memory_metrics", "predicted_gb"});
  r.log_tflops_per_gpu = number(j, {"imported", "log_tflops_per_gpu_mean"});
  r.log_tokens_per_second_per_gpu = number(j, {"imported", "log_tokens_per_second_per_gpu_mean"});
  r.framework = string(j, {"imported", "format"}, r.format == "tprimat" ? "tprimat" : "");
  r.imported = at(j, {"imported"}) != nullptr;
  for (std::size_t i = 0; i < bench::experiment_field_count; ++i)
    r.experiment.push_back(bench::experiment_value(j, i));

  // Our files keep each run apart; a seeds' file is one run.
  if (const auto* runs = at(j, {"runs"}); runs && runs->is_array() && runs->size() > 1) {
    for (const auto& run : *runs) {
      refuse_unless_within(run, {"performance_metrics", "tokens_per_second_per_gpu"}, above_zero,
                           max_tokens_per_second_per_gpu, name + " (a run of its runs)");
      const double v = number(run, {"performance_metrics", "tokens_per_second_per_gpu"});
      if (std::isfinite(v)) r.run_tokens_per_second_per_gpu.push_back(v);
    }
  }
  if (r.run_tokens_per_second_per_gpu.empty())
    r.run_tokens_per_second_per_gpu.push_back(r.tokens_per_second_per_gpu);
  if (const auto* runs = at(j, {"runs"}); runs && runs->is_array() && runs->size() > 1)
    for (const auto& run : *runs) {
      const std::string of_run = name + " (a run of its runs)";
      r.run_series.push_back({bounded_numbers(run, step_time_series, of_run),
                              bounded_numbers(run, loss_series, of_run),
                              bounded_numbers(run, learning_rate_series, of_run),
                              bounded_numbers(run, memory_series, of_run)});
    }
  if (r.run_series.empty())
    r.run_series.push_back({r.step_times, r.losses, r.learning_rates, r.memory});
  if (const auto* m = at(j, {"performance_metrics"})) r.measured = *m;
  // Within the bounds above a figure still divides by a tiny peak or time: one that overflows
  // would read "n/a" on a row that is ranked.
  for (const auto& [derived, figure] :
       {std::pair{"TFLOP/s/GPU", r.tflops_per_gpu()}, std::pair{"MFU", r.mfu()},
        std::pair{"MFU (causal)", r.mfu_causal()}, std::pair{"MFU (FP8 peak)", r.mfu_fp8_peak()},
        std::pair{"tokens/s", r.tokens_per_second}})
    if (std::isinf(figure))
      throw core::InputError(name + ": its figures give an infinite " + derived +
                             "; not a benchmark result (skipped)");
  return r;
}

/// How a report reads a result file: capped (core::max_result_bytes), a regular file only.
inline constexpr core::InputKind result_input{"result file", core::max_result_bytes,
                                              "pass a tprimat or seeds' result JSON"};

/// Parses and reads `text`, the contents of result `file`; throws core::InputError naming it.
inline Result load_text(std::string_view text, const std::filesystem::path& file) {
  if (const auto problem = core::json_text_problem(text); !problem.empty())
    throw core::InputError(file.string() + ": " + problem + " (skipped)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text,
                              core::KeysOnce(file.string(), "not a benchmark result (skipped)"));
  } catch (const nlohmann::json::parse_error& e) {
    throw core::InputError(file.string() + ": not valid JSON (parse error at byte " +
                           std::to_string(e.byte) + "; skipped)");
  } catch (const nlohmann::json::out_of_range&) {  // a number past double's range (1e400)
    throw core::InputError(file.string() + ": not valid JSON (a number out of range; skipped)");
  }
  return from_json(j, file);
}

/// Reads and parses one file; throws core::InputError naming it on any failure (a directory,
/// FIFO or device, or a file over the cap, among them).
inline Result load_file(const std::filesystem::path& file) {
  std::string text;
  try {
    text = core::read_input_file(file, result_input);
  } catch (const core::InputFileError& e) {
    throw core::InputError(e.path() + ": " + e.problem() + " (skipped)");
  }
  return load_text(text, file);
}

/// What a report read: the results, and one line per input it could not use.
struct LoadOutcome {
  std::vector<Result> results;
  std::vector<std::string> problems;
  std::vector<std::string> inputs;  ///< every file tried, in order
};

/// A result file's name: ours and the TPrimat seeds' `benchmark_*.json`, Primus-Rival's
/// `train_*.json`.
inline bool is_result_file_name(const std::string& name) {
  return (name.starts_with("benchmark_") || name.starts_with("train_")) && name.ends_with(".json");
}

/// Names each result's run by its directory and as many of its parents as tell it apart from
/// every other input's directory (`a/run1` and `b/run1`, never two "run1"s); one directory's
/// files share one name, as they share one run.
inline void name_runs_apart(std::vector<Result>& results) {
  namespace fs = std::filesystem;
  std::vector<std::vector<std::string>> parts;  // each result's directory, innermost first
  for (const auto& r : results) {
    std::vector<std::string> p;
    for (auto d = fs::absolute(r.file).parent_path(); d.has_relative_path(); d = d.parent_path())
      p.push_back(d.filename().string());
    parts.push_back(std::move(p));
  }
  const auto suffix = [&](std::size_t i, std::size_t n) {
    std::string s;
    for (std::size_t k = std::min(n, parts[i].size()); k-- > 0;)
      s += (s.empty() ? "" : "/") + parts[i][k];
    return s.empty() ? std::string(".") : s;
  };
  for (std::size_t i = 0; i < results.size(); ++i) {
    std::size_t n = 1;
    for (bool clash = true; clash && n < parts[i].size();) {
      clash = false;
      for (std::size_t j = 0; j < results.size() && !clash; ++j)
        clash = parts[j] != parts[i] && suffix(j, n) == suffix(i, n);
      if (clash) ++n;
    }
    results[i].run = suffix(i, n);
  }
}

/// The result files (is_result_file_name) below `dir`, sorted; links to directories are not
/// followed. A folder that cannot be read (no permission, removed meanwhile) is named in
/// `problems` and the walk goes on past it: the results after it are still found.
inline std::vector<std::filesystem::path> result_files_below(const std::filesystem::path& dir,
                                                             std::vector<std::string>& problems) {
  namespace fs = std::filesystem;
  std::vector<fs::path> found;
  std::vector<fs::path> pending{dir};
  while (!pending.empty()) {
    const fs::path d = pending.back();
    pending.pop_back();
    std::error_code ec;
    fs::directory_iterator it(d, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      std::error_code kind;  // a loop of symbolic links threw filesystem_error here: skipped
      if (it->is_directory(kind) && !it->is_symlink(kind))
        pending.push_back(it->path());
      else if (it->is_regular_file(kind) && is_result_file_name(it->path().filename().string()))
        found.push_back(it->path());
    }
    if (ec)
      problems.push_back("tprimat: " + d.string() + ": cannot read this folder (" + ec.message() +
                         "); the results in it are left out, the others are read");
  }
  std::sort(found.begin(), found.end());
  return found;
}

/// Result files (is_result_file_name) below each directory (recursively, sorted), then the
/// named files.
/// Bad inputs become `problems`; the rest still load.
inline LoadOutcome load_inputs(const std::vector<std::string>& dirs,
                               const std::vector<std::string>& files) {
  namespace fs = std::filesystem;
  LoadOutcome out;
  std::vector<fs::path> paths;
  for (const auto& d : dirs) {
    std::error_code ec;
    if (!fs::is_directory(d, ec)) {
      out.problems.push_back("tprimat: " + d + ": not a directory (skipped)");
      continue;
    }
    std::vector<fs::path> found = result_files_below(d, out.problems);
    if (found.empty())
      out.problems.push_back("tprimat: " + d + ": no benchmark_*.json or train_*.json files");
    paths.insert(paths.end(), found.begin(), found.end());
  }
  for (const auto& f : files) paths.emplace_back(f);
  // A file reached twice (named twice, a folder given twice, a link) or a copy of one is one
  // run: pooled twice it would narrow the spread and could make a winner of nothing.
  std::vector<std::pair<fs::path, std::string>> read;  // canonical path, as first named
  for (const auto& p : paths) {
    out.inputs.push_back(p.string());
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(p, ec);
    if (ec) canonical = fs::absolute(p);
    const auto again =
        std::find_if(read.begin(), read.end(), [&](const auto& x) { return x.first == canonical; });
    if (again != read.end()) {
      out.problems.push_back("tprimat: " + p.string() + ": the same file as " + again->second +
                             "; read once");
      continue;
    }
    read.emplace_back(canonical, p.string());
    try {
      Result r = load_file(p);
      const auto copy = std::find_if(out.results.begin(), out.results.end(),
                                     [&](const Result& x) { return x.same_measurements(r); });
      if (copy != out.results.end()) {
        out.problems.push_back("tprimat: " + p.string() + ": the same measurements as " +
                               copy->file + " (a copy); counted once, as " + copy->file);
        continue;
      }
      out.results.push_back(std::move(r));
    } catch (const core::InputError& e) {
      out.problems.push_back(e.what());
    }
  }
  name_runs_apart(out.results);
  return out;
}

}  // namespace tprimat::report
