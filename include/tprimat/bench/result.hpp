// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The result document (a superset of the seeds' JSON) and its atomic write to disk.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tprimat/backend/device_info.hpp"
#include "tprimat/bench/experiment.hpp"
#include "tprimat/bench/fp8_record.hpp"
#include "tprimat/bench/memory_plan.hpp"
#include "tprimat/bench/metrics.hpp"
#include "tprimat/bench/result_check.hpp"
#include "tprimat/bench/sanity.hpp"
#include "tprimat/bench/step_outliers.hpp"
#include "tprimat/config.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/input_file.hpp"
#include "tprimat/core/json_input.hpp"
#include "tprimat/core/output_file.hpp"
#include "tprimat/core/printable.hpp"
#include "tprimat/core/stats.hpp"
#include "tprimat/model/counts.hpp"
#include "tprimat/parallel/strategy.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/pipeline_bubble.hpp"

namespace tprimat::bench {

/// Bumped when a key changes meaning or disappears; adding keys keeps it.
inline constexpr int schema_version = 1;

/// What one run measured. Vectors hold the measured (post-warm-up) steps, in order.
struct RunRecord {
  std::string saved_weights;              ///< the weights file written after this run; "" when none
  std::vector<double> warmup_step_times;  ///< seconds, excluded from statistics
  std::vector<double> step_times;         ///< seconds
  std::vector<double> losses;
  std::vector<double> learning_rates;
  std::vector<double> grad_norms;
  std::vector<double> memory_gb;          ///< peak bytes after each step, GiB
  double peak_bytes = 0;
  double peak_reserved_bytes = 0;         ///< device pool reservation (GPU backends), else 0
  std::string attention;                  ///< attention policy a GPU run used ("" on the CPU)
  bool cuda_graph = false;                ///< the measured steps replayed a CUDA graph
  bool complete = false;
  std::string error;                      ///< why it stopped early, when !complete
  int interrupted_by = 0;                 ///< SIGINT/SIGTERM that stopped it between steps, or 0
};

/// Everything about a run that is not a measurement: what ran, where, and how to rerun it.
struct ResultContext {
  backend::DeviceInfo device;
  model::Dims full;    ///< the model as published
  model::Dims dims;    ///< the model as run (layers may be a proxy)
  parallel::Plan plan;  ///< TP, PP, CP (plan.cp: Megatron's context_parallel_size), DP
  int mbs = 1;
  int gbs = 1;
  int seq = 2048;
  int steps = 0;
  int warmup_steps = 0;
  bool layers_auto = false;
  std::string data = "synthetic";
  std::int64_t seed = 42;
  std::string init = "random";  ///< starting weights: "random" or the checkpoint path read
  std::string save;             ///< where the weights after the last run go; "" for none
  /// training_config.precision: "fp32" (the CPU backend), or device_options.precision's name
  std::string precision = "bf16";
  train::OptimizerConfig optimizer;
  /// Megatron's sequence parallelism as run: asked for and TP > 1
  bool sequence_parallel = false;
  /// Activation recomputation as run (none by default)
  train::Recompute recompute;
  /// GPU backends: attention policy, CUDA graph, overlap; the precision (bf16 or FP8, whose
  /// settings training_config.fp8 records) on any backend
  train::DeviceOptions device_options;
  /// GPU backends: --deterministic (the flash kernels' attention, every GEMM's first algorithm)
  bool deterministic = false;
  MemoryPlan predicted;
  std::string command_line;
  int nodes = 1;                                 ///< nodes the ranks ran on
  std::vector<std::string> collective_settings;  ///< "NCCL_IB_HCA=mlx5_0", ... as set
  std::string git_describe = "unknown";
  std::string timestamp;
  bool overwrite = false;  ///< may replace a result file of another configuration
};

inline constexpr double gib = 1024.0 * 1024.0 * 1024.0;

/// Ranks of the run, Megatron's rule: TP x PP x CP x DP (each sequence split over CP ranks).
inline int result_world(const ResultContext& c) { return c.plan.world(); }

/// NaN (undefined statistic) becomes null rather than a number nobody measured.
inline nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

/// "benchmark_cpu_tiny.json": the seeds' naming (software stack, then model).
inline std::string result_file_name(const backend::DeviceInfo& d, std::string_view model) {
  return "benchmark_" + d.software_stack + "_" + std::string(model) + ".json";
}
inline std::string log_file_name(std::string_view model) {
  return "training_" + std::string(model) + ".log";
}

/// UTC, ISO 8601, seconds.
inline std::string utc_timestamp() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// `git describe --always --dirty` of `dir` (the tprimat source tree when known), else "unknown".
inline std::string git_describe(const std::string& dir = {}) {
  const std::string cmd = "git " + (dir.empty() ? std::string() : "-C '" + dir + "' ") +
                          "describe --always --dirty 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return "unknown";
  char buf[256];
  std::string out;
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int rc = ::pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return rc == 0 && !out.empty() ? out : "unknown";
}

/// argv joined, each argument single-quoted where the shell would split or expand it.
inline std::string command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                                         "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                         "0123456789-_./=:,+@%") == std::string::npos;
    if (!plain) {
      std::string q = "'";
      for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      a = q + "'";
    }
    out += (i ? " " : "") + a;
  }
  return out;
}

namespace detail {

inline nlohmann::json array_of(const std::vector<double>& v) {
  auto a = nlohmann::json::array();
  for (double x : v) a.push_back(number_or_null(x));
  return a;
}

inline MetricsInput metrics_input(const ResultContext& c) {
  MetricsInput in;
  in.tokens_per_step = double(c.gbs) * c.seq;
  in.num_gpus = result_world(c);
  in.flops_per_token_palm = model::flops_per_token(c.dims, c.seq);
  in.flops_per_token_causal = model::flops_per_token_causal(c.dims, c.seq);
  in.flops_per_token_6n = model::flops_per_token_6n(c.dims);
  in.peak_tflops_dense = c.device.peak_tflops_dense;
  in.peak_tflops_fp8_dense = c.device.peak_tflops_fp8_dense;
  return in;
}

inline nlohmann::json performance_json(const Metrics& m, const MetricsInput& in) {
  return {
      {"tokens_per_second", number_or_null(m.tokens_per_second)},
      {"tokens_per_second_per_gpu", number_or_null(m.tokens_per_second_per_gpu)},
      {"avg_step_time_seconds", number_or_null(m.step_time.mean)},
      {"median_step_time_seconds", number_or_null(m.step_time.median)},
      {"std_step_time_seconds", number_or_null(m.step_time.std)},
      {"min_step_time_seconds", number_or_null(m.step_time.min)},
      {"max_step_time_seconds", number_or_null(m.step_time.max)},
      {"ci95_step_time_seconds", number_or_null(m.step_time.ci95)},
      {"measured_steps", m.step_time.count},
      {"steps_per_second", number_or_null(m.steps_per_second)},
      {"model_tflops_per_gpu", number_or_null(m.model_tflops_per_gpu)},
      {"mfu", m.mfu ? number_or_null(*m.mfu) : nlohmann::json(nullptr)},
      {"peak_tflops_dense", in.peak_tflops_dense > 0 ? nlohmann::json(in.peak_tflops_dense)
                                                     : nlohmann::json(nullptr)},
      // The same model FLOPs against the FP8 peak, for every run: FP8 or not, no reader has to
      // guess which peak an MFU uses (`mfu` is always the bf16 one).
      {"mfu_fp8_peak", m.mfu_fp8_peak ? number_or_null(*m.mfu_fp8_peak) : nlohmann::json(nullptr)},
      {"peak_tflops_fp8_dense", in.peak_tflops_fp8_dense > 0
                                    ? nlohmann::json(in.peak_tflops_fp8_dense)
                                    : nlohmann::json(nullptr)},
      {"flops_per_token_palm", in.flops_per_token_palm},
      {"flops_per_token_6n", in.flops_per_token_6n},
      {"tflops_per_gpu_6n", number_or_null(m.tflops_per_gpu_6n)},
      // The causal convention beside the PaLM one (model_tflops_per_gpu, mfu, mfu_fp8_peak):
      // attention halved, the work the kernels do; the sanity check judges these.
      {"flops_per_token_causal", in.flops_per_token_causal},
      {"tflops_per_gpu_causal", number_or_null(m.tflops_per_gpu_causal)},
      {"mfu_causal", m.mfu_causal ? number_or_null(*m.mfu_causal) : nlohmann::json(nullptr)},
      {"mfu_fp8_peak_causal", m.mfu_fp8_peak_causal ? number_or_null(*m.mfu_fp8_peak_causal)
                                                    : nlohmann::json(nullptr)},
  };
}

inline nlohmann::json summary_json(const std::vector<double>& v) {
  const auto s = core::summarize(v);
  return {{"mean", number_or_null(s.mean)},
          {"std", number_or_null(s.std)},
          {"min", number_or_null(s.min)},
          {"max", number_or_null(s.max)}};
}

template <class F>
std::vector<double> concat(const std::vector<RunRecord>& runs, F member) {
  std::vector<double> out;
  for (const auto& r : runs) out.insert(out.end(), (r.*member).begin(), (r.*member).end());
  return out;
}

}  // namespace detail

/// The result document. Top-level statistics and raw_* arrays pool the measured steps of every
/// run, in run order (identical to `runs[0]` for one run); `runs` keeps each run apart.
inline nlohmann::json make_result(const ResultContext& c, const std::vector<RunRecord>& runs) {
  using nlohmann::json;
  const MetricsInput in = detail::metrics_input(c);
  const auto step_times = detail::concat(runs, &RunRecord::step_times);
  const auto losses = detail::concat(runs, &RunRecord::losses);
  const auto lrs = detail::concat(runs, &RunRecord::learning_rates);
  const auto memory = detail::concat(runs, &RunRecord::memory_gb);
  const Metrics m = compute_metrics(step_times, in);
  bool complete = !runs.empty();
  double peak = 0, peak_reserved = 0;
  std::string error;
  for (const auto& r : runs) {
    complete = complete && r.complete;
    peak = std::max(peak, r.peak_bytes);
    peak_reserved = std::max(peak_reserved, r.peak_reserved_bytes);
    if (!r.complete && error.empty()) error = r.error;
  }
  const bool proxy = c.dims.layers != c.full.layers;

  json doc;
  doc["schema_version"] = schema_version;
  doc["complete"] = complete;
  if (!complete) doc["error"] = error.empty() ? "the run did not finish" : error;
  doc["platform"] = c.device.platform;
  doc["model"] = {{"cli_name", c.full.cli_name},
                  {"name", c.full.name},
                  {"params", model::total_params(c.full)},
                  {"params_run", model::total_params(c.dims)},
                  {"matmul_params_run", model::matmul_params(c.dims)}};
  doc["gpu_info"] = {{"device_name", c.device.device_name},
                     {"device_count", result_world(c)},
                     {"devices_per_node", c.device.device_count},
                     {"total_memory_gb", c.device.total_memory_gb},
                     {"software_stack", c.device.software_stack},
                     {"driver_version", c.device.driver_version},
                     {"runtime_version", c.device.runtime_version},
                     {"blas_version", c.device.blas_version},
                     {"gemm", c.device.gemm.empty() ? json(nullptr) : json(c.device.gemm)},
                     {"dnn_version", c.device.dnn_version},
                     {"collectives_version", c.device.collectives_version},
                     {"nodes", c.nodes},
                     {"collective_settings", c.collective_settings},
                     {"cores", c.device.cores},
                     {"peak_tflops_dense", c.device.peak_tflops_dense > 0
                                               ? json(c.device.peak_tflops_dense)
                                               : json(nullptr)},
                     {"peak_tflops_fp8_dense", c.device.peak_tflops_fp8_dense > 0
                                                   ? json(c.device.peak_tflops_fp8_dense)
                                                   : json(nullptr)}};
  doc["parallelism_config"] = {
      {"tensor_model_parallel_size", c.plan.tp},
      {"pipeline_model_parallel_size", c.plan.pp},
      {"context_parallel_size", c.plan.cp},
      {"data_parallel_size", c.plan.dp},
      {"gradient_accumulation_steps", c.plan.grad_accum},
      {"strategy_name", c.plan.strategy_name},
      {"distributed_optimizer", c.optimizer.shards_optimizer()},
      {"data_parallel_sharding_strategy", train::name_of(c.optimizer.sharding)},
      {"num_distributed_optimizer_instances", c.optimizer.optimizer_instances},
      {"sequence_parallel", c.sequence_parallel},
      {"pipeline_bubble_fraction", train::pipeline_bubble_fraction(c.plan.pp, c.plan.grad_accum)}};
  if (!c.plan.stage_layers.empty())  // an imported log does not say
    doc["parallelism_config"]["pipeline_layers"] = c.plan.stage_layers;
  doc["training_config"] = {{"max_steps", c.warmup_steps + c.steps},
                            {"measured_steps", c.steps},
                            {"warmup_steps", c.warmup_steps},
                            {"runs", static_cast<int>(runs.size())},
                            {"micro_batch_size", c.mbs},
                            {"global_batch_size", c.gbs},
                            {"sequence_length", c.seq},
                            {"num_gpus", result_world(c)},
                            {"precision", c.precision},
                            {"fp8", fp8_record(c.device_options.precision, c.dims.layers,
                                               c.device.fp8_forward, c.device.fp8_backward)},
                            {"num_layers", c.dims.layers},
                            {"num_layers_full_model", c.full.layers},
                            {"layers_are_proxy", proxy},
                            {"layers_auto", c.layers_auto},
                            {"data", c.data},
                            {"seed", c.seed},
                            {"init", c.init}};
  for (const auto& r : runs)
    if (!r.saved_weights.empty()) doc["training_config"]["saved_weights"] = r.saved_weights;
  if (c.recompute.on() && !c.recompute.full())  // selective: its modules, in every layer
    doc["training_config"]["recompute"] = {
        {"granularity", "selective"},
        {"method", nullptr},
        {"num_layers", nullptr},
        {"modules", train::recompute_module_names(c.recompute.modules)}};
  else
    doc["training_config"]["recompute"] = {
        {"granularity", c.recompute.on() ? "full" : "none"},
        {"method", c.recompute.method == train::RecomputeMethod::block ? "block" : "uniform"},
        {"num_layers", c.recompute.num_layers}};
  if (c.device.platform != "cpu") {
    std::string attention;
    bool graph = false;
    for (const auto& r : runs) {
      if (!r.attention.empty()) attention = r.attention;
      graph = graph || r.cuda_graph;
    }
    doc["training_config"]["attention"] = attention.empty() ? json(nullptr) : json(attention);
    doc["training_config"]["cuda_graph"] = graph;
    doc["training_config"]["overlap"] = c.device_options.overlap;
    doc["training_config"]["deterministic"] = c.deterministic;
  }
  const auto& o = c.optimizer;
  doc["optimizer"] = {{"name", "adamw"},         {"lr_peak", o.lr_peak},
                      {"lr_min", o.lr_min},      {"lr_warmup_steps", o.warmup_steps},
                      {"lr_decay_steps", o.decay_steps}, {"beta1", o.beta1},
                      {"beta2", o.beta2},        {"eps", o.eps},
                      {"weight_decay", o.weight_decay}, {"clip_norm", o.clip_norm},
                      {"init_std", o.init_std}};
  doc["performance_metrics"] = detail::performance_json(m, in);
  const auto& p = c.predicted;
  doc["memory_metrics"] = {
      {"peak_allocated_gb", peak / gib},
      // The CPU backend allocates exactly what it reserves; a GPU pool may reserve more.
      {"peak_reserved_gb", std::max(peak, peak_reserved) / gib},
      {"predicted_gb", p.total / gib},
      {"device_memory_gb", c.device.total_memory_gb},
      {"predicted_breakdown_gb",
       {{"weights", p.weights / gib},
        {"gradients", p.gradients / gib},
        {"master", p.master / gib},
        {"adam_moments", p.adam_moments / gib},
        {"activations", p.activations / gib},
        {"logits", p.logits / gib},
        {"workspace", p.workspace / gib}}}};
  // FP8 runs: the FP8 weight copies, kept transposed inputs and cast scratch (docs/fp8.md).
  if (p.fp8 > 0) doc["memory_metrics"]["predicted_breakdown_gb"]["fp8"] = p.fp8 / gib;
  // The GPU engine's backward scratch (bench/memory_plan.hpp).
  if (p.scratch > 0) doc["memory_metrics"]["predicted_breakdown_gb"]["scratch"] = p.scratch / gib;
  doc["raw_step_times"] = detail::array_of(step_times);
  doc["step_outliers"] = step_outliers_json(step_times);
  doc["warmup_step_times"] = detail::array_of(detail::concat(runs, &RunRecord::warmup_step_times));
  doc["raw_loss_values"] = detail::array_of(losses);
  doc["raw_learning_rates"] = detail::array_of(lrs);
  doc["raw_memory_values"] = detail::array_of(memory);
  doc["raw_grad_norms"] = detail::array_of(detail::concat(runs, &RunRecord::grad_norms));
  // Primus-Rival's names for the same arrays, so its readers work unchanged.
  doc["step_times"] = doc["raw_step_times"];
  doc["loss_values"] = doc["raw_loss_values"];

  json per_run = json::array();
  std::vector<double> run_tps, run_step;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    const Metrics rm = compute_metrics(r.step_times, in);
    if (std::isfinite(rm.tokens_per_second)) run_tps.push_back(rm.tokens_per_second);
    if (std::isfinite(rm.step_time.mean)) run_step.push_back(rm.step_time.mean);
    per_run.push_back({{"run", static_cast<int>(i)},
                       {"complete", r.complete},
                       {"performance_metrics", detail::performance_json(rm, in)},
                       {"peak_allocated_gb", r.peak_bytes / gib},
                       {"raw_step_times", detail::array_of(r.step_times)},
                       {"warmup_step_times", detail::array_of(r.warmup_step_times)},
                       {"raw_loss_values", detail::array_of(r.losses)},
                       {"raw_learning_rates", detail::array_of(r.learning_rates)},
                       {"raw_memory_values", detail::array_of(r.memory_gb)}});
  }
  doc["runs"] = per_run;
  doc["across_runs"] = {{"runs", static_cast<int>(runs.size())},
                        {"tokens_per_second", detail::summary_json(run_tps)},
                        {"avg_step_time_seconds", detail::summary_json(run_step)}};
  doc["reproduce"] = {{"command_line", c.command_line},
                      {"git_describe", c.git_describe},
                      {"seed", c.seed},
                      {"timestamp", c.timestamp},
                      {"tprimat_version", version_string},
                      {"compiler", compiler_version}};
  set_sanity_warnings(doc);
  return doc;
}

/// What the refusals and failed writes of a result file tell their reader to do. The library's
/// words speak of the path it was given and of ResultContext::overwrite; a program that chooses
/// the path and the overwrite by flags passes its own (the tprimat CLI: cli::result_fixes).
struct ResultFixes {
  /// The path takes no file (a failed write): the result must go elsewhere.
  std::string_view elsewhere = "write the result to another path";
  /// Something that is not a result file is at the path.
  std::string_view occupied = "remove it, or write the result to another path";
  /// A result of another configuration is at the path.
  std::string_view conflict = "set overwrite to replace it, or write the result to another path";
};

/// Writes `text` to `path` atomically through core/output_file.hpp (new file, then rename).
/// Here, after the work is done, a place that takes no file is a failed write (RunError), as a
/// full disk is: the refusals that are bad input come before the work (result_refusal). `fix`:
/// what to do instead, in the caller's words.
inline void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                                  std::string_view fix = "write it to another path") {
  try {
    core::write_file_atomically(path, text, fix);
  } catch (const core::OutputFileError& e) {
    throw core::RunError(e.what());
  }
}

/// A result document that breaks a rule of schema/result.schema.json: a bug when tprimat measured
/// it, bad input when it came from elsewhere (an imported log).
class InvalidResult : public core::RunError {
 public:
  using core::RunError::RunError;
};

/// Memory figures are GiB (2^30 bytes). The seeds' readers know them as "*_gb" keys, which keep
/// that meaning; each gets a twin named for its unit, "*_gib", with the same value, whoever set it
/// (a bench run, an imported log that knows no memory: null).
inline void add_gib_twins(nlohmann::json& doc) {
  const auto twin = [](nlohmann::json& obj, const std::string& gb_key) {
    if (!obj.is_object() || !obj.contains(gb_key)) return;
    obj[gb_key.substr(0, gb_key.size() - 3) + "_gib"] = obj[gb_key];
  };
  if (!doc.is_object()) return;
  if (doc.contains("gpu_info")) twin(doc["gpu_info"], "total_memory_gb");
  if (doc.contains("memory_metrics"))
    for (const char* k : {"peak_allocated_gb", "peak_reserved_gb", "predicted_gb",
                          "device_memory_gb", "predicted_breakdown_gb"})
      twin(doc["memory_metrics"], k);
  if (doc.contains("runs") && doc["runs"].is_array())
    for (auto& run : doc["runs"]) twin(run, "peak_allocated_gb");
}

/// Every string of `doc` (keys too) made valid UTF-8, each stray byte U+FFFD: text read from a
/// log or a file name reaches the result as JSON can hold it, never as a failed write.
inline void replace_invalid_utf8(nlohmann::json& doc) {
  if (doc.is_string()) {
    const auto& s = doc.get_ref<const std::string&>();
    if (!core::valid_utf8(s)) doc = core::utf8_replaced(s);
  } else if (doc.is_array()) {
    for (auto& item : doc) replace_invalid_utf8(item);
  } else if (doc.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    bool renamed = false;
    for (auto& [key, item] : doc.items()) {
      replace_invalid_utf8(item);
      renamed = renamed || !core::valid_utf8(key);
    }
    if (!renamed) return;
    for (auto& [key, item] : doc.items()) out[core::utf8_replaced(key)] = std::move(item);
    doc = std::move(out);
  }
}

/// A result document as write_result puts it on disk, before the schema check: with its "_gib"
/// twins and sanity warnings. An importer checks each of these before it writes any.
inline nlohmann::json as_written(nlohmann::json doc) {
  replace_invalid_utf8(doc);
  add_gib_twins(doc);
  set_sanity_warnings(doc);
  return doc;
}

/// Why a result of `bytes` is not written: over core::max_result_bytes, which every reader of
/// results (compare, peak, a rerun's overwrite check) refuses. nullopt when it is readable.
inline std::optional<std::string> unreadable_size(std::size_t bytes) {
  if (bytes <= core::max_result_bytes) return std::nullopt;
  return "it would be " + std::to_string(bytes) + " bytes, more than the " +
         core::byte_size_text(core::max_result_bytes) +
         " tprimat reads back from a result (compare, peak and a rerun would refuse it)";
}

/// The one way a result reaches disk: the "_gib" twins and the sanity `warnings` made from the
/// document as written (an import adds the log's own figures after make_result), checked against
/// the schema's rules (bench/result_check.hpp), then written atomically. A document that breaks a
/// rule is refused, naming the key and value, and nothing is written.
inline void write_result(const std::filesystem::path& path, nlohmann::json doc,
                         const ResultFixes& fixes = {}) {
  doc = as_written(std::move(doc));
  if (const auto why = result_error(doc))
    throw InvalidResult("refused to write " + path.string() +
                        ", which would break schema/result.schema.json: " + *why);
  const std::string text = doc.dump(2) + "\n";
  if (const auto why = unreadable_size(text.size()))
    throw InvalidResult("refused to write " + path.string() + ": " + *why);
  write_file_atomically(path, text, fixes.elsewhere);
}

/// A run would replace a result of another configuration, and ResultContext::overwrite is not
/// set.
class ResultConflict : public core::InputError {
 public:
  using core::InputError::InputError;
};

namespace detail {

inline std::string key_text(std::string_view pointer) {
  std::string k(pointer.substr(1));
  std::replace(k.begin(), k.end(), '/', '.');
  return k;
}

}  // namespace detail

/// How the result document `old` differs from the result document `now` in the keys that define
/// an experiment, one "key: old -> new" each (a key `old` lacks, and whose value without it is
/// unknown, reads "absent"); empty when both are of the same configuration. (`tprimat import`
/// compares the result it would write.)
inline std::vector<std::string> configuration_differences(const nlohmann::json& old,
                                                          const nlohmann::json& now) {
  using nlohmann::json;
  std::vector<std::string> out;
  for (std::size_t i = 0; i < experiment_field_count; ++i) {
    const auto key = experiment_fields[i].pointer;
    const json is = experiment_value(now, i);
    const std::optional<json> was = recorded_experiment_value(old, i);
    if (!was)
      out.push_back(detail::key_text(key) + ": absent -> " + is.dump());
    else if (*was != is)
      out.push_back(detail::key_text(key) + ": " + was->dump() + " -> " + is.dump());
  }
  return out;
}

/// How the result document `old` differs from the job described by `c` in the keys that define
/// an experiment, one "key: old -> new" each (a key `old` lacks reads "absent"); empty when the
/// job reruns the same configuration.
inline std::vector<std::string> configuration_differences(const nlohmann::json& old,
                                                          const ResultContext& c) {
  using nlohmann::json;
  std::vector<std::string> out = configuration_differences(old, make_result(c, {}));
  auto differs = [&](std::string_view key, const json& was, const json& is) {
    out.push_back(detail::key_text(key) + ": " + (was.is_discarded() ? "absent" : was.dump()) +
                  " -> " + is.dump());
  };
  const auto at = [&](std::string_view key) {
    const json::json_pointer p{std::string(key)};
    return old.is_object() && old.contains(p) ? old.at(p) : json(json::value_t::discarded);
  };
  // A GPU result records the attention and graph that ran, known only afterwards; compare what
  // this job asks for where the old run shows it unambiguously.
  if (c.device.platform != "cpu") {
    const json graph = at("/training_config/cuda_graph");
    // A graph is captured after one eager step: a finished run of two steps or more shows it.
    const json steps = at("/training_config/max_steps");
    const bool captured_if_asked =
        at("/complete") == true && steps.is_number() && steps.get<double>() >= 2;
    if (graph.is_boolean() && graph.get<bool>() != c.device_options.graph &&
        (graph.get<bool>() || captured_if_asked))
      differs("/training_config/cuda_graph", graph, c.device_options.graph);
    const json overlap = at("/training_config/overlap");
    if (overlap.is_boolean() && overlap.get<bool>() != c.device_options.overlap)
      differs("/training_config/overlap", overlap, c.device_options.overlap);
    const json attention = at("/training_config/attention");
    const char* asked = c.device_options.attention == train::AttentionChoice::flash   ? "flash"
                        : c.device_options.attention == train::AttentionChoice::cudnn ? "cudnn"
                                                                                      : nullptr;
    if (asked != nullptr && attention.is_string() && attention != asked)
      differs("/training_config/attention", attention, asked);
  }
  return out;
}

/// How the result a run would replace is read: capped like every result a report reads. (Its
/// refusals become differences, existing_result_differences, which the caller words as
/// conflict_message does.)
inline constexpr core::InputKind existing_result_input{
    "result file", core::max_result_bytes,
    "remove it, set overwrite, or write the result to another path",
    core::InputUse::replaced_by_this_run};

/// The result file a job would replace, compared with the job (a ResultContext, or the result
/// document `tprimat import` would write); nullopt when there is none. A file that is not a
/// readable JSON object (too big, too deeply nested, not even a regular file) counts as another
/// configuration: it is never replaced unless ResultContext::overwrite is set. Never throws: the
/// runner calls it again just before it writes, where the result must not be lost.
template <class Job>
std::optional<std::vector<std::string>> existing_result_differences(
    const std::filesystem::path& file, const Job& c) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return std::nullopt;
  std::string text;
  try {
    text = core::read_input_file(file, existing_result_input);
  } catch (const core::InputFileError& e) {
    return std::vector<std::string>{"not a tprimat result: " + e.problem()};
  }
  if (const auto problem = core::json_text_problem(text); !problem.empty())
    return std::vector<std::string>{"not a tprimat result: " + problem};
  nlohmann::json old;
  try {
    old = nlohmann::json::parse(text, core::KeysOnce(file.string()), /*allow_exceptions=*/false);
  } catch (const core::RepeatedKey& e) {
    return std::vector<std::string>{"not a tprimat result: " + e.problem()};
  }
  if (!old.is_object())
    return std::vector<std::string>{"not a tprimat result: unreadable, or not a JSON object"};
  return configuration_differences(old, c);
}

/// The refusal (rank 0's view): `file` holds a result of another configuration; the fix is
/// `fixes.conflict`.
inline std::string conflict_message(const std::filesystem::path& file,
                                    const std::vector<std::string>& differences,
                                    const ResultFixes& fixes = {}) {
  std::string what;
  for (const auto& d : differences) what += (what.empty() ? "" : ", ") + d;
  return "tprimat: " + file.string() + " holds the result of another configuration (" + what +
         "); refused to overwrite it, nothing ran; " + std::string(fixes.conflict);
}

/// Why a job must not write its result to `file` (rank 0's view, before any step), as the one
/// line to print, or "" when it may: something other than a regular file is there (a directory,
/// a FIFO, a device: refused even with `c.overwrite`, since the result could not replace it),
/// or, without `c.overwrite`, a result of another configuration. The fixes are `fixes`'.
inline std::string result_refusal(const std::filesystem::path& file, const ResultContext& c,
                                  const ResultFixes& fixes = {}) {
  if (const auto kind = core::special_file_kind(file); !kind.empty())
    return "tprimat: " + file.string() + " is " + kind +
           ", where the run writes its result; nothing ran; " + std::string(fixes.occupied);
  if (std::error_code ec; std::filesystem::is_symlink(file, ec))
    return "tprimat: " + file.string() +
           " is a symbolic link, where the run writes its result; tprimat writes no file through "
           "a link; nothing ran; " +
           std::string(fixes.occupied);
  if (c.overwrite) return "";
  if (const auto diff = existing_result_differences(file, c); diff && !diff->empty())
    return conflict_message(file, *diff, fixes);
  return "";
}

}  // namespace tprimat::bench
