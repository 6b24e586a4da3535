// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The fields that define an experiment: one list for the overwrite rule and the reports' groups.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace tprimat::bench {

/// One field of a result document that defines the experiment.
struct ExperimentField {
  std::string_view pointer;  ///< JSON pointer into a result document
  std::string_view name;     ///< how a report label names it: "gbs" in "gbs 64"
  /// What a document without the field ran with, as JSON text, where that is known (results
  /// written before the field existed); "": unknown, read as null.
  std::string_view absent = "";
};

/// What ran, on what, split and fed how. Run length (steps, warm-up, runs, and the LR schedule
/// that follows from it) and measurements are left out, so a longer rerun of one configuration
/// replaces its previous result, and the reports pool the runs of one configuration, never two.
inline constexpr ExperimentField experiment_fields[] = {
    {"/platform", "platform"},
    {"/model/cli_name", "model"},
    {"/gpu_info/software_stack", "stack"},
    {"/gpu_info/device_name", "device"},
    {"/gpu_info/device_count", "GPUs"},
    {"/parallelism_config/tensor_model_parallel_size", "TP"},
    {"/parallelism_config/pipeline_model_parallel_size", "PP"},
    {"/parallelism_config/data_parallel_size", "DP"},
    {"/parallelism_config/gradient_accumulation_steps", "GA"},
    {"/parallelism_config/strategy_name", "strategy"},
    {"/parallelism_config/distributed_optimizer", "ZeRO-1"},
    {"/parallelism_config/sequence_parallel", "SP", "false"},  // recorded since issue 26
    {"/training_config/micro_batch_size", "mbs"},
    {"/training_config/global_batch_size", "gbs"},
    {"/training_config/sequence_length", "seq"},
    {"/training_config/num_layers", "layers"},
    {"/training_config/precision", "precision"},
    {"/training_config/data", "data"},
    {"/training_config/seed", "seed"},
    {"/training_config/init", "init"},
    {"/optimizer/lr_peak", "peak LR"},
};
inline constexpr std::size_t experiment_field_count = std::size(experiment_fields);

/// Index of the field at `pointer` in experiment_fields; a pointer not in the list does not
/// compile where the index is a constant expression (the reports name fields this way).
consteval std::size_t experiment_field(std::string_view pointer) {
  for (std::size_t i = 0; i < experiment_field_count; ++i)
    if (experiment_fields[i].pointer == pointer) return i;
  throw "tprimat: not a field of bench::experiment_fields";
}

namespace detail {

/// The pointers alone, for the overwrite rule's comparison of two documents.
inline constexpr auto experiment_keys = [] {
  std::array<std::string_view, experiment_field_count> keys{};
  for (std::size_t i = 0; i < experiment_field_count; ++i) keys[i] = experiment_fields[i].pointer;
  return keys;
}();

}  // namespace detail

/// Whether `doc` says what field `i` was: it holds the field, or the field's `absent` value
/// applies to documents without it.
inline bool experiment_value_known(const nlohmann::json& doc, std::size_t i) {
  const nlohmann::json::json_pointer p{std::string(experiment_fields[i].pointer)};
  return (doc.is_object() && doc.contains(p)) || !experiment_fields[i].absent.empty();
}

/// The value of field `i` in `doc`; where the document lacks it, the field's `absent` value, or
/// null (the seeds' files).
inline nlohmann::json experiment_value(const nlohmann::json& doc, std::size_t i) {
  const nlohmann::json::json_pointer p{std::string(experiment_fields[i].pointer)};
  if (doc.is_object() && doc.contains(p)) return doc.at(p);
  const std::string_view absent = experiment_fields[i].absent;
  return absent.empty() ? nlohmann::json(nullptr) : nlohmann::json::parse(absent);
}

/// "gbs 64", "ZeRO-1 on", "peak LR 0.0003", "TP n/a" (unknown): field `i` holding `value`.
inline std::string experiment_label(std::size_t i, const nlohmann::json& value) {
  std::string v;
  if (value.is_string()) {
    v = value.get<std::string>();
  } else if (value.is_boolean()) {
    v = value.get<bool>() ? "on" : "off";
  } else if (value.is_number_integer() || value.is_number_unsigned()) {
    v = value.dump();
  } else if (value.is_number() && std::isfinite(value.get<double>())) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", value.get<double>());
    v = buf;
  } else {
    v = "n/a";
  }
  return std::string(experiment_fields[i].name) + " " + v;
}

}  // namespace tprimat::bench
