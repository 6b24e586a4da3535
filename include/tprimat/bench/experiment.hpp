// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The fields that define an experiment: one list for the overwrite rule and the reports' groups.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tprimat/train/config.hpp"

namespace tprimat::bench {

/// One field of a result document that defines the experiment.
struct ExperimentField {
  std::string_view pointer;  ///< JSON pointer into a result document
  std::string_view name;     ///< how a report label names it: "gbs" in "gbs 64"
  /// What a document without the field ran with, as JSON text, where that is known (results
  /// written before the field existed); "": unknown, read as null.
  std::string_view absent = "";
  /// The `import` flag that states it where a log does not, or names it as another log does
  /// (compare's refusal offers it); "": a log's own figure, never asserted.
  std::string_view stated_by = "";
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
    // The node layout: 8 GPUs on one node talk over NVLink/xGMI, on two over the network too.
    // Recorded since the launcher's node count was read; before it, recorded_experiment_value
    // reads it from device_count over devices_per_node (written since the first result).
    {"/gpu_info/nodes", "nodes"},
    {"/parallelism_config/tensor_model_parallel_size", "TP", "", "--tp N"},
    {"/parallelism_config/pipeline_model_parallel_size", "PP", "", "--pp N"},
    // Recorded since issue 35; before it, none ran (CP 1). Each sequence split over CP ranks is
    // another experiment, whatever the GPU count.
    {"/parallelism_config/context_parallel_size", "CP", "1"},
    // Layers of each pipeline stage ("layers per stage 17+15"): never "stages 4", read as PP=4.
    {"/parallelism_config/pipeline_layers", "layers per stage"},
    {"/parallelism_config/data_parallel_size", "DP"},
    {"/parallelism_config/gradient_accumulation_steps", "GA"},
    {"/parallelism_config/strategy_name", "strategy"},
    // Recorded since issue 36; before it, distributed_optimizer said ZeRO-1 or none
    // (recorded_experiment_value reads it in its place). "sharding ZeRO-2" in a label.
    {"/parallelism_config/data_parallel_sharding_strategy", "sharding"},
    // Recorded since issue 36's hybrid sharding; before it, every run had one instance.
    {"/parallelism_config/num_distributed_optimizer_instances", "optimizer instances", "1"},
    {"/parallelism_config/sequence_parallel", "SP", "false"},  // recorded since issue 26
    {"/training_config/micro_batch_size", "mbs", "", "--micro-batch-size N"},
    {"/training_config/global_batch_size", "gbs"},
    {"/training_config/sequence_length", "seq"},
    {"/training_config/num_layers", "layers"},
    {"/training_config/precision", "precision"},
    // Which decoder layers an FP8 run keeps in bf16 (the current recipe's ends, or as set): the
    // same precision over other layers is other work. Recorded with FP8 since its first result;
    // null for a run that is not FP8 (training_config.fp8 null) and an import that does not say.
    {"/training_config/fp8/bf16_layers", "bf16 layers", "null"},
    {"/training_config/data", "data", "", "--data LABEL"},
    {"/training_config/seed", "seed", "", "--seed N"},
    {"/training_config/init", "init"},
    // Recorded since issue 35; before it, none ran.
    {"/training_config/recompute", "recompute",
     R"({"granularity": "none", "method": "uniform", "num_layers": 1})"},
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

/// The value of field `i` in `doc`, or what its absence means where that is known: a result
/// without pipeline_layers ran the even split (every tprimat before the key did), so it reads as
/// num_layers / PP each; one without nodes ran on device_count / devices_per_node (rounded up);
/// other fields take their `absent` value. nullopt where the document does
/// not say (the seeds' files).
inline std::optional<nlohmann::json> recorded_experiment_value(const nlohmann::json& doc,
                                                               std::size_t i) {
  using J = nlohmann::json;
  if (!doc.is_object()) return std::nullopt;
  const std::string_view pointer = experiment_fields[i].pointer;
  const J::json_pointer p{std::string(pointer)};
  // In place: a json converts to anything, std::optional<json> included (ambiguous for clang).
  using Value = std::optional<J>;
  if (doc.contains(p)) {
    const J& v = doc.at(p);
    // No recomputation is one experiment whatever method and layer count go with it (a bench
    // run writes uniform/1, an imported log its own None/null).
    if (pointer == "/training_config/recompute" && v.is_object() && v.contains("granularity") &&
        v.at("granularity") == "none")
      return Value(std::in_place, J::parse(experiment_fields[i].absent));
    return Value(std::in_place, v);
  }
  if (!experiment_fields[i].absent.empty())
    return Value(std::in_place, J::parse(experiment_fields[i].absent));
  if (pointer == "/parallelism_config/data_parallel_sharding_strategy") {
    // Before the strategy was recorded, the distributed optimizer (ZeRO-1) was the one sharding:
    // true is optim, false no_shard, null (an imported log that did not say) unknown.
    const J::json_pointer zero1_at{"/parallelism_config/distributed_optimizer"};
    if (!doc.contains(zero1_at)) return std::nullopt;
    const J& zero1 = doc.at(zero1_at);
    if (!zero1.is_boolean()) return Value(std::in_place, nullptr);
    return Value(std::in_place, zero1.get<bool>() ? "optim" : "no_shard");
  }
  if (pointer == "/gpu_info/nodes") {
    const J::json_pointer world_at{"/gpu_info/device_count"},
        per_node_at{"/gpu_info/devices_per_node"};
    // Where it cannot be read (an imported log states no node count): unknown, one value for
    // every such document, so two imports of one configuration still compare.
    if (!doc.contains(world_at) || !doc.contains(per_node_at) ||
        !doc.at(world_at).is_number_integer() || !doc.at(per_node_at).is_number_integer())
      return Value(std::in_place, nullptr);
    const auto world = doc.at(world_at).get<long long>(),
               per_node = doc.at(per_node_at).get<long long>();
    if (world < 1 || per_node < 1 || world > 1 << 20) return Value(std::in_place, nullptr);
    // A node may hold more devices than the run used (4 of 8): still one node.
    return Value(std::in_place, (world + per_node - 1) / per_node);
  }
  if (pointer != "/parallelism_config/pipeline_layers") return std::nullopt;
  const J::json_pointer pp_at{"/parallelism_config/pipeline_model_parallel_size"},
      layers_at{"/training_config/num_layers"};
  if (!doc.contains(pp_at) || !doc.contains(layers_at) || !doc.at(pp_at).is_number_integer() ||
      !doc.at(layers_at).is_number_integer())
    return std::nullopt;
  const auto pp = doc.at(pp_at).get<long long>(), layers = doc.at(layers_at).get<long long>();
  if (pp < 1 || pp > 1 << 20 || layers % pp != 0) return std::nullopt;
  return Value(std::in_place, std::vector<long long>(static_cast<std::size_t>(pp), layers / pp));
}

/// The value of field `i` in `doc`; null where the document does not say (the seeds' files).
inline nlohmann::json experiment_value(const nlohmann::json& doc, std::size_t i) {
  return recorded_experiment_value(doc, i).value_or(nlohmann::json(nullptr));
}

/// "ZeRO-2" for Megatron-FSDP's optim_grads (its ZeRO stage), "none" for no_shard; any other
/// text as it is.
inline std::string zero_stage_label(const std::string& strategy) {
  const std::optional<train::ShardingStrategy> s = train::sharding_strategy_named(strategy);
  if (!s) return strategy;
  return *s == train::ShardingStrategy::no_shard ? "none" : train::zero_label(*s);
}

/// "gbs 64", "sharding ZeRO-2", "peak LR 0.0003", "TP n/a" (unknown): field `i` holding `value`.
inline std::string experiment_label(std::size_t i, const nlohmann::json& value) {
  std::string v;
  if (value.is_string() &&
      experiment_fields[i].pointer == "/parallelism_config/data_parallel_sharding_strategy") {
    v = zero_stage_label(value.get<std::string>());
  } else if (value.is_string()) {
    v = value.get<std::string>();
  } else if (value.is_boolean()) {
    v = value.get<bool>() ? "on" : "off";
  } else if (value.is_number_integer() || value.is_number_unsigned()) {
    v = value.dump();
  } else if (value.is_object()) {  // recomputation: "recompute full uniform 2", "recompute none"
    if (value.value("granularity", std::string()) == "none") {
      v = "none";
    } else {
      // granularity, method, modules, num_layers: "recompute full uniform 2", "recompute
      // selective layernorm,mlp" (selective has no method or layer count)
      for (const auto& [key, item] : value.items()) {
        if (item.is_null()) continue;
        std::string part;
        if (item.is_array())
          for (const auto& name : item)
            part += (part.empty() ? "" : ",") + (name.is_string() ? name.get<std::string>()
                                                                  : name.dump());
        else
          part = item.is_string() ? item.get<std::string>() : item.dump();
        v += (v.empty() ? "" : " ") + part;
      }
    }
  } else if (value.is_array() &&
             experiment_fields[i].pointer == "/training_config/fp8/bf16_layers") {
    // layer indices: "bf16 layers 0,31", "bf16 layers none"
    for (const auto& item : value) v += (v.empty() ? "" : ",") + item.dump();
    if (v.empty()) v = "none";
  } else if (value.is_array()) {  // a pipeline split: "layers per stage 17+15"
    for (const auto& item : value) v += (v.empty() ? "" : "+") + item.dump();
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
