// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The bench flags, listed once: the tprimat CLI (CLI11) and the example binaries parse the same table.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/profile/config.hpp"

namespace tprimat::bench {

/// Everything `tprimat bench` (and an example binary) can be told. Defaults are the seeds'.
struct BenchOptions {
  std::string model;  ///< "" picks the backend's default (tiny on the CPU backend)
  std::string parallel = "minimal_communication";  ///< strategy, "all" or a config .json
  bool distributed_optimizer = false;  ///< ZeRO-1: AdamW state and update sharded over DP ranks
  std::string output_dir = "./output";
  bool overwrite = false;  ///< replace a result file of another configuration instead of refusing
  int runs = 1;
  int steps = 10;         ///< measured steps per run
  int warmup_steps = 2;   ///< run before the measured steps, excluded from statistics
  int mbs = 1;
  int gbs = 0;            ///< 0: mbs x DP for tiny, 64 for the full models (the seeds' setting)
  int seq = 2048;
  /// "full", a count, or "auto" (largest that fits memory); "" is full on the CPU backend and
  /// auto on a GPU, where a full 7-8B model does not fit one device.
  std::string layers;
  std::string backend = "auto";
  std::string attention = "auto";  ///< GPU attention: auto (cuDNN where supported), flash, cudnn
  bool no_graph = false;           ///< GPU: enqueue every kernel each step instead of a CUDA graph
  bool no_overlap = false;  ///< GPU: gradient reduction in line with the backward pass, not beside it
  double peak_tflops = 0;          ///< dense bf16 peak per device for MFU; 0: the built-in table
  std::string data = "synthetic";  ///< data::parse_data_spec reads it; a blend's values are
                                   ///< joined by newlines (CLI11) or spaces (one quoted value)
  std::int64_t seed = 42;
  std::string init = "random";  ///< starting weights: random (seeded) or a safetensors checkpoint
  std::string save;             ///< --save PATH: the weights after the last run, as safetensors
  double lr = 0;          ///< peak learning rate; 0 keeps the default (3e-4)
  int lr_warmup = -1;     ///< LR warm-up steps; -1 keeps the default (see bench/jobs.hpp)
  int num_gpus = 0;       ///< `tprimat plan` only: ranks to plan for; 0 is TP x PP (DP 1)
  profile::Flags profile;  ///< --profile and its schedule (profile/config.hpp resolves them)
};

/// A flag: its name, help, the environment variable that sets its default (or ""), and field.
/// `f(name, field, help, env)` is called for each; fields are int, int64, double or string.
template <class F>
void for_each_selection_flag(BenchOptions& o, F&& f) {
  f("--model", o.model, "model: llama, qwen, mistral, tiny or all (default: tiny on the CPU backend)", "");
  f("--parallel", o.parallel,
    "strategy name, all (writes <output-dir>-00..04), or a config .json[:name] "
    "(default: minimal_communication)",
    "PARALLEL");
}

template <class F>
void for_each_run_flag(BenchOptions& o, F&& f) {
  f("--output-dir", o.output_dir, "directory for benchmark_<platform>_<model>.json and the log (default: ./output)", "OUTPUT_DIR");
  f("--overwrite", o.overwrite,
    "replace a result in --output-dir even if it is of another configuration (default: refuse)",
    "");
  f("--runs", o.runs, "repetitions of the whole benchmark (default: 1)", "");
  f("--steps", o.steps, "measured training steps per run (default: 10)", "");
  f("--warmup-steps", o.warmup_steps, "steps run first and excluded from statistics (default: 2)", "");
  f("--mbs", o.mbs, "micro batch size (default: 1)", "");
  f("--gbs", o.gbs, "global batch size (default: mbs x DP for tiny, 64 for the full models)", "");
  f("--distributed-optimizer", o.distributed_optimizer,
    "ZeRO-1: shard the fp32 master weights and AdamW moments over the DP ranks (no effect at DP 1)",
    "");
  f("--seq", o.seq, "sequence length (default: 2048)", "");
  f("--layers", o.layers, "layers to run: full, N, or auto (largest count whose memory plan fits; default on a GPU)", "");
  f("--backend", o.backend, "auto, cpu, cuda or hip (default: auto: cuda when a GPU is present)", "");
  f("--attention", o.attention, "GPU attention: auto, flash or cudnn (default: auto)", "");
  f("--no-graph", o.no_graph, "GPU: launch every kernel each step instead of replaying a CUDA graph", "");
  f("--no-overlap", o.no_overlap, "GPU: reduce gradients over DP (and sum the norm) in line after each bucket, and all-reduce TP input gradients before the weight gradients, instead of on side streams beside the backward pass, to measure what the overlap buys", "");
  f("--peak-tflops", o.peak_tflops, "dense bf16 peak TFLOP/s per device for MFU (default: by device name)", "");
  f("--data", o.data,
    "synthetic, a Megatron .bin/.idx prefix, or a blend W1 PREFIX1 W2 PREFIX2 ... "
    "(default: synthetic)",
    "");
  f("--seed", o.seed, "seed of weights, synthetic data and the data shuffle (default: 42)", "");
  f("--init", o.init, "starting weights: random, or a Hugging Face safetensors checkpoint (file, index .json or directory) (default: random)", "");
  f("--save", o.save, "after the last run, write the model's fp32 weights to this .safetensors file (HF naming; --init reads it)", "");
  f("--lr", o.lr, "peak learning rate (default: 3e-4)", "");
  f("--warmup", o.lr_warmup, "learning-rate warm-up steps (default: 50, or 10% of a shorter run)", "");
  f("--profile", o.profile.enabled,
    "write a Chrome trace of the scheduled steps to profile_<platform>_<model>_<rank>.json", "");
  f("--profile-wait", o.profile.wait, "profiler: steps skipped first (default: 1)", "");
  f("--profile-warmup", o.profile.warmup, "profiler: steps run, not kept, before recording (default: 1)", "");
  f("--profile-active", o.profile.active, "profiler: steps recorded per cycle (default: 5)", "");
  f("--profile-repeat", o.profile.repeat, "profiler: cycles, 0 until the run ends (default: 1)", "");
  f("--profile-ranks", o.profile.ranks, "profiler: ranks that record: all, or e.g. 0,4 (default: 0)", "");
  f("--profile-gzip", o.profile.gzip, "profiler: write .json.gz (builds with zlib)", "");
}

namespace detail {

template <class T>
void parse_value(std::string_view flag, std::string_view text, T& out) {
  if constexpr (std::is_same_v<T, std::string>) {
    out = std::string(text);
  } else if constexpr (std::is_same_v<T, bool>) {  // a switch; "--flag=0" turns it off again
    if (text == "1" || text == "true" || text == "on") out = true;
    else if (text == "0" || text == "false" || text == "off") out = false;
    else
      throw core::InputError(std::string(flag) + " is a switch, got '" + std::string(text) + "'",
                             "pass " + std::string(flag) + " alone");
  } else if constexpr (std::is_same_v<T, double>) {
    char* end = nullptr;
    const std::string s(text);
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size())
      throw core::InputError(std::string(flag) + " takes a number, got '" + s + "'",
                             "pass e.g. " + std::string(flag) + " 3e-4");
    out = v;
  } else {
    T v{};
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || p != text.data() + text.size())
      throw core::InputError(std::string(flag) + " takes an integer, got '" + std::string(text) +
                                 "'",
                             "pass e.g. " + std::string(flag) + " 1");
    out = v;
  }
}

}  // namespace detail

/// Environment defaults (PARALLEL, OUTPUT_DIR), applied before flags so that flags win.
inline void apply_env_defaults(BenchOptions& o, bool with_selection) {
  auto apply = [](std::string_view flag, auto& field, std::string_view, std::string_view env) {
    if (env.empty()) return;
    if (const char* v = std::getenv(std::string(env).c_str()); v != nullptr && *v != '\0')
      detail::parse_value(flag, v, field);
  };
  if (with_selection) for_each_selection_flag(o, apply);
  for_each_run_flag(o, apply);
}

/// Usage text for the hand parser below.
inline std::string usage(std::string_view program, bool with_selection) {
  BenchOptions o;
  std::string out = "usage: " + std::string(program) + " [options]\n";
  auto line = [&]<class T>(std::string_view flag, T&, std::string_view help,
                           std::string_view env) {
    const std::string shown = std::string(flag) + (std::is_same_v<T, bool> ? "" : " ARG");
    out += "  " + shown;
    out += std::string(shown.size() < 20 ? 20 - shown.size() : 1, ' ');
    out += std::string(help) + (env.empty() ? "" : " [env " + std::string(env) + "]") + "\n";
  };
  if (with_selection) for_each_selection_flag(o, line);
  for_each_run_flag(o, line);
  return out;
}

/// Parses "--flag value" and "--flag=value" against the table, for binaries without CLI11.
/// Returns false when --help was asked for. Unknown flags are an InputError.
inline bool parse_args(BenchOptions& o, const std::vector<std::string_view>& args,
                       bool with_selection) {
  apply_env_defaults(o, with_selection);
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a == "--help" || a == "-h") return false;
    std::string_view value;
    bool has_value = false;
    if (auto eq = a.find('='); eq != std::string_view::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_value = true;
    }
    bool matched = false;
    auto try_flag = [&]<class T>(std::string_view flag, T& field, std::string_view,
                                 std::string_view) {
      if (matched || flag != a) return;
      matched = true;
      if (!has_value && std::is_same_v<T, bool>) {
        value = "1";
      } else if (!has_value) {
        if (i + 1 >= args.size())
          throw core::InputError(std::string(flag) + " needs a value",
                                 "pass " + std::string(flag) + " <value>");
        value = args[++i];
      }
      detail::parse_value(flag, value, field);
    };
    if (with_selection) for_each_selection_flag(o, try_flag);
    for_each_run_flag(o, try_flag);
    if (!matched)
      throw core::InputError("unknown option '" + std::string(args[i]) + "'",
                             "run with --help for the options");
  }
  return true;
}

}  // namespace tprimat::bench
