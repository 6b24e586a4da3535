// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// `tprimat import` of one log per framework (Megatron-LM, NeMo 2, Primus, torchtitan) per
// precision (bf16, FP8), written from each framework's public log format: every field of the
// result held to its expected document, and the settings each log prints read as printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tprimat/bench/result_check.hpp"
#include "tprimat/report/import_log.hpp"

namespace tprimat::report {
namespace {

using nlohmann::json;

struct FrameworkLog {
  const char* file;  ///< in tests/report/fixtures/logs/frameworks
  const char* format;
  const char* device;
};

constexpr FrameworkLog framework_logs[] = {
    {"megatron_llama_bf16.log", "megatron", "NVIDIA H100 80GB HBM3"},
    {"megatron_llama_fp8.log", "megatron", "NVIDIA H100 80GB HBM3"},
    // Context parallelism 2 at seq 8192, full recomputation (Megatron), selective (NeMo 2).
    {"megatron_llama_cp2.log", "megatron", "NVIDIA H100 80GB HBM3"},
    {"nemo2_llama_cp2.log", "nemo", "NVIDIA H100 80GB HBM3"},
    {"nemo2_llama_bf16.log", "nemo", "NVIDIA H100 80GB HBM3"},
    {"nemo2_llama_fp8.log", "nemo", "NVIDIA H100 80GB HBM3"},
    {"primus_llama_bf16.log", "primus", "AMD Instinct MI300X"},
    {"primus_llama_fp8.log", "primus", "AMD Instinct MI300X"},
    {"torchtitan_llama_bf16.log", "torchtitan", "NVIDIA H100 80GB HBM3"},
    {"torchtitan_llama_fp8.log", "torchtitan", "NVIDIA H100 80GB HBM3"},
};

json import_framework_log(const FrameworkLog& f) {
  ImportOptions o;
  o.format = f.format;
  o.model = "llama";
  o.device_name = f.device;
  json doc = import_log(std::string(TPRIMAT_FRAMEWORK_LOGS) + "/" + f.file, o,
                        std::string("tprimat import --format ") + f.format);
  if (const auto why = bench::result_error(doc)) throw std::logic_error(*why);
  // What changes from machine to machine and day to day.
  for (const char* k : {"timestamp", "git_describe", "tprimat_version", "compiler"})
    doc["reproduce"].erase(k);
  doc["imported"]["log"] = f.file;
  return doc;
}

/// Every leaf of `doc` as "a.b.0.c" -> value.
void flatten(const json& doc, const std::string& at, std::map<std::string, json>& out) {
  if (doc.is_object() && !doc.empty()) {
    for (const auto& [k, v] : doc.items()) flatten(v, at.empty() ? k : at + "." + k, out);
  } else if (doc.is_array() && !doc.empty()) {
    for (std::size_t i = 0; i < doc.size(); ++i) flatten(doc[i], at + "." + std::to_string(i), out);
  } else {
    out[at] = doc;
  }
}

TEST(FrameworkLogs, EveryFieldIsTheExpectedOne) {
  for (const auto& f : framework_logs) {
    SCOPED_TRACE(f.file);
    const json doc = import_framework_log(f);  // valid against the schema, or it throws
    const std::string expected_path =
        std::string(TPRIMAT_FRAMEWORK_EXPECTED) + "/" + f.file + ".json";
    if (std::getenv("TPRIMAT_WRITE_EXPECTED") != nullptr) {  // after a deliberate change
      std::ofstream(expected_path) << doc.dump(2) << "\n";
      continue;
    }
    std::ifstream in(expected_path);
    ASSERT_TRUE(in) << expected_path << " (TPRIMAT_WRITE_EXPECTED=1 writes it)";
    std::map<std::string, json> got, want;
    flatten(doc, "", got);
    flatten(json::parse(in), "", want);
    for (const auto& [key, value] : want) {
      const auto it = got.find(key);
      if (it == got.end()) {
        ADD_FAILURE() << key << " is missing; expected " << value.dump();
      } else if (it->second.is_number() && value.is_number()) {
        EXPECT_NEAR(it->second.get<double>(), value.get<double>(),
                    1e-9 * std::max(1.0, std::abs(value.get<double>())))
            << key;
      } else {
        EXPECT_EQ(it->second, value) << key;
      }
    }
    for (const auto& [key, value] : got)
      EXPECT_TRUE(want.count(key)) << key << " = " << value.dump() << " is not expected";
  }
}

json import_named(const char* file) {
  for (const auto& f : framework_logs)
    if (std::string(f.file) == file) return import_framework_log(f);
  throw std::logic_error(file);
}

TEST(FrameworkLogs, SettingsAreReadAsPrinted) {
  const json m = import_named("megatron_llama_fp8.log");
  EXPECT_EQ(m["parallelism_config"]["distributed_optimizer"], true);
  EXPECT_EQ(m["parallelism_config"]["data_parallel_sharding_strategy"], "optim");
  EXPECT_EQ(m["parallelism_config"]["sequence_parallel"], true);
  EXPECT_EQ(m["training_config"]["seed"], 42);
  EXPECT_EQ(m["reproduce"]["seed"], 42);
  EXPECT_EQ(m["training_config"]["data"], "/lustre/datasets/c4/llama3_c4_en_text_document");
  // Megatron's own FP8 settings, never tprimat's recipe (history 1024, max).
  EXPECT_EQ(m["training_config"]["fp8"]["amax_history_len"], 1);
  EXPECT_EQ(m["training_config"]["fp8"]["amax_compute_algo"], "most_recent");
  EXPECT_EQ(m["training_config"]["fp8"]["bf16_layers"], json::array());
  EXPECT_EQ(m["training_config"]["fp8"]["fp8_layers"], 32);
  EXPECT_EQ(m["optimizer"]["lr_min"], 3e-05);
  EXPECT_EQ(m["optimizer"]["lr_warmup_steps"], 50);
  EXPECT_EQ(m["optimizer"]["clip_norm"], 1.0);
  // The starting weights (and its recomputation, not read yet) are all a Megatron log leaves
  // unsaid.
  EXPECT_EQ(m["imported"]["not_in_log"],
            json({"training_config.recompute", "training_config.init"}));
  // ZeRO-1 in the memory plan: the optimizer state split over the 2 DP ranks.
  const double zero1 = m["memory_metrics"]["predicted_gb"].get<double>();
  EXPECT_LT(zero1, 2 * m["memory_metrics"]["peak_allocated_gb"].get<double>());

  const json n = import_named("nemo2_llama_fp8.log");
  EXPECT_EQ(n["parallelism_config"]["distributed_optimizer"], true);
  EXPECT_EQ(n["training_config"]["fp8"]["amax_history_len"], 1024);  // as NeMo's recipe sets it
  EXPECT_EQ(n["training_config"]["data"], "/data/c4/llama3/c4_en_text_document");
  // What the NeMo 2 log does not print is null and named.
  EXPECT_TRUE(n["training_config"]["seed"].is_null());
  EXPECT_EQ(n["imported"]["not_in_log"],
            json({"optimizer.lr_warmup_steps", "optimizer.lr_decay_steps",
                  "training_config.recompute", "training_config.seed", "reproduce.seed",
                  "training_config.init"}));

  const json t = import_named("torchtitan_llama_fp8.log");
  EXPECT_EQ(t["training_config"]["precision"], "fp8-hybrid-current");
  EXPECT_EQ(t["training_config"]["global_batch_size"], 16);  // local 4 x DP 4
  EXPECT_EQ(t["parallelism_config"]["tensor_model_parallel_size"], 2);
  EXPECT_EQ(t["training_config"]["num_gpus"], 8);
  EXPECT_EQ(t["training_config"]["data"], "c4");
  EXPECT_EQ(t["imported"]["iterations_found"], 5);  // the validation line is no step
  // FSDP over its 4 DP ranks (data_parallel_shard_degree -1, one replica): the optimizer sharded.
  EXPECT_EQ(t["parallelism_config"]["data_parallel_sharding_strategy"], "optim_grads_params");
  EXPECT_EQ(t["parallelism_config"]["distributed_optimizer"], true);
}

TEST(FrameworkLogs, TorchtitanShardingIsItsFsdpDegree) {
  ImportOptions o;
  o.format = "torchtitan";
  o.model = "llama";
  o.device_name = "NVIDIA H100 80GB HBM3";
  // 8 GPUs at TP 2: DP 4, split between FSDP (dp_shard) and replicas (dp_replicate) as `degrees`
  // says ("" prints neither).
  const auto import_with = [&](const std::string& degrees) {
    std::ifstream in(std::string(TPRIMAT_FRAMEWORK_LOGS) + "/torchtitan_llama_bf16.log");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string printed =
        "'data_parallel_replicate_degree': 1, 'data_parallel_shard_degree': -1, ";
    const auto at = text.find(printed);
    if (at == std::string::npos) throw std::logic_error("the fixture's degrees moved");
    text.replace(at, printed.size(), degrees);
    std::istringstream log(text);
    return import_log(log, "torchtitan.log", o, "tprimat import");
  };
  const auto refusal = [&](const std::string& degrees) {
    try {
      import_with(degrees);
    } catch (const core::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const auto strategy = [](const json& doc) {
    return doc["parallelism_config"]["data_parallel_sharding_strategy"];
  };
  // DDP over 4 replicas: nothing sharded.
  const json ddp =
      import_with("'data_parallel_replicate_degree': 4, 'data_parallel_shard_degree': 1, ");
  EXPECT_EQ(strategy(ddp), "no_shard");
  EXPECT_EQ(ddp["parallelism_config"]["distributed_optimizer"], false);
  // HSDP: FSDP within pairs, replicated twice; -1 takes the 2 ranks the replicas leave.
  const json hsdp =
      import_with("'data_parallel_replicate_degree': 2, 'data_parallel_shard_degree': -1, ");
  EXPECT_EQ(strategy(hsdp), "optim_grads_params");
  EXPECT_EQ(hsdp["imported"]["configuration_sources"]["data_parallel_sharding_strategy"],
            "log data_parallel_shard_degree at line 2 (job config)");
  EXPECT_LT(hsdp["memory_metrics"]["predicted_gb"].get<double>(),
            ddp["memory_metrics"]["predicted_gb"].get<double>());
  EXPECT_EQ(strategy(import_with(
                "'data_parallel_replicate_degree': 2, 'data_parallel_shard_degree': 2, ")),
            "optim_grads_params");
  // Its replicas are hybrid sharding's instances, planned as such: more memory than FSDP over
  // all 4 ranks, which the fixture's one replica is. DDP's replicas split nothing: 1.
  EXPECT_EQ(hsdp["parallelism_config"]["num_distributed_optimizer_instances"], 2);
  EXPECT_EQ(hsdp["imported"]["configuration_sources"]["num_distributed_optimizer_instances"],
            "log data_parallel_replicate_degree at line 2 (job config)");
  const json fsdp =
      import_with("'data_parallel_replicate_degree': 1, 'data_parallel_shard_degree': -1, ");
  EXPECT_EQ(fsdp["parallelism_config"]["num_distributed_optimizer_instances"], 1);
  EXPECT_GT(hsdp["memory_metrics"]["predicted_gb"].get<double>(),
            fsdp["memory_metrics"]["predicted_gb"].get<double>());
  EXPECT_EQ(ddp["parallelism_config"]["num_distributed_optimizer_instances"], 1);
  // Not printed: null and named, never a guess; the plan (no sharding) an upper bound.
  const json silent = import_with("");
  EXPECT_TRUE(strategy(silent).is_null());
  EXPECT_FALSE(silent["parallelism_config"].contains("num_distributed_optimizer_instances"));
  EXPECT_TRUE(silent["parallelism_config"]["distributed_optimizer"].is_null());
  EXPECT_NE(silent["imported"]["not_in_log"].dump().find(
                "parallelism_config.data_parallel_sharding_strategy"),
            std::string::npos);
  EXPECT_NE(silent["imported"]["assumptions"].dump().find("unless its data_parallel_shard_degree"),
            std::string::npos);
  // Degrees that are not the DP ranks torchtitan would have refused: a damaged log.
  EXPECT_NE(refusal("'data_parallel_replicate_degree': 1, 'data_parallel_shard_degree': 2, ")
                .find("data_parallel_shard_degree 2 at line 2 (job config) x "
                      "data_parallel_replicate_degree 1 at line 2 (job config) is not the 4 "
                      "data-parallel ranks"),
            std::string::npos);
  EXPECT_NE(refusal("'data_parallel_replicate_degree': 3, 'data_parallel_shard_degree': -1, ")
                .find("data_parallel_replicate_degree 3 at line 2 (job config) does not divide "
                      "the 4 data-parallel ranks"),
            std::string::npos);
  EXPECT_NE(refusal("'data_parallel_replicate_degree': 1, 'data_parallel_shard_degree': 0, ")
                .find("data_parallel_shard_degree 0 at line 2 (job config) is not a whole "
                      "number from 1"),
            std::string::npos);
}

// Megatron's hybrid sharding: num_distributed_optimizer_instances splits the distributed
// optimizer's sharding into groups (DP 2 here: 2 groups of one shard nothing, planned so); more
// than one beside no sharding, or a count that does not divide DP x CP, is a damaged log.
TEST(FrameworkLogs, MegatronOptimizerInstancesAreRead) {
  ImportOptions o;
  o.format = "megatron";
  o.model = "llama";
  o.device_name = "NVIDIA H100 80GB HBM3";
  const auto import_with = [&](const std::string& zero1, const std::string& instances) {
    std::ifstream in(std::string(TPRIMAT_FRAMEWORK_LOGS) + "/megatron_llama_bf16.log");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string printed = "  use_distributed_optimizer ....................... True\n";
    const auto at = text.find(printed);
    if (at == std::string::npos) throw std::logic_error("the fixture's arguments moved");
    text.replace(at, printed.size(),
                 "  num_distributed_optimizer_instances ............. " + instances +
                     "\n  use_distributed_optimizer ....................... " + zero1 + "\n");
    std::istringstream log(text);
    return import_log(log, "megatron.log", o, "tprimat import");
  };
  const auto refusal = [&](const std::string& zero1, const std::string& instances) {
    try {
      import_with(zero1, instances);
    } catch (const core::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const json one = import_with("True", "1");
  EXPECT_EQ(one["parallelism_config"]["num_distributed_optimizer_instances"], 1);
  EXPECT_EQ(one["imported"]["configuration_sources"]["num_distributed_optimizer_instances"],
            "log num_distributed_optimizer_instances at line 40 (arguments block)");
  const json two = import_with("True", "2");
  EXPECT_EQ(two["parallelism_config"]["num_distributed_optimizer_instances"], 2);
  EXPECT_EQ(two["parallelism_config"]["data_parallel_sharding_strategy"], "optim");
  EXPECT_GT(two["memory_metrics"]["predicted_gb"].get<double>(),
            one["memory_metrics"]["predicted_gb"].get<double>());
  EXPECT_NE(refusal("False", "2")
                .find("num_distributed_optimizer_instances at line 40 (arguments block): 2 "
                      "distributed optimizer instances (hybrid sharding) split the sharding over "
                      "groups, and sharding strategy no_shard shards nothing "
                      "(use_distributed_optimizer at line 41 (arguments block))"),
            std::string::npos);
  EXPECT_NE(refusal("True", "3").find("3 distributed optimizer instances (hybrid sharding) do "
                                      "not divide DP x CP = 2, the ranks holding the same weights"),
            std::string::npos);
  EXPECT_NE(refusal("True", "0").find("num_distributed_optimizer_instances"), std::string::npos);
  // The fixture itself does not print it: absent, read as 1, and said so.
  const json silent = import_named("megatron_llama_bf16.log");
  EXPECT_FALSE(silent["parallelism_config"].contains("num_distributed_optimizer_instances"));
  EXPECT_EQ(silent["imported"]["configuration_sources"]["num_distributed_optimizer_instances"],
            "not in log (read as 1)");
}

TEST(FrameworkLogs, ContextParallelRunsAndRecomputationAreRead) {
  // 8 GPUs = TP 4 x PP 1 x CP 2 x DP 1; both logs print causal-count TFLOP/s (Megatron's and
  // NeMo's FLOPs since 2025), which is no disagreement with ours.
  for (const char* file : {"megatron_llama_cp2.log", "nemo2_llama_cp2.log"}) {
    SCOPED_TRACE(file);
    const json doc = import_named(file);
    EXPECT_EQ(doc["parallelism_config"]["context_parallel_size"], 2);
    EXPECT_EQ(doc["parallelism_config"]["data_parallel_size"], 1);
    EXPECT_EQ(doc["parallelism_config"]["gradient_accumulation_steps"], 128);
    EXPECT_EQ(doc["training_config"]["sequence_length"], 8192);
    EXPECT_EQ(doc["warnings"], json::array());
    EXPECT_NEAR(doc["performance_metrics"]["tflops_per_gpu_causal"].get<double>(),
                doc["imported"]["log_tflops_per_gpu_mean"].get<double>(), 0.5);
  }
  EXPECT_EQ(import_named("megatron_llama_cp2.log")["training_config"]["recompute"],
            json({{"granularity", "full"}, {"method", "uniform"}, {"num_layers", 1}}));
  EXPECT_EQ(import_named("nemo2_llama_cp2.log")["training_config"]["recompute"],
            json({{"granularity", "selective"},
                  {"method", nullptr},
                  {"num_layers", nullptr},
                  {"modules", {"core_attn"}}}));
  // torchtitan: context_parallel_degree, and activation_checkpoint's mode.
  std::ifstream in(std::string(TPRIMAT_FRAMEWORK_LOGS) + "/torchtitan_llama_bf16.log");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("'context_parallel_degree': 1", "'context_parallel_degree': 2");
  replace("'parallelism': {",
          "'activation_checkpoint': {'mode': 'selective', 'selective_ac_option': 'op'}, "
          "'parallelism': {");
  std::istringstream log(text);
  ImportOptions o;
  o.format = "torchtitan";
  o.model = "llama";
  o.device_name = "NVIDIA H100 80GB HBM3";
  const json t = import_log(log, "torchtitan_cp2.log", o, "tprimat import");
  EXPECT_EQ(t["parallelism_config"]["context_parallel_size"], 2);
  EXPECT_EQ(t["parallelism_config"]["data_parallel_size"], 2);  // 8 / (TP 2 x CP 2)
  EXPECT_EQ(t["training_config"]["global_batch_size"], 8);      // local 4 x DP 2
  EXPECT_EQ(t["training_config"]["recompute"]["granularity"], "selective");
  EXPECT_TRUE(t["training_config"]["recompute"]["modules"].is_null());  // torchtitan names none
}

TEST(FrameworkLogs, AnsiColoursAndThousandsSeparatorsAreRead) {
  std::istringstream in(
      "\x1b[31mstep:  2  \x1b[32mloss:  9.5000  \x1b[36mmemory: 40.00GiB(50.00%)  \x1b[34mtps: "
      "12,345  \x1b[36mtflops: 1,234.50  \x1b[35mmfu: 12.00%\x1b[39m\n");
  const ParsedLog p = parse_torchtitan_log(in);
  ASSERT_EQ(p.series.losses.size(), 1u);
  EXPECT_EQ(p.series.losses[0], 9.5);
  EXPECT_EQ(p.series.tokens_per_second_per_gpu[0], 12345);
  EXPECT_EQ(p.series.tflops_per_gpu[0], 1234.5);
  EXPECT_EQ(p.series.reserved_gb, std::vector<double>{40.0});
}

/// A framework log's text with `edit` applied, imported; the refusal's message, or "" when it
/// imports.
std::string refusal_after(const FrameworkLog& f, const std::function<void(std::string&)>& edit) {
  std::ifstream in(std::string(TPRIMAT_FRAMEWORK_LOGS) + "/" + f.file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  edit(text);
  std::istringstream log(text);
  ImportOptions o;
  o.format = f.format;
  o.model = "llama";
  o.device_name = f.device;
  try {
    (void)import_log(log, f.file, o, "tprimat import");
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

std::function<void(std::string&)> replacing(std::string from, std::string to) {
  return [from, to](std::string& text) {
    const auto at = text.find(from);
    if (at == std::string::npos) throw std::logic_error("the fixture moved: " + from);
    text.replace(at, from.size(), to);
  };
}

// A figure that runs on into other characters is a damaged log, never the digits before them
// ("3,948" s was read as 3 s, "1,974.3" ms as 1 ms, "64x10" tokens/s as 64).
TEST(FrameworkLogs, RunOnFiguresAreRefusedNamingTheLine) {
  const FrameworkLog megatron = framework_logs[0], nemo = framework_logs[4],
                     primus = framework_logs[6], titan = framework_logs[8];
  EXPECT_EQ(refusal_after(
                nemo, replacing("train_step_timing in s: 3.948", "train_step_timing in s: 3,948")),
            "tprimat: nemo2_llama_bf16.log line 17: train_step_timing in s 3,948 is not a "
            "number; the log is damaged: repair or remove that line");
  EXPECT_NE(refusal_after(megatron, replacing("elapsed time per iteration (ms): 3951.0",
                                              "elapsed time per iteration (ms): 3,951.0"))
                .find("megatron_llama_bf16.log line 50: elapsed time per iteration (ms) 3,951.0 "
                      "is not a number"),
            std::string::npos);
  EXPECT_NE(refusal_after(primus, replacing("(ms): 6733.0/6733.0", "(ms): 67x33.0/6733.0"))
                .find("line 35: elapsed time per iteration (ms) 67x33.0/6733.0 is not a number"),
            std::string::npos);
  for (const char* tps : {"6,39", "64x10", "6,", ",390", "6390,000"})
    EXPECT_NE(refusal_after(titan, replacing("tps: 6,390", std::string("tps: ") + tps))
                  .find(std::string("line 8: tps: ") + tps + " is not a number"),
              std::string::npos)
        << tps;
  EXPECT_EQ(refusal_after(titan, replacing("tps: 6,390", "tps: 6390")), "") << "no separator";
  EXPECT_EQ(refusal_after(titan, replacing("tps: 6,390", "tps: 1,006,390")), "");
}

// Iteration counters that repeat or go back are a restarted run appended (or a damaged log):
// refused, never pooled as more steps of one run.
TEST(FrameworkLogs, RestartedRunsAreRefused) {
  for (const auto& f : framework_logs) {
    SCOPED_TRACE(f.file);
    const std::string why = refusal_after(f, [](std::string& text) {
      // The log again after itself: its iteration lines restart from the first.
      text += text;
    });
    EXPECT_NE(why.find("contradicts itself"), std::string::npos) << why;
    EXPECT_NE(why.find("a log of one run is imported at a time"), std::string::npos) << why;
  }
  const FrameworkLog megatron = framework_logs[0];
  EXPECT_NE(refusal_after(megatron,
                          replacing("iteration        2/     500", "iteration        1/     500"))
                .find("contradicts itself: iteration 1 at line 50 follows iteration 1 at line 48 "
                      "(a restarted run, or a damaged log)"),
            std::string::npos);
}

// Memory figures are read with their unit: Primus's "MB" is a 1024th of a GiB (58,510 MB was
// recorded as 58,510 GiB), and torchtitan's figure is bounded as Megatron's is.
TEST(FrameworkLogs, MemoryUnitsAreRead) {
  const FrameworkLog primus = framework_logs[6], titan = framework_logs[8];
  std::ifstream in(std::string(TPRIMAT_FRAMEWORK_LOGS) + "/" + primus.file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (std::size_t at = text.find("usage_ratio: 58.43GB"); at != std::string::npos;
       at = text.find("usage_ratio: 58.43GB"))
    text.replace(at, 20, "usage_ratio: 59832.32MB");
  std::istringstream log(text);
  ImportOptions o;
  o.format = primus.format;
  o.model = "llama";
  o.device_name = primus.device;
  const json doc = import_log(log, primus.file, o, "tprimat import");
  EXPECT_NEAR(doc["raw_memory_values"][0].get<double>(), 58.43, 1e-9);
  EXPECT_NE(refusal_after(primus, replacing("usage_ratio: 58.43GB", "usage_ratio: 58.43XB"))
                .find("line 35: mem usage 58.43XB/133.55GB/191.98GB/30.4% is not a memory figure"),
            std::string::npos);
  EXPECT_NE(refusal_after(titan, replacing("memory: 48.32GiB", "memory: 2000000GiB"))
                .find("line 8: memory 2000000 is more memory than any GPU has"),
            std::string::npos);
  EXPECT_NE(refusal_after(titan, replacing("memory: 48.32GiB", "memory: 1e300GiB"))
                .find("line 8: memory 1e+300 is more memory than any GPU has"),
            std::string::npos);
}

}  // namespace
}  // namespace tprimat::report
