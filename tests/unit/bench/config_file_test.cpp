// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// bench/config_file.hpp: the seeds' parallelism block shapes, platform fallback, and errors.
#include "tprimat/bench/config_file.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "../../support/fifo.hpp"
#include "../../support/temp_dir.hpp"
#include "tprimat/core/input_file.hpp"
#include "tprimat/core/json_input.hpp"

namespace {

using namespace tprimat;
using nlohmann::json;
using bench::parse_config_strategy;

TEST(ConfigFile, FlatObjectAppliesToEveryModel) {
  const json j = {{"tensor_model_parallel_size", 2}, {"pipeline_model_parallel_size", 2},
                  {"data_parallel_size", 4}, {"gradient_accumulation_steps", 8}};
  const auto s = parse_config_strategy(j, "dir/my_cfg.json", "", "qwen", "amd");
  EXPECT_EQ(s.name, "my_cfg");
  EXPECT_EQ(s.tp, 2);
  EXPECT_EQ(s.pp, 2);
  EXPECT_EQ(s.dp, 4);
  EXPECT_EQ(s.grad_accum, 8);
}

TEST(ConfigFile, OptionalKeysDefault) {
  const auto s = parse_config_strategy(json{{"tensor_model_parallel_size", 4}}, "c.json", "",
                                       "llama", "nvd");
  EXPECT_EQ(s.tp, 4);
  EXPECT_EQ(s.pp, 1);
  EXPECT_EQ(s.dp, 0) << "0 = derive from the world size";
  EXPECT_EQ(s.grad_accum, 0);
}

TEST(ConfigFile, SeedsParallelismBlockPerModelAndPlatform) {
  const json j = json::parse(R"({"parallelism": {"my_custom_config": {
      "llama": {"nvidia": {"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": 1},
                "amd":    {"tensor_model_parallel_size": 1}},
      "qwen":  {"nvd":    {"tensor_model_parallel_size": 4, "pipeline_model_parallel_size": 2}}}}})");
  auto s = parse_config_strategy(j, "c.json", "", "llama", "nvd");
  EXPECT_EQ(s.name, "my_custom_config");
  EXPECT_EQ(s.tp, 2);
  EXPECT_EQ(parse_config_strategy(j, "c.json", "", "llama", "amd").tp, 1);
  // cpu falls back to the NVIDIA block, as the built-in strategies do.
  EXPECT_EQ(parse_config_strategy(j, "c.json", "", "llama", "cpu").tp, 2);
  s = parse_config_strategy(j, "c.json", "", "qwen", "cpu");
  EXPECT_EQ(s.tp, 4);
  EXPECT_EQ(s.pp, 2);
  // mistral and tiny share Llama's block shape and take its entry.
  EXPECT_EQ(parse_config_strategy(j, "c.json", "", "tiny", "nvd").tp, 2);
  EXPECT_THROW(parse_config_strategy(j, "c.json", "", "qwen", "amd"), core::InputError);
}

TEST(ConfigFile, PerModelWithoutParallelismKey) {
  const json j = json::parse(R"({"llama": {"nvidia": {"tensor_model_parallel_size": 8},
                                           "cpu": {"tensor_model_parallel_size": 1}}})");
  EXPECT_EQ(parse_config_strategy(j, "x.json", "", "llama", "nvd").tp, 8);
  EXPECT_EQ(parse_config_strategy(j, "x.json", "", "llama", "cpu").tp, 1) << "cpu key wins";
}

TEST(ConfigFile, SeveralNamedStrategiesNeedAName) {
  const json j = json::parse(R"({"parallelism": {
      "a": {"tensor_model_parallel_size": 1}, "b": {"tensor_model_parallel_size": 2}}})");
  try {
    parse_config_strategy(j, "c.json", "", "tiny", "cpu");
    FAIL() << "expected InputError";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("c.json:a"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse_config_strategy(j, "c.json", "b", "tiny", "cpu").tp, 2);
  EXPECT_THROW(parse_config_strategy(j, "c.json", "zzz", "tiny", "cpu"), core::InputError);
}

void expect_error(const json& j, const std::string& needle) {
  try {
    parse_config_strategy(j, "cfg.json", "", "llama", "nvd");
    FAIL() << "expected InputError containing " << needle;
  } catch (const core::InputError& e) {
    const std::string w = e.what();
    EXPECT_EQ(w.rfind("tprimat: ", 0), 0u) << w;
    EXPECT_NE(w.find("cfg.json"), std::string::npos) << w;
    EXPECT_NE(w.find(needle), std::string::npos) << w;
    EXPECT_EQ(w.find('\n'), std::string::npos) << "one line: " << w;
  }
}

TEST(ConfigFile, ErrorsNameFileKeyAndFix) {
  expect_error(json{{"pipeline_model_parallel_size", 2}}, "has no tensor_model_parallel_size");
  expect_error(json{{"tensor_model_parallel_size", "2"}}, "must be an integer");
  expect_error(json{{"tensor_model_parallel_size", 2.5}}, "must be an integer");
  expect_error(json{{"tensor_model_parallel_size", 0}},
               "must be an integer from 1 to 1048576, got 0");
  // Past the range, and past long long's as an unsigned: echoed as written, not wrapped.
  expect_error(json::parse(R"({"tensor_model_parallel_size": 4294967298})"),
               "must be an integer from 1 to 1048576, got 4294967298");
  expect_error(json::parse(R"({"tensor_model_parallel_size": 18446744073709551615})"),
               "got 18446744073709551615");
  expect_error(json{{"tensor_model_parallel_size", 1}, {"data_parallel_size", -1}},
               "data_parallel_size");
  expect_error(json::parse(R"({"parallelism": {"c": {"llama": {"nvidia": {"pipeline_model_parallel_size": 1}}}}})"),
               "parallelism.c.llama.nvidia has no tensor_model_parallel_size");
  expect_error(json::parse(R"({"qwen": {"nvidia": {"tensor_model_parallel_size": 1}}})"),
               "no block for model llama");
  expect_error(json::array({1, 2}), "must hold an object (a JSON object or YAML mapping of keys)");
}

using ConfigFileOnDisk = test_support::TempDirTest;

TEST_F(ConfigFileOnDisk, LoadsAndNamesMalformedOrMissingFiles) {
  const auto good = write("tp2.json", R"({"tensor_model_parallel_size": 2})");
  const auto s = bench::load_config_strategy(good, "tiny", "cpu");
  EXPECT_EQ(s.name, "tp2");
  EXPECT_EQ(s.tp, 2);
  const auto named = write("many.json", R"({"parallelism": {"x": {"tensor_model_parallel_size": 4}, "y": {"tensor_model_parallel_size": 1}}})");
  EXPECT_EQ(bench::load_config_strategy(named + ":x", "tiny", "cpu").tp, 4);

  const auto bad = write("bad.json", "{\"tensor_model_parallel_size\": 2,,}");
  try {
    bench::load_config_strategy(bad, "tiny", "cpu");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json is not valid JSON"), std::string::npos)
        << e.what();
  }
  // Found by fuzzing: a number past double's range escaped as nlohmann's out_of_range.
  const auto huge = write("huge.json", R"({"tensor_model_parallel_size": 1e400})");
  try {
    bench::load_config_strategy(huge, "tiny", "cpu");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("huge.json is not valid JSON (number overflow"),
              std::string::npos)
        << e.what();
  }
  try {
    bench::load_config_strategy((dir_ / "nope.json").string(), "tiny", "cpu");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nope.json not found"), std::string::npos) << e.what();
  }
}

TEST(ConfigFile, WhatLooksLikeAPath) {
  EXPECT_TRUE(bench::is_config_path("cfg.json"));
  EXPECT_TRUE(bench::is_config_path("cfg.json:name"));
  EXPECT_TRUE(bench::is_config_path("./configs/x"));
  EXPECT_FALSE(bench::is_config_path("balanced"));
}

/// The message load_config_strategy gives for `path`, or "no error".
std::string config_error(const std::string& path) {
  try {
    bench::load_config_strategy(path, "tiny", "cpu");
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST_F(ConfigFileOnDisk, NestingIsCappedAtTheJsonDepthLimit) {
  // The top-level object is level 1: its "profiling" block nests the other 63 at the limit.
  const auto nested = [&](int levels) {
    return write("deep.json", R"({"tensor_model_parallel_size": 1, "profiling": )" +
                                  std::string(levels - 1, '[') + std::string(levels - 1, ']') +
                                  "}");
  };
  EXPECT_EQ(config_error(nested(core::max_json_depth)), "no error");
  const auto path = nested(core::max_json_depth + 1);
  EXPECT_EQ(config_error(path),
            "tprimat: config file " + path +
                ": nests arrays and objects deeper than the 64 levels tprimat reads (column 111); "
                "no real input nests that deep or holds a NUL byte: check what wrote the file");
  // 100,000 levels segfaulted (nlohmann's recursive copy of the profiling block).
  EXPECT_NE(config_error(nested(100'000)).find("deeper than the 64 levels"), std::string::npos);
}

TEST_F(ConfigFileOnDisk, OnlyARegularFileOfAtMostOneMibIsRead) {
  const std::string fix = "; pass an existing JSON or YAML file, or a strategy name (";
  EXPECT_EQ(config_error("/dev/zero").rfind("tprimat: /dev/zero: is a character device, not a "
                                            "config file" + fix, 0),
            0u);
  std::filesystem::create_directories(dir_ / "cfg.json");
  EXPECT_NE(config_error((dir_ / "cfg.json").string() + "/").find("is a directory, not a config file"),
            std::string::npos);
  const auto fifo = dir_ / "fifo.json";
  tprimat::testing::make_fifo(fifo);
  EXPECT_NE(tprimat::testing::error_reading_fifo(
                fifo, [&] { bench::load_config_strategy(fifo.string(), "tiny", "cpu"); })
                .find("is a FIFO (named pipe), not a config file" + fix),
            std::string::npos);
  const auto big = write("big.json", R"({"tensor_model_parallel_size": 1})" +
                                         std::string(core::max_config_bytes, ' '));
  EXPECT_NE(config_error(big).find(": is 1048609 bytes, more than the 1 MiB tprimat reads from a "
                                   "config file"),
            std::string::npos);
}

/// The refusal check_config_keys gives `text`, or "" when every key is one tprimat reads.
std::string key_error(const std::string& text) {
  try {
    bench::detail::check_config_keys(json::parse(text), "c.json");
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

// Megatron's recompute_* keys beside the sizes, checked as the flags are.
TEST(ConfigFile, RecomputeKeysAsMegatronNamesThem) {
  const auto read = [](const std::string& keys) {
    return parse_config_strategy(json::parse(R"({"tensor_model_parallel_size": 1)" + keys + "}"),
                                 "c.json", "", "llama", "nvd")
        .recompute;
  };
  EXPECT_FALSE(read("").has_value());
  EXPECT_FALSE(read(R"(, "recompute_granularity": null)").has_value());
  auto r = read(R"(, "recompute_granularity": "full", "recompute_method": "block",
                  "recompute_num_layers": 5)");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->full());
  EXPECT_EQ(r->method, train::RecomputeMethod::block);
  EXPECT_EQ(r->num_layers, 5);
  r = read(R"(, "recompute_granularity": "full")");
  EXPECT_EQ(r->method, train::RecomputeMethod::uniform);
  EXPECT_EQ(r->num_layers, 1);
  r = read(R"(, "recompute_granularity": "selective", "recompute_modules": ["mlp", "layernorm"])");
  EXPECT_TRUE(r->reruns(train::RecomputeModule::mlp));
  EXPECT_TRUE(r->reruns(train::RecomputeModule::layernorm));
  r = read(R"(, "recompute_granularity": "selective")");  // tprimat's default module
  EXPECT_TRUE(r->reruns(train::RecomputeModule::layernorm));
  EXPECT_FALSE(r->reruns(train::RecomputeModule::mlp));
  const auto error = [&](const std::string& keys) {
    try {
      read(keys);
    } catch (const core::InputError& e) {
      return std::string(e.what());
    }
    return std::string("none");
  };
  // Each wrong block, and what its refusal says.
  const std::pair<std::string, std::string> refused[] = {
      {R"(, "recompute_method": "block")",
       "c.json: recompute_method is given without recompute_granularity"},
      {R"(, "recompute_granularity": "partial")",
       "recompute_granularity must be \"full\" or \"selective\""},
      {R"(, "recompute_granularity": "selective", "recompute_num_layers": 2)",
       "recompute_num_layers applies to recompute_granularity \"full\""},
      {R"(, "recompute_granularity": "selective", "recompute_modules": ["core_attn"])",
       "which tprimat does not run"},
      {R"(, "recompute_granularity": "selective", "recompute_modules": ["mlp", "mlp"])",
       "holds \"mlp\" twice"},
      {R"(, "recompute_granularity": "selective", "recompute_modules": "mlp")",
       "must be a non-empty list"},
      {R"(, "recompute_granularity": "full", "recompute_modules": ["mlp"])",
       "applies to recompute_granularity \"selective\""},
      {R"(, "recompute_granularity": "full", "recompute_num_layers": 0)",
       "must be an integer from 1 to"},
  };
  for (const auto& [keys, says] : refused)
    EXPECT_NE(error(keys).find(says), std::string::npos) << keys << ": " << error(keys);
}

// Megatron-FSDP's data_parallel_sharding_strategy beside the sizes: one of its four names (the
// program refuses the one it has not built), anything else refused naming the key.
/// A TP 1 block with `key` set to `value` (JSON text), read; `key` "" for none.
bench::ConfigStrategy block_with(const std::string& key, const std::string& value) {
  json block{{"tensor_model_parallel_size", 1}};
  if (!key.empty()) block[key] = json::parse(value);
  return parse_config_strategy(block, "c.json", "", "llama", "nvd");
}

TEST(ConfigFile, ShardingStrategyKeyAsMegatronFsdpNamesIt) {
  const auto read = [](const std::string& value) {
    return block_with("data_parallel_sharding_strategy", value).sharding;
  };
  EXPECT_FALSE(block_with("", "").sharding.has_value());
  EXPECT_FALSE(read("null").has_value());
  EXPECT_EQ(read(R"("no_shard")"), train::ShardingStrategy::no_shard);
  EXPECT_EQ(read(R"("optim")"), train::ShardingStrategy::optim);
  EXPECT_EQ(read(R"("optim_grads")"), train::ShardingStrategy::optim_grads);
  EXPECT_EQ(read(R"("optim_grads_params")"), train::ShardingStrategy::optim_grads_params);
  for (const char* bad : {R"("zero2")", "2", "true", R"(["optim"])"}) {
    try {
      read(bad);
      ADD_FAILURE() << bad << " was read";
    } catch (const core::InputError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("tprimat: config c.json: data_parallel_sharding_strategy must be "
                            "\"no_shard\", \"optim\", \"optim_grads\" or \"optim_grads_params\", "
                            "got ") +
                    json::parse(bad).dump() +
                    "; write \"data_parallel_sharding_strategy\": \"optim\" (ZeRO-1) or "
                    "\"optim_grads\" (ZeRO-2)");
    }
  }
  // In a platform's block too: a key of every strategy block, not a misspelling.
  EXPECT_EQ(key_error(R"({"llama": {"nvidia": {"tensor_model_parallel_size": 1,
      "data_parallel_sharding_strategy": "optim_grads"}}})"),
            "");
}

// Megatron's num_distributed_optimizer_instances beside the sizes (hybrid sharding): a positive
// integer where stated, null or absent states nothing; the program checks it against the
// sharding and DP x CP.
TEST(ConfigFile, OptimizerInstancesKeyAsMegatronNamesIt) {
  const auto read = [](const std::string& value) {
    return block_with("num_distributed_optimizer_instances", value).optimizer_instances;
  };
  EXPECT_FALSE(block_with("", "").optimizer_instances.has_value());
  EXPECT_FALSE(read("null").has_value());
  EXPECT_EQ(read("2"), 2);
  for (const char* bad : {"0", "-2", R"("2")", "1.5", "true"}) {
    try {
      read(bad);
      ADD_FAILURE() << bad << " was read";
    } catch (const core::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("num_distributed_optimizer_instances must be"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(key_error(R"({"llama": {"nvidia": {"tensor_model_parallel_size": 1,
      "num_distributed_optimizer_instances": 2}}})"),
            "");
}

TEST(ConfigFileKeys, EveryShapeOfTheDocsReads) {
  EXPECT_EQ(key_error(R"({"tensor_model_parallel_size": 2, "sequence_parallel": true,
      "pipeline_model_parallel_size": 2, "pipeline_split": "auto", "fp8": "hybrid",
      "profiling": {"enabled": true}})"), "");
  EXPECT_EQ(key_error(R"({"parallelism": {"a": {"llama": {"nvidia": {
      "tensor_model_parallel_size": 2, "data_parallel_size": 4,
      "gradient_accumulation_steps": 8}, "amd": {"tensor_model_parallel_size": 1}},
      "qwen": {"tensor_model_parallel_size": 2}}}, "fp8_recipe": "delayed", "fp8": "hybrid"})"),
            "");
  EXPECT_EQ(key_error(R"({"tiny": {"cpu": {"tensor_model_parallel_size": 1}},
      "recipe": {"model": {"config": {"fp8": "hybrid"}}}})"), "");
}

TEST(ConfigFileKeys, AMisspelledKeyIsRefusedNamingTheNearOne) {
  // Read as PP=1 before: the run went on with another layout than the file asked.
  EXPECT_EQ(key_error(R"({"tensor_model_parallel_size": 1, "pipline_model_parallel_size": 2})"),
            "tprimat: config c.json: pipline_model_parallel_size is not a key tprimat reads "
            "(did you mean pipeline_model_parallel_size?); write \"pipeline_model_parallel_size\"");
  EXPECT_NE(key_error(R"({"parallelism": {"x": {"llama": {"nvidia": {
      "tensor_model_parallel_size": 1, "data_paralel_size": 2}}}}})")
                .find("parallelism.x.llama.nvidia.data_paralel_size is not a key tprimat reads "
                      "(did you mean data_parallel_size?)"),
            std::string::npos);
  EXPECT_NE(key_error(R"({"lama": {"tensor_model_parallel_size": 1}, "qwen": {}})")
                .find("lama is not a key tprimat reads (did you mean llama?)"),
            std::string::npos);
  EXPECT_NE(key_error(R"({"llama": {"nvidai": {"tensor_model_parallel_size": 1}, "amd": {}}})")
                .find("llama.nvidai is not a key tprimat reads (did you mean nvidia?)"),
            std::string::npos);
  EXPECT_NE(key_error(R"({"parallelism": {}, "profilng": {}})")
                .find("profilng is not a key tprimat reads (did you mean profiling?)"),
            std::string::npos);
  // Nothing near: the keys of that place are listed.
  EXPECT_NE(key_error(R"({"tensor_model_parallel_size": 1, "zzz": 1})")
                .find("zzz is not a key tprimat reads; use one of: tensor_model_parallel_size"),
            std::string::npos);
  EXPECT_NE(key_error(R"({"recipe": {"model": {"config": {"fp16": true}}}})")
                .find("recipe.model.config.fp16 is not a key tprimat reads; use one of: fp8, fp8_recipe"),
            std::string::npos);
}

TEST(ConfigFileKeys, PrecisionInsideAStrategyBlockIsRefused) {
  // It ran bf16 with exit 0: the FP8 request was dropped.
  for (const char* text :
       {R"({"parallelism": {"x": {"tensor_model_parallel_size": 1, "fp8": "hybrid"}}})",
        R"({"llama": {"tensor_model_parallel_size": 1, "fp8": "hybrid"}})",
        R"({"llama": {"nvidia": {"tensor_model_parallel_size": 1, "fp8_recipe": "delayed"}}})"})
    EXPECT_NE(key_error(text).find("is a precision key inside a strategy block, where tprimat "
                                   "does not read it"),
              std::string::npos)
        << text;
}

TEST_F(ConfigFileOnDisk, LoadingRefusesAMisspelledKey) {
  const auto path = write("typo.json",
                          R"({"tensor_model_parallel_size": 1, "pipline_model_parallel_size": 2})");
  EXPECT_NE(config_error(path).find("did you mean pipeline_model_parallel_size?"),
            std::string::npos);
}

}  // namespace
