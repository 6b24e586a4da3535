// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// `tprimat import`'s reading of a log: the configuration it states (report/log_config.hpp), the
// flags that fill what it lacks, and the contradictions and damaged figures it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tprimat/bench/result.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/report/import_log.hpp"
#include "tprimat/report/log_config.hpp"

namespace tprimat::report {
namespace {

/// Megatron-LM's "  name ...... value" (48 - len(name) dots).
std::string argument(const std::string& name, const std::string& value) {
  return "  " + name + " " + std::string(48 - name.size(), '.') + " " + value + "\n";
}

std::string arguments_block(const std::string& body) {
  return "------------------------ arguments ------------------------\n" + body +
         "-------------------- end of arguments ---------------------\n";
}

std::string iteration(int i, const std::string& ms, int gbs = 64,
                      const std::string& loss = "1.100000E+01") {
  return " iteration " + std::to_string(i) + "/ 50 | elapsed time per iteration (ms): " + ms +
         " | throughput per GPU (TFLOP/s/GPU): 400.0 | learning rate: 3.000000E-05 | global "
         "batch size: " +
         std::to_string(gbs) + " | lm loss: " + loss + " |\n";
}

/// Llama 3.1 8B on 8 GPUs, TP 4, global batch 64, sequence 2048, as Megatron-LM prints it.
/// `fp8`: the block's one fp8 line (a log stating two is refused).
std::string tp4_log(const std::string& extra_arguments = "", const std::string& fp8 = "None") {
  return arguments_block(argument("bf16", "True") + argument("fp16", "False") +
                         argument("fp8", fp8) + argument("global_batch_size", "64") +
                         argument("hidden_size", "4096") + argument("lr", "0.0003") +
                         argument("micro_batch_size", "1") + argument("num_layers", "32") +
                         argument("rampup_batch_size", "None") + argument("seq_length", "2048") +
                         argument("tensor_model_parallel_size", "4") + argument("world_size", "8") +
                         extra_arguments) +
         iteration(1, "7000.0") +
         "[Rank 0] (after 1 iterations) memory (MB) | allocated: 30000.0 | max allocated: "
         "51200.0 | reserved: 56320.0 | max reserved: 56320.0\n" +
         iteration(2, "2000.0") + iteration(3, "2000.0") + iteration(4, "2000.0");
}

ImportOptions llama() {
  ImportOptions o;
  o.format = "megatron";
  o.model = "llama";
  return o;
}

nlohmann::json import_text(const std::string& text, const ImportOptions& o) {
  std::istringstream in(text);
  return import_log(in, "run.log", o, "tprimat import run.log");
}

/// The message of the InputError that importing `text` throws ("" if none).
std::string refusal(const std::string& text, const ImportOptions& o) {
  try {
    import_text(text, o);
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ImportLogConfig, MegatronArgumentsBlockStatesTheRun) {
  std::istringstream in(tp4_log());
  const LogConfig c = parse_megatron_log(in).config;
  ASSERT_TRUE(c.tp && c.global_batch && c.sequence && c.num_gpus && c.layers && c.precision);
  EXPECT_EQ(c.tp->value, 4);
  EXPECT_EQ(c.tp->where, "line 12 (arguments block)");
  EXPECT_EQ(c.global_batch->value, 64);
  EXPECT_EQ(c.sequence->value, 2048);
  EXPECT_EQ(c.num_gpus->value, 8);
  EXPECT_EQ(c.layers->value, 32);
  EXPECT_EQ(c.precision->value, "bf16");
  EXPECT_DOUBLE_EQ(c.learning_rate.value_or(0), 3e-4);
  EXPECT_FALSE(c.pp);  // not printed: the flag or 1 fills it
}

TEST(ImportLogConfig, WorldSizeLineSkipsEncoderSizes) {
  // Megatron-LM's line, in a version that prints the encoder's sizes and no separator after
  // "None": "encoder-tensor-model-parallel size: 0" is not the TP.
  std::istringstream in(
      "using world size: 8, data-parallel size: 2, context-parallel size: 1, hierarchical "
      "context-parallel sizes: Nonetensor-model-parallel size: 4, encoder-tensor-model-parallel "
      "size: 0, pipeline-model-parallel size: 1, encoder-pipeline-model-parallel size: 0\n");
  const LogConfig c = parse_megatron_log(in).config;
  ASSERT_TRUE(c.tp && c.pp && c.dp && c.num_gpus && c.cp);
  EXPECT_EQ(c.tp->value, 4);
  EXPECT_EQ(c.pp->value, 1);
  EXPECT_EQ(c.dp->value, 2);
  EXPECT_EQ(c.num_gpus->value, 8);
}

TEST(ImportLogConfig, LogContradictingItselfIsBadInput) {
  std::istringstream in(
      "using world size: 8, data-parallel size: 4, tensor-model-parallel size: 2, "
      "pipeline-model-parallel size: 1\n" +
      arguments_block(argument("tensor_model_parallel_size", "4")));
  try {
    parse_megatron_log(in, "run.log");
    FAIL() << "two TPs were accepted";
  } catch (const core::InputError& e) {
    EXPECT_STREQ(e.what(),
                 "tprimat: run.log contradicts itself: tensor_model_parallel_size 2 at line 1 "
                 "('using world size' line), 4 at line 3 (arguments block); a log of one run is "
                 "imported at a time: split the log, or repair it");
  }
}

TEST(ImportLogConfig, DamagedCountIsBadInputAndNoneStatesNothing) {
  std::istringstream none(arguments_block(argument("global_batch_size", "None")));
  EXPECT_FALSE(parse_megatron_log(none).config.global_batch);
  for (const char* bad : {"-4", "0", "4.5", "nan", "99999999999999999999", "0x10"}) {
    std::istringstream in(arguments_block(argument("tensor_model_parallel_size", bad)));
    EXPECT_THROW(parse_megatron_log(in), core::InputError) << bad;
  }
}

TEST(ImportLogConfig, NemoGroupRanksStateTheLayout) {
  std::istringstream in(
      "[NeMo I 2026-01-14 08:12:03 nemo_logging:393] All context parallel group ranks: [[0], "
      "[1], [2], [3], [4], [5], [6], [7]]\n"
      "[NeMo I 2026-01-14 08:12:03 nemo_logging:393] All model parallel group ranks: [[0, 1], "
      "[2, 3], [4, 5], [6, 7]]\n"
      "[NeMo I 2026-01-14 08:12:03 nemo_logging:393] All tensor model parallel group ranks: "
      "[[0, 1], [2, 3], [4, 5], [6, 7]]\n"
      "[NeMo I 2026-01-14 08:12:03 nemo_logging:393] All pipeline model parallel group ranks: "
      "[[0], [1], [2], [3], [4], [5], [6], [7]]\n"
      "All distributed processes registered. Starting with 8 processes\n"
      "[NeMo I 2026-01-14 08:12:04 utils:302] Building GPTDataset splits with sizes=[64, 8, 8] "
      "and config=GPTDatasetConfig(random_seed=1234, sequence_length=4096, blend=None)\n");
  const LogConfig c = parse_nemo_log(in).config;
  ASSERT_TRUE(c.tp && c.pp && c.cp && c.num_gpus && c.sequence);
  EXPECT_EQ(c.tp->value, 2);
  EXPECT_EQ(c.pp->value, 1);
  EXPECT_EQ(c.cp->value, 1);
  EXPECT_EQ(c.num_gpus->value, 8);
  EXPECT_EQ(c.sequence->value, 4096);
}

TEST(ImportLogConfig, NemoGroupsOfAnotherWorldAreAContradiction) {
  std::istringstream in(
      "All tensor model parallel group ranks: [[0, 1], [2, 3]]\n"
      "All distributed processes registered. Starting with 8 processes\n");
  EXPECT_THROW(parse_nemo_log(in), core::InputError);
}

TEST(ImportLogConfig, NemoConfigurationDumpStatesTheRun) {
  // NeMo 1 prints its configuration as YAML at start; only whole "key: value" lines count.
  std::istringstream in(
      "trainer:\n  devices: 4\n  num_nodes: 2\n  precision: bf16-mixed\nmodel:\n"
      "  micro_batch_size: 2\n  global_batch_size: 128\n  tensor_model_parallel_size: 2\n"
      "  encoder_seq_length: 4096\n  seq_length: ${model.encoder_seq_length}\n"
      "Epoch 0: 1/9 [global_batch_size: 7, reduced_train_loss=11.0, train_step_timing in s=4.0]\n");
  const LogConfig c = parse_nemo_log(in).config;
  ASSERT_TRUE(c.num_gpus && c.micro_batch && c.global_batch && c.tp && c.sequence && c.precision);
  EXPECT_EQ(c.num_gpus->value, 8);
  EXPECT_EQ(c.micro_batch->value, 2);
  EXPECT_EQ(c.global_batch->value, 128);  // not the 7 inside the progress line
  EXPECT_EQ(c.tp->value, 2);
  EXPECT_EQ(c.sequence->value, 4096);
  EXPECT_EQ(c.precision->value, "bf16");
}

TEST(ImportLog, TheLogsConfigurationPricesTheRun) {
  const auto doc = import_text(tp4_log(), llama());
  EXPECT_EQ(doc["parallelism_config"]["tensor_model_parallel_size"], 4);
  EXPECT_EQ(doc["parallelism_config"]["data_parallel_size"], 2);
  EXPECT_EQ(doc["parallelism_config"]["gradient_accumulation_steps"], 32);
  EXPECT_EQ(doc["training_config"]["global_batch_size"], 64);
  EXPECT_EQ(doc["training_config"]["num_gpus"], 8);
  // 64 x 2048 tokens in 2 s over 8 GPUs.
  EXPECT_DOUBLE_EQ(doc["performance_metrics"]["tokens_per_second_per_gpu"].get<double>(), 8192);
  EXPECT_DOUBLE_EQ(doc["optimizer"]["lr_peak"].get<double>(), 3e-4);
  EXPECT_EQ(doc["imported"]["configuration_sources"]["global_batch_size"],
            "log line 5 (arguments block)");
  EXPECT_EQ(doc["imported"]["configuration_sources"]["pipeline_model_parallel_size"],
            "assumed 1: neither the log nor pipeline_model_parallel_size says");
}

TEST(ImportLog, ALatin1PathInTheLogReachesTheDocumentAsValidUtf8) {
  // A data path the log prints in Latin-1 ("caf\xE9"): the document dumps as it is, the stray
  // byte as U+FFFD (the fuzzer found a document that could not be dumped).
  const auto doc = import_text(tp4_log(argument("data_path", "['/d/caf\xE9']")), llama());
  EXPECT_EQ(doc["training_config"]["data"], "/d/caf\xEF\xBF\xBD");
  EXPECT_NO_THROW((void)doc.dump());
}

TEST(ImportLog, FlagsFillOnlyWhatTheLogLacks) {
  auto o = llama();
  o.pp = 1;     // not in the log: filled
  o.tp = 4;     // agrees with the log
  o.gbs = 128;  // contradicts it
  EXPECT_EQ(refusal(tp4_log(), o),
            "tprimat: global_batch_size 128 contradicts run.log: global_batch_size 64 at "
            "line 5 (arguments block); drop global_batch_size (the log's figure is used), or "
            "import the log of the run you mean");
  o.gbs.reset();
  const auto doc = import_text(tp4_log(), o);
  EXPECT_EQ(doc["imported"]["configuration_sources"]["pipeline_model_parallel_size"],
            "pipeline_model_parallel_size");
  EXPECT_EQ(doc["imported"]["configuration_sources"]["tensor_model_parallel_size"],
            "log line 12 (arguments block)");
}

TEST(ImportLog, WhatSetsTheThroughputIsNeverGuessed) {
  // No sequence length anywhere: refused, not the old default of 2048.
  const std::string log = iteration(1, "3000.0") + iteration(2, "2000.0");
  auto o = llama();
  o.num_gpus = 8;
  EXPECT_EQ(refusal(log, o),
            "tprimat: run.log does not state the sequence length; pass sequence_length");
  o.seq = 2048;
  EXPECT_EQ(import_text(log, o)["training_config"]["global_batch_size"], 64);
}

TEST(ImportLog, BatchRampUpMustEndInTheWarmUp) {
  auto o = llama();
  o.num_gpus = 8;
  o.seq = 2048;
  const std::string log =
      iteration(1, "3000.0", 32) + iteration(2, "2000.0", 64) + iteration(3, "2000.0", 64);
  EXPECT_EQ(import_text(log, o)["training_config"]["global_batch_size"], 64);
  o.warmup_steps = 0;
  EXPECT_NE(refusal(log, o).find("the global batch changes over the measured iterations: 32 "
                                 "at line 1 (iteration line), 64 at line 2 (iteration line)"),
            std::string::npos);
}

TEST(ImportLog, RunsTprimatCannotRecordAreRefused) {
  // FP8 of another format than hybrid.
  EXPECT_EQ(refusal(tp4_log("", "e4m3"), llama()),
            "tprimat: run.log: the run trained in fp8 (e4m3) (at line 4 (arguments block)); "
            "tprimat records FP8 runs of the hybrid format only (E4M3 forward, E5M2 backward: "
            "NeMo's fp8 \"hybrid\"); import a bf16, fp32 or fp8 hybrid run's log");
  for (const char* recipe : {"mxfp8", "blockwise"})
    EXPECT_NE(refusal(tp4_log(argument("fp8_recipe", recipe), "hybrid"), llama())
                  .find(std::string("run.log: fp8_recipe ") + recipe +
                        " at line 14 (arguments block): tprimat records the delayed and current "
                        "(tensorwise) scaling recipes, not MXFP8 or blockwise"),
              std::string::npos);
  EXPECT_NE(refusal(tp4_log(argument("fp8_amax_history_len", "-3"), "hybrid"), llama())
                .find("fp8_amax_history_len -3 at line 14"),
            std::string::npos);
  auto qwen = llama();
  qwen.model = "qwen";
  EXPECT_EQ(refusal(tp4_log(), qwen),
            "tprimat: model qwen has hidden_size 3584, run.log states 4096 at line 6 "
            "(arguments block); pass the model the log's run trained");
}

/// NeMo 2's configuration dump of an FP8 run, as the seeds' llama3_1_8b_pretrain_fp8 states it
/// (recipe.model.config.fp8 = "hybrid"), then its progress lines.
std::string nemo_fp8_log(const std::string& extra = "") {
  std::string text =
      "trainer:\n  devices: 8\n  num_nodes: 1\n  precision: bf16-mixed\nmodel:\n"
      "  micro_batch_size: 1\n  global_batch_size: 8\n  tensor_model_parallel_size: 4\n"
      "  seq_length: 2048\n  fp8: hybrid\n" +
      extra;
  for (int i = 0; i < 4; ++i)
    text += "Epoch 0: " + std::to_string(i + 1) +
            "/9 [reduced_train_loss=11.0, global_step=" + std::to_string(i) +
            ", train_step_timing in s=1.0]\n";
  return text;
}

ImportOptions nemo_llama() {
  ImportOptions o = llama();
  o.format = "nemo";
  o.device_name = "NVIDIA H100 80GB HBM3";
  o.warmup_steps = 1;
  return o;
}

TEST(ImportLog, NemoFp8HybridImportsWithItsRecipe) {
  const auto doc = import_text(nemo_fp8_log(), nemo_llama());
  ASSERT_EQ(bench::result_error(doc), std::nullopt) << *bench::result_error(doc);
  const auto& tc = doc["training_config"];
  EXPECT_EQ(tc["precision"], "fp8-hybrid-delayed");
  EXPECT_EQ(tc["fp8"]["format"], "hybrid");
  EXPECT_EQ(tc["fp8"]["recipe"], "delayed");
  // The log prints none of the recipe's settings: null and named, never tprimat's own recipe
  // (history 1024, max) or a framework's default passed off as read.
  EXPECT_TRUE(tc["fp8"]["amax_history_len"].is_null());
  EXPECT_TRUE(tc["fp8"]["amax_compute_algo"].is_null());
  EXPECT_TRUE(tc["fp8"]["margin"].is_null());
  EXPECT_TRUE(tc["fp8"]["fp8_layers"].is_null());
  EXPECT_TRUE(tc["fp8"]["bf16_layers"].is_null());
  const std::string unread = doc["imported"]["not_in_log"].dump();
  for (const char* k : {"training_config.fp8.amax_history_len",
                        "training_config.fp8.amax_compute_algo", "training_config.fp8.margin",
                        "training_config.fp8.bf16_layers", "training_config.fp8.fp8_layers"})
    EXPECT_NE(unread.find(k), std::string::npos) << k;
  EXPECT_EQ(doc["imported"]["configuration_sources"]["precision"],
            "log line 10 (configuration dump)");
  EXPECT_EQ(doc["imported"]["configuration_sources"]["fp8_recipe"], "assumed delayed");
  const std::string assumed = doc["imported"]["assumptions"].dump();
  EXPECT_NE(assumed.find("recipe delayed: the log states no fp8_recipe"), std::string::npos);
  EXPECT_EQ(assumed.find("Transformer Engine's defaults"), std::string::npos);
  // Both MFUs, each against its own peak: 8 x 2048 tokens a second over 8 GPUs.
  const double tflops = doc["performance_metrics"]["model_tflops_per_gpu"].get<double>();
  EXPECT_NEAR(doc["performance_metrics"]["mfu"].get<double>(), tflops / 989.4, 1e-12);
  EXPECT_NEAR(doc["performance_metrics"]["mfu_fp8_peak"].get<double>(), tflops / 1978.9, 1e-12);
  EXPECT_EQ(doc["performance_metrics"]["peak_tflops_fp8_dense"], 1978.9);

  // The current recipe as NeMo 25 and Megatron name it; the settings the log states are kept.
  const auto current = import_text(
      nemo_fp8_log("  fp8_recipe: tensorwise\n  fp8_margin: 1\n"), nemo_llama());
  ASSERT_EQ(bench::result_error(current), std::nullopt) << *bench::result_error(current);
  EXPECT_EQ(current["training_config"]["precision"], "fp8-hybrid-current");
  EXPECT_EQ(current["training_config"]["fp8"]["margin"], 1);
  EXPECT_TRUE(current["training_config"]["fp8"]["bf16_layers"].is_null());  // not printed
  EXPECT_TRUE(current["training_config"]["fp8"]["amax_history_len"].is_null());
  EXPECT_EQ(current["imported"]["not_in_log"].dump().find("amax_history_len"), std::string::npos)
      << "current scaling has no history: null because none exists";
  EXPECT_EQ(current["imported"]["configuration_sources"]["fp8_recipe"],
            "log line 11 (configuration dump)");
  // A stated delayed history is recorded, and no longer named as not in the log.
  const auto history = import_text(
      nemo_fp8_log("  fp8_recipe: delayed\n  fp8_amax_history_len: 16\n"), nemo_llama());
  EXPECT_EQ(history["training_config"]["fp8"]["amax_history_len"], 16);
  EXPECT_EQ(history["imported"]["not_in_log"].dump().find("amax_history_len"),
            std::string::npos);
  // bf16 and FP8 results, and the two recipes, are different experiments: never pooled.
  EXPECT_FALSE(bench::configuration_differences(doc, current).empty());
  const auto bf16 = import_text(
      nemo_fp8_log().replace(nemo_fp8_log().find("fp8: hybrid"), 11, "fp8: null"), nemo_llama());
  EXPECT_EQ(bf16["training_config"]["precision"], "bf16");
  EXPECT_TRUE(bf16["training_config"]["fp8"].is_null());
  EXPECT_EQ(bench::configuration_differences(bf16, doc),
            std::vector<std::string>{
                "training_config.precision: \"bf16\" -> \"fp8-hybrid-delayed\""});
}

TEST(ImportLog, LayoutMustFitTheGpus) {
  auto o = llama();
  o.seq = 2048;
  o.num_gpus = 6;
  o.tp = 4;
  EXPECT_NE(refusal(iteration(1, "3000.0") + iteration(2, "2000.0"), o)
                .find("num_gpus 6 (num_gpus) is not a multiple of TP x PP"),
            std::string::npos);
}

TEST(ImportLog, MemoryReadingsSurviveTheWarmUp) {
  // Megatron reports memory once, after the first iteration: the warm-up must not drop it.
  const auto doc = import_text(tp4_log(), llama());
  EXPECT_EQ(doc["raw_memory_values"], nlohmann::json::array({50.0}));
  EXPECT_DOUBLE_EQ(doc["memory_metrics"]["peak_allocated_gb"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(doc["memory_metrics"]["peak_reserved_gb"].get<double>(), 55.0);
}

TEST(ImportLog, DamagedFiguresAreRefusedAndNanLossKept) {
  auto o = llama();
  o.seq = 2048;
  o.num_gpus = 8;
  for (const char* ms : {"nan", "-2000.0", "0", "inf", "1e400", "0x10"}) {
    const std::string msg = refusal(iteration(1, "3000.0") + iteration(2, ms), o);
    EXPECT_NE(msg.find("run.log line 2: elapsed time per iteration (ms)"), std::string::npos)
        << ms << ": " << msg;
  }
  // A diverged run prints a nan loss: a measurement, kept as null.
  const auto doc = import_text(iteration(1, "3000.0") + iteration(2, "2000.0", 64, "nan"), o);
  EXPECT_TRUE(doc["raw_loss_values"][0].is_null());
  EXPECT_GT(doc["performance_metrics"]["tokens_per_second"].get<double>(), 0);
}

TEST(ImportLog, FlagsOutOfRangeAreRefusedFirst) {
  auto o = llama();
  o.num_gpus = -8;
  EXPECT_EQ(refusal("", o),
            "tprimat: num_gpus -8: the GPU count is a whole number from 1 to 1048576; pass "
            "the run's GPU count");
  o = llama();
  o.seq = 0;
  EXPECT_NE(refusal("", o).find("sequence_length 0"), std::string::npos);
  o = llama();
  o.warmup_steps = -1;
  EXPECT_NE(refusal("", o).find("warmup_steps -1"), std::string::npos);
}

// The options as the caller names them (tprimat import: its flags), in the messages and in the
// result's configuration sources; no name of the library's own is left in either.
TEST(ImportLog, MessagesAndSourcesUseTheCallersNames) {
  auto o = llama();
  o.names.num_gpus = "--num-gpus";
  o.names.gbs = "--global-batch-size";
  o.names.pp = "--pp";
  o.names.model = "--model";
  o.num_gpus = -8;
  EXPECT_EQ(refusal("", o).rfind("tprimat: --num-gpus -8: the GPU count", 0), 0u);
  o.num_gpus.reset();
  o.gbs = 128;
  EXPECT_NE(refusal(tp4_log(), o).find("drop --global-batch-size (the log's figure is used)"),
            std::string::npos);
  o.gbs.reset();
  o.pp = 1;
  EXPECT_EQ(import_text(tp4_log(), o)["imported"]["configuration_sources"]
                                     ["pipeline_model_parallel_size"],
            "--pp");
  o.model = "qwen";
  EXPECT_NE(refusal(tp4_log(), o).find("pass the --model the log's run trained"),
            std::string::npos);
}

TEST(ImportLog, DisagreementWithTheLogsOwnFigureIsFlagged) {
  auto doc = import_text(tp4_log(), llama());
  const double ours = doc["performance_metrics"]["model_tflops_per_gpu"].get<double>();
  doc["imported"]["log_tflops_per_gpu_mean"] = ours * 1.05;
  EXPECT_TRUE(bench::sanity_warnings(bench::sanity_figures(doc)).empty());
  doc["imported"]["log_tflops_per_gpu_mean"] = ours / 3;
  const auto w = bench::sanity_warnings(bench::sanity_figures(doc));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("by +200.0%"), std::string::npos) << w[0];
}

TEST(ImportLog, DocumentsCompareOnTheExperimentKeys) {
  const auto a = import_text(tp4_log(), llama());
  auto o = llama();
  o.warmup_steps = 2;  // run length is not the configuration
  EXPECT_TRUE(bench::configuration_differences(a, import_text(tp4_log(), o)).empty());
  std::string gbs128 = tp4_log();
  for (auto at = gbs128.find("size: 64"); at != std::string::npos; at = gbs128.find("size: 64"))
    gbs128.replace(at, 8, "size: 128");
  gbs128.replace(gbs128.find(". 64\n"), 5, ". 128\n");
  const auto diff = bench::configuration_differences(a, import_text(gbs128, llama()));
  ASSERT_EQ(diff.size(), 2u);
  EXPECT_EQ(diff[0], "parallelism_config.gradient_accumulation_steps: 32 -> 64");
  EXPECT_EQ(diff[1], "training_config.global_batch_size: 64 -> 128");
}

TEST(ImportLog, SettingsTheLogPrintsAreReadAndNoneInvented) {
  // Issue 38: use_distributed_optimizer True imported as false, seed 42 as null.
  const auto doc = import_text(tp4_log(argument("use_distributed_optimizer", "True") +
                                       argument("seed", "42") + argument("adam_beta2", "0.95") +
                                       argument("data_path", "['0.7', '/d/a', '0.3', '/d/b']")),
                               llama());
  ASSERT_EQ(bench::result_error(doc), std::nullopt) << *bench::result_error(doc);
  EXPECT_EQ(doc["parallelism_config"]["distributed_optimizer"], true);
  EXPECT_EQ(doc["training_config"]["seed"], 42);
  EXPECT_EQ(doc["optimizer"]["beta2"], 0.95);
  EXPECT_EQ(doc["training_config"]["data"], "0.7 /d/a 0.3 /d/b");
  EXPECT_TRUE(doc["optimizer"]["beta1"].is_null());  // not printed: null, and named
  EXPECT_NE(doc["imported"]["not_in_log"].dump().find("optimizer.beta1"), std::string::npos);
  // ZeRO-1 shards the optimizer state over the 2 DP ranks: the plan follows the log.
  const auto without =
      import_text(tp4_log(argument("use_distributed_optimizer", "False")), llama());
  EXPECT_EQ(without["parallelism_config"]["distributed_optimizer"], false);
  EXPECT_LT(doc["memory_metrics"]["predicted_gb"].get<double>(),
            without["memory_metrics"]["predicted_gb"].get<double>());
  // --data names the data whatever path the log prints; Megatron's mock data is named so.
  auto o = llama();
  o.data = "c4-en";
  EXPECT_EQ(import_text(tp4_log(argument("data_path", "['/d/a']")), o)["training_config"]["data"],
            "c4-en");
  EXPECT_EQ(import_text(tp4_log(argument("data_path", "None") + argument("mock_data", "True")),
                        llama())["training_config"]["data"],
            "mock (Megatron's random tokens)");
}

TEST(ImportLog, SettingsStatedTwiceOrUnreadableAreRefused) {
  // Megatron core's config repr, as NeMo 2 logs it, against the configuration dump.
  const std::string nemo =
      "TransformerConfig(tensor_model_parallel_size=1, sequence_parallel=False, seed_x=1)\n"
      "  use_distributed_optimizer: true\n"
      "OptimizerConfig(lr=0.0003, use_distributed_optimizer=False)\n"
      "Training epoch 0, iteration 0/9 | global_batch_size: 8 | train_step_timing in s: 2.0\n"
      "Training epoch 0, iteration 1/9 | global_batch_size: 8 | train_step_timing in s: 2.0\n";
  auto o = llama();
  o.format = "nemo";
  o.num_gpus = 8;
  o.seq = 2048;
  EXPECT_EQ(refusal(nemo, o).rfind("tprimat: run.log contradicts itself: "
                                   "use_distributed_optimizer true at line 2 (configuration "
                                   "dump), False at line 3 (OptimizerConfig)",
                                   0),
            0u)
      << refusal(nemo, o);
  EXPECT_NE(refusal(tp4_log(argument("use_distributed_optimizer", "maybe")), llama())
                .find("use_distributed_optimizer maybe at line"),
            std::string::npos);
  EXPECT_NE(refusal(tp4_log(argument("seed", "-1")), llama()).find("seed -1 at line"),
            std::string::npos);
  auto seeded = llama();
  seeded.seed = 7;
  EXPECT_NE(refusal(tp4_log(argument("seed", "42")), seeded).find("seed 7 contradicts run.log"),
            std::string::npos);
  EXPECT_EQ(import_text(tp4_log(), seeded)["imported"]["configuration_sources"]["seed"], "seed");
}

TEST(ImportLog, ShardingStrategyIsTheOneTheRunRan) {
  const auto strategy = [](const nlohmann::json& doc) {
    return doc["parallelism_config"]["data_parallel_sharding_strategy"];
  };
  // Megatron-FSDP's ZeRO-2: gradients sharded too, and the plan shards them over the 2 DP ranks.
  const auto fsdp = import_text(tp4_log(argument("data_parallel_sharding_strategy", "optim_grads") +
                                        argument("use_distributed_optimizer", "True") +
                                        argument("use_megatron_fsdp", "True")),
                                llama());
  ASSERT_EQ(bench::result_error(fsdp), std::nullopt) << *bench::result_error(fsdp);
  EXPECT_EQ(strategy(fsdp), "optim_grads");
  EXPECT_EQ(fsdp["parallelism_config"]["distributed_optimizer"], true);
  EXPECT_EQ(fsdp["imported"]["configuration_sources"]["data_parallel_sharding_strategy"],
            "log data_parallel_sharding_strategy at line 14 (arguments block)");
  const auto zero1 = import_text(tp4_log(argument("use_distributed_optimizer", "True")), llama());
  EXPECT_EQ(strategy(zero1), "optim");
  EXPECT_EQ(zero1["imported"]["configuration_sources"]["data_parallel_sharding_strategy"],
            "log use_distributed_optimizer at line 14 (arguments block)");
  EXPECT_LT(fsdp["memory_metrics"]["predicted_gb"].get<double>(),
            zero1["memory_metrics"]["predicted_gb"].get<double>());
  // Without Megatron-FSDP the argument is not run (newer Megatron prints optim_grads_params, its
  // default, for every run): the distributed optimizer is the sharding, and no contradiction.
  const std::string ddp = argument("data_parallel_sharding_strategy", "optim_grads_params") +
                          argument("use_megatron_fsdp", "False");
  EXPECT_EQ(
      strategy(import_text(tp4_log(ddp + argument("use_distributed_optimizer", "False")), llama())),
      "no_shard");
  EXPECT_EQ(
      strategy(import_text(tp4_log(ddp + argument("use_distributed_optimizer", "True")), llama())),
      "optim");
  // Megatron-FSDP v2 runs without the distributed optimizer; the optimizer is sharded all the same.
  const auto v2 = import_text(tp4_log(argument("data_parallel_sharding_strategy", "optim_grads") +
                                      argument("megatron_fsdp_version", "2") +
                                      argument("use_distributed_optimizer", "False") +
                                      argument("use_megatron_fsdp", "True")),
                              llama());
  EXPECT_EQ(strategy(v2), "optim_grads");
  EXPECT_EQ(v2["parallelism_config"]["distributed_optimizer"], true);
  // PyTorch's FSDP2 shards the weights too, and the plan shards them as tprimat's FSDP does.
  const auto torch_fsdp = import_text(tp4_log(argument("use_torch_fsdp2", "True")), llama());
  ASSERT_EQ(bench::result_error(torch_fsdp), std::nullopt) << *bench::result_error(torch_fsdp);
  EXPECT_EQ(strategy(torch_fsdp), "optim_grads_params");
  const auto zero2_log = import_text(tp4_log(argument("data_parallel_sharding_strategy",
                                                      "optim_grads") +
                                             argument("use_megatron_fsdp", "True") +
                                             argument("use_distributed_optimizer", "True")),
                                     llama());
  EXPECT_LT(torch_fsdp["memory_metrics"]["predicted_breakdown_gb"]["weights"].get<double>(),
            zero2_log["memory_metrics"]["predicted_breakdown_gb"]["weights"].get<double>());
  // A log that states nothing of it: null and named, never no_shard invented.
  const auto silent = import_text(tp4_log(), llama());
  EXPECT_TRUE(strategy(silent).is_null());
  EXPECT_TRUE(silent["parallelism_config"]["distributed_optimizer"].is_null());
  EXPECT_NE(silent["imported"]["not_in_log"].dump().find(
                "parallelism_config.data_parallel_sharding_strategy"),
            std::string::npos);
  EXPECT_EQ(silent["imported"]["configuration_sources"]["data_parallel_sharding_strategy"],
            "not in log");
  // NeMo 2 prints Megatron core's DDP config (use_custom_fsdp: Megatron-FSDP's older name).
  auto nemo = llama();
  nemo.format = "nemo";
  nemo.num_gpus = 8;
  nemo.seq = 2048;
  const auto nemo_fsdp = import_text(
      "DistributedDataParallelConfig(grad_reduce_in_fp32=True, use_distributed_optimizer=True, "
      "data_parallel_sharding_strategy='optim_grads', use_custom_fsdp=True)\n"
      "Training epoch 0, iteration 0/9 | global_batch_size: 8 | train_step_timing in s: 2.0\n"
      "Training epoch 0, iteration 1/9 | global_batch_size: 8 | train_step_timing in s: 2.0\n",
      nemo);
  EXPECT_EQ(strategy(nemo_fsdp), "optim_grads");
  EXPECT_EQ(nemo_fsdp["imported"]["configuration_sources"]["data_parallel_sharding_strategy"],
            "log data_parallel_sharding_strategy at line 1 (DistributedDataParallelConfig)");
  // Megatron-FSDP on, its strategy not printed: unknown, whatever the distributed optimizer says.
  EXPECT_TRUE(strategy(import_text(tp4_log(argument("use_distributed_optimizer", "True") +
                                           argument("use_megatron_fsdp", "True")),
                                   llama()))
                  .is_null());
}

TEST(ImportLog, ShardingStrategyContradictedOrUnknownIsRefused) {
  // Megatron-FSDP before v2 shards through the distributed optimizer, which Megatron turns on
  // before printing its arguments: a log that says it was off contradicts the strategy.
  EXPECT_EQ(refusal(tp4_log(argument("data_parallel_sharding_strategy", "optim_grads") +
                            argument("use_distributed_optimizer", "False") +
                            argument("use_megatron_fsdp", "True")),
                    llama()),
            "tprimat: run.log: data_parallel_sharding_strategy optim_grads at line 14 (arguments "
            "block) under Megatron-FSDP (line 16 (arguments block)) contradicts "
            "use_distributed_optimizer False at line 15 (arguments block): Megatron-FSDP before "
            "its version 2 shards through the distributed optimizer; pass the log of a run whose "
            "settings it prints");
  // A name Megatron does not take, whether or not Megatron-FSDP is on.
  EXPECT_NE(refusal(tp4_log(argument("data_parallel_sharding_strategy", "zero2")), llama())
                .find("data_parallel_sharding_strategy zero2 at line 14 (arguments block) is not "
                      "no_shard, optim, optim_grads or optim_grads_params"),
            std::string::npos);
  EXPECT_NE(refusal(tp4_log(argument("use_megatron_fsdp", "maybe")), llama())
                .find("use_megatron_fsdp maybe at line"),
            std::string::npos);
}

// ---- hostile logs, round 2 (issue 38 §5) ----------------------------------------------------------

TEST(ImportLog, ASettingStatedTwiceWithTwoValuesIsRefusedNeverLastWins) {
  // FP8 and then none: imported as bf16 before, the last line winning.
  EXPECT_EQ(refusal(tp4_log(argument("fp8", "None"), "hybrid"), llama()),
            "tprimat: run.log contradicts itself: fp8 hybrid at line 4 (arguments block), None at "
            "line 14 (arguments block); a log of one run is imported at a time: split the log, or "
            "repair it");
  EXPECT_NE(refusal(tp4_log(argument("lr", "0.0001")), llama())
                .find("run.log contradicts itself: lr 0.0003 at line 7 (arguments block), 0.0001 "
                      "at line 14"),
            std::string::npos);
  // The same value twice is one statement.
  EXPECT_EQ(refusal(tp4_log(argument("lr", "3e-4") + argument("bf16", "True")), llama()), "");
}

TEST(ImportLog, AbsurdFiguresAreRefused) {
  // 1e-300 ms made every rate of the result absurd; 1e300 MB of memory was written as read.
  EXPECT_NE(refusal(tp4_log() + iteration(5, "1e-300"), llama())
                .find("run.log line 20: elapsed time per iteration (ms) 1e-300 is not a step time "
                      "from 1e-06 to 1000000 s"),
            std::string::npos);
  EXPECT_NE(refusal(tp4_log() + "[Rank 0] (after 4 iterations) memory (MB) | allocated: 1.0 | "
                                "max allocated: 1e300 | reserved: 1.0 | max reserved: 1.0\n",
                    llama())
                .find("run.log line 20: max allocated 1e+300 is more memory than any GPU has"),
            std::string::npos);
}

TEST(ImportLog, CarriageReturnsEndLines) {
  const std::string lf = tp4_log();
  std::string crlf, cr;
  for (char c : lf) {
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    cr += c == '\n' ? '\r' : c;
  }
  const auto want = import_text(lf, llama());
  for (const auto* text : {&crlf, &cr}) {
    const auto doc = import_text(*text, llama());
    EXPECT_EQ(doc["imported"]["iterations_found"], want["imported"]["iterations_found"]);
    EXPECT_EQ(doc["training_config"], want["training_config"]);
    EXPECT_EQ(doc["raw_step_times"], want["raw_step_times"]);
  }
}

TEST(ImportLog, ContextParallelRunsImportWithMegatronsDp) {
  // Issue 35: a CP 2 log was refused. 8 GPUs = TP 4 x PP 1 x CP 2 x DP 1.
  const auto doc = import_text(tp4_log(argument("context_parallel_size", "2")), llama());
  ASSERT_EQ(bench::result_error(doc), std::nullopt) << *bench::result_error(doc);
  EXPECT_EQ(doc["parallelism_config"]["context_parallel_size"], 2);
  EXPECT_EQ(doc["parallelism_config"]["data_parallel_size"], 1);
  EXPECT_EQ(doc["parallelism_config"]["gradient_accumulation_steps"], 64);
  EXPECT_EQ(doc["gpu_info"]["device_count"], 8);
  EXPECT_EQ(doc["imported"]["configuration_sources"]["context_parallel_size"],
            "log line 14 (arguments block)");
  // Without CP the same GPUs are DP 2; a log without the setting ran none, and says so.
  const auto none = import_text(tp4_log(), llama());
  EXPECT_EQ(none["parallelism_config"]["context_parallel_size"], 1);
  EXPECT_EQ(none["parallelism_config"]["data_parallel_size"], 2);
  EXPECT_NE(none["imported"]["assumptions"].dump().find("neither the log nor context_parallel_size says"),
            std::string::npos);
  // CP is part of the experiment: the two are different configurations.
  const auto diff = bench::configuration_differences(none, doc);
  EXPECT_NE(std::find(diff.begin(), diff.end(), "parallelism_config.context_parallel_size: 1 -> 2"),
            diff.end());
  // A stated DP must be world / (TP x PP x CP); GPUs that TP x PP x CP does not divide are refused.
  EXPECT_NE(refusal(tp4_log(argument("context_parallel_size", "2") +
                            argument("data_parallel_size", "2")),
                    llama())
                .find("data_parallel_size 2 at line 15 (arguments block) is not num_gpus / (TP x "
                      "PP x CP) = 8 / (4 x 1 x 2) = 1"),
            std::string::npos);
  EXPECT_NE(refusal(tp4_log(argument("context_parallel_size", "4")), llama())
                .find("num_gpus 8 (log line 13 (arguments block)) is not a multiple of TP x PP x "
                      "CP"),
            std::string::npos);
  // Megatron's "using world size" line and NeMo's context parallel groups state it too.
  auto nemo = nemo_llama();
  const auto grouped = import_text(
      nemo_fp8_log() + "All context parallel group ranks: [[0, 1], [2, 3], [4, 5], [6, 7]]\n",
      nemo);
  EXPECT_EQ(grouped["parallelism_config"]["context_parallel_size"], 2);
  EXPECT_EQ(grouped["parallelism_config"]["data_parallel_size"], 1);
}

TEST(ImportLog, RecomputationIsReadFromTheLog) {
  const auto recompute = [](const std::string& extra) {
    return import_text(tp4_log(extra), llama())["training_config"]["recompute"];
  };
  // Megatron's arguments block: None is a statement (off), never "not in log".
  const auto off = import_text(tp4_log(argument("recompute_granularity", "None") +
                                       argument("recompute_method", "None") +
                                       argument("recompute_num_layers", "None")),
                               llama());
  EXPECT_EQ(off["training_config"]["recompute"],
            (nlohmann::json{{"granularity", "none"}, {"method", nullptr}, {"num_layers", nullptr}}));
  EXPECT_EQ(off["imported"]["not_in_log"].dump().find("recompute"), std::string::npos);
  EXPECT_EQ(recompute(argument("recompute_granularity", "full") +
                      argument("recompute_method", "block") +
                      argument("recompute_num_layers", "4")),
            (nlohmann::json{{"granularity", "full"}, {"method", "block"}, {"num_layers", 4}}));
  EXPECT_EQ(recompute(argument("recompute_granularity", "selective") +
                      argument("recompute_method", "None") +
                      argument("recompute_num_layers", "None"))["granularity"],
            "selective");
  // The older --recompute-activations is selective recomputation.
  EXPECT_EQ(recompute(argument("recompute_activations", "True"))["granularity"], "selective");
  // A log silent on it: null, named in not_in_log.
  const auto silent = import_text(tp4_log(), llama());
  EXPECT_TRUE(silent["training_config"]["recompute"].is_null());
  EXPECT_NE(silent["imported"]["not_in_log"].dump().find("training_config.recompute"),
            std::string::npos);
  // Full recomputation keeps fewer activations: the plan follows the log.
  EXPECT_LT(import_text(tp4_log(argument("recompute_granularity", "full") +
                                argument("recompute_method", "uniform") +
                                argument("recompute_num_layers", "1")),
                        llama())["memory_metrics"]["predicted_gb"]
                .get<double>(),
            off["memory_metrics"]["predicted_gb"].get<double>());
  // No recomputation is one experiment, as a bench run writes it or as a log does.
  EXPECT_EQ(bench::recorded_experiment_value(
                off, bench::experiment_field("/training_config/recompute")),
            nlohmann::json::parse(R"({"granularity": "none", "method": "uniform", "num_layers": 1})"));
  // NeMo 1's configuration dump and NeMo 2's config repr.
  EXPECT_EQ(import_text(nemo_fp8_log("  activations_checkpoint_granularity: full\n"
                                     "  activations_checkpoint_method: uniform\n"
                                     "  activations_checkpoint_num_layers: 2\n"),
                        nemo_llama())["training_config"]["recompute"],
            (nlohmann::json{{"granularity", "full"}, {"method", "uniform"}, {"num_layers", 2}}));
  EXPECT_EQ(import_text(nemo_fp8_log("TransformerConfig(recompute_granularity='selective', "
                                     "recompute_method=None, recompute_num_layers=None)\n"),
                        nemo_llama())["training_config"]["recompute"]["granularity"],
            "selective");
  // Values Megatron would not take are a damaged log, named.
  EXPECT_NE(refusal(tp4_log(argument("recompute_granularity", "partial")), llama())
                .find("recompute_granularity partial at line 14 (arguments block) is not none, "
                      "full or selective"),
            std::string::npos);
  EXPECT_NE(refusal(tp4_log(argument("recompute_granularity", "full") +
                            argument("recompute_method", "sometimes")),
                    llama())
                .find("recompute_method sometimes at line 15"),
            std::string::npos);
  EXPECT_NE(refusal(tp4_log(argument("recompute_granularity", "full") +
                            argument("recompute_num_layers", "0")),
                    llama())
                .find("recompute_num_layers 0 at line 15"),
            std::string::npos);
}

}  // namespace
}  // namespace tprimat::report
