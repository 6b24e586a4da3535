// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The seeds' config.yaml read as it is: core/yaml_input.hpp (YAML into the JSON tree, with the
// JSON reader's guarantees) and bench/config_run.hpp (the training, platform_optimizations,
// models and benchmarking sections), through bench/config_file.hpp.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "../../support/input_error.hpp"

#include "tprimat/bench/config_file.hpp"
#include "tprimat/bench/config_run.hpp"
#include "tprimat/core/json_input.hpp"
#include "tprimat/core/yaml_input.hpp"

namespace {

using namespace tprimat;
using nlohmann::json;

using tprimat::testing::input_error_of;

TEST(YamlScalar, ResolvesAsPyYamlAndYaml12Agree) {
  EXPECT_EQ(core::resolve_plain_scalar("~").value, json(nullptr));
  EXPECT_EQ(core::resolve_plain_scalar("").value, json(nullptr));
  EXPECT_EQ(core::resolve_plain_scalar("True").value, json(true));
  EXPECT_EQ(core::resolve_plain_scalar("off").value, json(false));
  EXPECT_EQ(core::resolve_plain_scalar("128").value, json(128));
  EXPECT_TRUE(core::resolve_plain_scalar("-3").value.is_number_integer());
  EXPECT_DOUBLE_EQ(core::resolve_plain_scalar("3.0e-4").value.get<double>(), 3.0e-4);
  EXPECT_DOUBLE_EQ(core::resolve_plain_scalar("1e-4").value.get<double>(), 1e-4);
  EXPECT_DOUBLE_EQ(core::resolve_plain_scalar("8.0e9").value.get<double>(), 8.0e9);
  // Past 64 bits an integer is a double (a range check refuses it later), never wrapped.
  EXPECT_TRUE(core::resolve_plain_scalar("99999999999999999999").value.is_number_float());
  for (const char* text : {"1.2.3", "e5", "1e", "0x10", "12abc", "bf16", "-", "."})
    EXPECT_TRUE(core::resolve_plain_scalar(text).value.is_string()) << text;
  EXPECT_FALSE(core::resolve_plain_scalar(".nan").finite);
  EXPECT_FALSE(core::resolve_plain_scalar("1e999").finite);
}

TEST(ConfigJson, KeyGivenTwiceIsRefusedNamingItsPlace) {
  const auto e = input_error_of([] {
    bench::parse_config_json(R"({"a": {"tensor_model_parallel_size": 1,
                                       "tensor_model_parallel_size": 4}})", "c.json");
  });
  EXPECT_NE(e.find("config file c.json: key \"tensor_model_parallel_size\" under a is given twice"),
            std::string::npos)
      << e;
  EXPECT_EQ(bench::parse_config_json(R"({"a": {"b": 1}, "c": {"b": 2}})", "c.json")["c"]["b"], 2);
}

#if defined(TPRIMAT_HAVE_YAML) && TPRIMAT_HAVE_YAML

json yaml(const std::string& text) { return bench::parse_config_text(text, "c.yaml"); }

TEST(ConfigYaml, ReadsMappingsListsAndTypedScalars) {
  const json j = yaml(
      "a:\n  b: 1\n  c: [x, 'y', 2.5]\n  d: {e: true, f: null}\n  g: \"42\"\n  'h': |\n    text\n");
  EXPECT_EQ(j["a"]["b"], 1);
  EXPECT_EQ(j["a"]["c"], json::array({"x", "y", 2.5}));
  EXPECT_EQ(j["a"]["d"]["e"], true);
  EXPECT_TRUE(j["a"]["d"]["f"].is_null());
  EXPECT_EQ(j["a"]["g"], "42");  // quoted: text, not a number
  EXPECT_EQ(j["a"]["h"], "text\n");
  EXPECT_TRUE(yaml("").is_null());
  EXPECT_EQ(yaml("1: x")["1"], "x");  // a key is its text as written
}

TEST(ConfigYaml, RefusesWhatJsonWouldNotHoldOrWouldReadAsTheLastOfSeveral) {
  const auto e = [](const std::string& text) { return input_error_of([&] { yaml(text); }); };
  EXPECT_NE(e("a: 1\nb: 2\na: 3\n").find("key \"a\" is given twice at line 3, column 1"),
            std::string::npos);
  EXPECT_NE(e("x:\n  a: 1\n  a: 1\n").find("key \"a\" under x is given twice"), std::string::npos);
  EXPECT_NE(e("a: &v 1\nb: *v\n").find("an alias (*v) at line 2"), std::string::npos);
  EXPECT_NE(e("a: 1\n---\nb: 2\n").find("a second YAML document"), std::string::npos);
  EXPECT_NE(e("a: !!python/object:os.system x\n").find("a tag tag:yaml.org,2002:python/object"),
            std::string::npos);
  EXPECT_NE(e("a: .nan\n").find(".nan, not a finite number"), std::string::npos);
  EXPECT_NE(e("? [a, b]\n: 1\n").find("a mapping key that is a mapping or list"),
            std::string::npos);
  EXPECT_NE(e("a: [1, 2\n").find("config file c.yaml is not valid YAML ("), std::string::npos);
  EXPECT_NE(e(std::string(100, '[') + std::string(100, ']')).find("deeper than the 64 levels"),
            std::string::npos);
}

#else

TEST(ConfigYaml, RefusedNamingTheFixWithoutLibyaml) {
  EXPECT_NE(input_error_of([] { bench::parse_config_text("a: 1\n", "c.yaml"); })
                .find("c.yaml is YAML, and this tprimat was built without a YAML reader"),
            std::string::npos);
}

#endif

/// The seeds' sections as JSON (the same tree YAML gives).
json seeds_like() {
  return json::parse(R"({
    "experiment": {"name": "x", "methodology": "identical_config"},
    "hardware": {"platforms": {"nvidia": {"gpu_model": "H100", "num_gpus": 8}}},
    "models": {"llama": {"num_layers": 32, "hidden_size": 4096, "num_attention_heads": 32}},
    "training": {"general": {"seed": 7},
                 "data": {"micro_batch_size": 2, "global_batch_size": 64, "seq_length": 4096},
                 "duration": {"max_steps": 20, "train_iters": 20},
                 "optimizer": {"type": "adam", "learning_rate": 3.0e-4, "warmup_steps": 5,
                               "weight_decay": 0.1, "beta1": 0.9, "beta2": 0.95},
                 "precision": {"default": "bf16", "fp8_hybrid": false, "fp8_param": false},
                 "checkpointing": {"enabled": false, "save_interval": 1000}},
    "parallelism": {"s": {"llama": {"nvidia": {"tensor_model_parallel_size": 2},
                                    "amd": {"tensor_model_parallel_size": 1}}}},
    "platform_optimizations": {
        "nvidia": {"precision": "fp8", "fp8_hybrid": true, "cuda_alloc_conf": "x",
                   "activation_checkpointing": true},
        "amd": {"precision": "bf16", "activation_checkpointing": false}},
    "benchmarking": {"output": {"directory": "./o", "log_format": "t.log"},
                     "warmup": {"skip_first_n_steps": 1}, "runs": {"default_num_runs": 2}},
    "comparison": {"plots": {"dpi": 300}}
  })");
}

TEST(ConfigRun, TrainingAndBenchmarkingKeysBecomeTheFlagsTheyStandFor) {
  const json j = seeds_like();
  bench::check_run_sections(j, "c.yaml");
  const auto run = bench::read_config_run(j, "c.yaml");
  std::map<std::string, json> by_name;
  for (const auto& s : run.settings) by_name[s.name] = s.value;
  EXPECT_EQ(by_name["seed"], 7);
  EXPECT_EQ(by_name["micro_batch_size"], 2);
  EXPECT_EQ(by_name["global_batch_size"], 64);
  EXPECT_EQ(by_name["seq_length"], 4096);
  EXPECT_EQ(by_name["train_iters"], 20);
  EXPECT_EQ(by_name["lr"], 3.0e-4);
  EXPECT_EQ(by_name["lr_warmup_iters"], 5);
  EXPECT_EQ(by_name["warmup_steps"], 1);
  EXPECT_EQ(by_name["runs"], 2);
  EXPECT_EQ(by_name["output_dir"], "./o");
  const std::vector<std::string> not_applied = {
      "benchmarking.output.log_format", "comparison", "platform_optimizations.nvidia.cuda_alloc_conf"};
  EXPECT_EQ(run.not_applied, not_applied);
}

TEST(ConfigRun, ThePlatformsBlockOverridesTrainingPrecisionAndTurnsOnRecomputation) {
  const std::filesystem::path dir = ::testing::TempDir();
  const auto file = (dir / "seeds_like.json").string();
  std::ofstream(file) << seeds_like().dump();
  const auto nvd = bench::load_config_strategy(file, "llama", "nvd");
  ASSERT_TRUE(nvd.precision && nvd.precision->is_fp8());
  ASSERT_TRUE(nvd.recompute && nvd.recompute->full());
  EXPECT_EQ(nvd.tp, 2);
  const auto amd = bench::load_config_strategy(file, "llama", "amd");
  ASSERT_TRUE(amd.precision);
  EXPECT_FALSE(amd.precision->is_fp8());
  EXPECT_FALSE(amd.recompute && amd.recompute->on());
  const auto cpu = bench::load_config_strategy(file, "llama", "cpu");  // training.precision
  ASSERT_TRUE(cpu.precision);
  EXPECT_FALSE(cpu.precision->is_fp8());
}

TEST(ConfigRun, SettingsTprimatCannotHonourAreRefusedNamingTheKey) {
  const auto refused = [](const std::string& pointer, const json& value) {
    json j = seeds_like();
    j[json::json_pointer(pointer)] = value;
    return input_error_of([&] {
      bench::check_run_sections(j, "c.yaml");
      for (const char* p : {"nvd", "amd", "cpu"}) bench::run_precision(j, "c.yaml", p);
      bench::read_config_run(j, "c.yaml");
    });
  };
  EXPECT_NE(refused("/training/data/micro_batch_sise", 2)
                .find("training.data.micro_batch_sise is not a key tprimat reads (did you mean "
                      "micro_batch_size?)"),
            std::string::npos);
  EXPECT_NE(refused("/models/llama/num_layers", 30).find("tprimat's llama (Llama 3.1 8B) has 32"),
            std::string::npos);
  EXPECT_NE(refused("/models/lama", json::object()).find("did you mean llama?"), std::string::npos);
  EXPECT_NE(refused("/training/optimizer/beta2", 0.999).find("tprimat's AdamW runs at 0.95"),
            std::string::npos);
  EXPECT_NE(refused("/training/optimizer/type", "sgd").find("AdamW (Megatron's \"adam\") only"),
            std::string::npos);
  EXPECT_NE(refused("/training/checkpointing/enabled", true).find("without writing checkpoints"),
            std::string::npos);
  EXPECT_NE(refused("/training/precision/default", "fp16").find("not fp32 or fp16"),
            std::string::npos);
  EXPECT_NE(refused("/platform_optimizations/nvidia/fp8_param", true)
                .find("platform_optimizations.nvidia.fp8_param is true"),
            std::string::npos);
  EXPECT_NE(refused("/platform_optimizations/nvidia/fp8_hybrid", false)
                .find("tprimat runs FP8 in the hybrid format only"),
            std::string::npos);
  EXPECT_NE(refused("/platform_optimizations/amd/fp8_hybrid", true).find("says bf16"),
            std::string::npos);
  EXPECT_NE(refused("/training/duration/train_iters", 30).find("both set train_iters"),
            std::string::npos);
  EXPECT_NE(refused("/training/data/global_batch_size", "64").find("must be a whole number"),
            std::string::npos);
  EXPECT_NE(refused("/platform_optimizations/cuda", json::object())
                .find("holds two blocks for one platform (nvd)"),
            std::string::npos);
  EXPECT_NE(refused("/training/data", 5).find("training.data must be a mapping of keys"),
            std::string::npos);
}

}  // namespace
