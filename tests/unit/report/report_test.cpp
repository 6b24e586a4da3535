// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Report building blocks: dense peaks, number formatting, the seeds' schema, grouping and noise.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../../support/fifo.hpp"
#include "tprimat/backend/peaks.hpp"
#include "tprimat/report/compare.hpp"
#include "tprimat/report/import_log.hpp"
#include "tprimat/report/load.hpp"
#include "tprimat/report/peak.hpp"
#include "tprimat/report/peak_plot.hpp"
#include "tprimat/report/plot_labels.hpp"
#include "tprimat/report/text.hpp"

namespace tprimat::report {
namespace {

TEST(ReportPeaks, DenseNotSparse) {
  EXPECT_DOUBLE_EQ(backend::dense_peak_tflops("NVIDIA H100 80GB HBM3"), 989.4);
  EXPECT_DOUBLE_EQ(backend::dense_peak_tflops("NVIDIA H200"), 989.4);
  EXPECT_DOUBLE_EQ(backend::dense_peak_tflops("NVIDIA H100 PCIe"), 756.5);
  EXPECT_DOUBLE_EQ(backend::dense_peak_tflops("AMD Instinct MI300X"), 1307.4);
  EXPECT_EQ(backend::dense_peak_tflops("AMD EPYC 7763"), 0);
  EXPECT_NE(backend::dense_peak_tflops("NVIDIA H100 80GB HBM3"), backend::seeds_sparse_h100_tflops);
}

TEST(ReportPeaks, NamesAsAPersonTypesThem) {
  // `tprimat plan --device h200` names the device tprimat knows as "NVIDIA H200".
  EXPECT_DOUBLE_EQ(backend::dense_peak_tflops("h200"), 989.4);
  EXPECT_DOUBLE_EQ(backend::dense_fp8_peak_tflops("mi300x"), 2614.9);
  EXPECT_DOUBLE_EQ(backend::dense_peak_tflops("h100 pcie"), 756.5);
  EXPECT_DOUBLE_EQ(backend::known_memory_gib("h200"), 139.8);
  EXPECT_DOUBLE_EQ(backend::known_memory_gib("nvidia h100"), 79.1);
  EXPECT_EQ(backend::known_memory_gib("h100 pcie"), 0);
  EXPECT_EQ(backend::dense_peak_tflops("h20"), 0);
}

TEST(ReportText, Numbers) {
  EXPECT_EQ(grouped(87933.4), "87,933");
  EXPECT_EQ(grouped(1234567.891, 1), "1,234,567.9");
  EXPECT_EQ(grouped(-1000), "-1,000");
  EXPECT_EQ(num(unknown), "n/a");
  EXPECT_EQ(percent(0.383), "38.3%");
  EXPECT_EQ(mean_std(10, unknown, 1), "10.0");
  EXPECT_EQ(mean_std(10, 0.5, 1), "10.0 ± 0.5");
}

TEST(ReportText, TableAlignsUtf8) {
  Table t({"a", "bb"});
  t.add({"± 1", "x"});
  EXPECT_EQ(t.text(), "a    bb\n± 1  x\n");
  EXPECT_EQ(t.markdown(), "| a | bb |\n|---|---|\n| ± 1 | x |\n");
}

nlohmann::json seeds_doc() {
  return nlohmann::json::parse(R"({
    "platform": "amd", "gpu_info": {"device_name": "AMD Instinct MI300X", "device_count": 8},
    "training_config": {"global_batch_size": 128, "sequence_length": 2048, "num_gpus": 8},
    "performance_metrics": {"avg_step_time_seconds": 2.0},
    "step_times": [1.9, 2.0, 2.1], "loss_values": [11, 10, 9]})");
}

TEST(ReportLoad, PrimusRivalSchemaFillsTheGaps) {
  const Result r = from_json(seeds_doc(), "out/benchmark_rocm_llama.json");
  EXPECT_EQ(r.model, "llama");  // from the file name
  EXPECT_EQ(r.run, "out");
  EXPECT_EQ(r.strategy, "unknown");
  EXPECT_DOUBLE_EQ(r.tokens_per_second, 128.0 * 2048 / 2.0);
  EXPECT_DOUBLE_EQ(r.tokens_per_second_per_gpu, 128.0 * 2048 / 2.0 / 8);
  EXPECT_EQ(r.step_times.size(), 3u);
  EXPECT_EQ(r.losses.size(), 3u);
  EXPECT_NEAR(r.std_step_time, 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(r.peak_tflops_dense, 1307.4);
  EXPECT_EQ(r.flops_source, "derived from the model name (full model)");
  EXPECT_GT(r.mfu(), 0);
}

TEST(ReportLoad, MissingFieldNamesFileAndField) {
  auto doc = seeds_doc();
  doc.erase("performance_metrics");
  try {
    from_json(doc, "x/benchmark_rocm_llama.json");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_STREQ(e.what(),
                 "tprimat: x/benchmark_rocm_llama.json: missing "
                 "performance_metrics.tokens_per_second; not a benchmark result (skipped)");
  }
}

TEST(ReportLoad, NumberPastDoubleRangeIsBadInput) {
  // Found by fuzzing: nlohmann's out_of_range escaped load_inputs, which catches InputError.
  EXPECT_THROW(load_text(R"({"platform": "nvd", "training_config": {"num_gpus": 1e400}})",
                         "x/benchmark_cuda_llama.json"),
               core::InputError);
}

TEST(ReportLoad, AbsurdGpuCountsAreBadInput) {
  // Found by fuzzing (UBSan): 1e10 was cast to int, and 2e9 GPUs overflowed the node projection.
  auto doc = seeds_doc();
  doc["training_config"]["num_gpus"] = 1e10;
  EXPECT_EQ(from_json(doc, "x/benchmark_rocm_llama.json").num_gpus, 8)
      << "past int: not recorded, so gpu_info.device_count counts";
  doc["training_config"]["num_gpus"] = 2'000'000'000;
  EXPECT_THROW(from_json(doc, "x/benchmark_rocm_llama.json"), core::InputError);
}

Result fake(std::string platform, std::vector<double> runs, double step_cv = 0.01) {
  Result r;
  r.platform = std::move(platform);
  r.model = "qwen";
  r.strategy = "s";
  r.num_gpus = 8;
  r.run_tokens_per_second_per_gpu = std::move(runs);
  r.tokens_per_second_per_gpu = core::mean(r.run_tokens_per_second_per_gpu);
  r.avg_step_time = 1;
  r.std_step_time = step_cv;
  return r;
}

TEST(ReportCompare, OverlappingIntervalsAreNoise) {
  const std::vector<Result> rs{fake("nvd", {100, 102, 98}), fake("amd", {101, 103, 99})};
  const auto groups = group_results(rs);
  const auto cmp = compare_groups(groups);
  ASSERT_EQ(cmp.size(), 1u);
  EXPECT_EQ(cmp[0].verdict, "no winner: amd 1.01x nvd");  // "wins" only outside the noise
  EXPECT_NE(cmp[0].noise.find("inside the noise"), std::string::npos);
}

TEST(ReportCompare, SeparatedIntervalsAreNotNoise) {
  const std::vector<Result> rs{fake("nvd", {100, 101, 99}), fake("amd", {150, 151, 149})};
  const auto groups = group_results(rs);
  const auto cmp = compare_groups(groups);
  EXPECT_EQ(cmp[0].verdict, "amd wins: 1.50x nvd");
  EXPECT_EQ(cmp[0].noise, "");
}

TEST(ReportCompare, FewRunsUseStepSpread) {
  const std::vector<Result> rs{fake("nvd", {100}, 0.05), fake("amd", {102}, 0.05)};
  const auto groups = group_results(rs);
  const auto cmp = compare_groups(groups);
  EXPECT_EQ(cmp[0].noise,
            "fewer than 3 runs: no confidence interval; the 2.0% difference is inside the "
            "step-to-step spread (5.0%)");
}

/// A result of one configuration: `seq` and the GPU count vary, the global batch per GPU stays 8
/// (the same per-GPU work) unless `gbs` is given.
Result configured(std::string platform, int gpus, int seq, double per_gpu, int gbs = 0) {
  Result r = fake(std::move(platform), {per_gpu});
  r.num_gpus = gpus;
  r.seq = seq;
  r.gbs = gbs > 0 ? gbs : 8 * gpus;
  // The step time its batch and throughput give: a result contradicting itself is flagged.
  r.avg_step_time = double(r.gbs) * seq / (per_gpu * gpus);
  r.std_step_time *= r.avg_step_time;
  auto doc = nlohmann::json::object();
  doc["platform"] = r.platform;
  doc["model"]["cli_name"] = r.model;
  doc["gpu_info"]["device_count"] = gpus;
  doc["parallelism_config"] = {{"tensor_model_parallel_size", 1},
                               {"data_parallel_size", gpus},
                               {"strategy_name", r.strategy}};
  doc["training_config"] = {{"global_batch_size", r.gbs}, {"sequence_length", seq}};
  for (std::size_t i = 0; i < bench::experiment_field_count; ++i)
    r.experiment.push_back(bench::experiment_value(doc, i));
  return r;
}

TEST(ReportCompare, RefusalNamesTheValuesAndTheFlagThatStatesThem) {
  // Two imported logs of one configuration whose data the logs name two ways (issue 38: "data
  // differ", and no way to say they are one): both values, and how to say they are the same.
  Result nvd = configured("nvd", 8, 2048, 100), amd = configured("amd", 8, 2048, 90);
  constexpr auto data = bench::experiment_field("/training_config/data");
  constexpr auto seed = bench::experiment_field("/training_config/seed");
  nvd.experiment[data] = "unknown (imported nemo log)";
  amd.experiment[data] = "unknown (imported primus log)";
  nvd.experiment[seed] = 42;
  amd.imported = true;  // its null seed is a setting its log does not print
  const std::vector<Result> results{nvd, amd};  // the groups point into it
  const auto groups = group_results(results);
  const auto lines = uncompared_platforms(compare_groups(groups));
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "qwen / s / 8 GPUs: amd and nvd are not compared: not every one ran the "
                       "same configuration (data: amd unknown (imported primus log), nvd unknown "
                       "(imported nemo log); seed: amd not in log, nvd 42). If they ran the same, "
                       "say so: re-import each log with the same --data LABEL and --seed N"}));
}

TEST(ReportCompare, UnlikeConfigurationsAreNeverPooled) {
  // The issue's case: a seq-256 and a seq-2048 run read as "runs 2, 14441.8 ± 4169.1".
  const std::vector<Result> rs{configured("nvd", 8, 256, 17390), configured("nvd", 8, 2048, 11494),
                               configured("nvd", 8, 256, 17400)};
  const auto groups = group_results(rs);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].results.size(), 2u);  // the two seq-256 runs pool
  EXPECT_EQ(groups[0].configuration(), "seq 256");
  EXPECT_EQ(groups[1].configuration(), "seq 2048");
  EXPECT_EQ(groups[1].per_gpu.count, 1u);
  const std::string table = results_table(groups).text();
  EXPECT_NE(table.find("configuration"), std::string::npos) << table;
  EXPECT_NE(table.find("seq 2048"), std::string::npos) << table;
  // Nothing differs within one model x strategy x GPU count: no configuration to name.
  const std::vector<Result> same{configured("nvd", 8, 256, 1), configured("amd", 8, 256, 2)};
  const auto one = group_results(same);  // groups point into `same`: it must outlive them
  EXPECT_EQ(one[0].configuration(), "");
  EXPECT_EQ(results_table(one).text().find("configuration"), std::string::npos);
}

TEST(ReportCompare, ContextParallelRunsAreAnotherExperiment) {
  // 8 GPUs as DP 8, and as CP 2 x DP 4: never pooled, and labelled by what differs.
  std::vector<Result> rs{configured("nvd", 8, 8192, 1000), configured("nvd", 8, 8192, 1200)};
  constexpr auto cp = bench::experiment_field("/parallelism_config/context_parallel_size");
  constexpr auto dp = bench::experiment_field("/parallelism_config/data_parallel_size");
  rs[1].experiment[cp] = 2;
  rs[1].experiment[dp] = 4;
  const auto groups = group_results(rs);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].configuration(), "CP 1, DP 8");
  EXPECT_EQ(groups[1].configuration(), "CP 2, DP 4");
  // CP 1 everywhere (or absent, results before the field): no CP in any label.
  const std::vector<Result> same{configured("nvd", 8, 256, 1), configured("nvd", 8, 2048, 2)};
  const auto one = group_results(same);
  EXPECT_EQ(one[0].configuration(), "seq 256");
  EXPECT_EQ(rs[0].experiment[cp], 1) << "a result without the field ran CP 1";
}

TEST(ReportCompare, ShardingStrategiesAreAnotherExperimentNamedByTheirStage) {
  // A result from before the strategy was recorded (ZeRO-1 by its distributed_optimizer alone)
  // pools with a new optim one; optim_grads is another experiment, labelled by its ZeRO stage.
  std::vector<Result> rs{configured("nvd", 8, 2048, 1000), configured("nvd", 8, 2048, 1010),
                         configured("nvd", 8, 2048, 1100)};
  constexpr auto s = bench::experiment_field("/parallelism_config/data_parallel_sharding_strategy");
  const auto with = [](nlohmann::json parallelism) {
    return nlohmann::json{{"parallelism_config", std::move(parallelism)}};
  };
  rs[0].experiment[s] = bench::experiment_value(with({{"distributed_optimizer", true}}), s);
  rs[1].experiment[s] = bench::experiment_value(
      with({{"distributed_optimizer", true}, {"data_parallel_sharding_strategy", "optim"}}), s);
  rs[2].experiment[s] = bench::experiment_value(
      with({{"distributed_optimizer", true}, {"data_parallel_sharding_strategy", "optim_grads"}}),
      s);
  const auto groups = group_results(rs);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].results.size(), 2u);
  EXPECT_EQ(groups[0].configuration(), "sharding ZeRO-1");
  EXPECT_EQ(groups[1].configuration(), "sharding ZeRO-2");
}

TEST(ReportCompare, PlatformsComparedOnlyOnOneConfiguration) {
  const std::vector<Result> same{configured("nvd", 8, 2048, 100), configured("amd", 8, 2048, 150)};
  const auto groups = group_results(same);
  const auto cmp = compare_groups(groups);
  ASSERT_EQ(cmp.size(), 1u);
  EXPECT_EQ(cmp[0].verdict, "amd wins: 1.50x nvd");
  EXPECT_TRUE(uncompared_platforms(cmp).empty());

  const std::vector<Result> unlike{configured("nvd", 8, 2048, 100), configured("amd", 8, 256, 150)};
  const auto g2 = group_results(unlike);
  const auto c2 = compare_groups(g2);
  ASSERT_EQ(c2.size(), 2u);
  EXPECT_EQ(c2[0].verdict, "");
  EXPECT_EQ(c2[1].verdict, "");
  EXPECT_EQ(c2[0].title(), "qwen / s / 8 GPUs / seq 256");
  EXPECT_EQ(uncompared_platforms(c2),
            (std::vector<std::string>{"qwen / s / 8 GPUs: amd and nvd are not compared: not every "
                                      "one ran the same configuration (seq: amd 256, nvd 2048)"}));
}

TEST(ReportPeak, MeasuredScalingOnlyFromTheSamePerGpuWork) {
  std::vector<Result> rs{configured("nvd", 8, 2048, 100)};
  EXPECT_FALSE(measured_scaling(rs, rs[0]));
  rs.push_back(configured("nvd", 16, 2048, 90));  // gbs 128 at 16 GPUs: 8 per GPU, as at 8
  const auto m = measured_scaling(rs, rs[1]);
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(m->efficiency, 0.9);
  EXPECT_EQ(m->from_gpus, 8);
  EXPECT_EQ(m->to_gpus, 16);
  EXPECT_EQ(choose_scaling(rs, rs[1], {}).efficiency, 0.9);

  // The issue's case: an 8-rank seq-128 run and a 1-rank seq-256 run are not one workload.
  const std::vector<Result> unlike{configured("cpu", 1, 256, 1000), configured("cpu", 8, 128, 220)};
  EXPECT_FALSE(measured_scaling(unlike, unlike[1]));
  const auto choice = choose_scaling(unlike, unlike[1], {});
  EXPECT_DOUBLE_EQ(choice.efficiency, default_scaling_efficiency);
  EXPECT_NE(choice.source.find("differs from the peak in more than the GPU count (seq 256 vs 128)"),
            std::string::npos)
      << choice.source;

  // The same global batch on twice the GPUs halves the work per GPU: strong scaling, not this.
  const std::vector<Result> strong{configured("nvd", 8, 2048, 100, 128),
                                   configured("nvd", 16, 2048, 90, 128)};
  EXPECT_FALSE(measured_scaling(strong, strong[1]));
  EXPECT_NE(choose_scaling(strong, strong[1], {}).source.find("gbs/GPU 16.00 vs 8.00"),
            std::string::npos);
  PeakOptions given;
  given.scaling_efficiency = 0.7;
  EXPECT_DOUBLE_EQ(choose_scaling(strong, strong[1], given).efficiency, 0.7);
}

TEST(ReportPeak, ProjectionNeverBelowTheMeasuredNode) {
  std::vector<Result> rs{configured("nvd", 8, 2048, 100), configured("nvd", 16, 2048, 30)};
  for (auto& r : rs) r.tokens_per_second = r.tokens_per_second_per_gpu * r.num_gpus;
  LoadOutcome in;
  in.inputs = {"a", "b"};
  const std::string text = peak_text(in, rs, {});
  // The peak: 800 tokens/s on 8 GPUs, efficiency 0.30 measured against 16: 2 nodes would be 480,
  // under the one node measured, 4 nodes 960.
  EXPECT_NE(text.find("scaling efficiency 0.30, measured"), std::string::npos) << text;
  EXPECT_NE(text.find("2      16    1,600                             800 *"), std::string::npos)
      << text;
  EXPECT_NE(text.find("4      32    3,200                             960 "), std::string::npos)
      << text;
  EXPECT_NE(text.find("* at efficiency 0.30"), std::string::npos) << text;
}

TEST(ReportImport, MegatronLinesAndMemory) {
  std::istringstream log(
      " iteration 1/ 10 | elapsed time per iteration (ms): 1500.0 | throughput per GPU "
      "(TFLOP/s/GPU): 400.5 | learning rate: 3.000000E-04 | lm loss: 1.050000E+01 |\n"
      "[Rank 0] (after 1 iterations) memory (MB) | allocated: 1.0 | max allocated: 2048.0 |\n"
      "unrelated line\n");
  const LogSeries s = parse_megatron_log(log).series;
  ASSERT_EQ(s.step_times.size(), 1u);
  EXPECT_DOUBLE_EQ(s.step_times[0], 1.5);
  EXPECT_DOUBLE_EQ(s.tflops_per_gpu[0], 400.5);
  EXPECT_DOUBLE_EQ(s.learning_rates[0], 3e-4);
  EXPECT_DOUBLE_EQ(s.losses[0], 10.5);
  EXPECT_DOUBLE_EQ(s.memory_gb[0], 2.0);
}

TEST(ReportImport, PrimusMemUsageWithoutFigure) {
  // Found by fuzzing: "mem usage" with no ':' after it threw std::out_of_range.
  std::istringstream log("elapsed time per iteration (ms): 1000.0 | lm loss: 2.0 | mem usage\n");
  const LogSeries s = parse_megatron_log(log).series;
  ASSERT_EQ(s.step_times.size(), 1u);
  EXPECT_TRUE(s.memory_gb.empty());
}

TEST(ReportImport, NemoProgressBarRedraws) {
  std::istringstream log(
      "Epoch 0: 1/9 [reduced_train_loss=11.0, lr=1e-05, train_step_timing in s=4.0]\r"
      "Epoch 0: 2/9 [reduced_train_loss=10.5, lr=2e-05, train_step_timing in s=2.5]\n");
  const LogSeries s = parse_nemo_log(log).series;
  ASSERT_EQ(s.step_times.size(), 2u);
  EXPECT_DOUBLE_EQ(s.step_times[1], 2.5);
  EXPECT_DOUBLE_EQ(s.losses[1], 10.5);
  EXPECT_DOUBLE_EQ(s.learning_rates[1], 2e-5);
}

TEST(ReportPlot, TicksNameWhatDiffersAndWrap) {
  const TickLabels t = tick_labels({{"nvd", "llama", "minimal_communication", "1 GPU"},
                                    {"nvd", "qwen", "minimal_communication", "1 GPU"}});
  EXPECT_EQ(t.ticks, (std::vector<std::string>{"llama", "qwen"}));
  EXPECT_EQ(t.common_line("every result"), "every result: nvd, minimal_communication, 1 GPU");
  EXPECT_EQ(t.common_line("every peak", {"nvd", "minimal_communication", "1 GPU"}), "");
  EXPECT_EQ(t.full[1], "nvd qwen minimal_communication 1 GPU");
  EXPECT_FALSE(t.numbered);

  // Five bars leave 15 characters a slot; a shared strategy stays off the ticks, a differing one
  // is cut after its underscore.
  std::vector<std::vector<std::string>> rows;
  for (const char* p : {"amd", "nvd", "amd", "nvd", "cpu"})
    rows.push_back({p, "qwen", "minimal_communication", "8 GPUs"});
  rows.back()[1] = "llama";
  const TickLabels w = tick_labels(rows);
  EXPECT_EQ(w.ticks[0], "amd\nqwen");
  EXPECT_EQ(w.common_line("every result"), "every result: minimal_communication, 8 GPUs");
  rows[0][2] = "truly_identical";
  const TickLabels v = tick_labels(rows);
  EXPECT_EQ(v.ticks[1], "nvd\nqwen\nminimal_\ncommunication");
  EXPECT_EQ(v.lines, 4);
}

TEST(ReportPlot, TicksTooWideBecomeNumbersWithAKey) {
  std::vector<std::vector<std::string>> rows;
  for (int i = 0; i < 8; ++i) rows.push_back({"nvd", "llama", "communication" + std::to_string(i)});
  const TickLabels t = tick_labels(rows);  // 80 / 8 - 1 = 9 characters: "communication0" is 14
  ASSERT_TRUE(t.numbered);
  EXPECT_EQ(t.ticks[7], "8");
  EXPECT_EQ(t.lines, 1);
  EXPECT_EQ(
      t.key("bars").rfind("bars:  1 nvd llama communication0,  2 nvd llama communication1", 0), 0u);
  // The key breaks its line before an entry that would pass the width.
  EXPECT_EQ(t.key("bars", 65),
            "bars:  1 nvd llama communication0,  2 nvd llama communication1,\n"
            "3 nvd llama communication2,  4 nvd llama communication3,\n"
            "5 nvd llama communication4,  6 nvd llama communication5,\n"
            "7 nvd llama communication6,  8 nvd llama communication7");
  EXPECT_EQ(tick_labels(rows, 200).numbered, false);
  EXPECT_EQ(TickLabels{}.key("bars"), "");
}

TEST(ReportPlot, OneRowIsNamedInFull) {
  const TickLabels t = tick_labels({{"nvd", "llama", "1 GPU"}});
  EXPECT_EQ(t.ticks[0], "nvd\nllama\n1 GPU");
  EXPECT_TRUE(t.common.empty());
}

TEST(ReportPlot, SeriesLabels) {
  EXPECT_EQ(series_labels({{"nvd", "llama", "(run1)"}, {"nvd", "qwen", "(run1)"}}),
            (std::vector<std::string>{"llama", "qwen"}));
  EXPECT_EQ(series_labels({{"nvd", "llama"}}), (std::vector<std::string>{"nvd llama"}));
  EXPECT_EQ(gpus_label(1), "1 GPU");
  EXPECT_EQ(gpus_label(8), "8 GPUs");
}

TEST(ReportPlot, StripJitterIsFixedAndNarrow) {
  for (std::size_t k = 0; k < 1000; ++k) {
    EXPECT_GE(strip_jitter(k), -0.25);
    EXPECT_LE(strip_jitter(k), 0.25);
  }
  EXPECT_DOUBLE_EQ(strip_jitter(3), strip_jitter(3));
  EXPECT_NE(strip_jitter(0), strip_jitter(1));
}

// A result whose MFU no run can reach is flagged where it is read (bench/sanity.hpp).
TEST(Sanity, PrimusRivalReadmeExample) {
  // The Primus-Rival README's own result (tests/report/fixtures/primus-rival): 267.6% MFU.
  const auto doc = nlohmann::json::parse(R"({
    "platform": "amd",
    "gpu_info": {"device_name": "AMD Instinct MI300X", "device_count": 8,
                 "total_memory_gb": 192.0},
    "training_config": {"max_steps": 500, "global_batch_size": 64, "micro_batch_size": 1,
                        "sequence_length": 2048, "num_gpus": 8},
    "performance_metrics": {"avg_step_time_seconds": 0.45, "tokens_per_second": 580000,
                            "tokens_per_second_per_gpu": 72500},
    "step_times": [], "loss_values": []})");
  const Result r = from_json(doc, "output/train_amd_prim_llama.json");
  EXPECT_NEAR(r.mfu(), 2.676, 0.0005);
  // Its MFU, and its throughput: 64 x 2048 tokens a 0.45 s step is 291,271 tokens/s, not the
  // 580,000 it states.
  ASSERT_EQ(r.warnings().size(), 2u);
  EXPECT_NE(r.warnings()[1].find("a throughput figure is wrong"), std::string::npos);
  // The flag judges the causal count (attention halved: 258.6%); the MFU shown is PaLM's.
  EXPECT_NEAR(r.mfu_causal(), 2.586, 0.0005);
  EXPECT_EQ(r.warnings()[0].rfind("MFU 258.6% exceeds 100%", 0), 0u) << r.warnings()[0];
}

}  // namespace
TEST(ReportLoad, DeepNestingAndWhatIsNotAFileAreSkippedProblems) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tprimat-report-load-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "d.json");
  const auto problem = [](const std::filesystem::path& p) -> std::string {
    try {
      load_file(p);
    } catch (const core::InputError& e) {
      return e.what();
    }
    return "loaded";
  };
  const auto deep = dir / "deep.json";
  std::ofstream(deep) << std::string(100'000, '[') << std::string(100'000, ']');
  EXPECT_EQ(problem(deep), "tprimat: " + deep.string() +
                               ": nests arrays and objects deeper than the 64 levels tprimat reads "
                               "(column 65) (skipped)");
  EXPECT_EQ(problem(dir / "d.json"),
            "tprimat: " + (dir / "d.json").string() + ": is a directory, not a result file (skipped)");
  EXPECT_EQ(problem("/dev/zero"),
            "tprimat: /dev/zero: is a character device, not a result file (skipped)");
  const auto fifo = dir / "fifo.json";
  tprimat::testing::make_fifo(fifo);
  EXPECT_EQ(tprimat::testing::error_reading_fifo(fifo, [&] { load_file(fifo); }),
            "tprimat: " + fifo.string() + ": is a FIFO (named pipe), not a result file (skipped)");
  // load_inputs goes on past them, naming each.
  const auto in = load_inputs({}, {deep.string(), fifo.string(), "/dev/zero"});
  EXPECT_TRUE(in.results.empty());
  EXPECT_EQ(in.problems.size(), 3u);
  // A loop of symbolic links named like a result, in a results directory, is no result: it
  // threw filesystem_error out of the directory walk (exit 1).
  std::filesystem::create_directories(dir / "results");
  const auto loop = dir / "results" / "benchmark_cpu_tiny.json";
  std::filesystem::create_symlink(loop.filename(), loop);
  const auto looped = load_inputs({(dir / "results").string()}, {});
  EXPECT_TRUE(looped.inputs.empty());
  EXPECT_EQ(looped.problems,
            std::vector<std::string>{"tprimat: " + (dir / "results").string() +
                                     ": no benchmark_*.json or train_*.json files"});
  std::filesystem::remove_all(dir);
}

}  // namespace tprimat::report
