// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The seeds' config.yaml beyond its layouts: the batch, steps, optimizer and precision of
// `training`, the running platform's `platform_optimizations`, the checks of `models`, and the
// sections that configured the seeds' own Python reports. Each key is applied, checked against
// what tprimat runs, or named as not applied; an unknown key is refused.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tprimat/core/ascii_case.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/near_name.hpp"
#include "tprimat/model/all.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/precision.hpp"

namespace tprimat::bench {

/// A run setting a config file states: `name` is the flag's, with underscores (Megatron's where
/// tprimat takes Megatron's flag: "micro_batch_size" is --micro-batch-size), `key` where the
/// file states it, `value` as read. The program applies it where its flag is not given.
struct ConfigSetting {
  std::string name;
  std::string key;
  nlohmann::json value;
};

/// What a config file sets for the whole run, beside its layout (config_file.hpp).
struct ConfigRun {
  std::string file;  ///< the config file, for messages
  std::vector<ConfigSetting> settings;
  /// Keys that configured the seeds' Python program (its report names, metric lists, paths,
  /// logging) and have no counterpart in a tprimat run: named to the user, never silently.
  std::vector<std::string> not_applied;
};

namespace detail {

/// One key of the run sections: its children (none: a value), or `open` (any content: a
/// section tprimat names as not applied without reading). `*platform` and `*model` stand for
/// each platform's and each model's name.
struct RunKey {
  std::string_view name;
  std::vector<RunKey> children = {};
  bool open = false;
};

inline const std::vector<RunKey>& run_sections() {
  static const std::vector<RunKey> sections = {
      {"experiment", {{"name"}, {"description"}, {"version"}, {"methodology"}}},
      {"hardware",
       {{"platforms",
         {{"*platform",
           {{"gpu_model"}, {"memory_per_gpu_gb"}, {"num_gpus"}, {"software_stack"},
            {"framework"}}}}}}},
      {"models",
       {{"*model",
         {{"name"}, {"full_name"}, {"num_parameters"}, {"num_layers"}, {"hidden_size"},
          {"num_attention_heads"}, {"num_query_groups"}, {"num_key_value_heads"},
          {"ffn_hidden_size"}, {"primus_config"}, {"nemo_recipe"}}}}},
      {"training",
       {{"general", {{"seed"}}},
        {"data", {{"micro_batch_size"}, {"global_batch_size"}, {"seq_length"}}},
        {"duration", {{"max_steps"}, {"train_iters"}}},
        {"optimizer",
         {{"type"}, {"learning_rate"}, {"warmup_steps"}, {"weight_decay"}, {"beta1"}, {"beta2"}}},
        {"precision", {{"default"}, {"fp8_hybrid"}, {"fp8_param"}}},
        {"checkpointing", {{"enabled"}, {"save_interval"}, {"keep_last_n"}}}}},
      {"platform_optimizations",
       {{"*platform",
         {{"precision"}, {"fp8_hybrid"}, {"fp8_param"}, {"cuda_alloc_conf"},
          {"activation_checkpointing"}, {"gradient_checkpointing"}}}}},
      {"benchmarking",
       {{"output", {{"directory"}, {"filename_format"}, {"log_format"}}},
        {"metrics", {}, true},
        {"enhanced_metrics", {}, true},
        {"warmup", {{"skip_first_n_steps"}}},
        {"runs", {{"default_num_runs"}, {"recommended_num_runs"}, {"cooldown_seconds"}}}}},
      {"comparison", {}, true},
      {"paths", {}, true},
      {"logging", {}, true},
  };
  return sections;
}

/// A key a config file names a platform's block by, and the platform it means: "nvd", "amd"
/// or "cpu", the program's names of the CUDA, HIP and CPU backends.
struct PlatformKey {
  std::string_view key;
  std::string_view platform;
};

/// Every platform key, in the order a platform's block is looked for. The one list: the layout
/// blocks (config_file.hpp) and the run sections (platform_optimizations) both read it.
inline constexpr PlatformKey platform_keys[] = {{"nvidia", "nvd"}, {"nvd", "nvd"},
                                                {"cuda", "nvd"},   {"amd", "amd"},
                                                {"rocm", "amd"},   {"cpu", "cpu"}};

/// The platform a config key names, or "" for another key.
inline std::string_view platform_named(std::string_view key) {
  for (const auto& p : platform_keys)
    if (p.key == key) return p.platform;
  return "";
}

inline std::vector<std::string> run_key_names(const std::vector<RunKey>& keys) {
  std::vector<std::string> out;
  for (const auto& k : keys) {
    if (k.name == "*platform") {
      for (const auto& p : platform_keys) out.emplace_back(p.key);
    } else if (k.name == "*model") {
      for (const auto& d : model::Models::all) out.emplace_back(d.cli_name);
    } else {
      out.emplace_back(k.name);
    }
  }
  return out;
}

/// Checks `j` (at `where`) against `keys`: every key known, each section a mapping.
inline void check_run_keys(const nlohmann::json& j, const std::vector<RunKey>& keys,
                           const std::string& file, const std::string& where) {
  if (!j.is_object())
    throw core::InputError("config " + file + ": " + where + " must be a mapping of keys, got " +
                               j.dump(),
                           "write it as the seeds' config.yaml does (docs/layouts.md)");
  std::vector<std::string> seen_platforms;
  for (const auto& item : j.items()) {
    const std::string& key = item.key();
    const nlohmann::json& value = item.value();
    const auto platform = platform_named(key);
    const bool is_model = model::find(key).has_value();
    const auto it = std::find_if(keys.begin(), keys.end(), [&](const RunKey& k) {
      return k.name == key || (k.name == "*platform" && !platform.empty()) ||
             (k.name == "*model" && is_model);
    });
    const std::string at = where + "." + key;
    if (it == keys.end()) {
      const auto names = run_key_names(keys);
      std::string allowed;
      for (const auto& n : names) allowed += (allowed.empty() ? "" : ", ") + n;
      const auto near = core::nearest(key, names);
      throw core::InputError("config " + file + ": " + at + " is not a key tprimat reads" +
                                 (near ? " (did you mean " + *near + "?)" : std::string()),
                             near ? "write \"" + *near + "\"" : "use one of: " + allowed);
    }
    if (it->name == "*platform") {
      if (std::find(seen_platforms.begin(), seen_platforms.end(), platform) !=
          seen_platforms.end())
        throw core::InputError("config " + file + ": " + where + " holds two blocks for one "
                                   "platform (" + std::string(platform) + ")",
                               "keep one of them");
      seen_platforms.emplace_back(platform);
    }
    if (!it->children.empty()) check_run_keys(value, it->children, file, at);
  }
}

/// `root`'s value at the dotted `path`, or nullptr (absent or null).
inline const nlohmann::json* run_value(const nlohmann::json& root, std::string_view path) {
  const nlohmann::json* j = &root;
  while (!path.empty()) {
    const auto dot = path.find('.');
    const std::string part(path.substr(0, dot));
    if (!j->is_object() || !j->contains(part)) return nullptr;
    j = &(*j)[part];
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
  }
  return j->is_null() ? nullptr : j;
}

/// The running platform's block under `section` (platform_optimizations), and its key.
inline const nlohmann::json* platform_section(const nlohmann::json& root, std::string_view section,
                                              std::string_view platform, std::string* key) {
  const nlohmann::json* s = run_value(root, section);
  if (s == nullptr || !s->is_object()) return nullptr;
  for (const auto& [k, v] : s->items())
    if (platform_named(k) == platform && !v.is_null()) {
      *key = std::string(section) + "." + k;
      return &v;
    }
  return nullptr;
}

[[noreturn]] inline void refuse_value(const std::string& file, const std::string& key,
                                      const nlohmann::json& value, const std::string& why,
                                      const std::string& fix) {
  throw core::InputError("config " + file + ": " + key + " is " + value.dump() + "; " + why, fix);
}

inline bool run_bool(const nlohmann::json& v, const std::string& file, const std::string& key) {
  if (!v.is_boolean()) refuse_value(file, key, v, "it must be true or false", "write true or false");
  return v.get<bool>();
}

/// `models.<model>`'s sizes against tprimat's own table: tprimat runs the published shapes
/// only, so a file describing another is refused rather than run as something it is not.
inline void check_model_facts(const nlohmann::json& root, const std::string& file) {
  const nlohmann::json* models = run_value(root, "models");
  if (models == nullptr) return;
  for (const auto& [name, facts] : models->items()) {
    const model::Dims d = *model::find(name);
    const std::pair<std::string_view, int> sizes[] = {
        {"num_layers", d.layers},          {"hidden_size", d.hidden},
        {"num_attention_heads", d.heads},  {"num_query_groups", d.kv_heads},
        {"num_key_value_heads", d.kv_heads}, {"ffn_hidden_size", d.ffn}};
    for (const auto& [key, size] : sizes) {
      auto it = facts.find(key);
      if (it == facts.end() || it->is_null()) continue;
      if (!it->is_number_integer() || it->get<long long>() != size)
        refuse_value(file, "models." + name + "." + std::string(key), *it,
                     "tprimat's " + name + " (" + std::string(d.name) + ") has " +
                         std::to_string(size) + ", and tprimat runs the published shape only",
                     "write " + std::to_string(size) + " or drop the key (--layers N runs fewer "
                     "layers of it)");
    }
  }
}

/// `training.optimizer`: tprimat runs AdamW (Megatron's "adam", with decoupled weight decay) at
/// fixed betas and weight decay; a file asking for others is refused, not run with tprimat's.
inline void check_optimizer(const nlohmann::json& root, const std::string& file) {
  const std::string at = "training.optimizer.";
  if (const auto* t = run_value(root, "training.optimizer.type")) {
    const std::string name = core::ascii_lower(t->is_string() ? t->get<std::string>() : "");
    if (name != "adam" && name != "adamw")
      refuse_value(file, at + "type", *t, "tprimat runs AdamW (Megatron's \"adam\") only",
                   "write \"adam\" or \"adamw\"");
  }
  const train::OptimizerConfig fixed;
  const std::pair<std::string_view, double> values[] = {
      {"weight_decay", fixed.weight_decay}, {"beta1", fixed.beta1}, {"beta2", fixed.beta2}};
  for (const auto& [key, want] : values) {
    const auto* v = run_value(root, at + std::string(key));
    if (v == nullptr) continue;
    if (!v->is_number() || std::abs(v->get<double>() - want) > 1e-12 * std::abs(want))
      refuse_value(file, at + std::string(key), *v,
                   "tprimat's AdamW runs at " + nlohmann::json(want).dump() +
                       " (the seeds' fair-comparison setting) and cannot take another",
                   "write " + nlohmann::json(want).dump() + " or drop the key");
  }
}

}  // namespace detail

/// Checks the run sections of a config document (the seeds' config.yaml keys beside
/// `parallelism` and `profiling`): every key known, sizes and optimizer settings tprimat runs.
/// Throws core::InputError naming the key.
inline void check_run_sections(const nlohmann::json& root, const std::string& file) {
  if (!root.is_object()) return;
  for (const auto& section : detail::run_sections()) {
    const auto it = root.find(section.name);
    if (it == root.end() || it->is_null() || section.open) continue;
    detail::check_run_keys(*it, section.children, file, std::string(section.name));
  }
  detail::check_model_facts(root, file);
  detail::check_optimizer(root, file);
  if (const auto* on = detail::run_value(root, "training.checkpointing.enabled");
      on != nullptr && detail::run_bool(*on, file, "training.checkpointing.enabled"))
    throw core::InputError("config " + file + ": training.checkpointing.enabled is true, and "
                               "tprimat times training steps without writing checkpoints",
                           "write enabled: false");
}

/// The names of the run sections, for the key check of the whole document (config_file.hpp).
inline std::vector<std::string> run_section_names() {
  std::vector<std::string> out;
  for (const auto& s : detail::run_sections()) out.emplace_back(s.name);
  return out;
}

/// The run settings of a checked document (check_run_sections), and what it names but tprimat
/// does not apply.
inline ConfigRun read_config_run(const nlohmann::json& root, const std::string& file) {
  ConfigRun run;
  run.file = file;
  if (!root.is_object()) return run;
  const auto take = [&](std::string_view key, std::string_view name, bool integer) {
    const auto* v = detail::run_value(root, key);
    if (v == nullptr) return;
    if (integer ? !v->is_number_integer() : !(v->is_number() || v->is_string()))
      detail::refuse_value(file, std::string(key), *v,
                           integer ? "it must be a whole number" : "it must be a value",
                           integer ? "write it without quotes or a fraction, e.g. 1"
                                   : "write it as a number or text");
    for (const auto& s : run.settings)
      if (s.name == name && s.value != *v)
        throw core::InputError("config " + file + ": " + s.key + " is " + s.value.dump() +
                                   " and " + std::string(key) + " is " + v->dump() +
                                   ": both set " + std::string(name),
                               "give them one value, or drop one");
    run.settings.push_back({std::string(name), std::string(key), *v});
  };
  take("training.general.seed", "seed", true);
  take("training.data.micro_batch_size", "micro_batch_size", true);
  take("training.data.global_batch_size", "global_batch_size", true);
  take("training.data.seq_length", "seq_length", true);
  take("training.duration.max_steps", "train_iters", true);
  take("training.duration.train_iters", "train_iters", true);
  take("training.optimizer.learning_rate", "lr", false);
  take("training.optimizer.warmup_steps", "lr_warmup_iters", true);
  take("benchmarking.warmup.skip_first_n_steps", "warmup_steps", true);
  take("benchmarking.runs.default_num_runs", "runs", true);
  if (const auto* dir = detail::run_value(root, "benchmarking.output.directory")) {
    if (!dir->is_string() || dir->get<std::string>().empty())
      detail::refuse_value(file, "benchmarking.output.directory", *dir,
                           "it must name a directory", "write a path, e.g. ./output");
    run.settings.push_back({"output_dir", "benchmarking.output.directory", *dir});
  }
  for (std::string_view key :
       {"benchmarking.output.filename_format", "benchmarking.output.log_format",
        "benchmarking.metrics", "benchmarking.enhanced_metrics",
        "benchmarking.runs.cooldown_seconds", "comparison", "paths", "logging"})
    if (detail::run_value(root, key) != nullptr) run.not_applied.emplace_back(key);
  if (const auto* blocks = detail::run_value(root, "platform_optimizations"))
    for (const auto& [platform, block] : blocks->items())
      if (block.is_object() && block.contains("cuda_alloc_conf"))  // PyTorch's allocator's
        run.not_applied.push_back("platform_optimizations." + platform + ".cuda_alloc_conf");
  return run;
}

/// The precision `training.precision` and the running platform's `platform_optimizations`
/// (which overrides it key by key) state: `default`/`precision` "bf16" or "fp8", with
/// `fp8_hybrid` (tprimat's one FP8 format: E4M3 forward, E5M2 backward). Refused: fp32/fp16,
/// FP8 without the hybrid format, `fp8_hybrid` true beside bf16, and `fp8_param` true (tprimat
/// keeps bf16 weights and casts them for the GEMMs). nullopt where neither states a precision.
inline std::optional<train::PrecisionConfig> run_precision(const nlohmann::json& root,
                                                           const std::string& file,
                                                           std::string_view platform) {
  if (!root.is_object()) return std::nullopt;
  std::string block;
  const nlohmann::json* plat =
      detail::platform_section(root, "platform_optimizations", platform, &block);
  const nlohmann::json* train = detail::run_value(root, "training.precision");
  struct Stated {
    const nlohmann::json* value = nullptr;
    std::string key;
  };
  // The platform's key where it states one, else training.precision's.
  const auto stated = [&](std::string_view platform_key, std::string_view training_key) {
    if (plat != nullptr && plat->is_object())
      if (auto it = plat->find(platform_key); it != plat->end() && !it->is_null())
        return Stated{&*it, block + "." + std::string(platform_key)};
    if (train != nullptr && train->is_object())
      if (auto it = train->find(training_key); it != train->end() && !it->is_null())
        return Stated{&*it, "training.precision." + std::string(training_key)};
    return Stated{};
  };
  const Stated name = stated("precision", "default"), hybrid = stated("fp8_hybrid", "fp8_hybrid"),
               param = stated("fp8_param", "fp8_param");
  if (param.value != nullptr && detail::run_bool(*param.value, file, param.key))
    throw core::InputError("config " + file + ": " + param.key + " is true (weights kept in "
                               "FP8), and tprimat keeps bf16 weights and casts them to FP8 for "
                               "each GEMM",
                           "write " + param.key.substr(param.key.rfind('.') + 1) + ": false");
  const std::optional<bool> is_hybrid =
      hybrid.value ? std::optional<bool>(detail::run_bool(*hybrid.value, file, hybrid.key))
                   : std::nullopt;
  if (name.value == nullptr && !is_hybrid) return std::nullopt;
  std::string p = "bf16";
  if (name.value != nullptr) {
    if (!name.value->is_string())
      detail::refuse_value(file, name.key, *name.value, "it must be \"bf16\" or \"fp8\"",
                           "write \"bf16\" or \"fp8\"");
    p = core::ascii_lower(name.value->get<std::string>());
    if (p == "bf16-mixed" || p == "bfloat16") p = "bf16";
    if (p != "bf16" && p != "fp8")
      detail::refuse_value(file, name.key, *name.value,
                           "tprimat trains in bf16 (fp32 master weights) or FP8, not fp32 or "
                           "fp16 throughout",
                           "write \"bf16\" or \"fp8\"");
  } else if (*is_hybrid) {
    p = "fp8";
  }
  if (p == "fp8" && is_hybrid == false)
    throw core::InputError("config " + file + ": " + name.key + " is fp8 and " + hybrid.key +
                               " is false (E4M3 throughout); tprimat runs FP8 in the hybrid "
                               "format only (E4M3 forward, E5M2 backward)",
                           "write fp8_hybrid: true");
  if (p == "bf16" && is_hybrid == true)
    throw core::InputError("config " + file + ": " + hybrid.key + " is true but " +
                               (name.value ? name.key : std::string("no precision")) +
                               " says bf16",
                           "write precision \"fp8\" with fp8_hybrid: true, or fp8_hybrid: false");
  if (p == "bf16") return train::PrecisionConfig{};
  return train::PrecisionConfig::fp8_hybrid(train::Fp8Recipe::delayed);
}

/// The running platform's activation_checkpointing / gradient_checkpointing (NeMo's and Hugging
/// Face's names for recomputing whole layers): true or false where either is stated.
inline std::optional<bool> platform_checkpointing(const nlohmann::json& root,
                                                  const std::string& file,
                                                  std::string_view platform, std::string* key) {
  std::string block;
  const nlohmann::json* plat =
      detail::platform_section(root, "platform_optimizations", platform, &block);
  if (plat == nullptr || !plat->is_object()) return std::nullopt;
  std::optional<bool> on;
  for (std::string_view k : {"activation_checkpointing", "gradient_checkpointing"})
    if (auto it = plat->find(k); it != plat->end() && !it->is_null()) {
      const std::string at = block + "." + std::string(k);
      const bool v = detail::run_bool(*it, file, at);
      if (!on || v) *key = at;
      on = on.value_or(false) || v;
    }
  return on;
}

}  // namespace tprimat::bench
