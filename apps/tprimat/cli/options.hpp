// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The bench flags, listed once: the tprimat CLI (CLI11) and the example binaries parse the same table.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/core/number.hpp"
#include "cli/profile_flags.hpp"

namespace tprimat::cli {

/// The ranges of the numeric flags. Each bound lies beyond what any benchmark does, and low
/// enough that the sums and products a run forms from the counts (warm-up + steps, mbs x DP x
/// accumulation, gbs x seq) fit their types; a real run that needs more is a bug here.
namespace limits {
/// Steps of one run, warm-up and measured each: every step's time, loss, LR and memory are kept
/// and written (a million steps is ~100 MB of JSON, days at the step times worth timing).
inline constexpr int steps = 1'000'000;
/// Repetitions of the whole benchmark: the spread across runs settles long before.
inline constexpr int runs = 1'000;
/// Steps of every run together, warm-up included: what one result keeps step by step.
inline constexpr std::int64_t all_steps = 2 * std::int64_t{steps};
/// Sequences in a global batch (and so in a micro batch, and accumulation steps): 2^20, 500 times
/// Llama 3 405B's pre-training batch of 2,048 sequences.
inline constexpr int batch = 1 << 20;
/// Tokens in a sequence: 2^20, eight times the longest context of these models (Llama 3.1's
/// 131,072).
inline constexpr int seq = 1 << 20;
/// Tokens in a global batch (gbs x seq): 2^30, 64 times Llama 3 405B's 16M; a rank holds its
/// share of the batch in host memory as int32, 4 GiB at most.
inline constexpr std::int64_t batch_tokens = std::int64_t{1} << 30;
/// TP and PP: 128, the most attention heads or layers of any Llama (3.1 405B: 128 heads, 126
/// layers); the layout rules then name the sizes a model takes.
inline constexpr int model_parallel = 128;
/// GPUs (ranks) `tprimat plan` plans for: 2^17, beyond the largest GPU clusters built (~100K).
inline constexpr int gpus = 1 << 17;
/// Dense peak per device, TFLOP/s: 100 PFLOP/s, 40 times a B200's dense bf16 peak (2,250).
inline constexpr double peak_tflops = 1e5;
/// Memory per device for `tprimat plan`, GiB: 16 TiB, 60 times the largest GPU's (MI355X, 288 GB).
inline constexpr double device_memory_gib = 16384;

inline constexpr auto steps_range = core::between(1, steps);
inline constexpr auto warmup_range = core::between(0, steps);
inline constexpr auto runs_range = core::between(1, runs);
inline constexpr auto batch_range = core::between(1, batch);
inline constexpr auto seq_range = core::between(1, seq);
inline constexpr auto model_parallel_range = core::between(1, model_parallel);
/// Layers of a pipeline stage: no model has more layers than a config file's sizes allow (2^20).
inline constexpr auto stage_layers_range = core::between(1, 1 << 20);
/// Layers an FP8 run keeps in bf16 at one end: 0 (none) up to the same bound.
inline constexpr auto bf16_layers_range = core::between(0, 1 << 20);
inline constexpr auto gpus_range = core::between(1, gpus);
inline constexpr auto peak_tflops_range = core::above(0.0, peak_tflops);
inline constexpr auto device_memory_range = core::above(0.0, device_memory_gib);
/// Finite and above 0: a rate so large that the run diverges is a run that fails (exit 1).
inline constexpr auto lr_range = core::above(0.0);
/// Seeds are written to the result as JSON integers and read back as int64.
inline constexpr auto seed_range = core::at_least(std::int64_t{0});
/// LR warm-up steps: up to the longest run (warm-up and measured steps at their bounds).
inline constexpr auto lr_warmup_range = core::between(0, 2 * steps);
/// Profiler schedule: counted in steps of a run, so bounded by its longest.
inline constexpr auto profile_steps_range = core::between(0, 2 * steps);
inline constexpr auto profile_active_range = core::between(1, 2 * steps);

}  // namespace limits

/// Everything `tprimat bench` (and an example binary) can be told. Defaults are the seeds'.
struct BenchOptions {
  std::string model;  ///< "" picks the backend's default (tiny on the CPU backend)
  /// strategy, "all" or a config .json; "" is minimal_communication, or the layout that --tp and
  /// --pp give
  std::string parallel;
  int tp = 0;  ///< --tp: the strategy's TP, which it must match when both are given; 0: unset
  int pp = 0;  ///< --pp: likewise for PP
  /// --cp: context parallelism, each sequence split over this many ranks; 0: unset (the config
  /// file's context_parallel_size, else 1)
  int cp = 0;
  /// --decoder-first/last-pipeline-num-layers: Megatron's uneven split; 0: unset
  int first_stage_layers = 0, last_stage_layers = 0;
  std::string pipeline_split;  ///< --pipeline-split: even or auto; "": unset (even)
  int grad_accum = 0;  ///< --gradient-accumulation-steps: gbs is then mbs x DP x it; 0: unset
  bool distributed_optimizer = false;  ///< ZeRO-1: AdamW state and update sharded over DP ranks
  /// --data-parallel-sharding-strategy: Megatron-FSDP's no_shard, optim (ZeRO-1), optim_grads
  /// (ZeRO-2) or optim_grads_params (FSDP); "": unset (optim with --distributed-optimizer, else
  /// no_shard). cli/sharding_flags.hpp reads it.
  std::string sharding_strategy;
  /// --num-distributed-optimizer-instances: hybrid sharding's groups (0: unset, the config
  /// file's num_distributed_optimizer_instances, else 1). cli/sharding_flags.hpp reads it.
  int optimizer_instances = 0;
  /// Megatron's sequence parallelism under TP (or a config file's sequence_parallel); no effect
  /// at TP 1
  bool sequence_parallel = false;
  /// Megatron's activation recomputation (cli/recompute_flags.hpp reads them): granularity
  /// full ("": none), method uniform or block ("": uniform), layers a group or a stage (0: 1)
  std::string recompute_granularity, recompute_method, recompute_modules;
  int recompute_num_layers = 0;
  std::string output_dir = "./output";
  bool overwrite = false;  ///< replace a result file of another configuration instead of refusing
  int runs = 1;
  int log_interval = 1;   ///< --log-interval: every Nth step line on the console
  bool progress_redraw = false;  ///< --progress-redraw: one line redrawn on a terminal
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
  /// GPU: bit-identical runs: attention through the flash kernels, every GEMM's first algorithm
  bool deterministic = false;
  bool no_overlap = false;  ///< GPU: gradient reduction in line with the backward pass, not beside it
  /// --precision: bf16 or fp8 (cli/precision_flags.hpp reads it); "": not given (bf16, or
  /// what a --parallel config file states)
  std::string precision;
  std::string fp8_recipe;  ///< --fp8-recipe: delayed or current; "": not given (delayed)
  std::string fp8_format;  ///< --fp8-format (Megatron's): hybrid means fp8; "": not given
  /// --fp8-bf16-layers-at-start/-end: decoder layers an FP8 run keeps in bf16 at each end;
  /// unset: the recipe's (current 1, delayed 0)
  std::optional<int> fp8_bf16_layers_at_start, fp8_bf16_layers_at_end;
  double peak_tflops = 0;          ///< dense bf16 peak per device for MFU; 0: the built-in table
  std::string data = "synthetic";  ///< data::parse_data_spec reads it; a blend's values are
                                   ///< joined by newlines (CLI11) or spaces (one quoted value)
  std::int64_t seed = 42;
  std::string init = "random";  ///< starting weights: random (seeded) or a safetensors checkpoint
  std::string save;             ///< --save PATH: the weights after the last run, as safetensors
  double lr = 0;          ///< peak learning rate; 0 keeps the default (3e-4)
  int lr_warmup = -1;     ///< LR warm-up steps; -1 keeps the default (see cli/jobs.hpp)
  int num_gpus = 0;       ///< `tprimat plan` only: ranks to plan for; 0 is TP x PP (DP 1)
  ProfileFlags profile;  ///< --profile and its schedule (cli/profile_flags.hpp resolves them)
};

/// A flag: its name (aliases after a comma), field, help, the environment variable that sets its
/// default (or ""), and for a number its range: `f(name, field, help, env[, range])` is called
/// for each. Fields are bool, int, int64, double or string; every number has its range.
template <class F>
void for_each_selection_flag(BenchOptions& o, F&& f) {
  f("--model", o.model, "model: llama, qwen, mistral, tiny or all (default: tiny on the CPU backend)", "");
  f("--parallel", o.parallel,
    "strategy name, all (writes <output-dir>-00..04), or a config .json or .yaml[:name] "
    "(default: minimal_communication, or the layout --tp/--pp give)",
    "PARALLEL");
  f("--tp,--tensor-model-parallel-size", o.tp,
    "tensor-parallel size (Megatron's flag); with --parallel it must match the strategy's", "",
    limits::model_parallel_range);
  f("--pp,--pipeline-model-parallel-size", o.pp,
    "pipeline-parallel size (Megatron's flag); with --parallel it must match the strategy's", "",
    limits::model_parallel_range);
  f("--cp,--context-parallel-size", o.cp,
    "context-parallel size (Megatron's flag): each sequence split over CP ranks (2 x CP "
    "load-balanced chunks), attention over a ring of K/V blocks; DP is then GPUs / (TP x PP x CP) "
    "(CPU and CUDA backends; default: 1, or the --parallel config's context_parallel_size)",
    "", limits::model_parallel_range);
  f("--decoder-first-pipeline-num-layers", o.first_stage_layers,
    "layers of the first pipeline stage (Megatron's flag); the stages between the first and last "
    "split the rest evenly (default: layers / PP each)",
    "", limits::stage_layers_range);
  f("--decoder-last-pipeline-num-layers", o.last_stage_layers,
    "layers of the last pipeline stage, which also runs the final norm, the head and the loss "
    "(Megatron's flag)",
    "", limits::stage_layers_range);
  f("--pipeline-split", o.pipeline_split,
    "even (layers / PP each) or auto: per-stage layers that balance the stages' FLOPs, the head's "
    "counted on the last (docs/pipeline.md) (default: even)",
    "");
}

template <class F>
void for_each_run_flag(BenchOptions& o, F&& f) {
  f("--output-dir", o.output_dir, "directory for benchmark_<platform>_<model>.json and the log (default: ./output)", "OUTPUT_DIR");
  f("--overwrite", o.overwrite,
    "replace a result in --output-dir even if it is of another configuration (default: refuse)",
    "");
  f("--runs", o.runs, "repetitions of the whole benchmark (default: 1)", "", limits::runs_range);
  f("--steps,--train-iters", o.steps,
    "measured training steps per run (Megatron's --train-iters; the --warmup-steps run before "
    "them) (default: 10)",
    "", limits::steps_range);
  f("--warmup-steps", o.warmup_steps, "steps run first and excluded from statistics (default: 2)",
    "", limits::warmup_range);
  f("--mbs,--micro-batch-size", o.mbs, "micro batch size (default: 1)", "", limits::batch_range);
  f("--gbs,--global-batch-size", o.gbs,
    "global batch size (default: mbs x DP x --gradient-accumulation-steps; without it mbs x DP "
    "for tiny, 64 for the full models)",
    "", limits::batch_range);
  f("--gradient-accumulation-steps", o.grad_accum,
    "micro batches per step on each DP rank (Megatron's flag): gbs is mbs x DP x it; a --gbs that "
    "disagrees is refused",
    "", limits::batch_range);
  f("--distributed-optimizer,--use-distributed-optimizer", o.distributed_optimizer,
    "ZeRO-1: shard the fp32 master weights and AdamW moments over the DP ranks (no effect at DP 1; "
    "--data-parallel-sharding-strategy optim)",
    "");
  f("--data-parallel-sharding-strategy", o.sharding_strategy,
    "what DP shards, by Megatron-FSDP's names: no_shard (gradients all-reduced), optim (ZeRO-1, as "
    "--distributed-optimizer), optim_grads (ZeRO-2: each micro-batch's gradients reduce-scattered "
    "into this rank's fp32 shard, no whole gradient buffer), optim_grads_params (FSDP: the bf16 "
    "weights sharded too, each layer's gathered before use; FP8 casts each after its gather); "
    "default: no_shard, or optim with --distributed-optimizer",
    "");
  f("--num-distributed-optimizer-instances", o.optimizer_instances,
    "hybrid sharding (HSDP), as Megatron names it: the DP x CP ranks split into this many groups "
    "of consecutive ranks, each sharding what --data-parallel-sharding-strategy shards over its "
    "own ranks, a shard's gradients summed over the groups once a step; must divide DP x CP "
    "(default: 1)",
    "", limits::batch_range);
  f("--sequence-parallel", o.sequence_parallel,
    "Megatron's sequence parallelism under TP: residual stream and norms split over the TP ranks "
    "along the tokens, all-gather / reduce-scatter instead of all-reduce (no effect at TP 1; "
    "default: off, or the --parallel config's sequence_parallel)",
    "");
  f("--recompute-granularity", o.recompute_granularity,
    "full: recompute each recomputed layer's forward in its backward, keeping only its group's "
    "input: the same numbers in less memory for about a third more compute; selective: recompute "
    "--recompute-modules of every layer (GPU backends) (Megatron's flag; default: none)",
    "");
  f("--recompute-modules", o.recompute_modules,
    "with --recompute-granularity selective, comma-separated: layernorm (the norms' outputs: "
    "cheap), mlp (the MLP's norm and gate/up GEMMs: the largest tensors, two GEMMs more) "
    "(Megatron's names; default: layernorm)",
    "");
  f("--recompute-method", o.recompute_method,
    "with --recompute-granularity: uniform (every layer, in groups of --recompute-num-layers) or "
    "block (each stage's first --recompute-num-layers layers) (default: uniform)",
    "");
  f("--recompute-num-layers", o.recompute_num_layers,
    "with --recompute-granularity: layers a group (uniform) or a stage (block) (default: 1)", "",
    limits::stage_layers_range);
  f("--seq,--seq-length,--sequence-length", o.seq, "sequence length (default: 2048)", "", limits::seq_range);
  f("--layers,--num-layers", o.layers, "layers to run (Megatron's --num-layers: the model's depth): full, N, or auto (largest count whose memory plan fits; default on a GPU)", "");
  f("--backend", o.backend, "auto, cpu, cuda or hip (default: auto: cuda when a GPU is present)", "");
  f("--attention", o.attention, "GPU attention: auto, flash or cudnn (default: auto)", "");
  f("--no-graph", o.no_graph, "GPU: launch every kernel each step instead of replaying a CUDA graph", "");
  f("--deterministic,--deterministic-mode", o.deterministic,
    "GPU: the same bits run to run on one machine and build (Megatron's --deterministic-mode): "
    "attention through tprimat's flash "
    "kernels (cuDNN's backward sums in an order that varies) and the heuristic's first "
    "cuBLASLt/hipBLASLt algorithm for every GEMM, untimed; about 7% slower on an H100 "
    "(docs/gpu.md)",
    "");
  f("--log-interval", o.log_interval,
    "print every Nth step's line on the console, the first and the last always (Megatron's "
    "flag; the log keeps every step) (default: 1)",
    "", limits::steps_range);
  f("--progress-redraw", o.progress_redraw,
    "on a terminal, redraw one progress line in place instead of a line a step (the console then "
    "keeps no history; the log keeps every step)",
    "");
  f("--no-overlap", o.no_overlap, "GPU: reduce gradients over DP (and sum the norm) in line after each bucket, and all-reduce TP input gradients before the weight gradients, instead of on side streams beside the backward pass, to measure what the overlap buys", "");
  f("--precision", o.precision,
    "bf16, or fp8: the decoder layers' linear projections in FP8, NeMo's hybrid recipe "
    "(docs/fp8.md; GPU only) (default: bf16, or the --parallel config's fp8)",
    "");
  f("--fp8-format", o.fp8_format,
    "Megatron's name for FP8: hybrid (E4M3 forward, E5M2 gradients) is --precision fp8; e4m3 is "
    "not run",
    "");
  f("--fp8-recipe", o.fp8_recipe,
    "with --precision fp8: how FP8 scales are chosen, delayed (amax history) or current "
    "(default: delayed)",
    "");
  f("--fp8-bf16-layers-at-start", o.fp8_bf16_layers_at_start,
    "with --precision fp8: decoder layers kept in bf16 at the model's start (default: the "
    "recipe's, 1 for current, 0 for delayed)",
    "", limits::bf16_layers_range);
  f("--fp8-bf16-layers-at-end", o.fp8_bf16_layers_at_end,
    "with --precision fp8: decoder layers kept in bf16 at the model's end (default: the "
    "recipe's, 1 for current, 0 for delayed)",
    "", limits::bf16_layers_range);
  f("--peak-tflops", o.peak_tflops,
    "dense bf16 peak TFLOP/s per device for MFU (default: by device name)", "",
    limits::peak_tflops_range);
  f("--data", o.data,
    "synthetic, a Megatron .bin/.idx prefix, or a blend W1 PREFIX1 W2 PREFIX2 ... "
    "(default: synthetic)",
    "");
  f("--seed", o.seed, "seed of weights, synthetic data and the data shuffle (default: 42)", "",
    limits::seed_range);
  f("--init", o.init, "starting weights: random, or a Hugging Face safetensors checkpoint (file, index .json or directory) (default: random)", "");
  f("--save", o.save, "after the last run, write the model's fp32 weights to this .safetensors file (HF naming; --init reads it)", "");
  f("--lr", o.lr, "peak learning rate (default: 3e-4)", "", limits::lr_range);
  f("--warmup,--lr-warmup-iters", o.lr_warmup, "learning-rate warm-up steps (default: 50, or 10% of a shorter run)",
    "", limits::lr_warmup_range);
  f("--profile", o.profile.enabled,
    "write a Chrome trace of the scheduled steps to profile_<platform>_<model>_<rank>.json", "");
  f("--profile-wait", o.profile.wait, "profiler: steps skipped first (default: 1)", "",
    limits::profile_steps_range);
  f("--profile-warmup", o.profile.warmup,
    "profiler: steps run, not kept, before recording (default: 1)", "",
    limits::profile_steps_range);
  f("--profile-active", o.profile.active, "profiler: steps recorded per cycle (default: 5)", "",
    limits::profile_active_range);
  f("--profile-repeat", o.profile.repeat, "profiler: cycles, 0 until the run ends (default: 1)", "",
    limits::profile_steps_range);
  f("--profile-ranks", o.profile.ranks, "profiler: ranks that record: all, or e.g. 0,4 (default: 0)", "");
  f("--profile-gzip", o.profile.gzip, "profiler: write .json.gz (builds with zlib)", "");
}

namespace detail {

/// "--tp,--tensor-model-parallel-size": the names a flag answers to.
inline std::vector<std::string_view> flag_names(std::string_view flag) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0; at <= flag.size();) {
    const std::size_t comma = std::min(flag.find(',', at), flag.size());
    out.push_back(flag.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

/// Whether a flag's field is an optional (a count that is unset where the flag is not given), and
/// the number type it holds.
template <class T>
inline constexpr bool is_optional = false;
template <class T>
inline constexpr bool is_optional<std::optional<T>> = true;
template <class T>
struct number_of {
  using type = T;
};
template <class T>
struct number_of<std::optional<T>> {
  using type = T;
};
template <class T>
using number_type = typename number_of<T>::type;

/// The name messages use: the first.
inline std::string flag_name(std::string_view flag) { return std::string(flag_names(flag)[0]); }

template <class T, class... R>
void parse_value(std::string_view flag, std::string_view text, T& out, const R&... range) {
  if constexpr (std::is_same_v<T, std::string>) {
    out = std::string(text);
  } else if constexpr (std::is_same_v<T, bool>) {  // a switch; "--flag=0" turns it off again
    if (text == "1" || text == "true" || text == "on") out = true;
    else if (text == "0" || text == "false" || text == "off") out = false;
    else
      throw core::InputError(flag_name(flag) + " is a switch, got '" + std::string(text) + "'",
                             "pass " + flag_name(flag) + " alone");
  } else {
    static_assert(sizeof...(R) == 1, "every numeric flag has its range");
    out = core::parse_number<number_type<T>>(flag_name(flag), text, range...);
  }
}

}  // namespace detail

/// Every number of `o` within its flag's range, checked as the parser checks a typed value (the
/// same message), for options filled in code. A field left at its default passes: a default is
/// either valid or the flag's "not given" mark (gbs 0, lr 0, --warmup -1, profile -1, ...).
inline void check_ranges(BenchOptions o) {
  std::vector<std::string> default_text;
  auto text_of = [](const auto& v) {
    if constexpr (detail::is_optional<std::decay_t<decltype(v)>>) {
      return v ? std::to_string(*v) : std::string();  // optional counts are integers
    } else if constexpr (std::is_floating_point_v<std::decay_t<decltype(v)>>) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v);
      return std::string(buf);
    } else {
      return std::to_string(v);
    }
  };
  BenchOptions d;
  auto collect = [&]<class T>(std::string_view, T& field, std::string_view, std::string_view,
                              const auto&... range) {
    if constexpr (sizeof...(range) == 1) default_text.push_back(text_of(field));
  };
  for_each_selection_flag(d, collect);
  for_each_run_flag(d, collect);
  std::size_t i = 0;
  auto check = [&]<class T>(std::string_view flag, T& field, std::string_view, std::string_view,
                            const auto&... range) {
    if constexpr (sizeof...(range) == 1) {
      const std::string text = text_of(field);
      if (text != default_text[i++])
        (void)core::parse_number<detail::number_type<T>>(detail::flag_name(flag), text, range...);
    }
  };
  for_each_selection_flag(o, check);
  for_each_run_flag(o, check);
}

/// The counts together: each flag within its range can still ask for more steps than one result
/// keeps (--runs 1000 --steps 1000000). Counted in 64 bits.
inline void check_totals(const BenchOptions& o) {
  const std::int64_t per_run = std::int64_t{o.warmup_steps} + o.steps;
  const std::int64_t all = per_run * o.runs;
  if (all > limits::all_steps)
    throw core::InputError("--runs " + std::to_string(o.runs) + " x (--warmup-steps " +
                               std::to_string(o.warmup_steps) + " + --steps " +
                               std::to_string(o.steps) + ") = " + std::to_string(all) +
                               " steps, more than the " + std::to_string(limits::all_steps) +
                               " one result keeps",
                           "pass fewer --runs or --steps");
}

/// Environment defaults (PARALLEL, OUTPUT_DIR), applied before flags so that flags win.
inline void apply_env_defaults(BenchOptions& o, bool with_selection) {
  auto apply = [](std::string_view flag, auto& field, std::string_view, std::string_view env,
                  const auto&... range) {
    if (env.empty()) return;
    if (const char* v = std::getenv(std::string(env).c_str()); v != nullptr && *v != '\0')
      detail::parse_value(flag, v, field, range...);
  };
  if (with_selection) for_each_selection_flag(o, apply);
  for_each_run_flag(o, apply);
}

/// Usage text for the hand parser below.
inline std::string usage(std::string_view program, bool with_selection) {
  BenchOptions o;
  std::string out = "usage: " + std::string(program) + " [options]\n";
  auto line = [&]<class T>(std::string_view flag, T&, std::string_view help, std::string_view env,
                           const auto&... range) {
    std::string names;
    for (const auto n : detail::flag_names(flag))
      names += (names.empty() ? "" : ", ") + std::string(n);
    const std::string shown = names + (std::is_same_v<T, bool> ? "" : " ARG");
    out += "  " + shown;
    out += std::string(shown.size() < 20 ? 20 - shown.size() : 1, ' ');
    out += std::string(help);
    if constexpr (sizeof...(range) == 1) out += " [" + core::range_text(range...) + "]";
    out += (env.empty() ? "" : " [env " + std::string(env) + "]") + std::string("\n");
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
  std::map<std::string_view, int> given;
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
                                 std::string_view, const auto&... range) {
      const auto names = detail::flag_names(flag);
      if (matched || std::find(names.begin(), names.end(), a) == names.end()) return;
      matched = true;
      if (!has_value && std::is_same_v<T, bool>) {
        value = "1";
      } else if (!has_value) {
        if (i + 1 >= args.size())
          throw core::InputError(std::string(a) + " needs a value",
                                 "pass " + std::string(a) + " <value>");
        value = args[++i];
      }
      if (given[names[0]]++ != 0)
        throw core::InputError(std::string(a) + " was given twice",
                               "pass it once (tprimat does not pick one of two values)");
      detail::parse_value(a, value, field, range...);
    };
    if (with_selection) for_each_selection_flag(o, try_flag);
    for_each_run_flag(o, try_flag);
    if (!matched)
      throw core::InputError("unknown option '" + core::shown(args[i]) + "'",
                             "run with --help for the options");
  }
  return true;
}

/// The library's settings (core::SettingError::setting(): train::DeviceOptions',
/// PrecisionConfig's and StepShape's names, and Megatron's for the batch and pipeline sizes
/// parallel/ checks; data::SettingNames' and the data writer's) that this program sets by a flag,
/// with the flag.
inline constexpr std::pair<std::string_view, std::string_view> setting_flags[] = {
    {"attention", "--attention"},
    {"precision", "--precision"},
    {"layers", "--layers"},
    {"seq", "--seq"},
    {"data", "--data"},
    {"token_type", "--dtype"},
    {"recompute_num_layers", "--recompute-num-layers"},
    {"recompute_granularity", "--recompute-granularity"},
    {"recompute_modules", "--recompute-modules"},
    {"micro_batch_size", "--mbs"},
    {"global_batch_size", "--gbs"},
    {"pipeline_model_parallel_size", "--pp"},
    {"decoder_first_pipeline_num_layers", "--decoder-first-pipeline-num-layers"},
    {"decoder_last_pipeline_num_layers", "--decoder-last-pipeline-num-layers"},
};

/// The flag of a library setting, or "" where this program has none.
inline std::string_view flag_of_setting(std::string_view setting) {
  for (const auto& [name, flag] : setting_flags)
    if (name == setting) return flag;
  return "";
}

/// A setting the library could not honour, told in this program's flags: "...; use --attention
/// flash (or auto)". `verb` opens the advice ("pass" where the value is the user's own data). A
/// setting without a flag keeps the library's own words.
inline core::InputError with_flag_advice(const core::SettingError& e,
                                         std::string_view verb = "use") {
  const std::string_view flag = flag_of_setting(e.setting());
  if (flag.empty()) return core::InputError(e.what());
  return core::InputError(e.problem(),
                          std::string(verb) + " " + std::string(flag) + " " + e.suggestion());
}

}  // namespace tprimat::cli
