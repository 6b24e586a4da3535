// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// bench/result.hpp: the document's keys and values, warm-up exclusion, runs, and atomic writes.
#include "tprimat/bench/result.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../../support/fifo.hpp"
#include "tprimat/model/tiny.hpp"

namespace {

using namespace tprimat;
namespace fs = std::filesystem;

bench::ResultContext tiny_context() {
  bench::ResultContext c;
  c.device.platform = "cpu";
  c.device.software_stack = "cpu";
  c.device.device_name = "test cpu";
  c.device.total_memory_gb = 16;
  c.full = model::dims<model::Tiny>();
  c.dims = c.full.with_layers(2);
  c.plan = parallel::Plan{"minimal_communication", 1, 1, 2, 4};
  c.mbs = 1;
  c.gbs = 8;
  c.seq = 64;
  c.steps = 3;
  c.warmup_steps = 1;
  c.precision = "fp32";
  c.command_line = "tprimat bench";
  c.timestamp = "2026-01-01T00:00:00Z";
  return c;
}

bench::RunRecord record(double base) {
  bench::RunRecord r;
  r.warmup_step_times = {9.0};
  r.step_times = {base, base, base};
  r.losses = {5.0, 4.5, 4.0};
  r.learning_rates = {1e-4, 2e-4, 3e-4};
  r.grad_norms = {1, 1, 1};
  r.memory_gb = {0.5, 0.5, 0.5};
  r.peak_bytes = 0.5 * bench::gib;
  r.complete = true;
  return r;
}

TEST(Result, SeedsKeysAndWarmupExcluded) {
  const auto doc = bench::make_result(tiny_context(), {record(0.5)});
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["complete"], true);
  EXPECT_EQ(doc["platform"], "cpu");
  EXPECT_EQ(doc["gpu_info"]["device_count"], 2);
  EXPECT_EQ(doc["gpu_info"]["software_stack"], "cpu");
  EXPECT_TRUE(doc["gpu_info"]["peak_tflops_dense"].is_null());
  const auto& p = doc["parallelism_config"];
  EXPECT_EQ(p["tensor_model_parallel_size"], 1);
  EXPECT_EQ(p["data_parallel_size"], 2);
  EXPECT_EQ(p["gradient_accumulation_steps"], 4);
  EXPECT_EQ(p["strategy_name"], "minimal_communication");
  EXPECT_EQ(p["distributed_optimizer"], false);
  EXPECT_EQ(p["data_parallel_sharding_strategy"], "no_shard");
  auto zero = tiny_context();
  zero.optimizer.sharding = train::ShardingStrategy::optim;
  EXPECT_EQ(bench::make_result(zero, {record(0.5)})["parallelism_config"]["distributed_optimizer"],
            true);
  // Any strategy that shards shards the optimizer: the seeds' boolean stays true beside it.
  zero.optimizer.sharding = train::ShardingStrategy::optim_grads;
  const auto zero2 = bench::make_result(zero, {record(0.5)})["parallelism_config"];
  EXPECT_EQ(zero2["distributed_optimizer"], true);
  EXPECT_EQ(zero2["data_parallel_sharding_strategy"], "optim_grads");
  EXPECT_EQ(p["sequence_parallel"], false);
  auto sp = tiny_context();
  sp.plan.tp = 2;
  sp.sequence_parallel = true;
  EXPECT_EQ(bench::make_result(sp, {record(0.5)})["parallelism_config"]["sequence_parallel"], true);
  const auto& t = doc["training_config"];
  EXPECT_EQ(t["global_batch_size"], 8);
  EXPECT_EQ(t["num_layers"], 2);
  EXPECT_EQ(t["num_layers_full_model"], 4);
  EXPECT_EQ(t["layers_are_proxy"], true);
  EXPECT_EQ(t["max_steps"], 4);
  const auto& m = doc["performance_metrics"];
  // The 9 s warm-up step must not enter the statistics.
  EXPECT_DOUBLE_EQ(m["avg_step_time_seconds"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(m["max_step_time_seconds"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(m["tokens_per_second"].get<double>(), 8 * 64 / 0.5);
  EXPECT_DOUBLE_EQ(m["tokens_per_second_per_gpu"].get<double>(), 8 * 64 / 0.5 / 2);
  EXPECT_TRUE(m["mfu"].is_null());
  EXPECT_EQ(doc["raw_step_times"].size(), 3u);
  EXPECT_EQ(doc["warmup_step_times"], nlohmann::json::array({9.0}));
  EXPECT_EQ(doc["raw_loss_values"], doc["loss_values"]);
  EXPECT_EQ(doc["raw_step_times"], doc["step_times"]);
  EXPECT_EQ(doc["model"]["params"], model::total_params(model::dims<model::Tiny>()));
  EXPECT_DOUBLE_EQ(doc["memory_metrics"]["peak_allocated_gb"].get<double>(), 0.5);
  EXPECT_EQ(doc["reproduce"]["seed"], 42);
  EXPECT_EQ(doc["reproduce"]["command_line"], "tprimat bench");
  EXPECT_FALSE(doc.contains("error"));
}

TEST(Result, RunsPooledAndKeptApart) {
  const auto doc = bench::make_result(tiny_context(), {record(1.0), record(3.0)});
  EXPECT_EQ(doc["runs"].size(), 2u);
  EXPECT_EQ(doc["raw_step_times"].size(), 6u);
  EXPECT_DOUBLE_EQ(doc["performance_metrics"]["avg_step_time_seconds"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(doc["runs"][1]["performance_metrics"]["avg_step_time_seconds"].get<double>(),
                   3.0);
  const auto& a = doc["across_runs"];
  EXPECT_EQ(a["runs"], 2);
  EXPECT_DOUBLE_EQ(a["avg_step_time_seconds"]["mean"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(a["avg_step_time_seconds"]["min"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(a["tokens_per_second"]["max"].get<double>(), 512.0);
}

TEST(Result, IncompleteRunSaysWhy) {
  auto r = record(1.0);
  r.complete = false;
  r.error = "tprimat: loss is not finite at step 3";
  const auto doc = bench::make_result(tiny_context(), {r});
  EXPECT_EQ(doc["complete"], false);
  EXPECT_EQ(doc["error"], "tprimat: loss is not finite at step 3");
  const auto empty = bench::make_result(tiny_context(), {});
  EXPECT_EQ(empty["complete"], false);
  EXPECT_TRUE(empty["performance_metrics"]["tokens_per_second"].is_null());
}

TEST(Result, FileNamesFollowTheSeeds) {
  backend::DeviceInfo d;
  d.software_stack = "rocm";
  EXPECT_EQ(bench::result_file_name(d, "llama"), "benchmark_rocm_llama.json");
  EXPECT_EQ(bench::log_file_name("qwen"), "training_qwen.log");
}

TEST(Result, CommandLineQuotesWhatTheShellWouldSplit) {
  char a0[] = "tprimat", a1[] = "--output-dir", a2[] = "my dir", a3[] = "it's";
  char* argv[] = {a0, a1, a2, a3};
  EXPECT_EQ(bench::command_line(4, argv), "tprimat --output-dir 'my dir' 'it'\\''s'");
}

class AtomicWrite : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tprimat-result-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(AtomicWrite, ReplacesWholeFileAndLeavesNoTemp) {
  const auto file = dir_ / "benchmark_cpu_tiny.json";
  bench::write_file_atomically(file, nlohmann::json{{"a", 1}}.dump());
  bench::write_file_atomically(file, nlohmann::json{{"b", 2}}.dump());
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  const auto doc = nlohmann::json::parse(s.str());
  EXPECT_EQ(doc["b"], 2);
  EXPECT_FALSE(doc.contains("a"));
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1) << "the temp file must be renamed away";
}

// Text from outside (a log's Latin-1 data path, a file name) reaches a result as JSON can hold
// it: each stray byte U+FFFD, in values and keys, never a failed write after the run.
TEST(Result, WrittenTextIsUtf8) {
  auto doc = bench::make_result(tiny_context(), {record(0.5)});
  doc["training_config"]["data"] = "/data/c\xf6rpus";
  doc["imported"] = {{"caf\xe9", "log \xff"}};
  const auto written = bench::as_written(doc);
  EXPECT_EQ(written["training_config"]["data"], "/data/c\xef\xbf\xbdrpus");
  EXPECT_EQ(written["imported"]["caf\xef\xbf\xbd"], "log \xef\xbf\xbd");
  EXPECT_NO_THROW((void)written.dump());
}

TEST(Result, PlausibleFiguresHaveNoWarnings) {
  const auto doc = bench::make_result(tiny_context(), {record(0.5)});
  ASSERT_TRUE(doc["warnings"].is_array());
  EXPECT_TRUE(doc["warnings"].empty());
}

TEST(Result, MfuOverOneIsFlagged) {
  auto c = tiny_context();
  c.device.peak_tflops_dense = 1e-9;  // any measured step is then more than the peak
  const auto doc = bench::make_result(c, {record(0.5)});
  ASSERT_EQ(doc["warnings"].size(), 1u);
  EXPECT_EQ(doc["warnings"][0].get<std::string>().rfind("MFU ", 0), 0u) << doc["warnings"];
}

TEST(ExperimentFields, AResultFromBeforeSequenceParallelismRanWithout) {
  auto c = tiny_context();
  c.plan.tp = 2;
  auto old = bench::make_result(c, {record(0.5)});
  old["parallelism_config"].erase("sequence_parallel");  // written before the field existed
  constexpr auto sp = bench::experiment_field("/parallelism_config/sequence_parallel");
  EXPECT_EQ(bench::experiment_value(old, sp), false);
  EXPECT_EQ(bench::experiment_label(sp, bench::experiment_value(old, sp)), "SP off");
  EXPECT_TRUE(bench::configuration_differences(old, c).empty());
  c.sequence_parallel = true;
  EXPECT_EQ(bench::configuration_differences(old, c),
            std::vector<std::string>{"parallelism_config.sequence_parallel: false -> true"});
  // A field without a known value when absent still reads "absent".
  c.sequence_parallel = false;
  old["training_config"].erase("sequence_length");
  EXPECT_EQ(bench::configuration_differences(old, c),
            std::vector<std::string>{"training_config.sequence_length: absent -> " +
                                     std::to_string(c.seq)});
}

TEST(ExperimentFields, AResultFromBeforeShardingStrategiesRanZeroOneOrNone) {
  auto c = tiny_context();  // DP 2
  // The schema wants a prediction.
  c.predicted.weights = c.predicted.total = 0.5 * bench::gib;
  c.optimizer.sharding = train::ShardingStrategy::optim;
  auto old = bench::make_result(c, {record(0.5)});
  old["parallelism_config"].erase("data_parallel_sharding_strategy");  // written before it
  EXPECT_EQ(bench::result_error(old), std::nullopt) << *bench::result_error(old);
  constexpr auto s = bench::experiment_field("/parallelism_config/data_parallel_sharding_strategy");
  // Its distributed optimizer was ZeRO-1: one experiment with a new optim run.
  EXPECT_EQ(bench::experiment_value(old, s), "optim");
  EXPECT_EQ(bench::experiment_label(s, bench::experiment_value(old, s)), "sharding ZeRO-1");
  EXPECT_TRUE(bench::configuration_differences(old, c).empty());
  // ZeRO-2 is another experiment, named by its stage.
  c.optimizer.sharding = train::ShardingStrategy::optim_grads;
  EXPECT_EQ(
      bench::configuration_differences(old, c),
      std::vector<std::string>{"parallelism_config.data_parallel_sharding_strategy: \"optim\" -> "
                               "\"optim_grads\""});
  EXPECT_EQ(bench::experiment_label(s, "optim_grads"), "sharding ZeRO-2");
  EXPECT_EQ(bench::experiment_label(s, "optim_grads_params"), "sharding ZeRO-3");
  // Without the distributed optimizer, nothing was sharded.
  old["parallelism_config"]["distributed_optimizer"] = false;
  EXPECT_EQ(bench::experiment_value(old, s), "no_shard");
  EXPECT_EQ(bench::experiment_label(s, "no_shard"), "sharding none");
  c.optimizer.sharding = train::ShardingStrategy::no_shard;
  EXPECT_TRUE(bench::configuration_differences(old, c).empty());
  // An old import that did not say (null) stays unknown; one without either key is a seeds' file.
  old["parallelism_config"]["distributed_optimizer"] = nullptr;
  EXPECT_TRUE(bench::experiment_value(old, s).is_null());
  ASSERT_TRUE(bench::recorded_experiment_value(old, s).has_value());
  old["parallelism_config"].erase("distributed_optimizer");
  EXPECT_FALSE(bench::recorded_experiment_value(old, s).has_value());
  // A name the schema does not know is refused; null (an import that does not say) is not.
  auto doc = bench::make_result(c, {record(0.5)});
  doc["parallelism_config"]["data_parallel_sharding_strategy"] = nullptr;
  EXPECT_EQ(bench::result_error(doc), std::nullopt) << *bench::result_error(doc);
  doc["parallelism_config"]["data_parallel_sharding_strategy"] = "zero2";
  EXPECT_NE(bench::result_error(doc), std::nullopt);
}

TEST(Result, ContextParallelismCountsInTheRanks) {
  // TP 1 x PP 1 x CP 2 x DP 2: four ranks, each sequence split over two of them.
  auto c = tiny_context();
  c.plan.cp = 2;
  c.predicted.weights = c.predicted.total = 0.5 * bench::gib;
  const auto doc = bench::make_result(c, {record(0.5)});
  EXPECT_EQ(doc["parallelism_config"]["context_parallel_size"], 2);
  EXPECT_EQ(doc["parallelism_config"]["data_parallel_size"], 2);
  EXPECT_EQ(doc["gpu_info"]["device_count"], 4);
  EXPECT_EQ(doc["training_config"]["num_gpus"], 4);
  // 8 sequences x 64 tokens in 0.5 s over 4 GPUs.
  EXPECT_DOUBLE_EQ(doc["performance_metrics"]["tokens_per_second_per_gpu"].get<double>(),
                   8.0 * 64 / 0.5 / 4);
  EXPECT_EQ(bench::result_error(doc), std::nullopt) << *bench::result_error(doc);
  // Without CP (the default) the result states 1.
  EXPECT_EQ(bench::make_result(tiny_context(), {record(0.5)})["parallelism_config"]
                                                             ["context_parallel_size"],
            1);
}

TEST(Result, BothFlopConventionsAreWrittenNamed) {
  auto c = tiny_context();
  c.device.peak_tflops_dense = 1.0;
  c.device.peak_tflops_fp8_dense = 2.0;
  const auto doc = bench::make_result(c, {record(0.5)});
  const auto& p = doc["performance_metrics"];
  EXPECT_DOUBLE_EQ(p["flops_per_token_palm"].get<double>(), model::flops_per_token(c.dims, 64));
  EXPECT_DOUBLE_EQ(p["flops_per_token_causal"].get<double>(),
                   model::flops_per_token_causal(c.dims, 64));
  const double tokens_per_gpu = p["tokens_per_second_per_gpu"].get<double>();
  EXPECT_DOUBLE_EQ(p["tflops_per_gpu_causal"].get<double>(),
                   tokens_per_gpu * model::flops_per_token_causal(c.dims, 64) / 1e12);
  EXPECT_DOUBLE_EQ(p["mfu_causal"].get<double>(), p["tflops_per_gpu_causal"].get<double>() / 1.0);
  EXPECT_DOUBLE_EQ(p["mfu_fp8_peak_causal"].get<double>(),
                   p["tflops_per_gpu_causal"].get<double>() / 2.0);
  EXPECT_LT(p["mfu_causal"].get<double>(), p["mfu"].get<double>());
  // Each run's figures carry both too.
  EXPECT_TRUE(doc["runs"][0]["performance_metrics"]["mfu_causal"].is_number());
}

TEST(ExperimentFields, ContextParallelismAbsentIsOne) {
  auto c = tiny_context();
  auto old = bench::make_result(c, {record(0.5)});
  old["parallelism_config"].erase("context_parallel_size");  // written before the field existed
  constexpr auto cp = bench::experiment_field("/parallelism_config/context_parallel_size");
  EXPECT_EQ(bench::experiment_value(old, cp), 1);
  EXPECT_TRUE(bench::configuration_differences(old, c).empty());
  c.plan.cp = 2;
  c.plan.dp = 1;  // the same two ranks
  EXPECT_EQ(bench::configuration_differences(old, c),
            (std::vector<std::string>{"parallelism_config.context_parallel_size: 1 -> 2",
                                      "parallelism_config.data_parallel_size: 2 -> 1"}));
  EXPECT_EQ(bench::experiment_label(cp, 2), "CP 2");
  // Recomputation off is one experiment, however its method and layers are written.
  constexpr auto rc = bench::experiment_field("/training_config/recompute");
  nlohmann::json off = old;
  off["training_config"]["recompute"] = {
      {"granularity", "none"}, {"method", nullptr}, {"num_layers", nullptr}};
  EXPECT_EQ(bench::experiment_value(off, rc), bench::experiment_value(old, rc));
  EXPECT_EQ(bench::experiment_label(rc, {{"granularity", "selective"},
                                         {"method", nullptr},
                                         {"num_layers", nullptr}}),
            "recompute selective");
}

TEST(ExperimentFields, OneListForOverwriteAndReports) {
  // The overwrite rule compares exactly the pointers the reports group by.
  ASSERT_EQ(bench::detail::experiment_keys.size(), bench::experiment_field_count);
  for (std::size_t i = 0; i < bench::experiment_field_count; ++i)
    EXPECT_EQ(bench::detail::experiment_keys[i], bench::experiment_fields[i].pointer);
  const auto doc = bench::make_result(tiny_context(), {record(0.5)});
  // An FP8 run's layers kept in bf16: null in a run that is not FP8, a list in one that is.
  constexpr auto bf16_layers = bench::experiment_field("/training_config/fp8/bf16_layers");
  for (std::size_t i = 0; i < bench::experiment_field_count; ++i)
    EXPECT_EQ(bench::experiment_value(doc, i).is_null(), i == bf16_layers)
        << bench::experiment_fields[i].pointer << " is not in our own result";
  auto fp8 = tiny_context();
  fp8.device_options.precision = train::PrecisionConfig::fp8_hybrid(train::Fp8Recipe::current);
  fp8.precision = fp8.device_options.precision.name();
  EXPECT_EQ(bench::experiment_value(bench::make_result(fp8, {record(0.5)}), bf16_layers),
            nlohmann::json({0, 1}));
  EXPECT_EQ(bench::experiment_label(bf16_layers, nlohmann::json({0, 31})), "bf16 layers 0,31");
  EXPECT_EQ(bench::experiment_label(bf16_layers, nlohmann::json::array()), "bf16 layers none");
  constexpr auto seq = bench::experiment_field("/training_config/sequence_length");
  EXPECT_EQ(bench::experiment_label(seq, 2048), "seq 2048");
  EXPECT_EQ(bench::experiment_label(seq, nullptr), "seq n/a");
  EXPECT_EQ(bench::experiment_label(bench::experiment_field("/optimizer/lr_peak"), 3e-4),
            "peak LR 0.0003");
  EXPECT_EQ(
      bench::experiment_label(
          bench::experiment_field("/parallelism_config/data_parallel_sharding_strategy"), "optim"),
      "sharding ZeRO-1");
}

TEST_F(AtomicWrite, WarningsFollowTheDocumentAsWritten) {
  // An import adds the log's own figure after make_result: the writer flags the disagreement.
  auto c = tiny_context();
  c.predicted.weights = c.predicted.total = 0.5 * bench::gib;  // the schema wants a prediction
  auto doc = bench::make_result(c, {record(0.5)});
  const double ours = doc["performance_metrics"]["model_tflops_per_gpu"].get<double>();
  doc["imported"]["log_tflops_per_gpu_mean"] = ours / 2;
  const auto file = dir_ / "benchmark_cpu_tiny.json";
  bench::write_result(file, doc);
  std::ifstream in(file);
  const auto written = nlohmann::json::parse(in);
  ASSERT_EQ(written["warnings"].size(), 1u);
  EXPECT_NE(written["warnings"][0].get<std::string>().find("differs from the log's own"),
            std::string::npos);
}

TEST_F(AtomicWrite, FailureThrowsRunErrorAndWritesNothing) {
  const auto file = dir_ / "missing" / "benchmark_cpu_tiny.json";
  EXPECT_THROW(bench::write_file_atomically(file, "{}"), core::RunError);
  EXPECT_FALSE(fs::exists(file));
}

TEST_F(AtomicWrite, AResultTooDeepOrNotAFileIsAnotherConfigurationAndNeverThrows) {
  auto c = tiny_context();
  const auto file = dir_ / "benchmark_cpu_tiny.json";
  // 100,000 levels segfaulted here (nlohmann's recursive dump of "platform" in the message).
  std::ofstream(file) << "{\"platform\": " << std::string(100'000, '[')
                      << std::string(100'000, ']') << "}";
  const std::string deep =
      "not a tprimat result: nests arrays and objects deeper than the 64 levels tprimat reads "
      "(column 77)";
  EXPECT_EQ(bench::existing_result_differences(file, c), std::vector<std::string>{deep});
  EXPECT_EQ(bench::result_refusal(file, c), bench::conflict_message(file, {deep}));
  c.overwrite = true;  // overwrite replaces it
  EXPECT_EQ(bench::result_refusal(file, c), "");

  // What no result can replace is refused whatever overwrite says, and described (not thrown)
  // where the runner checks again before writing.
  fs::remove(file);
  fs::create_directory(file);
  EXPECT_EQ(bench::existing_result_differences(file, c),
            std::vector<std::string>{"not a tprimat result: is a directory, not a result file"});
  EXPECT_EQ(bench::result_refusal(file, c),
            "tprimat: " + file.string() +
                " is a directory, where the run writes its result; nothing ran; remove it, or "
                "write the result to another path");
  fs::remove(file);
  tprimat::testing::make_fifo(file);
  EXPECT_EQ(tprimat::testing::error_reading_fifo(
                file,
                [&] {
                  EXPECT_EQ(bench::existing_result_differences(file, c)->at(0),
                            "not a tprimat result: is a FIFO (named pipe), not a result file");
                }),
            "no error");
  EXPECT_NE(bench::result_refusal(file, c).find(" is a FIFO (named pipe), where the run writes"),
            std::string::npos);
  fs::remove(file);
  fs::create_symlink("/dev/zero", file);
  EXPECT_NE(bench::result_refusal(file, c).find(" is a character device, where the run writes"),
            std::string::npos);
}

// The library names its own terms (the path, ResultContext::overwrite), never a program's flag; a
// caller's fixes (the CLI's: --output-dir, --overwrite) take their place whole.
TEST_F(AtomicWrite, RefusalsSpeakTheLibrarysTermsOrTheCallers) {
  auto c = tiny_context();
  const auto file = dir_ / "benchmark_cpu_tiny.json";
  std::ofstream(file) << "{}";
  const std::string conflict = bench::result_refusal(file, c);
  EXPECT_EQ(conflict, bench::conflict_message(file, *bench::existing_result_differences(file, c)));
  EXPECT_NE(conflict.find("; set overwrite to replace it, or write the result to another path"),
            std::string::npos)
      << conflict;
  const bench::ResultFixes mine{.elsewhere = "E", .occupied = "O", .conflict = "C"};
  const std::string told = bench::result_refusal(file, c, mine);
  EXPECT_EQ(told.substr(told.size() - 3), "; C") << told;
  fs::remove(file);
  fs::create_directory(file);
  const std::string occupied = bench::result_refusal(file, c);
  EXPECT_EQ(bench::result_refusal(file, c, mine).substr(occupied.find("; remove it")), "; O");
  c.predicted.weights = c.predicted.total = 0.5 * bench::gib;  // the schema wants a prediction
  try {
    bench::write_result(dir_ / "missing" / "benchmark_cpu_tiny.json",
                        bench::make_result(c, {record(0.5)}));
    FAIL() << "no error";
  } catch (const core::RunError& e) {
    EXPECT_NE(std::string(e.what()).find("write the result to another path"), std::string::npos)
        << e.what();
  }
  for (const std::string& message : {conflict, occupied})
    EXPECT_EQ(message.find("--"), std::string::npos) << message;
  EXPECT_EQ(std::string(bench::existing_result_input.fix).find("--"), std::string::npos);
}

// A result no reader of results would read back is never written (an import of a 1 GiB log made
// a 1 GB result that compare and peak then refused).
TEST(ResultWrite, NothingLargerThanItsReadersReadIsWritten) {
  EXPECT_EQ(bench::unreadable_size(1000), std::nullopt);
  EXPECT_EQ(bench::unreadable_size(core::max_result_bytes), std::nullopt);
  const auto why = bench::unreadable_size(core::max_result_bytes + 1);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "it would be 268435457 bytes, more than the 256 MiB tprimat reads back from a "
                  "result (compare, peak and a rerun would refuse it)");
}

}  // namespace
