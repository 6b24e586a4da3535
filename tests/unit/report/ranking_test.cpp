// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Reports never crown or hide (issue 38 §2): flagged results are never a peak, a winner or a
// projection's base; wins only outside the noise; one tokens/s figure; labels tell runs apart;
// plots and CSV.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tprimat/report/compare.hpp"
#include "tprimat/report/compare_plot.hpp"
#include "tprimat/report/compare_report.hpp"
#include "tprimat/report/csv.hpp"
#include "tprimat/report/load.hpp"
#include "tprimat/report/peak.hpp"
#include "tprimat/report/peak_plot.hpp"

namespace tprimat::report {
namespace {

/// An 8-GPU MI300X llama result at `per_gpu` tokens/s/GPU (72,500 is the Primus-Rival README's
/// 267.6% MFU), its runs `runs` (the figure alone when empty).
Result mi300x(double per_gpu, std::vector<double> runs = {}, std::string file = "a/x.json") {
  nlohmann::json doc = {
      {"platform", "amd"},
      {"model", {{"cli_name", "llama"}}},
      {"gpu_info", {{"device_name", "AMD Instinct MI300X"}, {"device_count", 8}}},
      {"training_config", {{"global_batch_size", 64}, {"sequence_length", 2048}, {"num_gpus", 8}}},
      {"performance_metrics",
       {{"avg_step_time_seconds", 64 * 2048 / (8 * per_gpu)},
        {"tokens_per_second", 8 * per_gpu},
        {"tokens_per_second_per_gpu", per_gpu}}},
      {"step_times", {1.0, 1.01, 0.99}}};
  Result r = from_json(doc, file);
  if (!runs.empty()) r.run_tokens_per_second_per_gpu = runs;
  return r;
}

TEST(ReportRanking, OnePredicateForEveryPath) {
  const Result flagged = mi300x(72500), valid = mi300x(6000);
  EXPECT_FALSE(flagged.usable_for_ranking());
  EXPECT_TRUE(valid.usable_for_ranking());
  EXPECT_EQ(flagged.usable_for_ranking(), flagged.warnings().empty());
}

TEST(ReportRanking, AFlaggedResultIsNeverThePeakNorProjected) {
  // The case: the README example (267.6% MFU) beside a valid MI300X import.
  const std::vector<Result> rs{mi300x(72500, {}, "primus-rival/train_amd_prim_llama.json"),
                               mi300x(6000, {}, "mi300x/benchmark_rocm_llama.json")};
  const auto peaks = peaks_per_platform_model(rs);
  ASSERT_EQ(peaks.size(), 1u);
  EXPECT_EQ(peaks[0], &rs[1]) << "the valid import is the platform's peak";
  EXPECT_EQ(flagged_results(rs), (std::vector<const Result*>{&rs[0]}));
  LoadOutcome in;
  in.inputs = {rs[0].file, rs[1].file};
  const std::string text = peak_text(in, rs, {});
  EXPECT_NE(text.find("configuration:   amd llama unknown (mi300x/benchmark_rocm_llama.json)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("4,640,000"), std::string::npos) << "projected from the flagged result";
  EXPECT_NE(text.find(flagged_heading), std::string::npos) << text;
  // Every result flagged: no peak, no projection.
  const std::vector<Result> only{mi300x(72500)};
  const std::string none = peak_text(in, only, {});
  EXPECT_NE(none.find("none: every result is flagged"), std::string::npos) << none;
  EXPECT_EQ(none.find("MULTI-NODE PROJECTION"), std::string::npos) << none;
}

TEST(ReportRanking, AFlaggedResultIsNeverAWinnerAndIsListedApart) {
  auto nvd = mi300x(6000);
  nvd.platform = "nvd";
  nvd.experiment[bench::experiment_field("/platform")] = "nvd";
  const std::vector<Result> rs{mi300x(72500), nvd};
  const auto groups = group_results(rs);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_FALSE(groups[0].flagged) << "usable groups first";
  EXPECT_TRUE(groups[1].flagged);
  for (const auto& c : compare_groups(groups)) {
    EXPECT_EQ(c.verdict, "");
    for (const auto* g : c.platforms) EXPECT_FALSE(g->flagged);
  }
  LoadOutcome in;
  in.results = rs;
  const std::string text = compare_text(in, groups, compare_groups(groups));
  const auto apart = text.find(flagged_heading);
  ASSERT_NE(apart, std::string::npos) << text;
  // Both MFU figures of the flagged result carry the marker: 267.6% and 133.8% (FP8 peak).
  EXPECT_NE(text.find("267.6% (!)", apart), std::string::npos) << text;
  EXPECT_NE(text.find("133.8% (!)", apart), std::string::npos) << text;
  // A flagged run of one configuration is not pooled with its usable runs.
  const std::vector<Result> same{mi300x(6000), mi300x(72500)};
  EXPECT_EQ(group_results(same).size(), 2u);
}

TEST(ReportRanking, ALogsOwnTokensPerSecondContradictedIsFlagged) {
  // An imported Primus log states 6,000 tokens/s/GPU; ours read 8,000 from its configuration.
  nlohmann::json doc = {
      {"platform", "amd"},
      {"model", {{"cli_name", "llama"}}},
      {"gpu_info", {{"device_name", "AMD Instinct MI300X"}, {"device_count", 8}}},
      {"training_config", {{"global_batch_size", 64}, {"sequence_length", 2048}}},
      {"performance_metrics", {{"tokens_per_second", 64000}, {"tokens_per_second_per_gpu", 8000}}},
      {"imported", {{"format", "primus"}, {"log_tokens_per_second_per_gpu_mean", 6000}}}};
  const Result r = from_json(doc, "i/benchmark_rocm_llama.json");
  EXPECT_EQ(r.framework, "primus");
  ASSERT_FALSE(r.usable_for_ranking());
  EXPECT_EQ(r.warnings()[0].rfind("computed 8000.0 tokens/s/GPU differs from the log's own", 0), 0u)
      << r.warnings()[0];
}

TEST(ReportRanking, OverTheFp8PeakWithoutABf16PeakIsFlagged) {
  bench::SanityFigures f{2100, 0, "a device the table lacks"};
  f.fp8_peak_tflops = 1978.9;
  const auto w = bench::sanity_warnings(f);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].rfind("MFU against the FP8 peak 106.1% exceeds 100%", 0), 0u) << w[0];
}

TEST(ReportRanking, FlaggedBarsHaveAColourNoPlatformHas) {
  for (const char* p : {"nvd", "amd", "cpu", "other"})
    EXPECT_NE(flagged_colour, platform_colour(p)) << p;
  const std::vector<Result> rs{mi300x(72500), mi300x(6000)};
  EXPECT_EQ(bar_colour(rs[0]), flagged_colour);
  EXPECT_EQ(bar_colour(rs[1]), platform_colour("amd"));
  const auto groups = group_results(rs);
  EXPECT_EQ(bar_colour(groups[0]), platform_colour("amd"));
  EXPECT_EQ(bar_colour(groups[1]), flagged_colour);
}

Result runs_of(std::string platform, std::vector<double> runs, double step_cv) {
  Result r;
  r.platform = std::move(platform);
  r.model = "qwen";
  r.strategy = "s";
  r.num_gpus = 8;
  r.run_tokens_per_second_per_gpu = runs;
  r.tokens_per_second_per_gpu = core::mean(runs);
  r.avg_step_time = 1;
  r.std_step_time = step_cv;
  return r;
}

TEST(ReportVerdict, WinsOnlyOutsideTheSpread) {
  // Inside the step-to-step spread: no winner.
  const std::vector<Result> inside{runs_of("nvd", {100}, 0.05), runs_of("amd", {102}, 0.05)};
  const auto inside_groups = group_results(inside);
  const auto c1 = compare_groups(inside_groups);
  EXPECT_EQ(c1[0].verdict, "no winner: amd 1.02x nvd");
  EXPECT_FALSE(c1[0].has_winner);
  // Outside it: a win.
  const std::vector<Result> outside{runs_of("nvd", {100}, 0.01), runs_of("amd", {110}, 0.01)};
  const auto outside_groups = group_results(outside);
  const auto c2 = compare_groups(outside_groups);
  EXPECT_EQ(c2[0].verdict, "amd wins: 1.10x nvd");
  EXPECT_TRUE(c2[0].has_winner);
  // Overlapping 95% intervals: no winner.
  const std::vector<Result> overlap{runs_of("nvd", {100, 102, 98}, 0.01),
                                    runs_of("amd", {101, 103, 99}, 0.01)};
  const auto overlap_groups = group_results(overlap);
  EXPECT_EQ(compare_groups(overlap_groups)[0].verdict, "no winner: amd 1.01x nvd");
  // Spread unknown (no step times, one run each): not shown to be a win.
  auto a = runs_of("nvd", {100}, 0.01), b = runs_of("amd", {150}, 0.01);
  a.std_step_time = b.std_step_time = unknown;
  const std::vector<Result> unknown_spread{a, b};
  const auto unknown_groups = group_results(unknown_spread);
  const auto c3 = compare_groups(unknown_groups);
  EXPECT_EQ(c3[0].verdict, "no winner: amd 1.50x nvd");
  EXPECT_NE(c3[0].noise.find("spread is unknown"), std::string::npos) << c3[0].noise;
}

TEST(ReportVerdict, AZeroPercentDifferenceIsATie) {
  // 3 runs each with separated intervals would make it a "win" by the CI test alone.
  const std::vector<Result> rs{runs_of("nvd", {1000.0, 1000.1, 999.9}, 0),
                               runs_of("amd", {1000.2, 1000.3, 1000.1}, 0)};
  const auto groups = group_results(rs);
  const auto c = compare_groups(groups);
  EXPECT_EQ(c[0].verdict, "no winner: amd 1.00x nvd");
  EXPECT_EQ(c[0].noise, "a 0.0% difference");
}

TEST(ReportStatistic, CompareStatesTheResultsOwnTokensPerSecond) {
  // The case: the file's 10503.0 (all steps) against the runs' mean 10533.4.
  const std::vector<Result> rs{mi300x(10503.0, {10000, 11200, 10400.2})};
  const auto groups = group_results(rs);
  EXPECT_DOUBLE_EQ(groups[0].tokens_per_second_per_gpu, 10503.0);
  EXPECT_EQ(tokens_cell(groups[0]).rfind("10503.0 ± ", 0), 0u) << tokens_cell(groups[0]);
  // Two results of one configuration: total tokens over total time.
  auto slow = mi300x(1000), fast = mi300x(3000);
  slow.step_times = {3, 3, 3};
  slow.avg_step_time = 3;  // 9 s at 1000
  fast.step_times = {1, 1, 1};
  fast.avg_step_time = 1;  // 3 s at 3000
  EXPECT_DOUBLE_EQ(detail::pooled_tokens_per_second_per_gpu({&slow, &fast}), 18000.0 / 12);
}

TEST(ReportLabels, FoldersOfOneNameAreToldApart) {
  std::vector<Result> rs(3);
  rs[0].file = "/x/a/run1/benchmark_cuda_llama.json";
  rs[1].file = "/x/b/run1/benchmark_cuda_llama.json";
  rs[2].file = "/x/b/run2/benchmark_cuda_llama.json";
  name_runs_apart(rs);
  EXPECT_EQ(rs[0].run, "a/run1");
  EXPECT_EQ(rs[1].run, "b/run1");
  EXPECT_EQ(rs[2].run, "run2");
}

TEST(ReportLabels, PeakRowsNameWhatTheColumnsDoNot) {
  auto nvd = mi300x(6000);
  nvd.platform = "nvd";
  nvd.experiment[bench::experiment_field("/platform")] = "nvd";
  nvd.experiment[bench::experiment_field("/training_config/sequence_length")] = 4096;
  const std::vector<Result> rs{mi300x(6000), nvd};
  const auto peaks = peaks_per_platform_model(rs);
  EXPECT_EQ(row_configurations(peaks), (std::vector<std::string>{"seq 2048", "seq 4096"}));
  const std::string table = peak_table(peaks).text();
  EXPECT_NE(table.find("configuration"), std::string::npos) << table;
  EXPECT_NE(table.find("seq 4096"), std::string::npos) << table;
  // Alike but for the platform and device: no column.
  const std::vector<Result> alike{mi300x(6000), mi300x(6100)};
  EXPECT_EQ(peak_table(peaks_per_platform_model(alike)).text().find("configuration"),
            std::string::npos);
}

TEST(ReportLabels, LayersPerStageIsNotPp) {
  constexpr auto stages = bench::experiment_field("/parallelism_config/pipeline_layers");
  EXPECT_EQ(bench::experiment_label(stages, nlohmann::json({4})), "layers per stage 4");
}

TEST(ReportLabels, FrameworksApartAreNamed) {
  auto megatron = mi300x(6000), primus = mi300x(6100);
  megatron.framework = "megatron";
  primus.framework = "primus";
  const std::vector<Result> rs{megatron, primus};
  const auto groups = group_results(rs);
  ASSERT_EQ(groups.size(), 2u) << "two frameworks' runs are never pooled";
  EXPECT_EQ(groups[0].configuration(), "framework megatron");
  const auto rows = group_label_rows(groups);
  EXPECT_NE(std::find(rows[1].begin(), rows[1].end(), "framework primus"), rows[1].end());
  // The device is named on every figure.
  EXPECT_NE(std::find(rows[0].begin(), rows[0].end(), "AMD Instinct MI300X"), rows[0].end());
}

TEST(ReportPlot, StepTicksAreWholeNumbers) {
  EXPECT_EQ(step_tick_interval(1), 1);
  EXPECT_EQ(step_tick_interval(3), 1);
  EXPECT_EQ(step_tick_interval(10), 1);
  EXPECT_EQ(step_tick_interval(11), 2);
  EXPECT_EQ(step_tick_interval(40), 5);
  EXPECT_EQ(step_tick_interval(100), 10);
  EXPECT_EQ(step_tick_interval(1000), 100);
  EXPECT_EQ(step_tick_interval(3000000), 500000);
}

TEST(ReportPlot, RunsAreOverlaidFromStepOne) {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("tprimat_runs_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  Result r = mi300x(6000, {5900, 6100});
  r.run_series = {{{1.0, 1.1}, {10.0, 9.0}, {}, {}}, {{1.2, 1.0}, {10.1, 9.1}, {}, {}}};
  const std::vector<Result> rs{r};
  write_compare_plot(dir, group_results(rs));
  const auto read = [&](const char* name) {
    std::ifstream f(dir / name);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  // Each run's own file, from step 1: no chain that saws back at the second run's start.
  EXPECT_NE(read("compare_series_1.dat").find("\n1 10 NaN NaN 1\n2 9 NaN NaN 1.1\n"),
            std::string::npos)
      << read("compare_series_1.dat");
  EXPECT_NE(read("compare_series_2.dat").find("\n1 10.1 NaN NaN 1.2\n"), std::string::npos)
      << read("compare_series_2.dat");
  const std::string gp = read("compare.gp");
  EXPECT_NE(gp.find("compare_series_2.dat\" using 1:5"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set xtics 1 "), std::string::npos) << gp;
  EXPECT_NE(gp.find("set yrange [0<*:*]\nset title \"Step time (s)\""), std::string::npos) << gp;
  EXPECT_NE(read("compare_labels.dat").find("run 2/2"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(ReportPlot, LongSeriesAreThinnedKeepingTheFirstAndLastSteps) {
  EXPECT_EQ(plotted_steps(0).size(), 0u);
  EXPECT_EQ(plotted_steps(5, 10), (std::vector<std::size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(plotted_steps(10, 4), (std::vector<std::size_t>{0, 3, 6, 9}));
  EXPECT_EQ(plotted_steps(11, 4), (std::vector<std::size_t>{0, 4, 8, 10}));
  for (const std::size_t n : {2001u, 4000u, 3000000u}) {
    const auto steps = plotted_steps(n);
    EXPECT_LE(steps.size(), max_plotted_steps) << n;
    EXPECT_GT(steps.size(), max_plotted_steps / 2) << n;
    EXPECT_EQ(steps.front(), 0u);
    EXPECT_EQ(steps.back(), n - 1);
  }
  // A million-step result writes a data file of the figure's size, saying so.
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("tprimat_thin_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  Result r = mi300x(6000, {5900, 6100});
  std::vector<double> losses(1000000);
  for (std::size_t k = 0; k < losses.size(); ++k) losses[k] = 10.0 - 1e-6 * double(k);
  r.run_series = {{{}, losses, {}, {}}};
  const std::vector<Result> rs{r};
  write_compare_plot(dir, group_results(rs));
  std::ifstream f(dir / "compare_series_1.dat");
  const std::string dat(std::istreambuf_iterator<char>(f), {});
  EXPECT_LT(dat.size(), 100000u);
  EXPECT_NE(dat.find("1998 of 1000000 steps drawn: one in 501 from the first, and the last"),
            std::string::npos)
      << dat.substr(0, 300);
  EXPECT_NE(dat.find("\n1000000 9 NaN NaN NaN\n"), std::string::npos);  // the last step
  std::filesystem::remove_all(dir);
}

TEST(ReportCsv, FieldsAreQuotedAsRfc4180) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "two\\nlines");  // escaped: a row stays one line
  EXPECT_EQ(csv_field(" edge"), "\" edge\"");
  EXPECT_EQ(csv_number(unknown), "");
  // What a spreadsheet would run as a formula is text; a negative number stays a number.
  EXPECT_EQ(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
  EXPECT_EQ(csv_field("@cmd"), "'@cmd");
  EXPECT_EQ(csv_field("-3.5"), "-3.5");
}

TEST(ReportCsv, OneRowPerResultWithUnits) {
  const std::vector<Result> rs{mi300x(72500, {}, "p/x,y.json"), mi300x(6000, {}, "m/z.json")};
  const std::string csv = peak_csv(rs);
  std::vector<std::string> lines;
  for (std::size_t at = 0, end; (end = csv.find("\r\n", at)) != std::string::npos; at = end + 2)
    lines.push_back(csv.substr(at, end - at));
  ASSERT_EQ(lines.size(), 3u) << csv;
  for (const char* h :
       {"file", "framework", "platform", "TP", "PP", "layers per stage [layers]", "DP",
        "mbs [sequences]", "gbs [sequences]", "seq [tokens]", "precision", "data",
        "tokens/s [tokens/s]", "step time mean [s]", "MFU dense bf16 peak [%]", "CP",
        "TFLOP/s/GPU causal [TFLOP/s]", "MFU causal dense bf16 peak [%]",
        "peak allocated per GPU [GiB]", "flagged", "peak of its platform x model"})
    EXPECT_NE(lines[0].find(h), std::string::npos) << h;
  EXPECT_EQ(lines[1].rfind("\"p/x,y.json\",", 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find(",true,MFU 258.6% exceeds 100%"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[1].substr(lines[1].size() - 6), ",false") << "a flagged result is no peak";
  EXPECT_EQ(lines[2].substr(lines[2].size() - 5), ",true");
  EXPECT_NE(lines[2].find(",amd,llama,"), std::string::npos) << lines[2];
}

}  // namespace
}  // namespace tprimat::report
