// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Custom parallel strategies from a config file (JSON, or the seeds' config.yaml as it is), with
// the seeds' keys and nesting; the file's run settings are config_run.hpp's.
#pragma once

#include <algorithm>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tprimat/core/error.hpp"
#include "tprimat/core/input_file.hpp"
#include "tprimat/core/json_input.hpp"
#include "tprimat/core/near_name.hpp"
#include "tprimat/core/yaml_input.hpp"
#include "tprimat/bench/config_run.hpp"
#include "tprimat/model/all.hpp"
#include "tprimat/parallel/strategy.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/precision.hpp"

namespace tprimat::bench {

/// One strategy read from a config file. `dp` and `grad_accum` 0 mean "derive" (see make_plan).
struct ConfigStrategy {
  std::string name;
  int tp = 1;
  int pp = 1;
  int cp = 1;  ///< Megatron's context_parallel_size (1 where the block is silent)
  int dp = 0;
  int grad_accum = 0;
  /// Megatron's decoder_first/last_pipeline_num_layers (0: not given) and `pipeline_split`
  /// ("even" or "auto"; "": not given): the stages' layer counts (pipeline_split.hpp).
  int first_stage_layers = 0, last_stage_layers = 0;
  std::string pipeline_split;
  std::string file;         ///< the config file, for messages
  /// The file's top-level `profiling` block (the program reads it: cli/profile_flags.hpp).
  nlohmann::json profiling;
  /// NeMo's `fp8` / `fp8_recipe` where the file states them (config_precision); nullopt where
  /// it is silent. `--precision` and `--fp8-recipe` override it.
  std::optional<train::PrecisionConfig> precision;
  /// Megatron's `sequence_parallel` beside the sizes, where the block states it (a boolean);
  /// `--sequence-parallel` turns it on too.
  std::optional<bool> sequence_parallel;
  /// Megatron-FSDP's `data_parallel_sharding_strategy` beside the sizes, where the block states
  /// it (one of train::sharding_strategy_names);
  /// `--data-parallel-sharding-strategy` and `--distributed-optimizer` may only agree with it.
  std::optional<train::ShardingStrategy> sharding;
  /// Megatron's `num_distributed_optimizer_instances` (hybrid sharding) beside the sizes, where
  /// the block states it; `--num-distributed-optimizer-instances` may only agree with it.
  std::optional<int> optimizer_instances;
  /// Megatron's recompute_granularity/_method/_num_layers/_modules beside the sizes, where the
  /// block states them (read_recompute); the --recompute-* flags replace them.
  std::optional<train::Recompute> recompute;
};

/// The languages a config file is written in: JSON, and YAML (the seeds' config.yaml).
enum class ConfigFormat { json, yaml };

/// The extensions of config files and the language each means: the one list.
struct ConfigExtension {
  std::string_view ext;
  ConfigFormat format;
};
inline constexpr ConfigExtension config_extensions[] = {
    {".json", ConfigFormat::json}, {".yaml", ConfigFormat::yaml}, {".yml", ConfigFormat::yaml}};

/// The language of config file `file` by its extension, or nullopt for another extension.
inline std::optional<ConfigFormat> config_format(std::string_view file) {
  for (const auto& e : config_extensions)
    if (file.ends_with(e.ext)) return e.format;
  return std::nullopt;
}

/// `--parallel` names a config file rather than a built-in strategy: "x.json", "x.yaml" or
/// "x.yml", each with an optional ":name", or any path with a slash.
inline bool is_config_path(std::string_view arg) {
  for (const auto& [ext, format] : config_extensions)
    if (arg.ends_with(ext) || arg.find(std::string(ext) + ":") != std::string_view::npos)
      return true;
  return arg.find('/') != std::string_view::npos;
}

namespace detail {

inline constexpr std::string_view tp_key = "tensor_model_parallel_size";
inline constexpr std::string_view pp_key = "pipeline_model_parallel_size";
inline constexpr std::string_view dp_key = "data_parallel_size";
inline constexpr std::string_view cp_key = "context_parallel_size";
inline constexpr std::string_view accum_key = "gradient_accumulation_steps";
inline constexpr std::string_view first_layers_key = "decoder_first_pipeline_num_layers";
inline constexpr std::string_view last_layers_key = "decoder_last_pipeline_num_layers";
inline constexpr std::string_view split_key = "pipeline_split";
inline constexpr std::string_view sharding_key = "data_parallel_sharding_strategy";
inline constexpr std::string_view instances_key = "num_distributed_optimizer_instances";

inline bool is_flat(const nlohmann::json& j) {
  return j.is_object() && (j.contains(tp_key) || j.contains(pp_key) || j.contains(dp_key));
}

/// The first of `keys` present in `j`, or nullptr.
inline const nlohmann::json* first_of(const nlohmann::json& j,
                                      std::span<const std::string_view> keys,
                                      std::string* found) {
  for (auto k : keys) {
    auto it = j.find(k);
    if (it != j.end()) {
      *found = std::string(k);
      return &*it;
    }
  }
  return nullptr;
}

inline std::string join_keys(const nlohmann::json& j) {
  std::string out;
  for (auto it = j.begin(); it != j.end(); ++it) out += (out.empty() ? "" : ", ") + it.key();
  return out.empty() ? "none" : out;
}

/// Reads one integer key. Missing optional keys give `fallback`; a missing required key, a
/// non-integer or a value outside `least` (1 unless a count may be 0) .. 2^20 is an InputError
/// naming the file, the key path and the fix.
inline int read_size(const nlohmann::json& block, std::string_view key, const std::string& file,
                     const std::string& where, bool required, int fallback, int least = 1) {
  auto it = block.find(key);
  const std::string at = file + ": " + (where.empty() ? "" : where + ".") + std::string(key);
  if (it == block.end()) {
    if (required)
      throw core::InputError("config " + file + ": " + (where.empty() ? "the top level" : where) +
                                 " has no " + std::string(key),
                             "add \"" + std::string(key) + "\": <positive integer> there");
    return fallback;
  }
  if (!it->is_number_integer())
    throw core::InputError("config " + at + " must be an integer, got " + it->dump(),
                           "write it as a number without quotes, e.g. \"" + std::string(key) +
                               "\": 1");
  // An unsigned beyond long long's range reads as negative: compared as it is written.
  constexpr long long most = 1 << 20;
  const bool in_range = it->is_number_unsigned() ? it->get<unsigned long long>() <= most
                                                 : it->get<long long>() <= most;
  if (!in_range || it->get<long long>() < least)
    throw core::InputError(
        "config " + at + " must be an integer from " + std::to_string(least) + " to " +
            std::to_string(most) + ", got " + it->dump(),
        "use an integer from " + std::to_string(least) + " to " + std::to_string(most));
  return static_cast<int>(it->get<long long>());
}

/// Picks this model's block: its own entry, else (mistral, tiny) Llama's, whose shape they share.
inline const nlohmann::json& model_block(const nlohmann::json& j, std::string_view model,
                                         const std::string& file, const std::string& where,
                                         std::string* path) {
  std::string found;
  const std::string_view names[] = {model, "llama"};
  const nlohmann::json* m = first_of(j, std::span(names, model == "qwen" ? 1 : 2), &found);
  if (m == nullptr)
    throw core::InputError("config " + file + ": " + (where.empty() ? "the top level" : where) +
                               " has no block for model " + std::string(model) + " (keys: " +
                               join_keys(j) + ")",
                           "add a \"" + std::string(model) +
                               "\" block with tensor_model_parallel_size");
  *path = (where.empty() ? "" : where + ".") + found;
  return *m;
}

/// Picks the platform block: nvidia/nvd, amd, or cpu (which falls back to the NVIDIA block,
/// as the built-in strategies do). A flat block applies to every platform.
inline const nlohmann::json& platform_block(const nlohmann::json& j, std::string_view platform,
                                            const std::string& file, std::string* path) {
  if (!j.is_object())
    throw core::InputError("config " + file + ": " + *path + " must be an object, got " +
                               j.dump(),
                           "write it as {\"tensor_model_parallel_size\": 1, ...}");
  if (is_flat(j)) return j;
  // This platform's keys, then (the CPU's fallback) NVIDIA's.
  std::vector<std::string_view> keys;
  const auto add_keys_of = [&](std::string_view wanted) {
    for (const auto& k : platform_keys)
      if (k.platform == wanted) keys.push_back(k.key);
  };
  add_keys_of(platform);
  if (platform == "cpu") add_keys_of("nvd");
  std::string found;
  const nlohmann::json* p = first_of(j, keys, &found);
  if (p == nullptr)
    throw core::InputError("config " + file + ": " + *path + " has no block for platform " +
                               std::string(platform) + " (keys: " + join_keys(j) + ")",
                           "add an \"" + std::string(platform == "amd" ? "amd" : "nvidia") +
                               "\" block with tensor_model_parallel_size");
  *path += "." + found;
  return *p;
}

inline constexpr std::string_view recompute_keys[] = {
    "recompute_granularity", "recompute_method", "recompute_num_layers", "recompute_modules"};

/// A block's recomputation keys, as Megatron names them: recompute_granularity "full" (with
/// recompute_method "uniform"|"block" and recompute_num_layers N, defaults uniform and 1) or
/// "selective" (with recompute_modules, a list of "layernorm" and "mlp", default ["layernorm"]);
/// null or absent: none, and then no other recompute key. nullopt where the block has none.
inline std::optional<train::Recompute> read_recompute(const nlohmann::json& block,
                                                      const std::string& file,
                                                      const std::string& where) {
  const std::string at = "config " + file + ": " + (where.empty() ? "" : where + ".");
  const auto find = [&](std::string_view key) -> const nlohmann::json* {
    auto it = block.find(key);
    return it == block.end() || it->is_null() ? nullptr : &*it;
  };
  const nlohmann::json* granularity = find("recompute_granularity");
  const nlohmann::json *method = find("recompute_method"), *modules = find("recompute_modules");
  const bool layers = find("recompute_num_layers") != nullptr;
  if (granularity == nullptr) {
    for (std::string_view key : std::span(recompute_keys).subspan(1))
      if (find(key) != nullptr)
        throw core::InputError(at + std::string(key) + " is given without recompute_granularity",
                               "add \"recompute_granularity\": \"" +
                                   std::string(key == "recompute_modules" ? "selective" : "full") +
                                   "\", or drop it");
    return std::nullopt;
  }
  const bool full = *granularity == "full", selective = *granularity == "selective";
  if (!full && !selective)
    throw core::InputError(at + "recompute_granularity must be \"full\" or \"selective\", got " +
                               granularity->dump(),
                           "write \"recompute_granularity\": \"full\" (or \"selective\", or null)");
  train::Recompute r;
  if (selective) {
    if (method != nullptr || layers)
      throw core::InputError(at + (method != nullptr ? "recompute_method" : "recompute_num_layers") +
                                 " applies to recompute_granularity \"full\", not \"selective\" "
                                 "(which recomputes its modules in every layer)",
                             "drop it, or use \"full\"");
    unsigned bits = static_cast<unsigned>(train::RecomputeModule::layernorm);
    if (modules != nullptr) {
      if (!modules->is_array() || modules->empty())
        throw core::InputError(at + "recompute_modules must be a non-empty list, got " +
                                   modules->dump(),
                               "write \"recompute_modules\": [\"layernorm\", \"mlp\"]");
      bits = 0;
      for (const auto& m : *modules) {
        const unsigned bit =
            m.is_string() ? train::recompute_module_named(m.get<std::string>()) : 0u;
        if (bit == 0 || (bits & bit) != 0)
          throw core::InputError(
              at + "recompute_modules holds " + m.dump() +
                  (bit != 0 ? " twice"
                   : m == "core_attn"
                       ? ", which tprimat does not run: its fused attention keeps no score matrix"
                       : ", not a module tprimat recomputes"),
              "list \"layernorm\", \"mlp\" or both, once each");
        bits |= bit;
      }
    }
    return train::selective_recompute(bits);
  }
  if (modules != nullptr)
    throw core::InputError(at + "recompute_modules applies to recompute_granularity \"selective\"",
                           "drop it, or use \"selective\"");
  r.granularity = train::RecomputeGranularity::full;
  if (method != nullptr) {
    if (*method != "uniform" && *method != "block")
      throw core::InputError(at + "recompute_method must be \"uniform\" or \"block\", got " +
                                 method->dump(),
                             "write \"recompute_method\": \"uniform\" (or \"block\")");
    if (*method == "block") r.method = train::RecomputeMethod::block;
  }
  if (layers) r.num_layers = read_size(block, "recompute_num_layers", file, where, false, 1);
  return r;
}

inline ConfigStrategy read_block(const nlohmann::json& block, std::string name,
                                 const std::string& file, const std::string& where) {
  if (!block.is_object())
    throw core::InputError("config " + file + ": " + where + " must be an object, got " +
                               block.dump(),
                           "write it as {\"tensor_model_parallel_size\": 1, ...}");
  ConfigStrategy s;
  s.name = std::move(name);
  s.tp = read_size(block, tp_key, file, where, true, 1);
  s.pp = read_size(block, pp_key, file, where, false, 1);
  s.cp = read_size(block, cp_key, file, where, false, 1);
  s.dp = read_size(block, dp_key, file, where, false, 0);
  s.grad_accum = read_size(block, accum_key, file, where, false, 0);
  s.first_stage_layers = read_size(block, first_layers_key, file, where, false, 0);
  s.last_stage_layers = read_size(block, last_layers_key, file, where, false, 0);
  if (auto it = block.find(split_key); it != block.end()) {
    if (!it->is_string() || (*it != "even" && *it != "auto"))
      throw core::InputError("config " + file + ": " + (where.empty() ? "" : where + ".") +
                                 std::string(split_key) + " must be \"even\" or \"auto\", got " +
                                 it->dump(),
                             "write \"pipeline_split\": \"auto\" (balanced) or \"even\"");
    s.pipeline_split = it->get<std::string>();
  }
  if (auto it = block.find("sequence_parallel"); it != block.end() && !it->is_null()) {
    if (!it->is_boolean())
      throw core::InputError("config " + file + ": " + (where.empty() ? "" : where + ".") +
                                 "sequence_parallel must be true or false, got " + it->dump(),
                             "write \"sequence_parallel\": true (or false, without quotes)");
    s.sequence_parallel = it->get<bool>();
  }
  if (auto it = block.find(sharding_key); it != block.end() && !it->is_null()) {
    if (it->is_string()) s.sharding = train::sharding_strategy_named(it->get<std::string>());
    if (!s.sharding)
      throw core::InputError("config " + file + ": " + (where.empty() ? "" : where + ".") +
                                 std::string(sharding_key) +
                                 " must be \"no_shard\", \"optim\", \"optim_grads\" or "
                                 "\"optim_grads_params\", got " +
                                 it->dump(),
                             "write \"data_parallel_sharding_strategy\": \"optim\" (ZeRO-1) or "
                             "\"optim_grads\" (ZeRO-2)");
  }
  if (auto it = block.find(instances_key); it != block.end() && !it->is_null())
    s.optimizer_instances = read_size(block, instances_key, file, where, false, 1);
  s.recompute = read_recompute(block, file, where);
  return s;
}

// ---- the keys a config file may hold ---------------------------------------------------------
// Every key is one tprimat honours: an unknown or misspelled one (a `pipline_model_parallel_size`
// would run PP=1), or one put where tprimat does not read it (an `fp8` inside a strategy block
// would run bf16), is refused naming the key, its place and the key it was near. One walk over
// the whole document, before any block is read.

inline const std::vector<std::string>& layout_keys() {
  static const std::vector<std::string> keys = {std::string(tp_key),
                                                std::string(pp_key),
                                                std::string(dp_key),
                                                std::string(accum_key),
                                                std::string(first_layers_key),
                                                std::string(last_layers_key),
                                                std::string(split_key),
                                                "sequence_parallel",
                                                std::string(cp_key),
                                                std::string(sharding_key),
                                                std::string(instances_key),
                                                std::string(recompute_keys[0]),
                                                std::string(recompute_keys[1]),
                                                std::string(recompute_keys[2]),
                                                std::string(recompute_keys[3])};
  return keys;
}
inline const std::vector<std::string>& platform_key_names() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const auto& p : platform_keys) out.emplace_back(p.key);
    return out;
  }();
  return keys;
}
inline const std::vector<std::string>& model_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const auto& d : model::Models::all) out.emplace_back(d.cli_name);
    return out;
  }();
  return keys;
}
/// NeMo's precision keys: read at the top level or under (recipe.)model.config only.
inline const std::vector<std::string>& precision_keys() {
  static const std::vector<std::string> keys = {"fp8", "fp8_recipe", "first_last_layers_bf16",
                                                "num_layers_at_start_in_bf16",
                                                "num_layers_at_end_in_bf16"};
  return keys;
}
/// The top level's own keys, beside those of a strategy body: the seeds' run sections too.
inline const std::vector<std::string>& top_level_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out = {"parallelism", "profiling", "recipe", "model"};
    for (const auto& k : precision_keys()) out.push_back(k);
    for (auto& k : run_section_names()) out.push_back(std::move(k));
    return out;
  }();
  return keys;
}

inline bool holds_any(const nlohmann::json& j, const std::vector<std::string>& keys) {
  for (const auto& k : keys)
    if (j.contains(k)) return true;
  return false;
}

inline bool is_one_of(std::string_view key, const std::vector<std::string>& keys) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

/// Refuses `key` at `where` in `file`: misplaced (a precision key in a strategy block) or
/// unknown, naming the nearest of every key tprimat knows.
[[noreturn]] inline void refuse_key(const std::string& file, const std::string& where,
                                    const std::string& key, const std::vector<std::string>& here) {
  const std::string at = "config " + file + ": " + (where.empty() ? "" : where + ".") + key;
  if (is_one_of(key, precision_keys()))
    throw core::InputError(at + " is a precision key inside a strategy block, where tprimat "
                                "does not read it (the run would not be FP8)",
                           "move \"" + key + "\" to the top level of the file (or under "
                           "model.config), where it sets the whole run's precision");
  std::vector<std::string> known = layout_keys();
  for (const auto* list : {&platform_key_names(), &model_keys(), &top_level_keys()})
    known.insert(known.end(), list->begin(), list->end());
  std::string allowed;
  for (const auto& k : here) allowed += (allowed.empty() ? "" : ", ") + k;
  const auto near = core::nearest(key, known);
  throw core::InputError(
      at + " is not a key tprimat reads" +
          (near ? " (did you mean " + *near + "?)" : std::string()),
      near ? "write \"" + *near + "\"" : "use one of: " + allowed);
}

/// A strategy body: layout keys (flat), or blocks per model, each flat or per platform.
inline void check_body_keys(const nlohmann::json& body, const std::string& file,
                            const std::string& where, int depth,
                            const std::vector<std::string>& also_allowed) {
  if (!body.is_object()) return;  // read_block names a non-object with its place
  // What this level holds, by the keys it has: model blocks, platform blocks, or layout keys.
  const std::vector<std::string>* level = &layout_keys();
  if (depth == 0 && holds_any(body, model_keys())) level = &model_keys();
  else if (depth <= 1 && holds_any(body, platform_key_names())) level = &platform_key_names();
  std::vector<std::string> here = *level;
  here.insert(here.end(), also_allowed.begin(), also_allowed.end());
  for (const auto& [key, value] : body.items()) {
    if (is_one_of(key, also_allowed)) continue;
    if (!is_one_of(key, *level)) refuse_key(file, where, key, here);
    if (level == &model_keys())
      check_body_keys(value, file, (where.empty() ? "" : where + ".") + key, 1, {});
    else if (level == &platform_key_names())
      check_body_keys(value, file, (where.empty() ? "" : where + ".") + key, 2, {});
  }
}

/// `model.config` (NeMo's), alone or under `recipe`: the precision keys only.
inline void check_nemo_keys(const nlohmann::json& j, const std::string& file,
                            const std::string& where) {
  if (!j.is_object()) return;
  static const std::vector<std::string> model_level = {"config"};
  for (const auto& [key, value] : j.items()) {
    if (where.ends_with("model")) {
      if (key != "config") refuse_key(file, where, key, model_level);
      if (value.is_object())
        for (const auto& [k, v] : value.items())
          if (!is_one_of(k, precision_keys()))
            refuse_key(file, where + ".config", k, precision_keys());
    } else if (key != "model") {
      refuse_key(file, where, key, {"model"});
    } else {
      check_nemo_keys(value, file, where + ".model");
    }
  }
}

/// Checks every key of a config file's document (see above); the `profiling` block checks its
/// own (the program's cli/profile_flags.hpp).
inline void check_config_keys(const nlohmann::json& root, const std::string& file) {
  if (!root.is_object()) return;
  check_run_sections(root, file);
  if (auto it = root.find("recipe"); it != root.end()) check_nemo_keys(*it, file, "recipe");
  if (auto it = root.find("model"); it != root.end() && it->is_object())
    check_nemo_keys(*it, file, "model");
  if (auto it = root.find("parallelism"); it != root.end()) {
    std::vector<std::string> top = top_level_keys();
    for (const auto& [key, value] : root.items())
      if (!is_one_of(key, top)) refuse_key(file, "", key, top);
    if (it->is_object())
      for (const auto& [name, body] : it->items())
        check_body_keys(body, file, "parallelism." + name, 0, {});
    return;
  }
  std::vector<std::string> top = top_level_keys();
  top.erase(std::remove(top.begin(), top.end(), "parallelism"), top.end());
  check_body_keys(root, file, "", 0, top);
}

}  // namespace detail

/// Reads the strategy for `model` (cli name) on `platform` ("nvd", "amd", "cpu") from parsed
/// JSON. Accepted shapes, as the seeds' config.yaml `parallelism` block allows:
///   {"tensor_model_parallel_size": 2, ...}                      flat: every model and platform
///   {"llama": {"nvidia": {...}, "amd": {...}}, "qwen": {...}}   per model, then per platform
///   {"parallelism": {"my_cfg": <either of the above>}}          named strategies
/// `file` names the source in messages; `name` selects one of several named strategies.
inline ConfigStrategy parse_config_strategy(const nlohmann::json& root, const std::string& file,
                                            std::string_view name, std::string_view model,
                                            std::string_view platform) {
  if (!root.is_object())
    throw core::InputError("config " + file + " must hold an object (a JSON object or YAML "
                               "mapping of keys), got " + std::string(root.type_name()),
                           "write {\"tensor_model_parallel_size\": 1, ...}");
  std::string strategy = std::filesystem::path(file).stem().string();
  std::string where;
  const nlohmann::json* body = &root;
  if (auto it = root.find("parallelism"); it != root.end()) {
    if (!it->is_object() || it->empty())
      throw core::InputError("config " + file + ": parallelism must be a non-empty object",
                             "write {\"parallelism\": {\"my_cfg\": {...}}}");
    if (!name.empty()) {
      auto n = it->find(name);
      if (n == it->end())
        throw core::InputError("config " + file + " has no strategy " + std::string(name) +
                                   " under parallelism (has: " + detail::join_keys(*it) + ")",
                               "pass --parallel " + file + ":<one of those>");
      strategy = std::string(name);
      body = &*n;
    } else if (it->size() == 1) {
      strategy = it->begin().key();
      body = &it->begin().value();
    } else {
      throw core::InputError("config " + file + " holds several strategies (" +
                                 detail::join_keys(*it) + ")",
                             "pick one with --parallel " + file + ":" + it->begin().key());
    }
    where = "parallelism." + strategy;
  } else if (!name.empty()) {
    throw core::InputError("config " + file + " has no parallelism block to pick strategy " +
                               std::string(name) + " from",
                           "pass --parallel " + file + " without :" + std::string(name));
  }
  if (!body->is_object())
    throw core::InputError("config " + file + ": " + where + " must be an object, got " +
                               body->dump(),
                           "write it as {\"tensor_model_parallel_size\": 1, ...}");
  if (detail::is_flat(*body)) return detail::read_block(*body, strategy, file, where);
  std::string path;
  const auto& m = detail::model_block(*body, model, file, where, &path);
  const auto& p = detail::platform_block(m, platform, file, &path);
  return detail::read_block(p, strategy, file, path);
}

namespace detail {

/// The object holding NeMo's precision keys: the top level, or NeMo's `model.config` (the
/// seeds' `recipe.model.config.fp8 = "hybrid"`, under `recipe` or not).
inline const nlohmann::json* precision_block(const nlohmann::json& root, std::string* where) {
  const auto has_keys = [](const nlohmann::json& j) {
    if (!j.is_object()) return false;
    for (const auto& k : precision_keys())
      if (j.contains(k)) return true;
    return false;
  };
  if (has_keys(root)) return &root;
  for (const char* outer : {"recipe", ""}) {
    const nlohmann::json* j = &root;
    if (*outer != '\0') {
      if (!root.contains(outer)) continue;
      j = &root[outer];
    }
    if (j->is_object() && j->contains("model") && (*j)["model"].is_object() &&
        (*j)["model"].contains("config") && has_keys((*j)["model"]["config"])) {
      *where = std::string(*outer != '\0' ? std::string(outer) + "." : "") + "model.config.";
      return &(*j)["model"]["config"];
    }
  }
  return nullptr;
}

/// Megatron's keys for the layers an FP8 run keeps in bf16, into `p` (see config_precision).
inline void read_bf16_layers(const nlohmann::json& block, const std::string& file,
                             const std::string& where, train::PrecisionConfig& p) {
  const auto given = [&](const char* key) {
    const auto it = block.find(key);
    return it != block.end() && !it->is_null() ? &*it : nullptr;
  };
  const nlohmann::json* ends = given("first_last_layers_bf16");
  const char* count_keys[] = {"num_layers_at_start_in_bf16", "num_layers_at_end_in_bf16"};
  if (ends == nullptr) {
    for (const char* key : count_keys)
      if (given(key))
        throw core::InputError("config " + file + ": " + where + key + " is given without " +
                                   where +
                                   "first_last_layers_bf16, which Megatron needs to "
                                   "apply it",
                               "add \"first_last_layers_bf16\": true, or drop " + std::string(key));
    return;
  }
  if (!ends->is_boolean())
    throw core::InputError("config " + file + ": " + where + "first_last_layers_bf16 is " +
                               core::shown(ends->dump()) + ", not true or false",
                           "write \"first_last_layers_bf16\": true or false");
  if (!p.is_fp8())
    throw core::InputError("config " + file + ": " + where +
                               "first_last_layers_bf16 is given but " + where +
                               "fp8 is not \"hybrid\"",
                           "add \"fp8\": \"hybrid\", or drop first_last_layers_bf16");
  std::optional<int>* fields[] = {&p.fp8.bf16_layers_at_start, &p.fp8.bf16_layers_at_end};
  for (int i = 0; i < 2; ++i) {
    const nlohmann::json* count = given(count_keys[i]);
    if (!ends->get<bool>()) {
      if (count != nullptr)
        throw core::InputError("config " + file + ": " + where + count_keys[i] + " is given and " +
                                   where + "first_last_layers_bf16 is false",
                               "drop one of the two");
      *fields[i] = 0;
      continue;
    }
    // Megatron's default for each end is 1; a count given may be 0.
    const std::string block_path = where.empty() ? where : where.substr(0, where.size() - 1);
    *fields[i] = count == nullptr ? 1
                                  : read_size(block, count_keys[i], file, block_path,
                                              /*required=*/false, 1, /*least=*/0);
  }
}

}  // namespace detail

/// NeMo's precision keys in a config file: `"fp8": "hybrid"` (E4M3 forward, E5M2 backward: the
/// one format tprimat runs) or null/false (bf16), and `"fp8_recipe"`: "delayed", "current" or
/// Megatron's name for current, "tensorwise". Other formats ("e4m3") and recipes ("mxfp8",
/// "blockwise") are refused naming what is supported. Megatron's `first_last_layers_bf16` (true:
/// keep `num_layers_at_start_in_bf16` and `num_layers_at_end_in_bf16` layers in bf16, 1 each
/// unless given; false: none, whatever the recipe) sets the layers kept in bf16; absent, the
/// recipe's. nullopt: the file states none of these keys.
inline std::optional<train::PrecisionConfig> config_precision(const nlohmann::json& root,
                                                              const std::string& file) {
  std::string where;
  const nlohmann::json* block = root.is_object() ? detail::precision_block(root, &where) : nullptr;
  if (block == nullptr) return std::nullopt;
  train::PrecisionConfig p;
  const auto text = [](const nlohmann::json& v) {
    return v.is_string() ? v.get<std::string>() : v.dump();
  };
  if (auto it = block->find("fp8"); it != block->end()) {
    const nlohmann::json& v = *it;
    if (v.is_string() && v.get<std::string>() == "hybrid") {
      p.precision = train::Precision::fp8;
    } else if (!(v.is_null() || (v.is_boolean() && !v.get<bool>()))) {
      throw core::InputError("config " + file + ": " + where + "fp8 is " + core::shown(v.dump()) +
                                 "; tprimat runs FP8 as NeMo's \"hybrid\" format only (E4M3 "
                                 "forward, E5M2 backward)",
                             "write \"fp8\": \"hybrid\", or null for bf16");
    }
  }
  if (auto it = block->find("fp8_recipe"); it != block->end() && !it->is_null()) {
    const std::string r = text(*it);
    if (r == "delayed") {
      p.fp8.recipe = train::Fp8Recipe::delayed;
    } else if (r == "current" || r == "tensorwise") {
      p.fp8.recipe = train::Fp8Recipe::current;
    } else {
      throw core::InputError("config " + file + ": " + where + "fp8_recipe is " +
                                 core::shown(it->dump()) +
                                 "; tprimat runs the delayed and current (tensorwise) scaling "
                                 "recipes, not MXFP8 or blockwise",
                             "write \"fp8_recipe\": \"delayed\" or \"current\"");
    }
    if (!p.is_fp8())
      throw core::InputError("config " + file + ": " + where + "fp8_recipe " + r +
                                 " is given but " + where + "fp8 is not \"hybrid\"",
                             "add \"fp8\": \"hybrid\", or drop fp8_recipe");
  }
  detail::read_bf16_layers(*block, file, where, p);
  return p;
}

/// Parses the text of config file `file` (named in messages) as JSON: malformed or too deeply
/// nested JSON, or a key given twice in one object, is an InputError.
inline nlohmann::json parse_config_json(std::string_view text, const std::string& file) {
  return core::parse_json(text, "config file " + file, "fix the JSON syntax at that position");
}

/// Parses the text of config file `file` as its extension says (config_format): YAML with the
/// JSON reader's guarantees (core/yaml_input.hpp), JSON otherwise.
inline nlohmann::json parse_config_text(std::string_view text, const std::string& file) {
  if (config_format(file) == ConfigFormat::yaml)
    return core::parse_yaml(text, "config file " + file, "fix the YAML syntax at that position");
  return parse_config_json(text, file);
}

/// A config file as read and checked: the file, the strategy named after its ':' ("" for none)
/// and the document, every key of it checked (check_config_keys).
struct ConfigDocument {
  std::string file;
  std::string name;
  nlohmann::json root;
};

/// The file and the strategy name of `spec` ("path.json", "path.yaml" or "path.yml", each
/// optionally ":name"), nothing read yet.
inline ConfigDocument config_spec(std::string_view spec) {
  ConfigDocument doc{std::string(spec), "", {}};
  for (const auto& [ext, format] : config_extensions)
    if (auto colon = spec.rfind(std::string(ext) + ":"); colon != std::string_view::npos) {
      doc.file = std::string(spec.substr(0, colon + ext.size()));
      doc.name = std::string(spec.substr(colon + ext.size() + 1));
      break;
    }
  return doc;
}

/// The text of `doc`'s file. A missing file, one that is not a regular file or is over
/// core::max_config_bytes are InputErrors naming the file.
inline std::string read_config_text(const ConfigDocument& doc) {
  const std::string fix = "pass an existing JSON or YAML file, or a strategy name (" +
                          parallel::strategy_names() + ")";
  std::error_code ec;  // a path that cannot be examined: read_input_file names why
  if (!std::filesystem::exists(doc.file, ec) && !ec)
    throw core::InputError("config file " + doc.file + " not found", fix);
  return core::read_input_file(doc.file,
                               core::InputKind{"config file", core::max_config_bytes, fix});
}

/// `doc` (config_spec's) with `text`, its file's, parsed and every key checked: a malformed text
/// and a key tprimat does not read are InputErrors naming the file.
inline ConfigDocument parse_config_document(ConfigDocument doc, std::string_view text) {
  doc.root = parse_config_text(text, doc.file);
  detail::check_config_keys(doc.root, doc.file);
  return doc;
}

/// Reads `spec` (config_spec, read_config_text, parse_config_document).
inline ConfigDocument read_config_document(std::string_view spec) {
  ConfigDocument doc = config_spec(spec);
  const std::string text = read_config_text(doc);
  return parse_config_document(std::move(doc), text);
}

/// Loads a config file (read_config_document) for `model` on `platform`: its strategy, profiling
/// block, precision (NeMo's keys, or the seeds' training.precision and platform_optimizations,
/// which must agree) and recomputation (the strategy's recompute_* keys, or the platform's
/// activation_checkpointing: every layer recomputed whole).
inline ConfigStrategy load_config_strategy(const ConfigDocument& doc, std::string_view model,
                                           std::string_view platform) {
  const std::string& file = doc.file;
  ConfigStrategy s = parse_config_strategy(doc.root, file, doc.name, model, platform);
  s.file = file;
  if (auto it = doc.root.find("profiling"); it != doc.root.end()) s.profiling = *it;
  s.precision = config_precision(doc.root, file);
  if (const auto seeds = run_precision(doc.root, file, platform)) {
    if (s.precision && s.precision->is_fp8() != seeds->is_fp8())
      throw core::InputError("config " + file + " states two precisions: " +
                                 s.precision->name() + " in its fp8 keys and " +
                                 (seeds->is_fp8() ? "fp8" : "bf16") +
                                 " in training.precision / platform_optimizations",
                             "state the precision in one place");
    if (!s.precision) s.precision = seeds;
  }
  std::string checkpointing;
  if (const auto on = platform_checkpointing(doc.root, file, platform, &checkpointing)) {
    if (!s.recompute && *on) s.recompute = train::full_recompute_every_layer;
    if (s.recompute && s.recompute->on() && !*on)
      throw core::InputError("config " + file + ": " + checkpointing + " is false, but the "
                                 "strategy's recompute_granularity turns recomputation on",
                             "write " + checkpointing.substr(checkpointing.rfind('.') + 1) +
                                 ": true, or drop recompute_granularity");
  }
  return s;
}

/// load_config_strategy of the file `spec` names, read now.
inline ConfigStrategy load_config_strategy(std::string_view spec, std::string_view model,
                                           std::string_view platform) {
  return load_config_strategy(read_config_document(spec), model, platform);
}

/// The run settings of a config file (read_config_run).
inline ConfigRun load_config_run(const ConfigDocument& doc) {
  return read_config_run(doc.root, doc.file);
}

}  // namespace tprimat::bench
