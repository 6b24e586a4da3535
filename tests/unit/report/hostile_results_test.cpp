// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Results a hostile-input sweep found counted, crowned or pooled wrongly: one run read twice, a
// throughput contradicting itself, figures past any run's reach, two node layouts, and the lines
// that name why platforms were not compared.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/report/compare.hpp"
#include "tprimat/report/load.hpp"
#include "tprimat/report/peak.hpp"

namespace tprimat::report {
namespace {

/// An 8-GPU H100 qwen result at `per_gpu` tokens/s/GPU, its three throughput figures agreeing.
nlohmann::json h100(double per_gpu, std::string platform = "nvd") {
  return {
      {"platform", platform},
      {"model", {{"cli_name", "qwen"}}},
      {"gpu_info",
       {{"device_name", "NVIDIA H100 80GB HBM3"},
        {"device_count", 8},
        {"devices_per_node", 8},
        {"nodes", 1}}},
      {"training_config", {{"global_batch_size", 64}, {"sequence_length", 2048}, {"num_gpus", 8}}},
      {"performance_metrics",
       {{"avg_step_time_seconds", 64 * 2048 / (8 * per_gpu)},
        {"tokens_per_second", 8 * per_gpu},
        {"tokens_per_second_per_gpu", per_gpu}}},
      {"raw_step_times", {1.0, 1.01, 0.99}}};
}

std::filesystem::path write(const std::filesystem::path& file, const nlohmann::json& doc) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file) << doc.dump();
  return file;
}

bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const auto& l : lines)
    if (l.find(part) != std::string::npos) return true;
  return false;
}

TEST(ReportHostile, AFileReachedTwiceIsReadOnce) {
  const auto dir = std::filesystem::temp_directory_path() / "tprimat_hostile_twice";
  std::filesystem::remove_all(dir);
  const auto file = write(dir / "nvd" / "benchmark_cuda_qwen.json", h100(8000));
  // Named twice, once through "..", and its folder given twice.
  const auto in =
      load_inputs({dir.string(), dir.string()},
                  {file.string(), (dir / "nvd" / ".." / "nvd" / file.filename()).string()});
  ASSERT_EQ(in.results.size(), 1u);
  EXPECT_EQ(in.inputs.size(), 4u);
  EXPECT_TRUE(any_contains(in.problems, "the same file as")) << in.problems.size();
  std::filesystem::remove_all(dir);
}

TEST(ReportHostile, ACopiedResultIsCountedOnce) {
  const auto dir = std::filesystem::temp_directory_path() / "tprimat_hostile_copy";
  std::filesystem::remove_all(dir);
  const auto doc = h100(8000);
  auto amd = doc;
  amd["platform"] = "amd";  // the very measurements under another name: still one run
  const auto a = write(dir / "nvd" / "benchmark_cuda_qwen.json", doc);
  const auto b = write(dir / "amd" / "benchmark_rocm_qwen.json", amd);
  const auto c = write(dir / "other" / "benchmark_cuda_qwen.json", h100(8100));
  const auto in = load_inputs({}, {a.string(), b.string(), c.string()});
  ASSERT_EQ(in.results.size(), 2u);
  EXPECT_EQ(in.results[0].platform, "nvd");
  EXPECT_TRUE(any_contains(in.problems, "the same measurements as")) << in.problems.front();
  const auto groups = group_results(in.results);
  ASSERT_EQ(groups.size(), 1u) << "no amd row, no winner made of a copy";
  EXPECT_EQ(groups[0].results.size(), 2u);
  std::filesystem::remove_all(dir);
}

TEST(ReportHostile, AThroughputContradictingItselfIsFlaggedAndNeverThePeak) {
  auto doc = h100(8096.9);
  doc["performance_metrics"]["tokens_per_second"] = 100000;  // 8 x 8096.9 is 64,775
  auto amd = h100(6000, "amd");
  amd["raw_step_times"] = {2.0, 2.01, 1.99};
  const std::vector<Result> rs{from_json(doc, "nvd/benchmark_cuda_qwen.json"),
                               from_json(amd, "amd/benchmark_rocm_qwen.json")};
  EXPECT_FALSE(rs[0].usable_for_ranking());
  ASSERT_FALSE(rs[0].warnings().empty());
  EXPECT_NE(rs[0].warnings()[0].find("a throughput figure is wrong"), std::string::npos)
      << rs[0].warnings()[0];
  EXPECT_TRUE(rs[1].usable_for_ranking());
  const auto peaks = peaks_per_platform_model(rs);
  for (const auto* p : peaks) EXPECT_NE(p, &rs[0]);
  // Within the tolerance (rounded figures) a result stays usable.
  auto rounded = h100(8096.9);
  rounded["performance_metrics"]["tokens_per_second"] = 64800;
  EXPECT_TRUE(from_json(rounded, "r.json").usable_for_ranking());
  // The step time too: global batch x sequence / step time must agree with tokens/s.
  auto slow = h100(8096.9);
  slow["performance_metrics"]["avg_step_time_seconds"] = 4.0;
  EXPECT_FALSE(from_json(slow, "s.json").usable_for_ranking());
}

TEST(ReportHostile, FiguresPastAnyRunsReachAreRefusedNamingTheField) {
  const auto refused = [](const char* section, const char* key, double v) {
    auto doc = h100(8000);
    doc[section][key] = v;
    try {
      from_json(doc, "x/benchmark_cuda_qwen.json");
    } catch (const core::InputError& e) {
      return std::string(e.what()).find(std::string(section) + "." + key) != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(refused("performance_metrics", "tokens_per_second_per_gpu", 1e300));
  EXPECT_TRUE(refused("performance_metrics", "tokens_per_second_per_gpu", 0));
  EXPECT_TRUE(refused("performance_metrics", "tokens_per_second", 1e300));
  EXPECT_TRUE(refused("performance_metrics", "avg_step_time_seconds", 1e300));
  EXPECT_TRUE(refused("performance_metrics", "avg_step_time_seconds", 0));
  EXPECT_TRUE(refused("memory_metrics", "peak_allocated_gb", 1e300));
  EXPECT_TRUE(refused("gpu_info", "peak_tflops_dense", 1e300));
  for (const char* size : {"tensor_model_parallel_size", "pipeline_model_parallel_size",
                           "data_parallel_size", "gradient_accumulation_steps"})
    EXPECT_TRUE(refused("parallelism_config", size, 1e300)) << size;
  // A tiny peak gives an infinite MFU: refused too, never "n/a" on a ranked row.
  auto tiny = h100(8000);
  tiny["gpu_info"]["peak_tflops_dense"] = 1e-320;
  EXPECT_THROW(from_json(tiny, "t.json"), core::InputError);
  EXPECT_NO_THROW(from_json(h100(8000), "ok.json"));
}

TEST(ReportHostile, SeriesValuesPastAnyRunsReachAreRefusedNamingTheElement) {
  // What from_json says of `doc`, or "" where it reads it.
  const auto refusal = [](const nlohmann::json& doc) -> std::string {
    try {
      from_json(doc, "x/benchmark_cuda_qwen.json");
    } catch (const core::InputError& e) {
      return e.what();
    }
    return "";
  };
  auto step = h100(8000);
  step["raw_step_times"] = {1.0, 1e308};
  EXPECT_NE(refusal(step).find("raw_step_times[1] is 1e+308"), std::string::npos) << refusal(step);
  auto negative = h100(8000);
  negative["raw_step_times"] = {1.0, -1.0};
  EXPECT_NE(refusal(negative).find("raw_step_times[1]"), std::string::npos);
  auto seeds = h100(8000);  // the seeds' names are bounded alike
  seeds.erase("raw_step_times");
  seeds["loss_values"] = {nullptr, -1e300};
  EXPECT_NE(refusal(seeds).find("loss_values[1] is -1e+300"), std::string::npos) << refusal(seeds);
  auto lr = h100(8000);
  lr["raw_learning_rates"] = {3e-4, 1e300};
  EXPECT_NE(refusal(lr).find("raw_learning_rates[1]"), std::string::npos);
  auto memory = h100(8000);
  memory["raw_memory_values"] = {1e300};
  EXPECT_NE(refusal(memory).find("raw_memory_values[0]"), std::string::npos);
  // One run of several: named as such.
  auto runs = h100(8000);
  nlohmann::json run = {{"performance_metrics", {{"tokens_per_second_per_gpu", 8000.0}}},
                        {"raw_step_times", {1.0}},
                        {"raw_loss_values", {9.5}}};
  runs["runs"] = {run, run};
  EXPECT_EQ(refusal(runs), "");
  runs["runs"][1]["raw_loss_values"] = {9.5, 1e300};
  EXPECT_NE(refusal(runs).find("(a run of its runs): raw_loss_values[1]"), std::string::npos)
      << refusal(runs);
  // Within reach, and a diverged run's large loss, are read.
  auto diverged = h100(8000);
  diverged["raw_loss_values"] = {11.9, 3.2e4, 0.0};
  EXPECT_EQ(refusal(diverged), "");
  EXPECT_EQ(from_json(diverged, "d.json").losses.size(), 3u);
}

TEST(ReportHostile, NodeLayoutsAreNotPooled) {
  auto two = h100(8000);
  two["gpu_info"]["nodes"] = 2;
  two["gpu_info"]["devices_per_node"] = 4;
  two["raw_step_times"] = {1.1, 1.0, 0.9};
  const std::vector<Result> rs{from_json(h100(8000), "one-node/benchmark_cuda_qwen.json"),
                               from_json(two, "two-nodes/benchmark_cuda_qwen.json")};
  const auto groups = group_results(rs);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].configuration(), "nodes 1");
  // A result written before nodes was recorded ran on device_count / devices_per_node nodes.
  auto older = h100(8000);
  older["gpu_info"].erase("nodes");
  EXPECT_EQ(bench::experiment_value(older, bench::experiment_field("/gpu_info/nodes")), 1);
  older["gpu_info"]["devices_per_node"] = 4;
  EXPECT_EQ(bench::experiment_value(older, bench::experiment_field("/gpu_info/nodes")), 2);
}

TEST(ReportHostile, UncomparedPlatformsNameTheFieldThatDiffers) {
  auto amd = h100(6000, "amd");
  amd["gpu_info"]["device_count"] = 4;  // training_config.num_gpus 8 still
  amd["gpu_info"]["devices_per_node"] = 4;
  amd["raw_step_times"] = {2.0, 2.01, 1.99};
  const std::vector<Result> rs{from_json(amd, "amd/benchmark_rocm_qwen.json"),
                               from_json(h100(8000), "nvd/benchmark_cuda_qwen.json")};
  const auto groups = group_results(rs);
  const auto comparisons = compare_groups(groups);
  const auto lines = uncompared_platforms(comparisons);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].find("()"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("(GPUs: "), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("amd 4"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace tprimat::report
