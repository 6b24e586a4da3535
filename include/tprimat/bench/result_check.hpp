// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The rules of schema/result.schema.json, checked in code before any result is written.
#pragma once

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "tprimat/train/precision.hpp"

namespace tprimat::bench {

namespace detail {

// The schema's two patterns, written out: <regex> crashes hipcc 15's device pass, and a header
// the umbrella includes must compile under every GPU compiler.

/// ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$
inline bool is_utc_timestamp(std::string_view s) {
  constexpr std::string_view shape = "0000-00-00T00:00:00Z";
  if (s.size() != shape.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (shape[i] == '0' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i]) return false;
  return true;
}

/// ^[0-9]+\.[0-9]+\.[0-9]+
inline bool starts_with_version(std::string_view s) {
  std::size_t at = 0;
  for (int part = 0; part < 3; ++part) {
    if (part > 0 && (at >= s.size() || s[at++] != '.')) return false;
    const std::size_t first = at;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
    if (at == first) return false;
  }
  return true;
}

/// The bound on a number (outside ResultRules: its default arguments need it complete).
struct NumberBound {
  enum { none, at_least, above } kind = none;
  double value = 0;
};

/// One document's walk through the schema's rules; the first rule broken is kept.
class ResultRules {
 public:
  using json = nlohmann::json;

  /// What the value at a key may be. A number that is not finite is written as null (nlohmann
  /// dumps NaN and infinities so), and is judged as null.
  enum Kind : unsigned {
    integer = 1,  ///< a JSON integer, or a float with no fractional part (as JSON Schema counts)
    number = 2,
    string = 4,
    boolean = 8,
    null = 16,
    object = 32,
    array = 64,
  };
  using Bound = NumberBound;

  /// `keys_required` false: only the keys present are judged (a reader of older results).
  explicit ResultRules(const json& doc, bool keys_required = true)
      : doc_(doc), keys_required_(keys_required) {}

  const std::optional<std::string>& error() const { return error_; }

  /// The value at `key` ("/a/b") must exist (when `required`) and be of `kinds`, within `bound`.
  const json* expect(const std::string& key, unsigned kinds, Bound bound = {},
                     bool required = true) {
    const json* v = find(key);
    if (v == nullptr) {
      if (required && keys_required_) fail(key, nullptr, "is required");
      return nullptr;
    }
    const unsigned k = kind_of(*v);
    if ((k & kinds) == 0) {
      fail(key, v, "must be " + kinds_text(kinds));
      return nullptr;
    }
    if ((k & (integer | number)) != 0 && bound.kind != Bound::none) {
      const double x = v->get<double>();
      if (bound.kind == Bound::at_least && !(x >= bound.value))
        fail(key, v, "must be at least " + number_text(bound.value));
      if (bound.kind == Bound::above && !(x > bound.value))
        fail(key, v, "must be above " + number_text(bound.value));
    }
    return v;
  }

  /// A string from `choices`.
  void one_of(const std::string& key, std::initializer_list<std::string_view> choices,
              bool required = true) {
    const json* v = expect(key, string, {}, required);
    if (v == nullptr) return;
    for (const auto c : choices)
      if (v->get<std::string>() == c) return;
    std::string list;
    for (const auto c : choices) list += (list.empty() ? "" : ", ") + std::string(c);
    fail(key, v, "must be one of " + list);
  }

  /// A string that is not empty.
  void text(const std::string& key, bool required = true) {
    if (const json* v = expect(key, string, {}, required);
        v != nullptr && v->get<std::string>().empty())
      fail(key, v, "must not be empty");
  }

  void matches(const std::string& key, bool (*pattern)(std::string_view), const char* what) {
    if (const json* v = expect(key, string); v != nullptr && !pattern(v->get<std::string>()))
      fail(key, v, std::string("must be ") + what);
  }

  /// An array whose every item is of `kinds` within `bound`; the size of the array or nullopt.
  std::optional<std::size_t> array_of(const std::string& key, unsigned kinds, Bound bound = {},
                                      bool required = true) {
    const json* v = expect(key, array, {}, required);
    if (v == nullptr) return std::nullopt;
    for (std::size_t i = 0; i < v->size(); ++i) expect(key + "/" + std::to_string(i), kinds, bound);
    return v->size();
  }

  /// An object whose every value is of `kinds` within `bound`, holding at least `keys`.
  void object_of(const std::string& key, std::initializer_list<const char*> keys, unsigned kinds,
                 Bound bound = {}) {
    const json* v = expect(key, object);
    if (v == nullptr) return;
    for (const char* k : keys) expect(key + "/" + k, kinds, bound);
    for (const auto& [k, _] : v->items()) expect(key + "/" + k, kinds, bound);
  }

  void fail(const std::string& key, const json* value, const std::string& rule) {
    if (error_) return;
    std::string shown = value == nullptr ? "absent" : value->dump();
    if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
    std::string dotted = key.substr(1);
    for (char& c : dotted)
      if (c == '/') c = '.';
    error_ = (dotted.empty() ? "the result" : dotted) + " is " + shown + ", and " + rule;
  }

 private:
  const json* find(const std::string& key) const {
    try {
      const json::json_pointer p(key);
      return doc_.contains(p) ? &doc_.at(p) : nullptr;
    } catch (const json::exception&) {  // a key under a value that is no object or array
      return nullptr;
    }
  }

  static unsigned kind_of(const json& v) {
    if (v.is_number_integer()) return integer | number;
    if (v.is_number_float()) {
      const double x = v.get<double>();
      if (!std::isfinite(x)) return null;
      return x == std::floor(x) ? integer | number : number;
    }
    if (v.is_string()) return string;
    if (v.is_boolean()) return boolean;
    if (v.is_null()) return null;
    if (v.is_object()) return object;
    return array;
  }

  static std::string kinds_text(unsigned kinds) {
    static constexpr std::pair<unsigned, const char*> names[] = {
        {integer, "an integer"},    {number, "a number"}, {string, "a string"},
        {boolean, "true or false"}, {null, "null"},       {object, "an object"},
        {array, "an array"}};
    std::string out;
    for (const auto& [k, name] : names)
      if ((kinds & k) != 0 && !(k == integer && (kinds & number) != 0))
        out += (out.empty() ? "" : " or ") + std::string(name);
    return out;
  }

  static std::string number_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }

  const json& doc_;
  bool keys_required_;
  std::optional<std::string> error_;
};

/// The schema's `$defs/performance`, at `at` ("/performance_metrics", "/runs/0/...").
inline void check_performance(ResultRules& r, const std::string& at) {
  using R = ResultRules;
  const R::Bound zero{R::Bound::at_least, 0}, positive{R::Bound::above, 0};
  if (r.expect(at, R::object) == nullptr) return;
  for (const char* k : {"tokens_per_second", "tokens_per_second_per_gpu", "avg_step_time_seconds",
                        "median_step_time_seconds", "std_step_time_seconds",
                        "min_step_time_seconds", "max_step_time_seconds", "ci95_step_time_seconds",
                        "steps_per_second", "model_tflops_per_gpu", "mfu", "tflops_per_gpu_6n"})
    r.expect(at + "/" + k, R::number | R::null, zero);
  r.expect(at + "/measured_steps", R::integer, zero);
  r.expect(at + "/peak_tflops_dense", R::number | R::null, positive);
  // Added with FP8: a result written before may lack them.
  r.expect(at + "/mfu_fp8_peak", R::number | R::null, zero, false);
  r.expect(at + "/peak_tflops_fp8_dense", R::number | R::null, positive, false);
  r.expect(at + "/flops_per_token_palm", R::number, positive);
  r.expect(at + "/flops_per_token_6n", R::number, positive);
}

/// The precisions a result may name: training_config.precision.
inline constexpr const auto& result_precisions = train::precision_names::all;

/// training_config.fp8 against training_config.precision: an FP8 run records its recipe's
/// settings (bench/fp8_record.hpp), and they must be the recipe the precision names and add up
/// to the layers run; any other run records none (null or absent).
inline void check_fp8(ResultRules& r, const nlohmann::json& doc) {
  using R = ResultRules;
  const R::Bound zero{R::Bound::at_least, 0}, one{R::Bound::at_least, 1};
  const std::string t = "/training_config/", f = t + "fp8";
  const nlohmann::json* block = r.expect(f, R::object | R::null, {}, false);
  const nlohmann::json::json_pointer precision_at{t + "precision"};
  if (r.error() || !doc.contains(precision_at) || !doc.at(precision_at).is_string()) return;
  const std::string precision = doc.at(precision_at).get<std::string>();
  constexpr std::string_view fp8_prefix = "fp8-hybrid-";
  if (!precision.starts_with(fp8_prefix)) {
    if (block != nullptr && !block->is_null())
      r.fail(f, block, "must be null: training_config.precision is " + precision);
    return;
  }
  if (block == nullptr || block->is_null()) {
    r.fail(f, block,
           "must be an object recording the FP8 settings: training_config.precision is " +
               precision);
    return;
  }
  r.one_of(f + "/format", {"hybrid"});
  // OCP on NVIDIA and gfx950, fnuz on gfx942: one pair, never one of each.
  r.one_of(f + "/forward", {"e4m3", "e4m3_fnuz"});
  r.one_of(f + "/backward", {"e5m2", "e5m2_fnuz"});
  if (!r.error()) {
    const auto* fw = r.expect(f + "/forward", R::string);
    const auto* bw = r.expect(f + "/backward", R::string);
    if (fw != nullptr && bw != nullptr &&
        fw->get<std::string>().ends_with("_fnuz") != bw->get<std::string>().ends_with("_fnuz"))
      r.fail(f + "/backward", bw,
             "must be of forward's family (" + fw->get<std::string>() +
                 "): e4m3 with e5m2, or e4m3_fnuz with e5m2_fnuz");
  }
  r.one_of(f + "/recipe", {"delayed", "current"});
  const std::string recipe = precision.substr(fp8_prefix.size());
  if (const auto* v = r.expect(f + "/recipe", R::string); v != nullptr && *v != recipe)
    r.fail(f + "/recipe", v, "must be " + recipe + ", as training_config.precision says");
  const bool delayed = recipe == "delayed";
  // The amax history and its reduction are the delayed recipe's; current scaling has none.
  const unsigned history_kinds = delayed ? R::integer : R::null;
  r.expect(f + "/amax_history_len", history_kinds, one);
  if (const auto* v = r.expect(f + "/amax_compute_algo", delayed ? R::string : R::null);
      v != nullptr && delayed && *v != "max" && *v != "most_recent")
    r.fail(f + "/amax_compute_algo", v, "must be one of max, most_recent");
  r.expect(f + "/margin", R::integer, zero);
  // Where the FP8 copies came from (memory, not numbers); results before it lack the key.
  r.one_of(f + "/copies", {"kept", "recast"}, false);
  const auto bf16 = r.array_of(f + "/bf16_layers", R::integer, zero);
  const auto* fp8 = r.expect(f + "/fp8_layers", R::integer, zero);
  const nlohmann::json::json_pointer layers_at{t + "num_layers"};
  if (r.error() || !bf16 || fp8 == nullptr || !doc.contains(layers_at) ||
      !doc.at(layers_at).is_number())
    return;
  const double layers = doc.at(layers_at).get<double>();
  const nlohmann::json& indices = doc.at(nlohmann::json::json_pointer(f + "/bf16_layers"));
  for (std::size_t i = 0; i < *bf16; ++i)
    if (indices[i].get<double>() >= layers)
      return r.fail(f + "/bf16_layers/" + std::to_string(i), &indices[i],
                    "must be below training_config.num_layers");
  if (static_cast<double>(*bf16) + fp8->get<double>() != layers)
    r.fail(f + "/fp8_layers", fp8,
           "must be training_config.num_layers less the bf16_layers (" +
               std::to_string(static_cast<long long>(layers) - static_cast<long long>(*bf16)) +
               ")");
}

/// parallelism_config.pipeline_layers (results before it lack it: they ran the even split): one
/// count of at least 1 per pipeline stage, summing to training_config.num_layers.
inline void check_pipeline_layers(ResultRules& r, const nlohmann::json& doc) {
  using R = ResultRules;
  const std::string key = "/parallelism_config/pipeline_layers";
  const auto stages = r.array_of(key, R::integer, {R::Bound::at_least, 1}, false);
  const nlohmann::json::json_pointer pp_at{"/parallelism_config/pipeline_model_parallel_size"},
      layers_at{"/training_config/num_layers"};
  if (r.error() || !stages || !doc.contains(pp_at) || !doc.contains(layers_at)) return;
  const nlohmann::json& split = doc.at(nlohmann::json::json_pointer(key));
  if (static_cast<double>(*stages) != doc.at(pp_at).get<double>())
    return r.fail(key, &split,
                  "must hold one count per pipeline stage (pipeline_model_parallel_size)");
  double sum = 0;
  for (const auto& n : split) sum += n.get<double>();
  if (sum != doc.at(layers_at).get<double>())
    r.fail(key, &split, "must sum to training_config.num_layers");
}

}  // namespace detail

/// Why `doc` would fail schema/result.schema.json, as "key is value, and rule" naming the first
/// key that breaks a rule; nullopt when it keeps them all. The rules are the schema's (types,
/// required keys, bounds, enums, patterns) written out in code, so that no writer needs a JSON
/// Schema validator; tests/unit/bench/result_check_test.cpp holds the two together.
/// `keys_required` false judges only the keys present: what a report asks of a result an older
/// tprimat wrote (a section added since may be absent; a value present must keep its rule).
inline std::optional<std::string> result_error(const nlohmann::json& doc,
                                               bool keys_required = true) {
  using R = detail::ResultRules;
  R r(doc, keys_required);
  const R::Bound zero{R::Bound::at_least, 0}, one{R::Bound::at_least, 1},
      positive{R::Bound::above, 0};
  if (!doc.is_object()) {
    r.fail("/", &doc, "must be an object");
    return r.error();
  }
  // The objects first: a section that is no object is named itself, not by its first key.
  for (const char* k : {"/model", "/gpu_info", "/parallelism_config", "/training_config",
                        "/optimizer", "/memory_metrics", "/across_runs", "/reproduce"})
    r.expect(k, R::object);
  if (const auto* v = r.expect("/schema_version", R::integer); v != nullptr && *v != 1)
    r.fail("/schema_version", v, "must be 1");
  const auto* complete = r.expect("/complete", R::boolean);
  r.expect("/error", R::string, {}, complete != nullptr && *complete == false);
  r.one_of("/platform", {"nvd", "amd", "cpu"});

  r.one_of("/model/cli_name", {"llama", "qwen", "mistral", "tiny"});
  r.text("/model/name");
  for (const char* k : {"/model/params", "/model/params_run", "/model/matmul_params_run"})
    r.expect(k, R::integer, one);

  r.expect("/gpu_info/device_name", R::string);
  r.expect("/gpu_info/device_count", R::integer, one);
  r.expect("/gpu_info/devices_per_node", R::integer, one, false);
  r.expect("/gpu_info/total_memory_gb", R::number | R::null, zero);
  r.expect("/gpu_info/total_memory_gib", R::number | R::null, zero, false);
  r.one_of("/gpu_info/software_stack", {"cuda", "rocm", "cpu"});
  r.expect("/gpu_info/driver_version", R::string);
  r.expect("/gpu_info/runtime_version", R::string);
  if (const nlohmann::json* gemm = r.expect("/gpu_info/gemm", R::string | R::null, {}, false);
      gemm != nullptr && gemm->is_string())
    r.one_of("/gpu_info/gemm", {"cublaslt", "hipblaslt", "fallback"}, false);
  r.expect("/gpu_info/cores", R::integer | R::null, zero, false);
  r.expect("/gpu_info/nodes", R::integer, one, false);
  r.array_of("/gpu_info/collective_settings", R::string, {}, false);
  r.expect("/gpu_info/peak_tflops_dense", R::number | R::null, positive);
  r.expect("/gpu_info/peak_tflops_fp8_dense", R::number | R::null, positive, false);

  for (const char* k : {"tensor_model_parallel_size", "pipeline_model_parallel_size",
                        "data_parallel_size", "gradient_accumulation_steps"})
    r.expect(std::string("/parallelism_config/") + k, R::integer, one);
  r.text("/parallelism_config/strategy_name");
  r.expect("/parallelism_config/distributed_optimizer", R::boolean, {}, false);
  // Sequence parallelism splits the residual stream over TP ranks: there are none at TP 1.
  if (const auto* sp = r.expect("/parallelism_config/sequence_parallel", R::boolean, {}, false);
      sp != nullptr && sp->get<bool>()) {
    const auto* tp = r.expect("/parallelism_config/tensor_model_parallel_size", R::integer, one);
    if (tp != nullptr && tp->is_number_integer() && tp->get<long long>() <= 1)
      r.fail("/parallelism_config/sequence_parallel", sp,
             "must be false where tensor_model_parallel_size is 1");
  }
  if (const auto* b =
          r.expect("/parallelism_config/pipeline_bubble_fraction", R::number, zero, false);
      b != nullptr && b->get<double>() > 1)
    r.fail("/parallelism_config/pipeline_bubble_fraction", b, "must be at most 1");

  const std::string t = "/training_config/";
  for (const char* k : {"max_steps", "measured_steps", "micro_batch_size", "global_batch_size",
                        "sequence_length", "num_gpus", "num_layers", "num_layers_full_model"})
    r.expect(t + k, R::integer, one);
  r.expect(t + "warmup_steps", R::integer, zero);
  r.expect(t + "runs", R::integer, zero);
  r.one_of(t + "precision", {detail::result_precisions[0], detail::result_precisions[1],
                             detail::result_precisions[2], detail::result_precisions[3]});
  for (const char* k : {"layers_are_proxy", "layers_auto"}) r.expect(t + k, R::boolean);
  r.expect(t + "data", R::string);
  r.expect(t + "seed", R::integer | R::null, zero);
  r.expect(t + "init", R::string, {}, false);
  r.expect(t + "saved_weights", R::string, {}, false);
  r.expect(t + "attention", R::string | R::null, {}, false);
  r.expect(t + "cuda_graph", R::boolean, {}, false);
  r.expect(t + "overlap", R::boolean, {}, false);
  detail::check_fp8(r, doc);
  detail::check_pipeline_layers(r, doc);

  if (const auto* v = r.expect("/optimizer/name", R::string); v != nullptr && *v != "adamw")
    r.fail("/optimizer/name", v, "must be adamw");
  r.expect("/optimizer/lr_peak", R::number | R::null, positive);
  r.expect("/optimizer/lr_min", R::number | R::null, zero);
  r.expect("/optimizer/lr_warmup_steps", R::integer | R::null, zero);
  r.expect("/optimizer/lr_decay_steps", R::integer | R::null, zero);
  for (const char* k : {"beta1", "beta2", "eps", "weight_decay", "clip_norm", "init_std"})
    r.expect(std::string("/optimizer/") + k, R::number | R::null);

  detail::check_performance(r, "/performance_metrics");

  // The seeds' "_gb" keys (GiB) are required; their "_gib" twins are checked where present.
  for (const bool twin : {false, true}) {
    const std::string unit = twin ? "_gib" : "_gb", m = "/memory_metrics/";
    for (const char* k : {"peak_allocated", "peak_reserved", "device_memory"})
      r.expect(m + k + unit, R::number | R::null, zero, !twin);
    r.expect(m + "predicted" + unit, R::number, positive, !twin);
    if (!twin || doc.contains(nlohmann::json::json_pointer(m + "predicted_breakdown_gib")))
      r.object_of(
          m + "predicted_breakdown" + unit,
          {"weights", "gradients", "master", "adam_moments", "activations", "logits", "workspace"},
          R::number, zero);
  }

  for (const char* k : {"/raw_step_times", "/warmup_step_times", "/step_times"})
    r.array_of(k, R::number, zero);
  for (const char* k :
       {"/raw_loss_values", "/raw_learning_rates", "/raw_memory_values", "/loss_values"})
    r.array_of(k, R::number | R::null);
  r.array_of("/raw_grad_norms", R::number | R::null, {}, false);

  if (const auto runs = r.array_of("/runs", R::object))
    for (std::size_t i = 0; i < *runs; ++i) {
      const std::string at = "/runs/" + std::to_string(i);
      r.expect(at + "/run", R::integer, zero);
      r.expect(at + "/complete", R::boolean);
      detail::check_performance(r, at + "/performance_metrics");
      r.expect(at + "/peak_allocated_gb", R::number | R::null, zero);
      r.expect(at + "/peak_allocated_gib", R::number | R::null, zero, false);
      for (const char* k : {"/raw_step_times", "/warmup_step_times"})
        r.array_of(at + k, R::number, zero);
      for (const char* k : {"/raw_loss_values", "/raw_learning_rates", "/raw_memory_values"})
        r.array_of(at + k, R::number | R::null);
    }
  r.expect("/across_runs/runs", R::integer, zero);
  for (const char* k : {"/across_runs/tokens_per_second", "/across_runs/avg_step_time_seconds"})
    r.object_of(k, {"mean", "std", "min", "max"}, R::number | R::null);

  r.text("/reproduce/command_line");
  r.text("/reproduce/git_describe");
  r.expect("/reproduce/seed", R::integer | R::null, zero);
  r.matches("/reproduce/timestamp", detail::is_utc_timestamp,
            "an ISO 8601 UTC time, 2026-01-31T12:00:00Z");
  r.matches("/reproduce/tprimat_version", detail::starts_with_version,
            "a version, MAJOR.MINOR.PATCH");
  r.expect("/reproduce/compiler", R::string, {}, false);
  if (const auto n = r.array_of("/warnings", R::string, {}, false))
    for (std::size_t i = 0; i < *n; ++i) r.text("/warnings/" + std::to_string(i));
  if (const auto n = r.array_of("/step_outliers", R::object, {}, false))
    for (std::size_t i = 0; i < *n; ++i) {
      const std::string at = "/step_outliers/" + std::to_string(i);
      r.expect(at + "/step", R::integer, one);
      r.expect(at + "/seconds", R::number, positive);
      r.expect(at + "/times_median", R::number, positive);
    }

  if (doc.contains("profiling") && r.expect("/profiling", R::object) != nullptr) {
    const std::string p = "/profiling/";
    r.expect(p + "overhead", R::object);
    if (const auto* v = r.expect(p + "enabled", R::boolean); v != nullptr && *v != true)
      r.fail(p + "enabled", v, "must be true");
    r.one_of(p + "collector", {"cupti", "host"});
    r.object_of(p + "schedule", {"wait", "warmup", "active", "repeat"}, R::integer, zero);
    r.array_of(p + "ranks", R::integer, zero);
    if (const auto n = r.array_of(p + "traces", R::string))
      for (std::size_t i = 0; i < *n; ++i) r.text(p + "traces/" + std::to_string(i));
    r.array_of(p + "recorded_steps", R::integer, zero);
    for (const char* k : {"profiled_step_seconds", "unprofiled_step_seconds", "fraction"})
      r.expect(p + "overhead/" + k, R::number | R::null);
    for (const char* k : {"profiled_steps", "unprofiled_steps"})
      r.expect(p + "overhead/" + k, R::integer, zero);
  }
  return r.error();
}

}  // namespace tprimat::bench
