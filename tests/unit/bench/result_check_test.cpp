// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// bench/result_check.hpp: the schema file's rules as the code reads them (its embedded copy held
// to the file), every rule broken once, and write_result's refusal of a document that breaks them.
#include "tprimat/bench/result_check.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "result_fixtures.hpp"
#include "tprimat/bench/result.hpp"
#include "tprimat/model/tiny.hpp"

namespace {

using namespace tprimat;
using nlohmann::json;
namespace fs = std::filesystem;

/// A result as a two-run bench writes it: the document every rule is tried on.
json valid_result() {
  bench::ResultContext c = tprimat::testing::cpu_result_context(
      parallel::Plan{"minimal_communication", 1, 1, 1, 2}, "tprimat bench");
  c.device.total_memory_gb = 8;
  const bench::RunRecord r = tprimat::testing::complete_cpu_run();
  json doc = bench::make_result(c, {r, r});
  doc["profiling"] = {{"enabled", true},
                      {"collector", "host"},
                      {"schedule", {{"wait", 1}, {"warmup", 1}, {"active", 1}, {"repeat", 1}}},
                      {"ranks", {0}},
                      {"traces", {"profile_cpu_tiny_0.json"}},
                      {"recorded_steps", {2}},
                      {"overhead",
                       {{"profiled_step_seconds", 0.2},
                        {"unprofiled_step_seconds", 0.1},
                        {"fraction", 1.0},
                        {"profiled_steps", 1},
                        {"unprofiled_steps", 1}}}};
  bench::add_gib_twins(doc);
  return doc;
}

std::string error_of(const json& doc) { return bench::result_error(doc).value_or("none"); }

TEST(ResultCheck, BenchResultsKeepEveryRule) {
  EXPECT_EQ(error_of(valid_result()), "none");
  json incomplete = valid_result();
  incomplete["complete"] = false;
  incomplete["error"] = "step 2 diverged";
  EXPECT_EQ(error_of(incomplete), "none");
}

TEST(ResultCheck, NamesTheKeyTheValueAndTheRule) {
  json doc = valid_result();
  doc["training_config"]["max_steps"] = std::numeric_limits<int>::min();
  EXPECT_EQ(error_of(doc), "training_config.max_steps is -2147483648, and must be at least 1");
  doc = valid_result();
  doc["performance_metrics"]["tokens_per_second"] = -5.0;
  EXPECT_EQ(error_of(doc), "performance_metrics.tokens_per_second is -5.0, and must be at least 0");
  doc = valid_result();
  doc["complete"] = false;
  EXPECT_EQ(error_of(doc), "error is absent, and is required");
  doc = valid_result();
  doc["runs"][1]["raw_step_times"][0] = "fast";
  EXPECT_EQ(error_of(doc), "runs.1.raw_step_times.0 is \"fast\", and must be a number");
}

TEST(ResultCheck, SequenceParallelIsOptionalAndNeedsTp) {
  json doc = valid_result();
  ASSERT_EQ(doc["parallelism_config"]["sequence_parallel"], false);
  doc["parallelism_config"].erase("sequence_parallel");  // older results lack it
  EXPECT_EQ(error_of(doc), "none");
  doc["parallelism_config"]["sequence_parallel"] = "on";
  EXPECT_EQ(error_of(doc),
            "parallelism_config.sequence_parallel is \"on\", and must be true or false or null");
  doc["parallelism_config"]["sequence_parallel"] = true;  // at TP 1
  EXPECT_EQ(error_of(doc),
            "parallelism_config.sequence_parallel is true, and must be false where "
            "tensor_model_parallel_size is 1");
  doc["parallelism_config"]["tensor_model_parallel_size"] = 2;
  EXPECT_EQ(error_of(doc), "none");
}

TEST(ResultCheck, NonFiniteNumbersCountAsTheNullTheyAreWrittenAs) {
  json doc = valid_result();
  doc["performance_metrics"]["mfu"] = std::nan("");  // null is allowed there
  EXPECT_EQ(error_of(doc), "none");
  doc["raw_step_times"][0] = std::numeric_limits<double>::infinity();  // not there
  EXPECT_EQ(error_of(doc), "raw_step_times.0 is null, and must be a number");
}

TEST(ResultCheck, IntegersAsJsonSchemaCountsThem) {
  json doc = valid_result();
  doc["training_config"]["measured_steps"] = 2.0;  // 2.0 is an integer to JSON Schema
  EXPECT_EQ(error_of(doc), "none");
  doc["training_config"]["measured_steps"] = 2.5;
  EXPECT_EQ(error_of(doc), "training_config.measured_steps is 2.5, and must be an integer");
}

TEST(ResultCheck, GemmNamesOneOfTheLibraries) {
  json doc = valid_result();
  EXPECT_TRUE(doc["gpu_info"]["gemm"].is_null());  // the CPU backend runs no GPU GEMM
  for (const char* gemm : {"cublaslt", "hipblaslt", "fallback"}) {
    doc["gpu_info"]["gemm"] = gemm;
    EXPECT_EQ(error_of(doc), "none") << gemm;
  }
  doc["gpu_info"]["gemm"] = "rocblas";
  EXPECT_EQ(error_of(doc),
            "gpu_info.gemm is \"rocblas\", and must be one of cublaslt, hipblaslt, fallback");
}

// ---- the code's rules against the schema file's -------------------------------------------

/// Breaks `doc` at `key` in each way the schema node forbids and expects the check to name it.
class AgainstSchema {
 public:
  explicit AgainstSchema(json schema, json valid = valid_result())
      : schema_(std::move(schema)), valid_(std::move(valid)) {}

  void walk(const json& node, const std::string& key) {
    const json& n = resolve(node);
    try_breaking(n, key);
    if (n.contains("properties"))
      for (const auto& [name, child] : n["properties"].items()) {
        const std::string child_key = key + "/" + name;
        if (!doc_has(child_key)) {
          ++absent_;
          continue;
        }
        walk(child, child_key);
      }
    // A nullable object that is null here (training_config.fp8 of a bf16 run) has no keys to
    // remove; the FP8 walk reaches them.
    if (n.contains("required") && (key.empty() || valid_.at(json::json_pointer(key)).is_object()))
      for (const auto& name : n["required"])
        expect_named(key + "/" + name.get<std::string>(), json(json::value_t::discarded));
    if (n.contains("items") && doc_has(key + "/0")) walk(n["items"], key + "/0");
    if (n.contains("additionalProperties") && n["additionalProperties"].is_object() &&
        valid_.at(json::json_pointer(key)).is_object())
      for (const auto& [name, _] : valid_.at(json::json_pointer(key)).items())
        if (!n.contains("properties") || !n["properties"].contains(name))
          walk(n["additionalProperties"], key + "/" + name);
  }

  int checked() const { return checked_; }

 private:
  const json& resolve(const json& node) const {
    if (!node.contains("$ref")) return node;
    const std::string ref = node["$ref"].get<std::string>().substr(1);  // "#/$defs/x"
    return schema_.at(json::json_pointer(ref));
  }

  bool doc_has(const std::string& key) const { return valid_.contains(json::json_pointer(key)); }

  std::vector<std::string> types(const json& n) const {
    std::vector<std::string> out;
    if (n.contains("type")) {
      if (n["type"].is_string())
        out.push_back(n["type"]);
      else
        for (const auto& t : n["type"]) out.push_back(t);
    }
    return out;
  }

  /// Replaces the value at `key` (or removes it when `value` is discarded) and expects an error
  /// that names the key.
  void expect_named(const std::string& key, const json& value) {
    json doc = valid_;
    const json::json_pointer p(key);
    if (value.is_discarded()) {
      doc[p.parent_pointer()].erase(p.back());
    } else {
      doc[p] = value;
    }
    std::string dotted = key.substr(1);
    for (char& c : dotted)
      if (c == '/') c = '.';
    const std::string error = error_of(doc);
    EXPECT_EQ(error.rfind(dotted + " is ", 0), 0u)
        << key << " set to " << (value.is_discarded() ? "absent" : value.dump())
        << " breaks the schema, but the check says: " << error;
    ++checked_;
  }

  void try_breaking(const json& n, const std::string& key) {
    if (key.empty()) return;
    const auto t = types(n);
    const auto has = [&](const char* name) {
      return std::find(t.begin(), t.end(), name) != t.end();
    };
    if (!t.empty() && !has("string")) expect_named(key, "a string where none belongs");
    if (!t.empty() && !has("null")) expect_named(key, nullptr);
    if (!t.empty() && has("string") && !has("number") && !has("integer")) expect_named(key, 7);
    if (n.contains("minimum")) expect_named(key, n["minimum"].get<double>() - 1);
    if (n.contains("exclusiveMinimum")) expect_named(key, n["exclusiveMinimum"].get<double>());
    if (n.contains("maximum")) expect_named(key, n["maximum"].get<double>() + 1);
    if (n.contains("enum") || n.contains("const")) expect_named(key, "not-one-of-them");
    if (n.contains("minLength")) expect_named(key, "");
    if (n.contains("pattern")) expect_named(key, "no pattern matches this");
    if (has("integer") && !has("number")) expect_named(key, 1.5);
  }

  json schema_;
  json valid_;
  int checked_ = 0;
  int absent_ = 0;
};

std::string schema_file_text() {
  std::ifstream in(TPRIMAT_RESULT_SCHEMA);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(ResultCheck, TheCodeReadsTheSchemaFileItself) {
  const std::string file = schema_file_text();
  ASSERT_FALSE(file.empty()) << TPRIMAT_RESULT_SCHEMA;
  EXPECT_TRUE(file == bench::result_schema_text)
      << "include/tprimat/bench/result_schema.hpp is not schema/result.schema.json: run "
         "`cmake -P scripts/embed_result_schema.cmake`";
}

TEST(ResultCheck, PrecisionNamesAreTheSchemas) {
  const json schema = json::parse(schema_file_text());
  const json& names = schema["properties"]["training_config"]["properties"]["precision"]["enum"];
  ASSERT_EQ(names.size(), std::size(train::precision_names::all));
  for (std::size_t i = 0; i < names.size(); ++i)
    EXPECT_EQ(names[i], std::string(train::precision_names::all[i]));
}

TEST(ResultCheck, AKeywordOrPatternTheCheckDoesNotKnowIsNamed) {
  // A pattern added to the schema without a matcher is a broken rule, never a passed one.
  nlohmann::ordered_json schema = bench::detail::result_schema();
  schema["properties"]["reproduce"]["properties"]["command_line"]["pattern"] = "^tprimat ";
  const json doc = valid_result();
  bench::detail::ResultRules r(doc);
  r.follow(schema);
  EXPECT_EQ(r.error().value_or("none").rfind("reproduce.command_line is ", 0), 0u)
      << r.error().value_or("none");
}

TEST(ResultCheck, EveryRuleOfTheSchemaFileIsChecked) {
  std::ifstream in(TPRIMAT_RESULT_SCHEMA);
  ASSERT_TRUE(in) << TPRIMAT_RESULT_SCHEMA;
  const json schema = json::parse(in);
  AgainstSchema against(schema);
  against.walk(schema, "");
  EXPECT_GT(against.checked(), 200) << "the walk must reach the nested objects and $defs";
}

/// valid_result() as an FP8 run on an H100 records it: precision, the fp8 block and both peaks.
json valid_fp8_result(train::Fp8Recipe recipe) {
  json doc = valid_result();
  const train::PrecisionConfig p = train::PrecisionConfig::fp8_hybrid(recipe);
  doc["platform"] = "nvd";
  doc["gpu_info"]["software_stack"] = "cuda";
  doc["gpu_info"]["device_name"] = "NVIDIA H100 80GB HBM3";
  doc["training_config"]["precision"] = p.name();
  doc["training_config"]["fp8"] = bench::fp8_record(p, doc["training_config"]["num_layers"]);
  return doc;
}

TEST(ResultCheck, EveryRuleOfTheFp8BlockIsChecked) {
  std::ifstream in(TPRIMAT_RESULT_SCHEMA);
  ASSERT_TRUE(in) << TPRIMAT_RESULT_SCHEMA;
  const json schema = json::parse(in);
  for (const auto recipe : {train::Fp8Recipe::delayed, train::Fp8Recipe::current}) {
    const json doc = valid_fp8_result(recipe);
    ASSERT_EQ(error_of(doc), "none");
    AgainstSchema against(schema, doc);
    against.walk(schema, "");
    EXPECT_GT(against.checked(), 220);
  }
}

TEST(ResultCheck, PrecisionAndFp8BlockMustAgree) {
  const json delayed = valid_fp8_result(train::Fp8Recipe::delayed);
  EXPECT_EQ(delayed["training_config"]["fp8"]["recipe"], "delayed");
  EXPECT_EQ(delayed["training_config"]["fp8"]["amax_history_len"], 1024);
  EXPECT_EQ(delayed["training_config"]["fp8"]["fp8_layers"], 4);  // tiny: every layer
  EXPECT_EQ(delayed["training_config"]["fp8"]["bf16_layers"], json::array());
  const json current = valid_fp8_result(train::Fp8Recipe::current);
  EXPECT_EQ(current["training_config"]["fp8"]["bf16_layers"], json({0, 3}));
  EXPECT_EQ(current["training_config"]["fp8"]["fp8_layers"], 2);
  EXPECT_TRUE(current["training_config"]["fp8"]["amax_history_len"].is_null());

  json doc = delayed;  // the block of the other recipe
  doc["training_config"]["fp8"] = current["training_config"]["fp8"];
  EXPECT_EQ(error_of(doc).rfind("training_config.fp8.recipe is \"current\", and must be delayed", 0),
            0u)
      << error_of(doc);
  doc = delayed;  // an FP8 precision without its block
  doc["training_config"]["fp8"] = nullptr;
  EXPECT_EQ(error_of(doc).rfind("training_config.fp8 is null, and must be an object", 0), 0u)
      << error_of(doc);
  doc.at("training_config").erase("fp8");
  EXPECT_EQ(error_of(doc).rfind("training_config.fp8 is absent, and must be an object", 0), 0u)
      << error_of(doc);
  doc = valid_result();  // a block on an fp32 run
  doc["training_config"]["fp8"] = delayed["training_config"]["fp8"];
  EXPECT_EQ(error_of(doc).rfind("training_config.fp8 is {", 0), 0u) << error_of(doc);
  EXPECT_NE(error_of(doc).find("must be null: training_config.precision is fp32"),
            std::string::npos);
  doc = delayed;  // layers that do not add up to the layers run
  doc["training_config"]["fp8"]["fp8_layers"] = 3;
  EXPECT_EQ(error_of(doc),
            "training_config.fp8.fp8_layers is 3, and must be training_config.num_layers less "
            "the bf16_layers (4)");
  doc = current;
  doc["training_config"]["fp8"]["bf16_layers"] = {0, 4};
  EXPECT_EQ(error_of(doc).rfind("training_config.fp8.bf16_layers.1 is 4, and must be below", 0),
            0u)
      << error_of(doc);
  doc = delayed;  // gfx942's fnuz pair is a result; a pair of two families is not
  doc["training_config"]["fp8"] = bench::fp8_record(train::PrecisionConfig::fp8_hybrid(
                                                        train::Fp8Recipe::delayed),
                                                    4, "e4m3_fnuz", "e5m2_fnuz");
  EXPECT_EQ(doc["training_config"]["fp8"]["forward"], "e4m3_fnuz");
  EXPECT_EQ(error_of(doc), "none");
  doc["training_config"]["fp8"]["backward"] = "e5m2";
  EXPECT_EQ(error_of(doc).rfind("training_config.fp8.backward is \"e5m2\", and must be of "
                                "forward's family (e4m3_fnuz)",
                                0),
            0u)
      << error_of(doc);
  doc["training_config"]["fp8"]["forward"] = "e4m3fn";
  EXPECT_NE(error_of(doc).find("must be one of e4m3, e4m3_fnuz"), std::string::npos)
      << error_of(doc);
  doc = delayed;  // a precision no result names
  for (const char* unknown : {"fp8", "fp8-e4m3", "fp16", "fp8-hybrid-mxfp8"}) {
    doc["training_config"]["precision"] = unknown;
    EXPECT_EQ(error_of(doc).rfind("training_config.precision is \"" + std::string(unknown) +
                                      "\", and must be one of bf16, fp32, fp8-hybrid-delayed, "
                                      "fp8-hybrid-current",
                                  0),
              0u)
        << error_of(doc);
  }
}

TEST(ResultCheck, WriteResultRefusesAndWritesNothing) {
  const fs::path dir = fs::temp_directory_path() / ("tprimat_check_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  json doc = valid_result();
  doc["training_config"]["global_batch_size"] = 0;
  try {
    bench::write_result(dir / "benchmark_cpu_tiny.json", doc);
    ADD_FAILURE() << "an invalid result was written";
  } catch (const bench::InvalidResult& e) {
    EXPECT_NE(std::string(e.what()).find("training_config.global_batch_size is 0, and must be at "
                                         "least 1"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir)) << "nothing, not even a temp file, is left";
  bench::write_result(dir / "benchmark_cpu_tiny.json", valid_result());
  std::ifstream written(dir / "benchmark_cpu_tiny.json");
  const json back = json::parse(written);
  EXPECT_EQ(back["memory_metrics"]["peak_allocated_gib"],
            back["memory_metrics"]["peak_allocated_gb"]);
  EXPECT_EQ(back["gpu_info"]["total_memory_gib"], 8.0);
  fs::remove_all(dir);
}

}  // namespace
