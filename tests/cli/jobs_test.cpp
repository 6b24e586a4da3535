// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// cli/jobs.hpp and cli/options.hpp: every bad input is caught before a run, with its fix.
#include "cli/jobs.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "jobs_fixture.hpp"
#include "cli/options.hpp"

namespace {

using namespace tprimat;
namespace fs = std::filesystem;

using Jobs = tprimat::testing::JobsTest;

TEST_F(Jobs, DefaultIsTinyOnOneRank) {
  const auto list = cli::resolve_jobs(opts_, env_);
  ASSERT_EQ(list.jobs.size(), 1u);
  const auto& c = list.jobs[0].ctx;
  EXPECT_EQ(c.full.cli_name, "tiny");
  EXPECT_EQ(c.plan.strategy_name, "minimal_communication");
  EXPECT_EQ(c.gbs, 1) << "tiny's default gbs is mbs x DP";
  EXPECT_EQ(c.precision, "fp32");
  EXPECT_EQ(c.dims.layers, 4);
  ASSERT_EQ(list.notices.size(), 1u);
  EXPECT_EQ(list.notices[0],
            "tprimat: no GPU backend found; running the CPU reference backend on model tiny");
  EXPECT_TRUE(fs::is_directory(dir_ / "out"));
}

TEST_F(Jobs, JobFilesNameEverythingTheRunWrites) {
  env_.world = 2;
  opts_.gbs = 2;
  const auto list = cli::resolve_jobs(opts_, env_);
  const auto f = cli::job_files(list.jobs.at(0));
  const auto out = dir_ / "out";
  EXPECT_EQ(f.result, out / "benchmark_cpu_tiny.json");
  EXPECT_EQ(f.log, out / "training_tiny.log");
  EXPECT_EQ(f.live_log, out / "training_tiny.log.partial");
  EXPECT_EQ(f.locked(), (std::vector<fs::path>{f.result, f.log}));
  std::vector<fs::path> written;
  for (const auto& [what, path] : f.written()) written.push_back(path);
  for (const char* name : {".benchmark_cpu_tiny.json.lock", ".training_tiny.log.lock",
                           "profile_cpu_tiny_1.json", "profile_cpu_tiny_1.json.gz"})
    EXPECT_NE(std::find(written.begin(), written.end(), out / name), written.end()) << name;
}

TEST_F(Jobs, SaveOntoAFileOfTheRunIsRefusedNothingCreated) {
  fs::create_directories(dir_ / "real");
  fs::create_directory_symlink(dir_ / "real", dir_ / "alias");
  opts_.output_dir = (dir_ / "alias" / "out").string();
  opts_.save = (dir_ / "real" / "." / "out" / ".." / "out" / "training_tiny.log").string();
  const std::string e = error_of(opts_);
  EXPECT_NE(e.find(" is the log of this run ("), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(dir_ / "real" / "out")) << "refused before the output dir is made";
  opts_.save = (dir_ / "real" / "tiny.safetensors").string();
  EXPECT_EQ(error_of(opts_), "");
}

// A GPU measures its eager first step and its graph capture when the warm-up is shorter than
// them: said before the run (measured on two H200s: 6.5 s against 5.7 s steady, full Llama).
TEST_F(Jobs, ShortWarmUpOnAGpuIsNamed) {
  env_.device.platform = "nvd";
  env_.device.total_memory_gb = 80;
  opts_.model = "llama";
  opts_.layers = "1";
  opts_.seq = 128;
  auto notice_of = [&](const cli::BenchOptions& o) {
    const auto list = cli::resolve_jobs(o, env_);
    for (const auto& n : list.notices)
      if (n.find("--warmup-steps") != std::string::npos) return n;
    return std::string();
  };
  EXPECT_EQ(notice_of(opts_), "") << "the default warm-up (2) covers both";
  for (int w : {0, 1}) {
    cli::BenchOptions o = opts_;
    o.warmup_steps = w;
    const std::string n = notice_of(o);
    EXPECT_NE(n.find("--warmup-steps " + std::to_string(w) + ": "), std::string::npos) << n;
    EXPECT_NE(n.find("use --warmup-steps 2"), std::string::npos) << n;
    o.no_graph = true;
    EXPECT_EQ(notice_of(o), "") << "no graph to capture";
  }
  env_.device.platform = "cpu";
  opts_.warmup_steps = 1;
  opts_.model = "tiny";
  opts_.layers = "";
  EXPECT_EQ(notice_of(opts_), "") << "the CPU backend captures nothing";
}

TEST_F(Jobs, FullModelsDefaultToTheSeedsBatch) {
  opts_.model = "llama";
  opts_.layers = "auto";
  opts_.seq = 128;
  const auto list = cli::resolve_jobs(opts_, env_);
  ASSERT_EQ(list.jobs.size(), 1u);
  const auto& c = list.jobs[0].ctx;
  EXPECT_EQ(c.gbs, 64);
  EXPECT_EQ(c.plan.grad_accum, 64);
  EXPECT_TRUE(c.layers_auto);
  EXPECT_GE(c.dims.layers, 1);
  EXPECT_LT(c.dims.layers, 32) << "8B fp32 + Adam does not fit 24 GiB: a proxy must run";
  EXPECT_LE(c.predicted.total * bench::fit_margin, 24 * bench::gib);
}

#define EXPECT_INPUT_ERROR(o, needle)                                              \
  do {                                                                             \
    const std::string msg_ = error_of(o);                                          \
    EXPECT_NE(msg_.find(needle), std::string::npos) << "got: '" << msg_ << "'"; \
  } while (0)

// The HIP backend runs on ROCm: gpu_info says "rocm", the flag says "hip"; a run on an AMD GPU
// takes --backend hip, and a refusal names the flag, never the stack.
TEST_F(Jobs, BackendHipOnRocm) {
  auto env = env_;
  env.device.platform = "amd";
  env.device.software_stack = "rocm";
  env.device.device_name = "AMD Instinct MI300X (gfx942:sramecc+:xnack-)";
  env.device.total_memory_gb = 191.98;
  auto o = opts_;
  o.backend = "hip";
  EXPECT_NO_THROW(cli::resolve_jobs(o, env));
  o.backend = "cuda";
  try {
    cli::resolve_jobs(o, env);
    ADD_FAILURE() << "--backend cuda on ROCm was accepted";
  } catch (const core::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "tprimat: --backend cuda was asked but this run uses the hip backend; use "
              "--backend hip or auto");
  }
}

TEST_F(Jobs, BadInputNamesProblemAndFix) {
  auto o = opts_;
  o.model = "gpt5";
  EXPECT_INPUT_ERROR(o, "unknown model 'gpt5'; pick one of llama, qwen, mistral, tiny, all");
  o = opts_;
  o.parallel = "fastest";
  EXPECT_INPUT_ERROR(o, "unknown strategy 'fastest'; pick one of maximum_performance");
  o = opts_;
  o.backend = "cuda";
  EXPECT_INPUT_ERROR(o, "--backend cuda was asked but this run uses the cpu backend");
  o.backend = "tpu";
  EXPECT_INPUT_ERROR(o, "unknown backend 'tpu'");
  o = opts_;
  o.attention = "fastest";
  EXPECT_INPUT_ERROR(o, "unknown attention 'fastest'; pick one of auto, flash, cudnn");
  o = opts_;
  o.peak_tflops = -1;
  EXPECT_INPUT_ERROR(o, "--peak-tflops -1 is out of range (above 0 and at most 100000)");
  o = opts_;
  o.data = (dir_ / "missing.bin").string();
  EXPECT_INPUT_ERROR(o, "missing.bin not found");
  o.data = write("tokens.bin", "x");
  EXPECT_INPUT_ERROR(o, "tokens not found: expected both");  // a .bin without its .idx
  o = opts_;
  o.gbs = 3;
  o.mbs = 2;
  EXPECT_INPUT_ERROR(o, "global batch 3 is not divisible by micro batch x DP = 2 x 1");
  o = opts_;
  o.steps = 0;
  EXPECT_INPUT_ERROR(o, "--steps 0 is out of range (from 1 to 1000000)");
  o = opts_;
  o.layers = "many";
  EXPECT_INPUT_ERROR(o, "--layers takes full, auto or a positive count");
  o.layers = "9";
  EXPECT_INPUT_ERROR(o, "--layers 9 exceeds the 4 layers of Tiny");
  o = opts_;
  o.model = "llama";
  EXPECT_INPUT_ERROR(o, "predicted out of memory");
  EXPECT_INPUT_ERROR(o, "--layers auto");
  o = opts_;
  o.parallel = "balanced";
  EXPECT_INPUT_ERROR(o, "strategy balanced needs a multiple of TP=2 x PP=1 = 2 GPUs");
}

TEST_F(Jobs, ConfigFileLayoutErrorsUseTheRuleMessage) {
  auto o = opts_;
  o.model = "qwen";
  o.parallel = write("tp8.json", R"({"tensor_model_parallel_size": 8})");
  EXPECT_INPUT_ERROR(o, "TP must divide the attention heads: Qwen 2.5 7B has 28 attention heads, TP=8");
  EXPECT_INPUT_ERROR(o, "(valid TP for Qwen 2.5 7B: 1, 2, 4)");
  o = opts_;
  o.parallel = write("dp4.json", R"({"tensor_model_parallel_size": 1, "data_parallel_size": 4})");
  EXPECT_INPUT_ERROR(o, "GPU count does not match TP x PP x DP");
  o.parallel = write("broken.json", R"({"tensor_model_parallel_size": )");
  EXPECT_INPUT_ERROR(o, "broken.json is not valid JSON");
  o.parallel = (dir_ / "absent.json").string();
  EXPECT_INPUT_ERROR(o, "absent.json not found");
  o.parallel = write("nokey.json", R"({"pipeline_model_parallel_size": 1})");
  EXPECT_INPUT_ERROR(o, "has no tensor_model_parallel_size");
  o = opts_;
  o.layers = "3";
  o.parallel = write("pp2.json", R"({"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 2})");
  env_.world = 2;
  EXPECT_INPUT_ERROR(o, "PP must divide the layers");
}

TEST_F(Jobs, OutputDirectoryMustBeCreatable) {
  auto o = opts_;
  o.output_dir = (fs::path(write("a_file", "x")) / "sub").string();
  EXPECT_INPUT_ERROR(o, "cannot create output directory");
}

TEST_F(Jobs, ParallelAllSkipsWhatCannotRunHere) {
  auto o = opts_;
  o.parallel = "all";
  auto list = cli::resolve_jobs(o, env_);
  ASSERT_EQ(list.jobs.size(), 1u) << "on one rank only TP=1 PP=1 runs";
  EXPECT_EQ(list.jobs[0].ctx.plan.strategy_name, "minimal_communication");
  EXPECT_EQ(list.jobs[0].output_dir, fs::path(o.output_dir + "-03"));
  int skipped = 0;
  for (const auto& n : list.notices) skipped += n.rfind("tprimat: skipping ", 0) == 0;
  EXPECT_EQ(skipped, 4);

  env_.world = 8;
  o.gbs = 8;
  list = cli::resolve_jobs(o, env_);
  EXPECT_EQ(list.jobs.size(), 5u) << "8 ranks fit every strategy of tiny";
  EXPECT_EQ(list.jobs[2].ctx.plan.tp * list.jobs[2].ctx.plan.pp, 8);
  EXPECT_EQ(list.jobs[2].output_dir, fs::path(o.output_dir + "-02"));
}

TEST_F(Jobs, ShortRunsKeepTheScheduleShape) {
  cli::BenchOptions o;
  auto c = cli::optimizer_for(o, 32);
  EXPECT_EQ(c.decay_steps, 32);
  EXPECT_EQ(c.warmup_steps, 3);
  c = cli::optimizer_for(o, 500);
  EXPECT_EQ(c.decay_steps, 500);
  EXPECT_EQ(c.warmup_steps, 50);
  c = cli::optimizer_for(o, 2000);
  EXPECT_EQ(c.decay_steps, 500) << "the seeds' settings for long runs";
  o.lr = 1e-3;
  o.lr_warmup = 0;
  c = cli::optimizer_for(o, 32);
  EXPECT_DOUBLE_EQ(c.lr_peak, 1e-3);
  EXPECT_EQ(c.warmup_steps, 0);
}

TEST_F(Jobs, DistributedOptimizerReachesTheStepAndThePlan) {
  auto o = opts_;
  o.gbs = 2;
  env_.world = 2;  // DP 2
  const auto plain = cli::resolve_jobs(o, env_).jobs.at(0).ctx;
  o.distributed_optimizer = true;
  const auto zero = cli::resolve_jobs(o, env_).jobs.at(0).ctx;
  EXPECT_EQ(zero.plan.dp, 2);
  EXPECT_FALSE(plain.optimizer.shards_optimizer());
  EXPECT_TRUE(zero.optimizer.shards_optimizer());
  EXPECT_DOUBLE_EQ(zero.predicted.adam_moments, plain.predicted.adam_moments / 2);
  EXPECT_LT(zero.predicted.total, plain.predicted.total);
  // One rank: accepted, and the plan is unchanged (there is one replica to hold the state).
  env_.world = 1;
  o.gbs = 0;
  const auto one = cli::resolve_jobs(o, env_).jobs.at(0).ctx;
  o.distributed_optimizer = false;
  const auto one_plain = cli::resolve_jobs(o, env_).jobs.at(0).ctx;
  EXPECT_EQ(one.plan.dp, 1);
  EXPECT_TRUE(one.optimizer.shards_optimizer());
  EXPECT_DOUBLE_EQ(one.predicted.total, one_plain.predicted.total);
}

TEST_F(Jobs, ShardingStrategyReachesTheStepAndThePlan) {
  auto o = opts_;
  o.gbs = 2;
  env_.world = 2;  // DP 2
  o.distributed_optimizer = true;
  const auto zero1 = cli::resolve_jobs(o, env_).jobs.at(0).ctx;
  o.distributed_optimizer = false;
  o.sharding_strategy = "optim_grads";
  const auto zero2 = cli::resolve_jobs(o, env_).jobs.at(0).ctx;
  EXPECT_EQ(zero1.optimizer.sharding, train::ShardingStrategy::optim);
  EXPECT_EQ(zero2.optimizer.sharding, train::ShardingStrategy::optim_grads);
  EXPECT_TRUE(zero2.optimizer.shards_gradients());
  // The plan: AdamW state sharded as under ZeRO-1, the gradients' fp32 shard counted too (the
  // CPU engine keeps its whole buffer beside it).
  EXPECT_DOUBLE_EQ(zero2.predicted.adam_moments, zero1.predicted.adam_moments);
  EXPECT_GT(zero2.predicted.gradients, zero1.predicted.gradients);
  o.sharding_strategy = "optim";  // as --distributed-optimizer
  EXPECT_EQ(cli::resolve_jobs(o, env_).jobs.at(0).ctx.optimizer.sharding,
            train::ShardingStrategy::optim);
  // --distributed-optimizer beside a strategy that shards more: that strategy.
  o.distributed_optimizer = true;
  o.sharding_strategy = "optim_grads";
  EXPECT_EQ(cli::resolve_jobs(o, env_).jobs.at(0).ctx.optimizer.sharding,
            train::ShardingStrategy::optim_grads);
  // Refused, each naming the fix: no_shard beside --distributed-optimizer, an unknown name, FSDP.
  o.sharding_strategy = "no_shard";
  EXPECT_EQ(error_of(o),
            "tprimat: --distributed-optimizer shards the optimizer, and "
            "--data-parallel-sharding-strategy no_shard shards nothing; drop one of the two");
  o.distributed_optimizer = false;
  o.sharding_strategy = "zero2";
  EXPECT_EQ(error_of(o),
            "tprimat: unknown --data-parallel-sharding-strategy 'zero2'; pass "
            "--data-parallel-sharding-strategy no_shard, optim (ZeRO-1), optim_grads (ZeRO-2) or "
            "optim_grads_params (FSDP)");
  // What the user typed comes back on one line: control characters escaped, long text cut.
  o.sharding_strategy = "optim\ngrads" + std::string(100, 'x');
  const std::string shown = error_of(o);
  EXPECT_EQ(shown.find('\n'), std::string::npos) << shown;
  EXPECT_NE(shown.find("'optim\\x0agrads"), std::string::npos) << shown;
  EXPECT_NE(shown.find("(111 bytes)'"), std::string::npos) << shown;
  o.sharding_strategy = "optim_grads_params";
  EXPECT_EQ(cli::resolve_jobs(o, env_).jobs.at(0).ctx.optimizer.sharding,
            train::ShardingStrategy::optim_grads_params);
}

TEST_F(Jobs, ConfigFileShardingStrategyKey) {
  auto o = opts_;
  o.gbs = 2;
  env_.world = 2;
  // Each its own file: the program reads a config file once.
  const auto file = [&](const std::string& name, const std::string& value) {
    return write(name + ".json", R"({"tensor_model_parallel_size": 1, "data_parallel_size": 2, )"
                                 R"("data_parallel_sharding_strategy": )" +
                                     value + "}");
  };
  o.parallel = file("zero", R"("optim_grads")");
  EXPECT_EQ(cli::resolve_jobs(o, env_).jobs.at(0).ctx.optimizer.sharding,
            train::ShardingStrategy::optim_grads);
  // A flag beside the file may only agree with it.
  o.sharding_strategy = "optim_grads";
  EXPECT_EQ(cli::resolve_jobs(o, env_).jobs.at(0).ctx.optimizer.sharding,
            train::ShardingStrategy::optim_grads);
  o.sharding_strategy = "optim";
  EXPECT_EQ(error_of(o),
            "tprimat: --data-parallel-sharding-strategy optim contradicts strategy zero, whose "
            "data_parallel_sharding_strategy is optim_grads; drop "
            "--data-parallel-sharding-strategy, or change data_parallel_sharding_strategy in the "
            "config");
  o.sharding_strategy = "";
  o.distributed_optimizer = true;  // shards the optimizer, as optim_grads does: agreed
  EXPECT_EQ(cli::resolve_jobs(o, env_).jobs.at(0).ctx.optimizer.sharding,
            train::ShardingStrategy::optim_grads);
  o.parallel = file("plain", R"("no_shard")");
  EXPECT_NE(error_of(o).find("--distributed-optimizer shards the optimizer, and strategy plain's "
                             "data_parallel_sharding_strategy no_shard shards nothing"),
            std::string::npos)
      << error_of(o);
  o.distributed_optimizer = false;
  EXPECT_EQ(cli::resolve_jobs(o, env_).jobs.at(0).ctx.optimizer.sharding,
            train::ShardingStrategy::no_shard);
  // FSDP from the file as from the flag; a name or type the key does not take.
  o.parallel = file("fsdp", R"("optim_grads_params")");
  EXPECT_EQ(cli::resolve_jobs(o, env_).jobs.at(0).ctx.optimizer.sharding,
            train::ShardingStrategy::optim_grads_params);
  o.parallel = file("unknown", R"("zero2")");
  EXPECT_NE(error_of(o).find("data_parallel_sharding_strategy must be \"no_shard\", \"optim\", "
                             "\"optim_grads\" or \"optim_grads_params\", got \"zero2\""),
            std::string::npos)
      << error_of(o);
  o.parallel = file("number", "2");
  EXPECT_NE(error_of(o).find("data_parallel_sharding_strategy must be"), std::string::npos)
      << error_of(o);
}

TEST_F(Jobs, SequenceParallelReachesTheStepAndThePlanWhereTpIsAboveOne) {
  auto o = opts_;
  o.seq = 64;
  env_.world = 2;
  o.tp = 2;
  const auto plain = cli::resolve_jobs(o, env_).jobs.at(0).ctx;
  o.sequence_parallel = true;
  const auto sp = cli::resolve_jobs(o, env_).jobs.at(0).ctx;
  EXPECT_FALSE(plain.sequence_parallel);
  EXPECT_TRUE(sp.sequence_parallel);
  EXPECT_LT(sp.predicted.activations, plain.predicted.activations);
  // TP=1: nothing to split; the job runs (and records) without it.
  o.tp = 0;
  o.gbs = 2;
  const auto dp = cli::resolve_jobs(o, env_).jobs.at(0).ctx;
  EXPECT_EQ(dp.plan.tp, 1);
  EXPECT_FALSE(dp.sequence_parallel);
  // --parallel all: every strategy runs, SP where it has TP > 1.
  o.parallel = "all";
  env_.world = 8;
  o.gbs = 8;
  const auto list = cli::resolve_jobs(o, env_);
  ASSERT_EQ(list.jobs.size(), 5u);
  for (const auto& j : list.jobs)
    EXPECT_EQ(j.ctx.sequence_parallel, j.ctx.plan.tp > 1) << j.ctx.plan.strategy_name;
  // mbs x seq rows that TP does not divide: refused, naming the numbers and the fix.
  o.parallel = "";
  o.tp = 2;
  o.gbs = 0;
  env_.world = 2;
  o.seq = 63;
  EXPECT_EQ(error_of(o),
            "tprimat: sequence parallelism splits a micro-batch's mbs x seq = 1 x 63 = 63 token "
            "rows over the TP ranks, and TP=2 does not divide them [strategy tp2_pp1]; pass a "
            "--seq (or --mbs) that TP=2 divides, or drop --sequence-parallel");
}

TEST_F(Jobs, ConfigFileSequenceParallelKey) {
  auto o = opts_;
  o.seq = 64;
  env_.world = 2;
  o.parallel = write("sp.json", R"({"tensor_model_parallel_size": 2, "sequence_parallel": true})");
  EXPECT_TRUE(cli::resolve_jobs(o, env_).jobs.at(0).ctx.sequence_parallel);
  o.parallel =
      write("nosp.json", R"({"tensor_model_parallel_size": 2, "sequence_parallel": false})");
  EXPECT_FALSE(cli::resolve_jobs(o, env_).jobs.at(0).ctx.sequence_parallel);
  o.sequence_parallel = true;  // the flag turns it on over the file's false
  EXPECT_TRUE(cli::resolve_jobs(o, env_).jobs.at(0).ctx.sequence_parallel);
  o.parallel =
      write("bad.json", R"({"tensor_model_parallel_size": 2, "sequence_parallel": "yes"})");
  EXPECT_NE(error_of(o).find("sequence_parallel must be true or false, got \"yes\""),
            std::string::npos)
      << error_of(o);
}

TEST(Options, HandParserSharesTheFlagTable) {
  cli::BenchOptions o;
  ::setenv("OUTPUT_DIR", "/tmp/from-env", 1);
  ::setenv("PARALLEL", "balanced", 1);
  std::vector<std::string_view> args{"--steps", "7", "--seq=64", "--layers", "auto", "--lr",
                                     "1e-3"};
  EXPECT_TRUE(cli::parse_args(o, args, true));
  ::unsetenv("OUTPUT_DIR");
  ::unsetenv("PARALLEL");
  EXPECT_EQ(o.steps, 7);
  EXPECT_EQ(o.seq, 64);
  EXPECT_EQ(o.layers, "auto");
  EXPECT_DOUBLE_EQ(o.lr, 1e-3);
  EXPECT_EQ(o.output_dir, "/tmp/from-env");
  EXPECT_EQ(o.parallel, "balanced");

  cli::BenchOptions p;
  std::vector<std::string_view> bad{"--model", "tiny"};
  EXPECT_THROW(cli::parse_args(p, bad, false), core::InputError) << "no --model in examples";
  std::vector<std::string_view> nan{"--steps", "ten"};
  EXPECT_THROW(cli::parse_args(p, nan, false), core::InputError);
  std::vector<std::string_view> help{"--help"};
  EXPECT_FALSE(cli::parse_args(p, help, false));
  EXPECT_NE(cli::usage("x", false).find("--warmup-steps"), std::string::npos);
}

TEST(Options, SwitchesTakeNoValue) {
  cli::BenchOptions o;
  std::vector<std::string_view> args{"--no-graph", "--steps", "3", "--attention", "flash"};
  EXPECT_TRUE(cli::parse_args(o, args, false));
  EXPECT_TRUE(o.no_graph);
  EXPECT_EQ(o.steps, 3) << "a switch must not swallow the next flag";
  EXPECT_EQ(o.attention, "flash");
  std::vector<std::string_view> off{"--no-graph=0"};
  EXPECT_TRUE(cli::parse_args(o, off, false));
  EXPECT_FALSE(o.no_graph);
  std::vector<std::string_view> bad{"--no-graph=maybe"};
  EXPECT_THROW(cli::parse_args(o, bad, false), core::InputError);
  const std::string text = cli::usage("x", false);
  EXPECT_NE(text.find("--no-graph "), std::string::npos);
  EXPECT_EQ(text.find("--no-graph ARG"), std::string::npos) << "a switch takes no ARG";
  cli::BenchOptions z;
  std::vector<std::string_view> zero{"--distributed-optimizer", "--gbs", "4"};
  EXPECT_TRUE(cli::parse_args(z, zero, false)) << "example binaries take it too";
  EXPECT_TRUE(z.distributed_optimizer);
  EXPECT_EQ(z.gbs, 4);
  EXPECT_EQ(text.find("--distributed-optimizer ARG"), std::string::npos);
}

}  // namespace

// ---- --precision and --fp8-recipe (cli/precision_flags.hpp) -----------------------------

class PrecisionJobs : public Jobs {
 protected:
  /// An H100 as the CUDA backend reports it: FP8 runs there.
  void on_gpu() {
    env_.device.platform = "nvd";
    env_.device.software_stack = "cuda";
    env_.device.device_name = "NVIDIA H100 80GB HBM3";
    env_.device.total_memory_gb = 80;
    opts_.model = "tiny";
    opts_.layers = "full";
  }
  bench::ResultContext only_job(const cli::BenchOptions& o) {
    const auto list = cli::resolve_jobs(o, env_);
    EXPECT_EQ(list.jobs.size(), 1u);
    return list.jobs.at(0).ctx;
  }
};

TEST_F(PrecisionJobs, Fp8GoesIntoTheJobAndItsDeviceOptions) {
  on_gpu();
  auto c = only_job(opts_);
  EXPECT_EQ(c.precision, "bf16");
  EXPECT_FALSE(c.device_options.precision.is_fp8());
  opts_.precision = "fp8";
  c = only_job(opts_);
  EXPECT_EQ(c.precision, "fp8-hybrid-delayed");
  EXPECT_TRUE(c.device_options.precision.is_fp8());
  EXPECT_EQ(c.device_options.precision.fp8.recipe, train::Fp8Recipe::delayed);
  opts_.fp8_recipe = "current";
  c = only_job(opts_);
  EXPECT_EQ(c.precision, "fp8-hybrid-current");
  EXPECT_EQ(c.device_options.precision.fp8.recipe, train::Fp8Recipe::current);
  const auto doc = bench::make_result(c, {});
  EXPECT_EQ(doc["training_config"]["precision"], "fp8-hybrid-current");
  EXPECT_EQ(doc["training_config"]["fp8"]["bf16_layers"], nlohmann::json({0, 3}));
  EXPECT_EQ(doc["training_config"]["fp8"]["copies"], "kept");  // the tiny model fits
}

TEST_F(PrecisionJobs, Fp8RecastsItsCopiesWhereOnlyThatFits) {
  on_gpu();
  env_.device.device_name = "NVIDIA H200";
  env_.device.total_memory_gb = 139.8;
  opts_.model = "llama";
  opts_.mbs = 2;
  opts_.gbs = 64;
  opts_.precision = "fp8";
  const auto list = cli::resolve_jobs(opts_, env_);
  ASSERT_EQ(list.jobs.size(), 1u);
  const auto& job = list.jobs[0];
  EXPECT_EQ(job.ctx.dims.layers, 32);
  EXPECT_EQ(job.ctx.device_options.precision.fp8.copies, train::Fp8Copies::recast);
  EXPECT_LE(job.ctx.predicted.total, 139.8 * (1u << 30));
  EXPECT_NE(cli::describe_fp8_copies(job).find("FP8 copies recast"), std::string::npos);
  EXPECT_EQ(bench::make_result(job.ctx, {})["training_config"]["fp8"]["copies"], "recast");
  // The same model in bf16 says nothing of copies.
  opts_.precision = "bf16";
  EXPECT_EQ(cli::describe_fp8_copies(cli::resolve_jobs(opts_, env_).jobs.at(0)), "");
}

// FSDP: no rank holds a whole weight to cast once a step, so FP8 recasts each after its gather,
// however much memory there is.
TEST_F(PrecisionJobs, Fp8UnderFsdpRecastsItsCopies) {
  on_gpu();
  env_.world = 2;
  opts_.gbs = 2;
  opts_.precision = "fp8";
  opts_.sharding_strategy = "optim_grads";
  const auto zero2 = cli::resolve_jobs(opts_, env_);
  EXPECT_EQ(zero2.jobs.at(0).ctx.device_options.precision.fp8.copies, train::Fp8Copies::kept);
  opts_.sharding_strategy = "optim_grads_params";
  const auto list = cli::resolve_jobs(opts_, env_);
  const auto& job = list.jobs.at(0);
  EXPECT_EQ(job.ctx.device_options.precision.fp8.copies, train::Fp8Copies::recast);
  EXPECT_NE(cli::describe_fp8_copies(job).find("under FSDP"), std::string::npos)
      << cli::describe_fp8_copies(job);
  EXPECT_EQ(bench::make_result(job.ctx, {})["training_config"]["fp8"]["copies"], "recast");
}

TEST_F(PrecisionJobs, BadValuesAndPairsAreRefusedNamingTheFix) {
  on_gpu();
  opts_.precision = "fp16";
  EXPECT_EQ(error_of(opts_), "tprimat: unknown --precision 'fp16'; pick bf16 or fp8");
  opts_.precision = "fp8";
  opts_.fp8_recipe = "mxfp8";
  EXPECT_EQ(error_of(opts_), "tprimat: unknown --fp8-recipe 'mxfp8'; pick delayed or current");
  opts_.precision = "";
  opts_.fp8_recipe = "current";
  EXPECT_EQ(error_of(opts_),
            "tprimat: --fp8-recipe current was given for a bf16 run (no --precision fp8); add "
            "--precision fp8, or drop --fp8-recipe");
  opts_.precision = "bf16";
  EXPECT_NE(error_of(opts_).find("--fp8-recipe current was given for a bf16 run"),
            std::string::npos);
  // --parallel all skips the strategies that cannot run; a bad flag must not be one of those.
  opts_.precision = "fp9";
  opts_.fp8_recipe = "";
  opts_.parallel = "all";
  EXPECT_EQ(error_of(opts_), "tprimat: unknown --precision 'fp9'; pick bf16 or fp8");
}

TEST_F(PrecisionJobs, TheCpuBackendRefusesFp8) {
  opts_.precision = "fp8";
  EXPECT_EQ(error_of(opts_),
            "tprimat: --precision fp8 on the CPU backend: the CPU backend runs fp32 and has no "
            "FP8 emulation yet; run FP8 on a GPU (--backend cuda), or drop --precision fp8");
  opts_.parallel = "all";
  EXPECT_NE(error_of(opts_).find("on the CPU backend"), std::string::npos);
}

TEST_F(PrecisionJobs, GemmDimensionsMustBeMultiplesOf16) {
  on_gpu();
  opts_.precision = "fp8";
  opts_.seq = 100;  // 1 x 100 tokens
  EXPECT_EQ(error_of(opts_),
            "tprimat: --precision fp8: cuBLASLt's FP8 GEMM takes dimensions in multiples of 16, "
            "and Tiny at TP 1, mbs 1, seq 100 has tokens per micro-batch (mbs x seq) 100; pass a "
            "--seq (or --mbs) that makes mbs x seq a multiple of 16, or run bf16");
  opts_.mbs = 4;  // 400 tokens: a multiple of 16
  opts_.gbs = 4;
  EXPECT_EQ(error_of(opts_), "");
  // Tiny's FFN (352) split four ways is 88; its KV dim (64) is 16.
  opts_.mbs = 1;
  opts_.gbs = 0;
  opts_.seq = 64;
  env_.world = 4;
  opts_.tp = 4;
  EXPECT_EQ(error_of(opts_),
            "tprimat: --precision fp8: cuBLASLt's FP8 GEMM takes dimensions in multiples of 16, "
            "and Tiny at TP 4, mbs 1, seq 64 has ffn / TP 88; pick a TP that leaves these "
            "multiples of 16, or run bf16");
  opts_.tp = 2;  // 176, 32, 64: every one a multiple of 16
  opts_.precision = "bf16";
  EXPECT_EQ(error_of(opts_), "");
  opts_.precision = "fp8";
  EXPECT_EQ(error_of(opts_), "");
}

TEST_F(PrecisionJobs, TheCurrentRecipeNeedsALayerBetweenItsBf16Ends) {
  on_gpu();
  opts_.precision = "fp8";
  opts_.fp8_recipe = "current";
  opts_.layers = "2";
  EXPECT_EQ(error_of(opts_),
            "tprimat: --fp8-recipe current keeps the first and last decoder layers in bf16, so 2 "
            "layer(s) run none in FP8; pass --layers 3 or more, or --fp8-recipe delayed");
  opts_.layers = "3";
  EXPECT_EQ(error_of(opts_), "");
  opts_.fp8_recipe = "delayed";
  opts_.layers = "1";
  EXPECT_EQ(error_of(opts_), "");
}

TEST_F(PrecisionJobs, TheLayersKeptInBf16AreSetApartFromTheRecipe) {
  on_gpu();
  opts_.precision = "fp8";
  opts_.fp8_recipe = "current";
  opts_.fp8_bf16_layers_at_start = 0;
  opts_.fp8_bf16_layers_at_end = 0;
  auto c = only_job(opts_);
  EXPECT_EQ(bench::make_result(c, {})["training_config"]["fp8"]["bf16_layers"],
            nlohmann::json::array());  // every layer in FP8, as torchao's recipe runs them
  EXPECT_EQ(bench::make_result(c, {})["training_config"]["fp8"]["fp8_layers"], 4);
  opts_.fp8_recipe = "delayed";
  opts_.fp8_bf16_layers_at_start = 2;
  opts_.fp8_bf16_layers_at_end.reset();  // the delayed recipe's: none
  c = only_job(opts_);
  EXPECT_EQ(bench::make_result(c, {})["training_config"]["fp8"]["bf16_layers"],
            nlohmann::json({0, 1}));
  opts_.fp8_bf16_layers_at_end = 2;
  EXPECT_EQ(error_of(opts_),
            "tprimat: 2 decoder layer(s) kept in bf16 at the start and 2 at the end "
            "(--fp8-bf16-layers-at-start/-end, or a config's num_layers_at_start/end_in_bf16), so "
            "4 layer(s) run none in FP8; pass --layers 5 or more, or keep fewer in bf16");
  opts_.precision = "bf16";
  opts_.fp8_recipe.clear();
  EXPECT_EQ(error_of(opts_),
            "tprimat: --fp8-bf16-layers-at-start was given for a bf16 run (no --precision fp8), "
            "whose layers are all bf16; add --precision fp8, or drop it");
}

TEST_F(PrecisionJobs, AConfigFileStatesNemosFp8AndFlagsOverrideIt) {
  on_gpu();
  opts_.parallel = write("fp8.json",
                         R"({"tensor_model_parallel_size": 1, "fp8": "hybrid",
                             "fp8_recipe": "tensorwise"})");
  EXPECT_EQ(only_job(opts_).precision, "fp8-hybrid-current");
  opts_.fp8_recipe = "delayed";  // the flag wins over the file's recipe
  EXPECT_EQ(only_job(opts_).precision, "fp8-hybrid-delayed");
  opts_.fp8_recipe = "";
  opts_.precision = "bf16";  // and over its fp8
  EXPECT_EQ(only_job(opts_).precision, "bf16");
  // The seeds' spelling, recipe.model.config.fp8 = "hybrid"; a lone --fp8-recipe then applies.
  opts_.precision = "";
  opts_.fp8_recipe = "current";
  opts_.parallel = write("nemo.json", R"({"tensor_model_parallel_size": 1,
                             "recipe": {"model": {"config": {"fp8": "hybrid"}}}})");
  EXPECT_EQ(only_job(opts_).precision, "fp8-hybrid-current");
  opts_.fp8_recipe = "";
  EXPECT_EQ(only_job(opts_).precision, "fp8-hybrid-delayed");
  opts_.parallel = write("null.json", R"({"tensor_model_parallel_size": 1, "fp8": null})");
  EXPECT_EQ(only_job(opts_).precision, "bf16");
  opts_.fp8_recipe = "current";  // a file that says bf16, and a recipe flag alone
  EXPECT_NE(error_of(opts_).find("--fp8-recipe current was given for a bf16 run"),
            std::string::npos);
  opts_.fp8_recipe = "";

  // What tprimat does not run, named with what it does.
  opts_.parallel = write("e4m3.json", R"({"tensor_model_parallel_size": 1, "fp8": "e4m3"})");
  EXPECT_EQ(error_of(opts_),
            "tprimat: config " + opts_.parallel +
                ": fp8 is \"e4m3\"; tprimat runs FP8 as NeMo's \"hybrid\" format only (E4M3 "
                "forward, E5M2 backward); write \"fp8\": \"hybrid\", or null for bf16");
  for (const char* recipe : {"mxfp8", "blockwise"}) {
    // A file of its own each: the program reads a config file once a run (config_documents.hpp).
    opts_.parallel = write(std::string("r_") + recipe + ".json",
                           std::string(R"({"tensor_model_parallel_size": 1, )") +
                               R"("fp8": "hybrid", "fp8_recipe": ")" + recipe + "\"}");
    EXPECT_EQ(error_of(opts_), "tprimat: config " + opts_.parallel + ": fp8_recipe is \"" +
                                   recipe +
                                   "\"; tprimat runs the delayed and current (tensorwise) "
                                   "scaling recipes, not MXFP8 or blockwise; write "
                                   "\"fp8_recipe\": \"delayed\" or \"current\"");
  }
  opts_.parallel = write("lone.json", R"({"model": {"config": {"fp8_recipe": "delayed"}},
                                          "tensor_model_parallel_size": 1})");
  EXPECT_EQ(error_of(opts_), "tprimat: config " + opts_.parallel +
                                 ": model.config.fp8_recipe delayed is given but "
                                 "model.config.fp8 is not \"hybrid\"; add \"fp8\": \"hybrid\", "
                                 "or drop fp8_recipe");
  // Megatron's first_last_layers_bf16 with its counts (1 each unless given); the flags win.
  const auto kept = [&] {
    return bench::make_result(only_job(opts_), {})["training_config"]["fp8"]["bf16_layers"];
  };
  opts_.parallel = write("ends.json", R"({"tensor_model_parallel_size": 1, "fp8": "hybrid",
                             "first_last_layers_bf16": true, "num_layers_at_end_in_bf16": 2})");
  EXPECT_EQ(kept(), nlohmann::json({0, 2, 3}));  // delayed, yet ends kept as the file says
  opts_.fp8_bf16_layers_at_start = 0;
  EXPECT_EQ(kept(), nlohmann::json({2, 3}));
  opts_.fp8_bf16_layers_at_start.reset();
  opts_.parallel = write("none.json", R"({"tensor_model_parallel_size": 1, "fp8": "hybrid",
                             "fp8_recipe": "tensorwise", "first_last_layers_bf16": false})");
  EXPECT_EQ(kept(), nlohmann::json::array());  // current over every layer
  opts_.parallel = write("alone.json", R"({"tensor_model_parallel_size": 1, "fp8": "hybrid",
                             "num_layers_at_start_in_bf16": 1})");
  EXPECT_EQ(error_of(opts_), "tprimat: config " + opts_.parallel +
                                 ": num_layers_at_start_in_bf16 is given without "
                                 "first_last_layers_bf16, which Megatron needs to apply it; add "
                                 "\"first_last_layers_bf16\": true, or drop "
                                 "num_layers_at_start_in_bf16");
  opts_.parallel = write("both.json", R"({"tensor_model_parallel_size": 1, "fp8": "hybrid",
                             "first_last_layers_bf16": false, "num_layers_at_end_in_bf16": 1})");
  EXPECT_NE(error_of(opts_).find("num_layers_at_end_in_bf16 is given and "
                                 "first_last_layers_bf16 is false"),
            std::string::npos);
  // A count is read as every integer key of a config file is (read_size), from 0.
  int file = 0;
  for (const auto& [bad, why] :
       {std::pair<std::string, std::string>{"-1", "must be an integer from 0 to 1048576, got -1"},
        {"1.5", "must be an integer, got 1.5"},
        {"\"2\"", "must be an integer, got \"2\""}}) {
    opts_.parallel = write("bad" + std::to_string(++file) + ".json",
                           std::string(R"({"tensor_model_parallel_size": 1, "fp8": "hybrid",
                             "first_last_layers_bf16": true, "num_layers_at_start_in_bf16": )") +
                               bad + "}");
    EXPECT_NE(
        error_of(opts_).find("config " + opts_.parallel + ": num_layers_at_start_in_bf16 " + why),
        std::string::npos)
        << bad << ": " << error_of(opts_);
  }
  opts_.parallel = write("word.json", R"({"tensor_model_parallel_size": 1, "fp8": "hybrid",
                             "first_last_layers_bf16": "yes"})");
  EXPECT_NE(error_of(opts_).find("first_last_layers_bf16 is \"yes\", not true or false"),
            std::string::npos);
  opts_.parallel = write("bf16.json", R"({"tensor_model_parallel_size": 1,
                             "first_last_layers_bf16": true})");
  EXPECT_NE(error_of(opts_).find("first_last_layers_bf16 is given but fp8 is not \"hybrid\""),
            std::string::npos);
  // The CPU backend refuses a file's FP8 as it refuses the flag's.
  env_.device.platform = "cpu";
  env_.device.software_stack = "cpu";
  opts_.parallel = write("fp8.json", R"({"tensor_model_parallel_size": 1, "fp8": "hybrid"})");
  EXPECT_NE(error_of(opts_).find("--precision fp8 on the CPU backend"), std::string::npos);
}

namespace {

// The library names its settings (core::SettingError); the program tells the same refusal as the
// flag that sets it, and keeps the library's words for a setting it has no flag for.
TEST(FlagAdvice, LibrarySettingsAreToldAsFlags) {
  using tprimat::core::SettingError;
  const SettingError attention("attention", "cuDNN's fused attention exists on NVIDIA GPUs only",
                               "flash (or auto)");
  EXPECT_STREQ(attention.what(),
               "tprimat: cuDNN's fused attention exists on NVIDIA GPUs only; set attention to "
               "flash (or auto)");
  EXPECT_STREQ(tprimat::cli::with_flag_advice(attention).what(),
               "tprimat: cuDNN's fused attention exists on NVIDIA GPUs only; use --attention "
               "flash (or auto)");
  const SettingError layers("layers", "Tiny has 4 layers, cannot run 5", "between 1 and 4 (0 = all)");
  EXPECT_STREQ(tprimat::cli::with_flag_advice(layers).what(),
               "tprimat: Tiny has 4 layers, cannot run 5; use --layers between 1 and 4 (0 = all)");
  const SettingError unknown("overlap", "no overlap here", "off");
  EXPECT_STREQ(tprimat::cli::with_flag_advice(unknown).what(), unknown.what());
}

}  // namespace
