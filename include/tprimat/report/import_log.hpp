// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// `tprimat import`: per-iteration numbers from Megatron/Primus/NeMo training logs, as a result.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <istream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "tprimat/backend/peaks.hpp"
#include "tprimat/bench/memory_plan.hpp"
#include "tprimat/bench/result.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/input_file.hpp"
#include "tprimat/core/number.hpp"
#include "tprimat/core/stats.hpp"
#include "tprimat/model/all.hpp"
#include "tprimat/parallel/strategy.hpp"
#include "tprimat/parallel/validate.hpp"
#include "tprimat/report/log_config.hpp"
#include "tprimat/train/attention_workspace.hpp"
#include "tprimat/train/precision.hpp"
#include "tprimat/train/rank_plan.hpp"

namespace tprimat::report {

/// What each import option is called where its value came from, in messages and in the result's
/// imported.configuration_sources: the setting's own name (Megatron's, where it has one) for a
/// library caller; `tprimat import` passes its flags (apps/tprimat/cli/report_commands.hpp).
struct ImportOptionNames {
  std::string model = "model", num_gpus = "num_gpus", gbs = "global_batch_size",
              mbs = "micro_batch_size", seq = "sequence_length", tp = "tensor_model_parallel_size",
              pp = "pipeline_model_parallel_size", cp = "context_parallel_size",
              warmup_steps = "warmup_steps", strategy = "strategy", seed = "seed", data = "data";
};

/// What the user tells an import (`tprimat import`: the seeds' extract_primus_metrics.py
/// arguments). The configuration figures are optional: what the log states wins, an option fills
/// only what it lacks, and one that contradicts the log is refused.
struct ImportOptions {
  std::string format;  ///< megatron, primus, nemo
  std::string model;   ///< cli name: the FLOPs need the architecture
  std::optional<int> num_gpus, gbs, mbs, seq, tp, pp, cp;
  int warmup_steps = 1;  ///< leading iterations left out of the statistics
  std::string platform;  ///< "" = by format: primus amd, megatron/nemo nvd
  std::string device_name = "unknown";
  std::string strategy = "imported";
  /// The data the run read, named by the user (two logs of one data set on two machines
  /// name it alike, so that compare sets them side by side); it wins over the path a log prints.
  std::optional<std::string> data;
  /// The run's seed where its log does not print it (a log that does wins; an option that
  /// contradicts it is refused).
  std::optional<long long> seed;
  ImportOptionNames names;
};

inline constexpr std::string_view import_formats = "megatron, primus, nemo, torchtitan";

/// What one iteration line prints: NaN (a batch of 0) where it does not print a figure.
struct LoggedIteration {
  double step_time = NAN;  ///< seconds
  double loss = NAN, learning_rate = NAN;
  double tflops_per_gpu = NAN;             ///< the log's own figure
  double tokens_per_second_per_gpu = NAN;  ///< the log's own figure (Primus prints it)
  long long global_batch_size = 0;         ///< Megatron's and NeMo 2's iteration lines
  double iteration = NAN;  ///< the log's own counter (iteration, global_step, step), where printed
  std::size_t line = 0;    ///< from 1
};

/// One value per logged iteration, and the memory readings apart: memory is not a timing, so
/// the warm-up keeps them.
struct LogSeries {
  std::vector<double> step_times;  ///< seconds
  std::vector<double> losses, learning_rates;
  std::vector<double> tflops_per_gpu;
  std::vector<double> tokens_per_second_per_gpu;
  std::vector<long long> global_batch_sizes;
  std::vector<double> iterations;  ///< NaN where a line prints no counter
  std::vector<std::size_t> lines;
  std::vector<double> memory_gb;    ///< peak allocated GiB, each reading in order
  std::vector<double> reserved_gb;  ///< peak reserved GiB, where printed

  void add(const LoggedIteration& i) {
    step_times.push_back(i.step_time);
    losses.push_back(i.loss);
    learning_rates.push_back(i.learning_rate);
    tflops_per_gpu.push_back(i.tflops_per_gpu);
    tokens_per_second_per_gpu.push_back(i.tokens_per_second_per_gpu);
    global_batch_sizes.push_back(i.global_batch_size);
    iterations.push_back(i.iteration);
    lines.push_back(i.line);
  }
};

/// A log read whole: its iterations and what it states about its run.
struct ParsedLog {
  LogSeries series;
  LogConfig config;
};

namespace detail {

/// The longest step a log may report (11.6 days); beyond it the log is damaged.
inline constexpr double max_step_seconds = 1e6;
/// The shortest: a microsecond, far below any training step of a language model (a launch of
/// one kernel takes several); a 1e-300 ms step would make every rate of the result absurd.
inline constexpr double min_step_seconds = 1e-6;
/// The most memory one GPU may report: 1 PiB in GiB, thousands of times today's largest (MI355X,
/// 288 GB); beyond it the log is damaged.
inline constexpr double max_memory_gib = 1024.0 * 1024.0;

/// The step time of an iteration line, from the figure after `key` in units of `seconds_per_unit`.
/// Every figure of the result follows from the step times: anything but a positive finite time
/// is bad input naming the line.
inline double log_step_time(double printed, double seconds_per_unit, std::string_view key,
                            std::size_t n, std::string_view log) {
  const double s = printed * seconds_per_unit;
  if (!(s >= min_step_seconds && s <= max_step_seconds))
    throw core::InputError(std::string(log) + " line " + std::to_string(n) + ": " +
                               std::string(key) + " " + figure_text(printed) +
                               " is not a step time from " + figure_text(min_step_seconds) +
                               " to " + figure_text(max_step_seconds) + " s",
                           "the log is damaged: repair or remove that line");
  return s;
}

/// A memory reading in GiB (`printed` / `units_per_gib`), at most max_memory_gib: beyond it the
/// log is damaged, named with its line.
inline double log_memory_gib(double printed, double units_per_gib, std::string_view key,
                             std::size_t n, std::string_view log) {
  const double gib = printed / units_per_gib;
  if (!(gib <= max_memory_gib))
    throw core::InputError(std::string(log) + " line " + std::to_string(n) + ": " +
                               std::string(key) + " " + figure_text(printed) +
                               " is more memory than any GPU has (above " +
                               figure_text(max_memory_gib) + " GiB)",
                           "the log is damaged: repair or remove that line");
  return gib;
}

/// A damaged figure, shown as printed up to the next blank or '|'.
inline core::InputError damaged_figure(std::string_view key, std::string_view text, std::size_t n,
                                       std::string_view log, std::string_view what) {
  text = text.substr(0, text.find_first_of(" \t|"));
  return core::InputError(std::string(log) + " line " + std::to_string(n) + ": " +
                              std::string(key) + " " + core::shown(text.substr(0, 40)) + " " +
                              std::string(what),
                          "the log is damaged: repair or remove that line");
}

/// Whether a figure may end where `rest` starts: at the line's end, a blank, a field separator
/// ('|', ']', ')', ';', Primus's "inst/avg" '/'), or a ',' that does not go on with a digit.
/// "3,948" or "19x7.5" is a damaged figure, never 3 or 19.
inline bool figure_ends(std::string_view rest) {
  if (rest.empty()) return true;
  const char c = rest.front();
  if (c == ',') return rest.size() == 1 || !(rest[1] >= '0' && rest[1] <= '9');
  return c == ' ' || c == '\t' || c == '|' || c == ']' || c == ')' || c == ';' || c == '/';
}

/// The number an iteration line prints after `key`: nullopt where it prints no `key` or no
/// number after it; a number that runs on into other characters ("3,948", "19x7.5") is a
/// damaged log, refused naming the line.
inline std::optional<double> iteration_number(std::string_view line, std::string_view key,
                                              std::size_t n, std::string_view log) {
  const auto rest = text_after(line, key);
  if (!rest) return std::nullopt;
  const auto f = leading_figure(*rest);
  if (!f) return std::nullopt;
  if (!figure_ends(f->after)) throw damaged_figure(key, *rest, n, log, "is not a number");
  return f->value;
}

/// A figure that must be finite and 0 or more: a negative or infinite one is a damaged log.
inline double checked_figure(double v, std::string_view key, std::size_t n, std::string_view log) {
  if (std::isnan(v)) return NAN;
  if (!std::isfinite(v) || v < 0)
    throw core::InputError(std::string(log) + " line " + std::to_string(n) + ": " +
                               std::string(key) + " " + figure_text(v) +
                               " is not a finite number of 0 or more",
                           "the log is damaged: repair or remove that line");
  return v;
}

/// The figure after `key`: NaN when the line does not print it (or prints nan); a negative,
/// infinite or run-on one is a damaged log.
inline double log_figure(std::string_view line, std::string_view key, std::size_t n,
                         std::string_view log) {
  const auto v = iteration_number(line, key, n, log);
  return v ? checked_figure(*v, key, n, log) : NAN;
}

/// A memory figure with its unit right after the number ("90.06GB", "61.20GiB(77.41%)"), in GiB:
/// GB and GiB are GiB (Primus and torchtitan divide bytes by 1024^3), MB and MiB a 1024th of
/// one, TB and TiB 1024; NaN where the line prints none. Another unit, or none, is a damaged
/// log: "58510MB" is 57 GiB, never 58,510.
inline double memory_figure_gib(std::string_view text, std::string_view key, std::size_t n,
                                std::string_view log) {
  const auto f = leading_figure(text);
  if (!f) return NAN;
  const double v = checked_figure(f->value, key, n, log);
  if (std::isnan(v)) return NAN;
  std::string_view unit = f->after;
  unit = unit.substr(0, unit.find_first_not_of("KMGTPiBb"));
  double per_gib = 0;
  if (unit == "GB" || unit == "GiB") per_gib = 1;
  if (unit == "MB" || unit == "MiB") per_gib = 1024;
  if (unit == "TB" || unit == "TiB") per_gib = 1.0 / 1024;
  // torchtitan follows the unit with the share of the device: "61.20GiB(77.41%)".
  const std::string_view after = f->after.substr(unit.size());
  if (per_gib == 0 || !(figure_ends(after) || after.front() == '('))
    throw damaged_figure(key, text, n, log,
                         "is not a memory figure in MB, GB or TB (MiB, GiB, TiB)");
  return log_memory_gib(v, per_gib, key, n, log);
}

/// Calls `f(line, n)` on each line of `in`, numbered from 1. A line ends at '\n', "\r\n" or a
/// lone '\r' (a log written on Windows, or a progress line redrawn in place): no reader sees a
/// '\r' inside a figure or at the end of a value; the pieces of one line share its number.
template <class F>
void for_each_line(std::istream& in, F&& f) {
  std::string text;
  std::size_t n = 0;
  while (std::getline(in, text)) {
    ++n;
    std::string_view rest(text);
    for (;;) {
      const auto cr = rest.find('\r');
      f(rest.substr(0, cr), n);
      if (cr == std::string_view::npos || cr + 1 == rest.size()) break;
      rest.remove_prefix(cr + 1);
    }
  }
}

/// The global batch an iteration line prints after `key`; 0 when it prints none.
inline long long log_batch(std::string_view line, std::string_view key, std::size_t n,
                           std::string_view log) {
  const auto rest = text_after(line, key);
  if (!rest) return 0;
  return stated_count(*rest, "global_batch_size", max_batch_or_sequence,
                      log_line(n, "iteration line"), log)
      .value_or(0);
}

}  // namespace detail

namespace detail {

/// The iteration counters a log prints must rise from line to line: one that repeats or goes
/// back is a second run appended (a restart) or a damaged log, never more steps of this one.
inline void check_one_run(const LogSeries& s, std::string_view log) {
  std::optional<std::size_t> last;
  for (std::size_t i = 0; i < s.iterations.size(); ++i) {
    if (std::isnan(s.iterations[i])) continue;
    if (last && !(s.iterations[i] > s.iterations[*last]))
      throw core::InputError(
          std::string(log) + " contradicts itself: iteration " + figure_text(s.iterations[i]) +
              " at line " + std::to_string(s.lines[i]) + " follows iteration " +
              figure_text(s.iterations[*last]) + " at line " + std::to_string(s.lines[*last]) +
              " (a restarted run, or a damaged log)",
          "a log of one run is imported at a time: split the log, or repair it");
    last = i;
  }
}

}  // namespace detail

/// Megatron-LM and Primus (Megatron backend) logs. Iteration lines:
///   ... iteration 10/ 100 | ... | elapsed time per iteration (ms): 2345.6 |
///   throughput per GPU (TFLOP/s/GPU): 400.1 | learning rate: 3.0E-04 | global batch size: 64 |
///   lm loss: 1.03E+01 | ...
/// (Primus writes "inst/avg" figures and adds "tokens per GPU (tokens/s/GPU)"); memory:
/// Megatron's "memory (MB) | ... | max allocated: 1234.5 | ... | max reserved: 2345.6" and
/// Primus's "mem usage...: 90.06GB" (the first GB figure). The configuration: see LogConfigReader.
inline ParsedLog parse_megatron_log(std::istream& in, const std::string& log = "log") {
  ParsedLog p;
  LogSeries& s = p.series;
  LogConfigReader config(log);
  detail::for_each_line(in, [&](std::string_view line, std::size_t n) {
    config.megatron_line(line, n);
    constexpr std::string_view elapsed = "elapsed time per iteration (ms)";
    if (const auto ms = detail::iteration_number(line, elapsed, n, log)) {
      s.add({.step_time = detail::log_step_time(*ms, 1e-3, elapsed, n, log),
             .loss = detail::iteration_number(line, "lm loss", n, log).value_or(NAN),
             .learning_rate = detail::log_figure(line, "learning rate", n, log),
             .tflops_per_gpu = detail::log_figure(line, "throughput per GPU (TFLOP/s/GPU)", n, log),
             .tokens_per_second_per_gpu =
                 detail::log_figure(line, "tokens per GPU (tokens/s/GPU)", n, log),
             .global_batch_size = detail::log_batch(line, "global batch size", n, log),
             .iteration = detail::iteration_number(line, "iteration", n, log).value_or(NAN),
             .line = n});
      // Primus prints memory on the iteration line itself. (A "mem usage" with no ':' after it
      // carries no figure.)
      if (const auto mem = line.find("mem usage"); mem != std::string_view::npos)
        if (const auto colon = line.find(':', mem); colon != std::string_view::npos)
          if (const double gib = detail::memory_figure_gib(detail::trimmed(line.substr(colon + 1)),
                                                           "mem usage", n, log);
              !std::isnan(gib))
            s.memory_gb.push_back(gib);
    } else if (line.find("memory (MB)") != std::string_view::npos) {
      if (const double mb = detail::log_figure(line, "max allocated", n, log); !std::isnan(mb))
        s.memory_gb.push_back(detail::log_memory_gib(mb, 1024, "max allocated", n, log));
      if (const double mb = detail::log_figure(line, "max reserved", n, log); !std::isnan(mb))
        s.reserved_gb.push_back(detail::log_memory_gib(mb, 1024, "max reserved", n, log));
    }
  });
  p.config = config.finish();
  return p;
}

/// NeMo logs: NeMo 2's "Training epoch 0, iteration 9/99 | lr: 3e-05 | global_batch_size: 64 |
/// reduced_train_loss: 10.3 | train_step_timing in s: 2.35 | TFLOPS_per_GPU: 400.1" and NeMo 1's
/// progress bar "... reduced_train_loss=10.30, lr=3e-05, ..., train_step_timing in s=2.350]".
/// One step per part with train_step_timing. The configuration: see LogConfigReader.
inline ParsedLog parse_nemo_log(std::istream& in, const std::string& log = "log") {
  ParsedLog p;
  LogConfigReader config(log);
  detail::for_each_line(in, [&](std::string_view line, std::size_t n) {
    // A progress bar redraws in place: a line may hold several updates separated by '\r'.
    std::size_t start = 0;
    while (start <= line.size()) {
      const auto end = std::min(line.find('\r', start), line.size());
      const std::string_view part = line.substr(start, end - start);
      config.nemo_line(part, n);
      constexpr std::string_view timing = "train_step_timing in s";
      if (const auto t = detail::iteration_number(part, timing, n, log))
        p.series.add(
            {.step_time = detail::log_step_time(*t, 1, timing, n, log),
             .loss = detail::iteration_number(part, "reduced_train_loss", n, log).value_or(NAN),
             .learning_rate = detail::log_figure(part, " lr", n, log),
             .tflops_per_gpu = detail::log_figure(part, "TFLOPS_per_GPU", n, log),
             .global_batch_size = detail::log_batch(part, "global_batch_size", n, log),
             // NeMo 2 counts "iteration 9/99", NeMo 1 "global_step=8.000".
             .iteration =
                 detail::iteration_number(part, "iteration", n, log)
                     .value_or(detail::iteration_number(part, "global_step", n, log).value_or(NAN)),
             .line = n});
      start = end + 1;
    }
  });
  p.config = config.finish();
  return p;
}

namespace detail {

/// `line` without its ANSI escape sequences (torchtitan colours each figure): ESC '[' ... letter.
inline std::string without_ansi(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      i += 2;
      while (i < line.size() && !((line[i] >= 'A' && line[i] <= 'Z') ||
                                  (line[i] >= 'a' && line[i] <= 'z')))
        ++i;
      continue;
    }
    out += line[i];
  }
  return out;
}

/// A figure torchtitan prints with thousands separators ("tps: 1,234", "tflops: 190.27"), after
/// `key`: NaN where the line prints none. Commas must group the whole part by threes ("1,234,567");
/// anything else ("6,", "64x10", "12,34") is a damaged log, never the digits before it.
inline double grouped_figure(std::string_view line, std::string_view key, std::size_t n,
                             std::string_view log) {
  const auto rest = text_after(line, key);
  if (!rest) return NAN;
  const std::string_view word = rest->substr(0, rest->find_first_of(" \t"));
  if (word.empty()) return NAN;
  std::string plain;
  std::size_t group = 0;  // digits since the last comma
  bool grouped = false, broken = false;
  std::size_t i = 0;
  for (; i < word.size() && ((word[i] >= '0' && word[i] <= '9') || word[i] == ','); ++i) {
    if (word[i] == ',') {
      broken = broken || group == 0 || (grouped && group != 3) || (!grouped && group > 3);
      grouped = true;
      group = 0;
      continue;
    }
    plain += word[i];
    ++group;
  }
  if (grouped && group != 3) broken = true;
  plain += word.substr(i);
  const auto f = leading_figure(plain);
  if (broken || !f || !figure_ends(f->after))
    throw damaged_figure(key, word, n, log, "is not a number");
  return checked_figure(f->value, key, n, log);
}

}  // namespace detail

/// torchtitan logs. Its step lines, every metrics.log_freq steps (colour codes allowed):
///   step: 10  loss:  7.8912  grad_norm:  1.2345  memory: 61.20GiB(77.41%)  tps: 3,285
///   tflops: 190.27  mfu: 19.24%
/// tps is tokens/s per GPU over the steps since the last line and memory the peak reserved; the
/// step time follows from tps once the batch, sequence and GPUs are known (import_log). Its
/// "validate step:" lines are not training steps. The configuration: its job config dump and
/// device mesh line (LogConfigReader::torchtitan_line).
inline ParsedLog parse_torchtitan_log(std::istream& in, const std::string& log = "log") {
  ParsedLog p;
  LogConfigReader config(log);
  detail::for_each_line(in, [&](std::string_view raw, std::size_t n) {
    const std::string text = detail::without_ansi(raw);
    const std::string_view line = text;
    config.torchtitan_line(line, n);
    const auto at = line.find("step:");
    if (at == line.npos || line.find("tps:") == line.npos ||
        (at >= 9 && line.substr(at - 9, 9) == "validate "))
      return;
    const double tps = detail::grouped_figure(line, "tps:", n, log);
    p.series.add({.step_time = NAN,
                  .loss = detail::iteration_number(line, "loss:", n, log).value_or(NAN),
                  .tflops_per_gpu = detail::grouped_figure(line, "tflops:", n, log),
                  .tokens_per_second_per_gpu = tps,
                  .iteration = detail::iteration_number(line, "step:", n, log).value_or(NAN),
                  .line = n});
    if (const auto text = detail::text_after(line, "memory:"))
      if (const double gib = detail::memory_figure_gib(*text, "memory", n, log); !std::isnan(gib))
        p.series.reserved_gb.push_back(gib);
  });
  p.config = config.finish();
  return p;
}

inline std::string default_platform(std::string_view format) {
  return format == "primus" ? "amd" : "nvd";
}

namespace detail {

/// An option's value against its range, before any log is read.
inline void check_count_flag(const std::optional<int>& v, std::string_view flag, long long most,
                             std::string_view what) {
  if (v && (*v < 1 || *v > most))
    throw core::InputError(std::string(flag) + " " + std::to_string(*v) + ": the " +
                               std::string(what) + " is a whole number from 1 to " +
                               std::to_string(most),
                           "pass the run's " + std::string(what));
}

}  // namespace detail

/// Every option of an import, checked before any log is read.
inline void check_import_options(const ImportOptions& o) {
  const ImportOptionNames& n = o.names;
  if (o.format != "megatron" && o.format != "primus" && o.format != "nemo" &&
      o.format != "torchtitan")
    throw core::InputError("unknown import format '" + core::shown(o.format) + "'",
                           "pick one of " + std::string(import_formats));
  if (!model::find(o.model))
    throw core::InputError("unknown model '" + core::shown(o.model) + "'",
                           "pick one of " + model::known_names() + " with " + n.model);
  detail::check_count_flag(o.num_gpus, n.num_gpus, max_gpu_count, "GPU count");
  detail::check_count_flag(o.gbs, n.gbs, max_batch_or_sequence, "global batch size");
  detail::check_count_flag(o.mbs, n.mbs, max_batch_or_sequence, "micro batch size");
  detail::check_count_flag(o.seq, n.seq, max_batch_or_sequence, "sequence length");
  detail::check_count_flag(o.tp, n.tp, max_gpu_count, "tensor parallel size");
  detail::check_count_flag(o.pp, n.pp, max_gpu_count, "pipeline parallel size");
  detail::check_count_flag(o.cp, n.cp, max_gpu_count, "context parallel size");
  if (o.warmup_steps < 0)
    throw core::InputError(n.warmup_steps + " " + std::to_string(o.warmup_steps) +
                               ": a count of leading iterations, 0 or more",
                           "pass " + n.warmup_steps + " 0 to measure every iteration");
  if (o.strategy.empty())
    throw core::InputError(n.strategy + " is empty", "name the strategy, or leave it out");
  if (o.seed && *o.seed < 0)
    throw core::InputError(n.seed + " " + std::to_string(*o.seed) +
                               ": a seed is a whole number of 0 or more",
                           "pass the run's seed, or leave it out");
  if (o.data && o.data->empty())
    throw core::InputError(n.data + " is empty",
                           "name the data the run read (e.g. " + n.data +
                               " c4-en-llama3), or leave it out to take the log's");
}

namespace detail {

/// One setting of the imported run: the log's figure, else the option's (named `flag_name`);
/// nullopt when neither says. An option that contradicts the log is bad input naming both and
/// where each came from.
inline std::optional<Stated> settle(const std::optional<Stated>& logged,
                                    const std::optional<int>& flag, std::string_view flag_name,
                                    std::string_view name, const std::string& log) {
  if (logged) {
    if (flag && *flag != logged->value)
      throw core::InputError(std::string(flag_name) + " " + std::to_string(*flag) +
                                 " contradicts " + log + ": " + std::string(name) + " " +
                                 std::to_string(logged->value) + " at " + logged->where,
                             "drop " + std::string(flag_name) +
                                 " (the log's figure is used), or import the log of the run "
                                 "you mean");
    return Stated{logged->value, "log " + logged->where};
  }
  if (flag) return Stated{*flag, std::string(flag_name)};
  return std::nullopt;
}

/// A setting that sets the throughput (GPUs, batch, sequence): never guessed.
inline Stated required(std::optional<Stated> s, std::string_view flag_name, std::string_view what,
                       const std::string& log) {
  if (!s)
    throw core::InputError(log + " does not state the " + std::string(what),
                           "pass " + std::string(flag_name));
  return *s;
}

/// A setting that leaves the throughput alone (layout, micro batch): 1 when nobody says.
inline Stated assumed_one(std::optional<Stated> s, std::string_view flag_name) {
  return s ? *s : Stated{1, "assumed 1: neither the log nor " + std::string(flag_name) + " says"};
}

inline std::string named(std::string_view name, const Stated& s) {
  return std::string(name) + " " + std::to_string(s.value) + " (" + s.where + ")";
}

/// The iterations after the warm-up must all run the global batch they print (a batch ramp-up
/// ends before them); that batch is then stated by the log like any other figure.
inline void record_measured_batch(LogConfig& config, const LogSeries& s, std::size_t skip,
                                  const std::string& log, const std::string& warmup_name) {
  std::optional<Stated> measured;
  for (std::size_t i = skip; i < s.global_batch_sizes.size(); ++i) {
    const long long b = s.global_batch_sizes[i];
    if (b == 0) continue;
    const auto where = log_line(s.lines[i], "iteration line");
    if (measured && measured->value != b)
      throw core::InputError(log + ": the global batch changes over the measured iterations: " +
                                 std::to_string(measured->value) + " at " + measured->where + ", " +
                                 std::to_string(b) + " at " + where + " (a batch ramp-up?)",
                             "pass a " + warmup_name + " that leaves the ramp-up out");
    if (!measured) measured = Stated{b, where};
  }
  if (measured)
    record(config.global_batch, "global_batch_size", measured->value, measured->where, log);
}

/// torchtitan prints no step time: each line's tokens/s per GPU over the steps since the last
/// gives it, the global batch's tokens over every GPU's rate.
inline void step_times_from_tps(LogSeries& s, const Stated& gbs, const Stated& seq,
                                const Stated& gpus, const std::string& log) {
  for (std::size_t i = 0; i < s.step_times.size(); ++i) {
    const double tps = s.tokens_per_second_per_gpu[i];
    if (!(tps > 0))
      throw core::InputError(log + " line " + std::to_string(s.lines[i]) + ": tps " +
                                 figure_text(tps) + " is no rate above 0 to time the step by",
                             "the log is damaged: repair or remove that line");
    const double seconds = static_cast<double>(gbs.value) * static_cast<double>(seq.value) /
                           (static_cast<double>(gpus.value) * tps);
    s.step_times[i] = log_step_time(seconds, 1, "step time from tps", s.lines[i], log);
  }
}

/// The model (named by the option `model_name`) against the shape the log states: a log of another model would be priced with the
/// wrong FLOPs. Layers may be fewer (a proxy run), never more.
inline model::Dims model_as_run(const model::Dims& full, const LogConfig& c, const std::string& log,
                                std::string_view model, const std::string& model_name) {
  const auto check = [&](const std::optional<Stated>& s, std::string_view name, int ours) {
    if (s && s->value != ours)
      throw core::InputError(model_name + " " + std::string(model) + " has " + std::string(name) +
                                 " " + std::to_string(ours) + ", " + log + " states " +
                                 std::to_string(s->value) + " at " + s->where,
                             "pass the " + model_name + " the log's run trained");
  };
  check(c.hidden, "hidden_size", full.hidden);
  check(c.heads, "num_attention_heads", full.heads);
  check(c.ffn, "ffn_hidden_size", full.ffn);
  if (c.layers && c.layers->value > full.layers)
    throw core::InputError(model_name + " " + std::string(model) + " has " +
                               std::to_string(full.layers) + " layers, " + log + " states " +
                               "num_layers " + std::to_string(c.layers->value) + " at " +
                               c.layers->where,
                           "pass the " + model_name + " the log's run trained");
  return c.layers ? full.with_layers(static_cast<int>(c.layers->value)) : full;
}

inline nlohmann::json mean_or_null(const std::vector<double>& v) {
  std::vector<double> finite;
  for (double x : v)
    if (std::isfinite(x)) finite.push_back(x);
  return finite.empty() ? nlohmann::json(nullptr) : nlohmann::json(core::mean(finite));
}

/// The FP8 recipe a log states: fp8 "hybrid" (E4M3 forward, E5M2 backward; other formats are
/// refused), fp8_recipe delayed (also when the log is silent: NeMo's and Megatron's default) or
/// current/tensorwise; MXFP8 and blockwise are refused.
inline train::PrecisionConfig stated_fp8(const LogConfig& stated, const std::string& log) {
  train::PrecisionConfig p;
  p.precision = train::Precision::fp8;
  if (stated.precision->value != "fp8 (hybrid)")
    throw core::InputError(log + ": the run trained in " + stated.precision->value + " (at " +
                               stated.precision->where +
                               "); tprimat records FP8 runs of the hybrid format only (E4M3 "
                               "forward, E5M2 backward: NeMo's fp8 \"hybrid\")",
                           "import a bf16, fp32 or fp8 hybrid run's log");
  if (!stated.fp8_recipe) return p;
  const std::string& r = stated.fp8_recipe->value;
  if (r == "delayed") {
    p.fp8.recipe = train::Fp8Recipe::delayed;
  } else if (r == "current" || r == "tensorwise") {
    p.fp8.recipe = train::Fp8Recipe::current;
  } else {
    throw core::InputError(log + ": fp8_recipe " + core::shown(r) + " at " +
                               stated.fp8_recipe->where +
                               ": tprimat records the delayed and current (tensorwise) scaling "
                               "recipes, not MXFP8 or blockwise",
                           "import a delayed or current-scaling FP8 run's log");
  }
  return p;
}

/// A whole-number FP8 setting as the log states it, at least `least`.
inline long long stated_setting(const StatedPrecision& s, std::string_view name, long long least,
                                const std::string& log) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(s.value.data(), s.value.data() + s.value.size(), v);
  if (ec != std::errc() || end != s.value.data() + s.value.size() || v < least || v > 1 << 20)
    throw core::InputError(log + ": " + std::string(name) + " " + core::shown(s.value) + " at " +
                               s.where + " is not a whole number from " + std::to_string(least),
                           "pass the log of a run whose settings it prints");
  return v;
}

/// The delayed recipe's reduction of the amax history, as stated: max or most_recent.
inline std::string stated_algo(const StatedPrecision& s, const std::string& log) {
  if (s.value != "max" && s.value != "most_recent")
    throw core::InputError(log + ": fp8_amax_compute_algo " + core::shown(s.value) + " at " +
                               s.where + " is neither max nor most_recent",
                           "pass the log of a run whose settings it prints");
  return s.value;
}

/// A true/false setting as the log writes it (True, False, true, false, 1, 0).
inline std::optional<bool> stated_bool(const std::optional<StatedText>& s, std::string_view name,
                                       const std::string& log) {
  if (!s) return std::nullopt;
  if (s->value == "True" || s->value == "true" || s->value == "1") return true;
  if (s->value == "False" || s->value == "false" || s->value == "0") return false;
  throw core::InputError(log + ": " + std::string(name) + " " + core::shown(s->value) + " at " +
                             s->where + " is neither true nor false",
                         "pass the log of a run whose settings it prints");
}

/// A number setting as the log writes it, finite and at least 0.
inline std::optional<double> stated_number(const std::optional<StatedText>& s,
                                           std::string_view name, const std::string& log) {
  if (!s) return std::nullopt;
  const std::string_view text = detail::first_word(s->value);
  const auto read = core::read_decimal(text);  // the whole word, no '+' before it
  if (!read || read->length != text.size() || !std::isfinite(read->value) || read->value < 0)
    throw core::InputError(log + ": " + std::string(name) + " " + core::shown(s->value) +
                               " at " + s->where + " is not a finite number of 0 or more",
                           "pass the log of a run whose settings it prints");
  return read->value;
}

/// The run's seed as the log writes it: a whole number of 0 or more.
inline std::optional<long long> stated_seed(const std::optional<StatedText>& s,
                                            const std::string& log) {
  if (!s) return std::nullopt;
  long long v = -1;
  const auto [end, ec] = std::from_chars(s->value.data(), s->value.data() + s->value.size(), v);
  if (ec != std::errc() || end != s->value.data() + s->value.size() || v < 0)
    throw core::InputError(log + ": seed " + core::shown(s->value) + " at " + s->where +
                               " is not a whole number of 0 or more",
                           "pass the log of a run whose settings it prints");
  return v;
}

/// A whole-number setting as the log writes it, at least `least`.
inline std::optional<long long> stated_whole(const std::optional<StatedText>& s,
                                             std::string_view name, long long least,
                                             const std::string& log) {
  if (!s) return std::nullopt;
  return stated_setting(*s, name, least, log);
}

/// What data parallelism sharded, as a log states it, and the setting it was read from
/// ("use_distributed_optimizer at line 9 (arguments block)"); no strategy where the log does not
/// say.
struct StatedSharding {
  std::optional<train::ShardingStrategy> strategy;
  std::string where;
  /// Hybrid sharding's groups where the log states them (Megatron's
  /// num_distributed_optimizer_instances, torchtitan's data_parallel_replicate_degree under
  /// FSDP), and the setting's place.
  std::optional<int> instances = std::nullopt;
  std::string instances_where{};
};

/// The sharding strategy a log states (LogConfig's sharding settings), checked against the DP
/// and CP the import settled on; a value the framework would not take, or settings that cannot
/// hold together, are a damaged log, named.
/// - torchtitan: FSDP, optim_grads_params, where data_parallel_shard_degree x CP > 1 (its
///   ParallelDims.fsdp_enabled; a degree of -1 takes the DP ranks data_parallel_replicate_degree
///   leaves), else no_shard (DDP over the replicas).
/// - Megatron-LM, Primus and NeMo: use_torch_fsdp2 is FSDP. Megatron-FSDP on (use_megatron_fsdp,
///   or its older use_custom_fsdp) runs data_parallel_sharding_strategy. Without it Megatron
///   ignores that argument, which newer versions print as optim_grads_params for every run: the
///   distributed optimizer is then the sharding (use_distributed_optimizer True: optim; False:
///   no_shard).
inline StatedSharding stated_sharding(const LogConfig& stated, std::optional<bool> zero1,
                                      long long dp, long long cp, std::string_view format,
                                      const std::string& log) {
  using train::ShardingStrategy;
  const auto damaged = [&](const std::string& what) {
    return core::InputError(log + ": " + what, "pass the log of a run whose settings it prints");
  };
  if (format == "torchtitan") {
    if (!stated.dp_shard_degree) return {};
    const StatedText& shard_text = *stated.dp_shard_degree;
    const long long shard = shard_text.value == "-1"
                                ? -1
                                : stated_setting(shard_text, "data_parallel_shard_degree", 1, log);
    const auto replicate =
        stated_whole(stated.dp_replicate_degree, "data_parallel_replicate_degree", 1, log);
    const std::string ranks =
        " the " + std::to_string(dp) + " data-parallel ranks (num_gpus / (TP x PP x CP))";
    long long degree = shard;
    if (shard == -1 && replicate) {
      if (dp % *replicate != 0)
        throw damaged("data_parallel_replicate_degree " + std::to_string(*replicate) + " at " +
                      stated.dp_replicate_degree->where + " does not divide" + ranks);
      degree = dp / *replicate;
    } else if (shard == -1) {
      // The ranks the replicas leave, from 1 to DP: unknown unless CP or DP 1 decides.
      if (cp == 1 && dp > 1) return {};
      degree = 1;
    } else if (replicate ? shard * *replicate != dp : dp % shard != 0) {
      throw damaged("data_parallel_shard_degree " + std::to_string(shard) + " at " +
                    shard_text.where +
                    (replicate ? " x data_parallel_replicate_degree " + std::to_string(*replicate) +
                                     " at " + stated.dp_replicate_degree->where + " is not"
                               : std::string(" does not divide")) +
                    ranks);
    }
    StatedSharding out{
        degree * cp > 1 ? ShardingStrategy::optim_grads_params : ShardingStrategy::no_shard,
        "data_parallel_shard_degree at " + shard_text.where};
    // Under FSDP the replicas of each shard group are HSDP's instances (torchtitan's mesh puts
    // the replicate dimension outside the shard and CP ones, as tprimat's groups do); under DDP
    // there is nothing sharded to split.
    if (replicate) {
      out.instances = degree * cp > 1 ? static_cast<int>(*replicate) : 1;
      out.instances_where =
          "data_parallel_replicate_degree at " + stated.dp_replicate_degree->where;
    }
    return out;
  }
  // The strategy argument is checked whether or not it applies: Megatron takes no other value.
  std::optional<ShardingStrategy> named;
  if (const auto& s = stated.sharding_strategy) {
    named = train::sharding_strategy_named(s->value);
    if (!named)
      throw damaged("data_parallel_sharding_strategy " + core::shown(s->value) + " at " + s->where +
                    " is not no_shard, optim, optim_grads or optim_grads_params");
  }
  // Megatron's hybrid sharding: its groups split whatever shards (the distributed optimizer or
  // Megatron-FSDP; Megatron refuses more than one without them) over DP x CP.
  const auto with_instances = [&](StatedSharding s) {
    const auto n =
        stated_whole(stated.optimizer_instances, "num_distributed_optimizer_instances", 1, log);
    if (!n) return s;
    // The engines' rule (train::optimizer_instances_error), the strategy's setting named.
    train::OptimizerConfig opt;
    opt.sharding = *s.strategy;
    opt.optimizer_instances = static_cast<int>(*n);  // at most 2^20 (stated_setting)
    if (const auto err = train::optimizer_instances_error(opt, static_cast<int>(dp * cp)))
      throw damaged("num_distributed_optimizer_instances at " + stated.optimizer_instances->where +
                    ": " + *err + " (" + s.where + ")");
    s.instances = opt.optimizer_instances;
    s.instances_where =
        "num_distributed_optimizer_instances at " + stated.optimizer_instances->where;
    return s;
  };
  if (stated_bool(stated.torch_fsdp2, "use_torch_fsdp2", log).value_or(false))
    return {ShardingStrategy::optim_grads_params,
            "use_torch_fsdp2 at " + stated.torch_fsdp2->where};
  if (stated_bool(stated.megatron_fsdp, "use_megatron_fsdp", log).value_or(false)) {
    if (!named) return {};
    // Megatron-FSDP before its version 2 (use_custom_fsdp too) runs under the distributed
    // optimizer, which Megatron turns on before it prints the arguments; v2 runs without it.
    const bool v2 = stated.megatron_fsdp_version && stated.megatron_fsdp_version->value == "2";
    if (*named != ShardingStrategy::no_shard && zero1 == false && !v2)
      throw damaged("data_parallel_sharding_strategy " + stated.sharding_strategy->value + " at " +
                    stated.sharding_strategy->where + " under Megatron-FSDP (" +
                    stated.megatron_fsdp->where + ") contradicts use_distributed_optimizer " +
                    stated.distributed_optimizer->value + " at " +
                    stated.distributed_optimizer->where +
                    ": Megatron-FSDP before its version 2 shards through the distributed "
                    "optimizer");
    return with_instances(
        {named, "data_parallel_sharding_strategy at " + stated.sharding_strategy->where});
  }
  if (!zero1) return {};
  return with_instances({*zero1 ? ShardingStrategy::optim : ShardingStrategy::no_shard,
                         "use_distributed_optimizer at " + stated.distributed_optimizer->where});
}

/// training_config.recompute as the log states it: {granularity none|full|selective, method
/// uniform|block|null, num_layers N|null} (and selective's modules, a list or null), method and
/// layers only for full (Megatron ignores them otherwise); nullopt where the log says nothing of
/// recomputation. A value Megatron would not take is a damaged log, named.
inline std::optional<nlohmann::json> stated_recompute(const LogConfig& stated,
                                                      const std::string& log) {
  const auto off = [](const std::optional<StatedText>& s) {
    return !s || s->value == "None" || s->value == "null" || s->value == "none" ||
           s->value == "~";
  };
  const auto refuse = [&](const StatedText& s, std::string_view name, std::string_view allowed) {
    return core::InputError(log + ": " + std::string(name) + " " + core::shown(s.value) + " at " +
                                s.where + " is not " + std::string(allowed),
                            "pass the log of a run whose settings it prints");
  };
  const auto activations = stated_bool(stated.recompute_activations, "recompute_activations", log);
  if (!stated.recompute_granularity && !activations) return std::nullopt;
  std::string granularity = "none";
  if (!off(stated.recompute_granularity)) {
    granularity = stated.recompute_granularity->value;
    if (granularity != "full" && granularity != "selective")
      throw refuse(*stated.recompute_granularity, "recompute_granularity",
                   "none, full or selective");
  } else if (activations.value_or(false)) {
    granularity = "selective";  // Megatron's older --recompute-activations
  }
  nlohmann::json method = nullptr, layers = nullptr;
  if (granularity == "full") {
    if (!off(stated.recompute_method)) {
      const std::string& m = stated.recompute_method->value;
      if (m != "uniform" && m != "block")
        throw refuse(*stated.recompute_method, "recompute_method", "uniform or block");
      method = m;
    }
    if (!off(stated.recompute_num_layers))
      layers = stated_setting(*stated.recompute_num_layers, "recompute_num_layers", 1, log);
  }
  nlohmann::json out{{"granularity", granularity}, {"method", method}, {"num_layers", layers}};
  // Selective's modules as the log lists them (Megatron's default core_attn among them); null
  // where it lists none.
  if (granularity == "selective") {
    nlohmann::json modules = nullptr;
    if (!off(stated.recompute_modules)) {
      const std::string words = data_label(stated.recompute_modules->value);
      std::size_t at = 0;
      while (at < words.size()) {
        const std::size_t space = std::min(words.find(' ', at), words.size());
        if (modules.is_null()) modules = nlohmann::json::array();
        modules.push_back(words.substr(at, space - at));
        at = space + 1;
      }
    }
    out["modules"] = modules;
  }
  return out;
}

}  // namespace detail

/// The result document for the log `log` read from `in`: our schema, its configuration read
/// from the log where the log states it (the flags fill the rest), what neither says null or
/// listed under `imported.assumptions`, the log's own figures under `imported.log_*`; every
/// string valid UTF-8 (a stray byte of the log's is U+FFFD), so that it dumps as it is. Throws
/// InputError naming the log, the value and the fix on any problem (a stream that failed to
/// open is "cannot read", after the options are checked).
inline nlohmann::json import_log(std::istream& in, const std::string& log, const ImportOptions& o,
                                 const std::string& command_line) {
  check_import_options(o);
  const ImportOptionNames& n = o.names;
  const model::Dims full = *model::find(o.model);
  if (!in) throw core::InputError(log + ": cannot read the log");
  ParsedLog parsed = o.format == "nemo"         ? parse_nemo_log(in, log)
                     : o.format == "torchtitan" ? parse_torchtitan_log(in, log)
                                                : parse_megatron_log(in, log);
  const LogSeries& all = parsed.series;
  LogConfig& stated = parsed.config;
  const std::size_t found = all.step_times.size();
  if (found == 0)
    throw core::InputError(log + ": no iterations found for format " + o.format,
                           o.format == "nemo" ? "expected lines with 'train_step_timing in s'"
                           : o.format == "torchtitan"
                               ? "expected lines with 'step: N  loss: ...  tps: ...'"
                               : "expected lines with 'elapsed time per iteration (ms)'");
  const auto skip = static_cast<std::size_t>(o.warmup_steps);
  if (skip >= found)
    throw core::InputError(log + " has " + std::to_string(found) + " iteration" +
                               (found == 1 ? "" : "s") + "; " + n.warmup_steps + " " +
                               std::to_string(o.warmup_steps) + " leaves none to measure",
                           "pass a " + n.warmup_steps + " below " + std::to_string(found));
  detail::record_measured_batch(stated, all, skip, log, n.warmup_steps);
  detail::check_one_run(all, log);

  // torchtitan's global batch, where its config leaves it -1: the local batch on each DP rank.
  if (o.format == "torchtitan" && !stated.global_batch && stated.micro_batch) {
    const auto world = detail::settle(stated.num_gpus, o.num_gpus, n.num_gpus, "num_gpus", log);
    const auto t = detail::settle(stated.tp, o.tp, n.tp, "tensor_model_parallel_size", log);
    const auto p = detail::settle(stated.pp, o.pp, n.pp, "pipeline_model_parallel_size", log);
    const auto c = detail::settle(stated.cp, o.cp, n.cp, "context_parallel_size", log);
    const long long split = (t ? t->value : 1) * (p ? p->value : 1) * (c ? c->value : 1);
    if (world && world->value % split == 0)
      record(stated.global_batch, "global_batch_size",
             stated.micro_batch->value * (world->value / split),
             "local_batch_size x DP (" + stated.micro_batch->where + ")", log);
  }
  // The configuration: the log's figures, the options where the log is silent.
  const Stated gpus = detail::required(
      detail::settle(stated.num_gpus, o.num_gpus, n.num_gpus, "num_gpus", log), n.num_gpus,
      "GPU count", log);
  const Stated gbs = detail::required(
      detail::settle(stated.global_batch, o.gbs, n.gbs, "global_batch_size", log), n.gbs,
      "global batch size", log);
  const Stated seq = detail::required(
      detail::settle(stated.sequence, o.seq, n.seq, "sequence_length", log), n.seq,
      "sequence length", log);
  const Stated mbs = detail::assumed_one(
      detail::settle(stated.micro_batch, o.mbs, n.mbs, "micro_batch_size", log), n.mbs);
  const Stated tp = detail::assumed_one(
      detail::settle(stated.tp, o.tp, n.tp, "tensor_model_parallel_size", log), n.tp);
  const Stated pp = detail::assumed_one(
      detail::settle(stated.pp, o.pp, n.pp, "pipeline_model_parallel_size", log), n.pp);
  // Context parallelism: the log's figure (Megatron's context_parallel_size, NeMo's, torchtitan's
  // context_parallel_degree), else the option's, else none ran. Its split needs 2 x CP chunks a
  // sequence.
  const Stated cp = detail::assumed_one(
      detail::settle(stated.cp, o.cp, n.cp, "context_parallel_size", log), n.cp);
  if (auto err = parallel::context_parallel_error(static_cast<int>(seq.value),
                                                  static_cast<int>(cp.value)))
    throw core::InputError(log + ": " + *err + " (" + detail::named("sequence_length", seq) +
                               ", " + detail::named("context_parallel_size", cp) + ")",
                           "pass the run's " + n.seq + " and " + n.cp);
  // Megatron's rule: the ranks are TP x PP x CP x DP.
  const long long model_parallel = tp.value * pp.value * cp.value;
  if (gpus.value % model_parallel != 0)
    throw core::InputError(
        log + ": " + detail::named("num_gpus", gpus) +
            " is not a multiple of TP x PP x CP: " +
            detail::named("tensor_model_parallel_size", tp) + " x " +
            detail::named("pipeline_model_parallel_size", pp) + " x " +
            detail::named("context_parallel_size", cp),
        "pass the run's " + n.num_gpus + ", " + n.tp + ", " + n.pp + " and " + n.cp);
  const long long dp = gpus.value / model_parallel;
  if (stated.dp && stated.dp->value != dp)
    throw core::InputError(log + ": data_parallel_size " + std::to_string(stated.dp->value) +
                               " at " + stated.dp->where + " is not num_gpus / (TP x PP x CP) = " +
                               std::to_string(gpus.value) + " / (" + std::to_string(tp.value) +
                               " x " + std::to_string(pp.value) + " x " +
                               std::to_string(cp.value) + ") = " + std::to_string(dp),
                           "pass the run's " + n.num_gpus + ", " + n.tp + ", " + n.pp + " and " +
                               n.cp);
  if (gbs.value % (mbs.value * dp) != 0)
    throw core::InputError(
        log + ": " + detail::named("global_batch_size", gbs) +
            " is not a multiple of micro batch x DP = " + detail::named("micro_batch_size", mbs) +
            " x " + std::to_string(dp) + " (num_gpus / (TP x PP x CP))",
        "pass the run's " + n.mbs + ", " + n.tp + ", " + n.pp + " and " + n.num_gpus);
  if (o.format == "torchtitan") detail::step_times_from_tps(parsed.series, gbs, seq, gpus, log);
  const model::Dims dims = detail::model_as_run(full, stated, log, o.model, n.model);
  if (pp.value > dims.layers)
    throw core::InputError(log + ": " + detail::named("pipeline_model_parallel_size", pp) +
                               " exceeds the " + std::to_string(dims.layers) +
                               " layers of the run: a stage would hold none",
                           "pass the run's " + n.pp);
  // Megatron runs only layouts whose TP divides the heads, KV heads and FFN: a log that claims
  // another one, or another model's, is priced wrong. (Uneven pipeline stages do run.)
  if (auto err = parallel::layout_error(dims, static_cast<int>(tp.value), 1))
    throw core::InputError(log + ": " + core::without_prefix(*err) + " (TP from " + tp.where + ")",
                           "pass the " + n.model + " the log's run trained");
  std::string precision = "bf16";
  train::PrecisionConfig precision_config;
  // torchtitan's float8 recipe, where its config names none, is torchao's tensorwise one.
  const bool torchtitan_default_recipe = o.format == "torchtitan" && !stated.fp8_recipe;
  if (torchtitan_default_recipe)
    stated.fp8_recipe = StatedPrecision{"current", "torchtitan's default (tensorwise)"};
  if (stated.precision) {
    precision = stated.precision->value;
    if (precision.starts_with("fp8")) {
      precision_config = detail::stated_fp8(stated, log);
      precision = precision_config.name();
    } else if (precision != "bf16" && precision != "fp32") {
      throw core::InputError(log + ": the run trained in " + precision + " (at " +
                                 stated.precision->where +
                                 "); a tprimat result records bf16, fp32 or FP8 (hybrid) runs",
                             "import a bf16, fp32 or FP8 hybrid run's log");
    }
  }

  const auto tail = [&](const std::vector<double>& v) {
    return std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(skip), v.end());
  };
  bench::RunRecord run;
  run.warmup_step_times = std::vector<double>(
      all.step_times.begin(), all.step_times.begin() + static_cast<std::ptrdiff_t>(skip));
  run.step_times = tail(all.step_times);
  run.losses = tail(all.losses);
  run.learning_rates = tail(all.learning_rates);
  run.memory_gb = all.memory_gb;  // every reading: memory is not a timing
  if (!all.memory_gb.empty())
    run.peak_bytes = *std::max_element(all.memory_gb.begin(), all.memory_gb.end()) * bench::gib;
  if (!all.reserved_gb.empty())
    run.peak_reserved_bytes =
        *std::max_element(all.reserved_gb.begin(), all.reserved_gb.end()) * bench::gib;
  run.complete = true;

  bench::ResultContext c;
  c.device.platform = o.platform.empty() ? default_platform(o.format) : o.platform;
  c.device.software_stack = c.device.platform == "amd"   ? "rocm"
                            : c.device.platform == "nvd" ? "cuda"
                                                         : "cpu";
  c.device.device_name = o.device_name;
  c.device.device_count = static_cast<int>(gpus.value);
  c.device.peak_tflops_dense = backend::dense_peak_tflops(o.device_name);
  c.device.peak_tflops_fp8_dense = backend::dense_fp8_peak_tflops(o.device_name);
  // gfx942 (MI300X, MI325X) computes FP8 in the fnuz formats: the device's fact, not a guess.
  if (o.device_name.find("MI300") != std::string::npos ||
      o.device_name.find("MI325") != std::string::npos) {
    c.device.fp8_forward = "e4m3_fnuz";
    c.device.fp8_backward = "e5m2_fnuz";
  }
  c.full = full;
  c.dims = dims;
  c.plan = parallel::Plan{o.strategy, static_cast<int>(tp.value), static_cast<int>(pp.value),
                          static_cast<int>(dp), static_cast<int>(gbs.value / (mbs.value * dp))};
  c.plan.cp = static_cast<int>(cp.value);
  c.mbs = static_cast<int>(mbs.value);
  c.gbs = static_cast<int>(gbs.value);
  c.seq = static_cast<int>(seq.value);
  c.steps = static_cast<int>(run.step_times.size());
  c.warmup_steps = static_cast<int>(skip);
  c.precision = precision;
  c.device_options.precision = precision_config;
  // The data: the option names it; else the path the log prints; else unknown, named by format so
  // that two logs' unknowns never pass for one data set.
  const bool mock = detail::stated_bool(stated.mock_data, "mock_data", log).value_or(false);
  c.data = o.data                 ? *o.data
           : stated.data          ? stated.data->value
           : mock                 ? std::string("mock (Megatron's random tokens)")
                                  : "unknown (imported " + o.format + " log)";
  // Settings the log states, read to their type; what it does not state is null below.
  const auto zero1 =
      detail::stated_bool(stated.distributed_optimizer, "use_distributed_optimizer", log);
  const auto sp = detail::stated_bool(stated.sequence_parallel, "sequence_parallel", log);
  const detail::StatedSharding sharding =
      detail::stated_sharding(stated, zero1, dp, cp.value, o.format, log);
  c.optimizer.sharding = sharding.strategy.value_or(train::ShardingStrategy::no_shard);
  c.optimizer.optimizer_instances = sharding.instances.value_or(1);
  // Megatron turns sequence parallelism off at TP 1 whatever was asked.
  c.sequence_parallel = sp.value_or(false) && tp.value > 1;
  const auto logged_seed = detail::stated_seed(stated.seed, log);
  if (logged_seed && o.seed && *o.seed != *logged_seed)
    throw core::InputError(n.seed + " " + std::to_string(*o.seed) + " contradicts " + log +
                               ": seed " + std::to_string(*logged_seed) + " at " +
                               stated.seed->where,
                           "drop " + n.seed +
                               " (the log's figure is used), or import the log of the run you "
                               "mean");
  const auto seed = logged_seed ? logged_seed : o.seed;
  c.seed = seed.value_or(0);
  const auto recompute = detail::stated_recompute(stated, log);
  bench::MemoryPlanInput mi;
  mi.dims = dims;
  mi.logits_rows = 0;  // the other frameworks hold every row of logits
  // Full recomputation as stated plans the activations it keeps (selective, or full without its
  // method and layers, is planned as none: an upper bound).
  if (recompute && (*recompute)["granularity"] == "full" && (*recompute)["method"].is_string() &&
      (*recompute)["num_layers"].is_number_integer()) {
    mi.shape.recompute.granularity = train::RecomputeGranularity::full;
    mi.shape.recompute.method = (*recompute)["method"] == "block" ? train::RecomputeMethod::block
                                                            : train::RecomputeMethod::uniform;
    mi.shape.recompute.num_layers = (*recompute)["num_layers"].get<int>();
  }
  mi.tp = c.plan.tp;
  mi.pp = c.plan.pp;
  mi.dp = c.plan.dp;
  mi.shape.context_parallel = c.plan.cp;
  mi.shape.mbs = c.mbs;
  mi.shape.seq = c.seq;
  mi.shape.grad_accum = c.plan.grad_accum;
  mi.sharding = c.optimizer.sharding;
  mi.optimizer_instances = c.optimizer.optimizer_instances;
  mi.shape.sequence_parallel = c.sequence_parallel;
  // FP8: the copies tprimat would keep (the device's memory unknown), recast under FSDP.
  mi.precision = precision_config;
  mi.precision.fp8.copies = train::fp8_copies_under(mi.sharding, train::Fp8Copies::kept);
  c.device_options.precision.fp8.copies = mi.precision.fp8.copies;
  // tprimat's plan of the run on the log's platform: on AMD its HIP backend runs the flash
  // kernels (their workspace), as `tprimat plan` there would count.
  mi.attention_kernel =
      c.device.platform == "amd" ? train::AttentionKernel::flash : train::AttentionKernel::cudnn;
  c.predicted = bench::plan_memory(mi);
  c.command_line = command_line;
  c.timestamp = bench::utc_timestamp();
  // The peak the run was set to where the log states it, else the largest rate it printed
  // (warm-up included, so that the configuration does not depend on the warm-up count).
  std::optional<double> lr_peak = stated.learning_rate;
  for (double lr : all.learning_rates)
    if (!stated.learning_rate && std::isfinite(lr) && lr > 0)
      lr_peak = std::max(lr_peak.value_or(0), lr);
  if (lr_peak) c.optimizer.lr_peak = *lr_peak;

  nlohmann::json doc = bench::make_result(c, {run});
  // What the log says is recorded as it says it; what it does not say is null and listed under
  // imported.not_in_log, never tprimat's defaults passed off as the run's.
  nlohmann::json not_in_log = nlohmann::json::array();
  const auto put = [&](const char* key, const nlohmann::json& value) {
    const nlohmann::json::json_pointer at{key};
    doc[at] = value;
    std::string dotted = std::string(key).substr(1);
    std::replace(dotted.begin(), dotted.end(), '/', '.');
    if (value.is_null()) not_in_log.push_back(dotted);
  };
  const auto maybe = [](const auto& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  put("/optimizer/lr_peak", maybe(lr_peak));
  put("/optimizer/lr_min", maybe(detail::stated_number(stated.lr_min, "min_lr", log)));
  put("/optimizer/lr_warmup_steps",
      maybe(detail::stated_whole(stated.lr_warmup_steps, "lr_warmup_iters", 0, log)));
  put("/optimizer/lr_decay_steps",
      maybe(detail::stated_whole(stated.lr_decay_steps, "lr_decay_iters", 0, log)));
  put("/optimizer/beta1", maybe(detail::stated_number(stated.beta1, "adam_beta1", log)));
  put("/optimizer/beta2", maybe(detail::stated_number(stated.beta2, "adam_beta2", log)));
  put("/optimizer/eps", maybe(detail::stated_number(stated.eps, "adam_eps", log)));
  put("/optimizer/weight_decay",
      maybe(detail::stated_number(stated.weight_decay, "weight_decay", log)));
  put("/optimizer/clip_norm", maybe(detail::stated_number(stated.clip_norm, "clip_grad", log)));
  put("/optimizer/init_std",
      maybe(detail::stated_number(stated.init_std, "init_method_std", log)));
  // The optimizer is sharded under any strategy that shards; a log that states no strategy
  // keeps its use_distributed_optimizer as written (or null).
  put("/parallelism_config/distributed_optimizer",
      sharding.strategy ? nlohmann::json(c.optimizer.shards_optimizer()) : maybe(zero1));
  put("/parallelism_config/data_parallel_sharding_strategy",
      sharding.strategy ? nlohmann::json(train::name_of(*sharding.strategy))
                        : nlohmann::json(nullptr));
  // Hybrid sharding's groups where the log states them; absent (one, every framework's default)
  // where it does not.
  if (!sharding.instances) doc["parallelism_config"].erase("num_distributed_optimizer_instances");
  put("/parallelism_config/sequence_parallel",
      sp ? nlohmann::json(c.sequence_parallel) : nlohmann::json(nullptr));
  put("/training_config/recompute", recompute ? *recompute : nlohmann::json(nullptr));
  put("/training_config/seed", maybe(seed));
  put("/reproduce/seed", maybe(seed));
  // How tprimat itself runs (CUDA graph, overlap, attention kernel, determinism) and the machine's
  // facts a log does not print: absent, not tprimat's. The starting weights are the run's: null,
  // unknown.
  put("/training_config/init", nullptr);
  for (const char* k : {"attention", "cuda_graph", "overlap", "deterministic"})
    doc["training_config"].erase(k);
  for (const char* k : {"nodes", "devices_per_node", "collective_settings", "gemm",
                        "blas_version", "dnn_version", "collectives_version"})
    doc["gpu_info"].erase(k);
  doc["gpu_info"]["total_memory_gb"] = nullptr;
  doc["gpu_info"]["cores"] = nullptr;
  doc["memory_metrics"]["device_memory_gb"] = nullptr;
  if (run.memory_gb.empty()) {
    doc["memory_metrics"]["peak_allocated_gb"] = nullptr;
    doc["runs"][0]["peak_allocated_gb"] = nullptr;
  }
  if (run.memory_gb.empty() && all.reserved_gb.empty())
    doc["memory_metrics"]["peak_reserved_gb"] = nullptr;

  nlohmann::json assumptions = nlohmann::json::array();
  for (const Stated* s : {&mbs, &tp, &pp, &cp})
    if (s->where.starts_with("assumed")) assumptions.push_back(s->where);
  if (!stated.precision) assumptions.push_back("precision bf16: the log does not say");
  if (precision_config.is_fp8()) {
    auto& fp8 = doc["training_config"]["fp8"];
    const bool delayed = precision_config.fp8.recipe == train::Fp8Recipe::delayed;
    if (!stated.fp8_recipe)
      assumptions.push_back("training_config.fp8.recipe delayed: the log states no fp8_recipe "
                            "(NeMo's and Megatron's default)");
    if (torchtitan_default_recipe)
      assumptions.push_back("training_config.fp8.recipe current: the job config names no "
                            "recipe_name, and torchao's default is tensorwise scaling");
    fp8.erase("copies");  // how tprimat keeps its own FP8 copies: nothing a log ran
    // The recipe's settings as the log states them; what it does not state is null, never
    // tprimat's own recipe (history 1024, max) or a framework's default passed off as read.
    put("/training_config/fp8/amax_history_len",
        delayed && stated.fp8_amax_history_len
            ? nlohmann::json(detail::stated_setting(*stated.fp8_amax_history_len,
                                                    "fp8_amax_history_len", 1, log))
            : nlohmann::json(nullptr));
    put("/training_config/fp8/amax_compute_algo",
        delayed && stated.fp8_amax_compute_algo
            ? nlohmann::json(detail::stated_algo(*stated.fp8_amax_compute_algo, log))
            : nlohmann::json(nullptr));
    put("/training_config/fp8/margin",
        maybe(detail::stated_whole(stated.fp8_margin, "fp8_margin", 0, log)));
    if (!delayed) {  // current scaling has no history: null because none exists, not unknown
      not_in_log.erase(std::remove_if(not_in_log.begin(), not_in_log.end(),
                                      [](const nlohmann::json& k) {
                                        return k == "training_config.fp8.amax_history_len" ||
                                               k == "training_config.fp8.amax_compute_algo";
                                      }),
                       not_in_log.end());
    }
    // Layers kept in bf16: Megatron's first_last_layers_bf16 with its counts at each end.
    const auto ends = detail::stated_bool(stated.first_last_layers_bf16,
                                          "first_last_layers_bf16", log);
    if (ends) {
      const long long layers = dims.layers;
      const long long first =
          *ends ? detail::stated_whole(stated.bf16_layers_at_start, "num_layers_at_start_in_bf16",
                                       0, log)
                      .value_or(1)
                : 0;
      const long long last =
          *ends ? detail::stated_whole(stated.bf16_layers_at_end, "num_layers_at_end_in_bf16", 0,
                                       log)
                      .value_or(1)
                : 0;
      if (first + last > layers)
        throw core::InputError(log + ": " + std::to_string(first) + " + " +
                                   std::to_string(last) + " layers kept in bf16 at the ends (" +
                                   stated.first_last_layers_bf16->where + ") exceed the " +
                                   std::to_string(layers) + " layers of the run",
                               "pass the log of a run whose settings it prints");
      nlohmann::json kept = nlohmann::json::array();
      for (long long l = 0; l < first; ++l) kept.push_back(l);
      for (long long l = layers - last; l < layers; ++l) kept.push_back(l);
      fp8["bf16_layers"] = kept;
      fp8["fp8_layers"] = layers - first - last;
    } else {
      put("/training_config/fp8/bf16_layers", nullptr);
      put("/training_config/fp8/fp8_layers", nullptr);
    }
  }
  if (!stated.learning_rate && lr_peak)
    assumptions.push_back("optimizer.lr_peak is the largest learning rate the log prints");
  assumptions.push_back(
      "memory_metrics.predicted_gb is tprimat's memory plan for this configuration, not a "
      "measurement");
  if (o.format == "torchtitan" && !sharding.strategy && dp * cp.value > 1)
    assumptions.push_back(
        "torchtitan shards weights, gradients and optimizer state over its data-parallel ranks "
        "(FSDP) unless its data_parallel_shard_degree is 1, which the log does not print: "
        "memory_metrics.predicted_gb, planned without sharding, is an upper bound");
  doc["imported"] = {
      {"format", o.format},
      {"log", log},
      {"iterations_found", found},
      {"warmup_iterations_excluded", skip},
      // The log's own figures over the measured iterations, beside ours for the sanity check.
      {"log_tflops_per_gpu_mean", detail::mean_or_null(tail(all.tflops_per_gpu))},
      {"log_tokens_per_second_per_gpu_mean",
       detail::mean_or_null(tail(all.tokens_per_second_per_gpu))},
      {"configuration_sources",
       {{"num_gpus", gpus.where},
        {"global_batch_size", gbs.where},
        {"micro_batch_size", mbs.where},
        {"sequence_length", seq.where},
        {"tensor_model_parallel_size", tp.where},
        {"pipeline_model_parallel_size", pp.where},
        {"context_parallel_size", cp.where},
        {"data_parallel_sharding_strategy",
         sharding.strategy ? "log " + sharding.where : std::string("not in log")},
        {"num_distributed_optimizer_instances", sharding.instances
                                                    ? "log " + sharding.instances_where
                                                    : std::string("not in log (read as 1)")},
        {"num_layers", stated.layers ? "log " + stated.layers->where
                                     : n.model + " " + o.model + " (the full model)"},
        {"precision",
         stated.precision ? "log " + stated.precision->where : std::string("assumed bf16")},
        {"seed", stated.seed ? "log " + stated.seed->where
                 : o.seed    ? n.seed
                             : "not in log (pass " + n.seed + ")"},
        {"data", o.data        ? n.data
                 : stated.data ? "log " + stated.data->where
                 : mock        ? "log " + stated.mock_data->where
                               : "not in log (pass " + n.data + ")"},
        {"recompute", stated.recompute_granularity
                          ? nlohmann::json("log " + stated.recompute_granularity->where)
                      : stated.recompute_activations
                          ? nlohmann::json("log " + stated.recompute_activations->where)
                          : nlohmann::json("not in log")},
        {"fp8_recipe", !precision_config.is_fp8() ? nlohmann::json(nullptr)
                       : torchtitan_default_recipe
                           ? nlohmann::json("assumed current (torchtitan's default tensorwise)")
                       : stated.fp8_recipe ? nlohmann::json("log " + stated.fp8_recipe->where)
                                           : nlohmann::json("assumed delayed")}}},
      {"assumptions", assumptions},
      {"not_in_log", not_in_log}};
  // A path or name the log prints in Latin-1 reaches the document as JSON can hold it.
  bench::replace_invalid_utf8(doc);
  return doc;
}

/// How `tprimat import` reads a log: a regular file of at most core::max_log_bytes.
inline constexpr core::InputKind log_input{"log", core::max_log_bytes,
                                           "pass a training log file"};

/// import_log of the file `log`.
inline nlohmann::json import_log(const std::string& log, const ImportOptions& o,
                                 const std::string& command_line) {
  std::istringstream in(core::read_input_file(log, log_input));
  return import_log(in, log, o, command_line);
}

}  // namespace tprimat::report
