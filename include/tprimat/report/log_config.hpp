// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// What a training log says about its own run (GPUs, batch, sequence, layout, model shape,
// precision), each figure with the line it was read from, for `tprimat import`.
#pragma once

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "tprimat/core/ascii_case.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/number.hpp"

namespace tprimat::report {

/// The most GPUs, and the most of each of TP, PP, CP and DP, a log or a flag may state: far above
/// any real run, and low enough that a product of three stays exact in 64 bits.
inline constexpr long long max_gpu_count = 1 << 20;
/// The most sequences in a batch, or tokens in a sequence, a log or a flag may state: 16 Mi, far
/// above any real run, and low enough that the accumulation steps and the pipeline's stages add
/// up without overflow.
inline constexpr long long max_batch_or_sequence = 1 << 24;
/// The most a model dimension (layers, hidden, heads, FFN) may be: what the result's integers hold.
inline constexpr long long max_size = std::numeric_limits<int>::max();

/// One figure of a run's configuration and where it was read ("line 9 (arguments block)").
struct Stated {
  long long value = 0;
  std::string where;
};

/// A run's precision as a log states it: "bf16", "fp32", "fp16" or "fp8 (hybrid)".
struct StatedPrecision {
  std::string value;
  std::string where;
};
/// Any other setting as the log writes it ("True", "0.95", "/data/llama_text_document") and where.
using StatedText = StatedPrecision;

/// What a log states about the run that wrote it; an empty optional: the log does not say.
struct LogConfig {
  std::optional<Stated> num_gpus;      ///< world size
  std::optional<Stated> global_batch;  ///< sequences per optimizer step
  std::optional<Stated> micro_batch;
  std::optional<Stated> sequence;  ///< tokens per sequence
  std::optional<Stated> tp, pp, cp, dp;
  std::optional<Stated> layers, hidden, heads, ffn;  ///< the model's shape, to check --model
  std::optional<StatedPrecision> precision;
  /// An FP8 run's settings as the log states them (Megatron's fp8_recipe, fp8_amax_history_len,
  /// fp8_amax_compute_algo, fp8_margin; NeMo's configuration dump names them alike), as written.
  std::optional<StatedPrecision> fp8_recipe, fp8_amax_history_len, fp8_amax_compute_algo,
      fp8_margin;
  std::optional<double> learning_rate;  ///< the peak the run was set to (Megatron's lr, NeMo's)
  /// Settings recorded as the log writes them, each under the result's name for it; the import
  /// reads each to its type (import_log.hpp) and leaves what the log does not say null.
  std::optional<StatedText> distributed_optimizer, sequence_parallel, seed, data, mock_data;
  /// What data parallelism shards: Megatron's data_parallel_sharding_strategy, which it runs only
  /// under Megatron-FSDP (megatron_fsdp: use_megatron_fsdp, or its older name use_custom_fsdp;
  /// its megatron_fsdp_version), Megatron's use_torch_fsdp2, and torchtitan's
  /// data_parallel_shard_degree and data_parallel_replicate_degree; Megatron's
  /// num_distributed_optimizer_instances (hybrid sharding's groups).
  std::optional<StatedText> sharding_strategy, megatron_fsdp, megatron_fsdp_version, torch_fsdp2,
      dp_shard_degree, dp_replicate_degree, optimizer_instances;
  std::optional<StatedText> lr_min, lr_warmup_steps, lr_decay_steps, beta1, beta2, eps,
      weight_decay, clip_norm, init_std;
  /// Megatron's first_last_layers_bf16 and the counts it keeps in bf16 at each end.
  std::optional<StatedText> first_last_layers_bf16, bf16_layers_at_start, bf16_layers_at_end;
  /// Activation recomputation as the log writes it, "None" (off) kept: Megatron's and NeMo's
  /// recompute_granularity/_method/_num_layers (NeMo 1's activations_checkpoint_*), Megatron's
  /// older recompute_activations (selective), torchtitan's activation_checkpoint mode, and
  /// selective's recompute_modules (a Python list).
  std::optional<StatedText> recompute_granularity, recompute_method, recompute_num_layers,
      recompute_activations, recompute_modules;
};

namespace detail {

/// Where in the log a figure was read: "line 9 (arguments block)".
inline std::string log_line(std::size_t n, std::string_view what) {
  return "line " + std::to_string(n) + " (" + std::string(what) + ")";
}

/// A number of a log's text as a message shows it: 64, 1.5, -8, nan.
inline std::string figure_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

/// The decimal number `text` starts with (a leading '+' allowed; nan and inf read as such so
/// that they can be refused; past a double's range, infinity or 0) and the text after it; nullopt
/// where it starts with none. Never hexadecimal.
struct LeadingFigure {
  double value;
  std::string_view after;
};
inline std::optional<LeadingFigure> leading_figure(std::string_view text) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  const auto read = core::read_decimal(digits);
  if (!read) return std::nullopt;
  return LeadingFigure{read->value, digits.substr(read->length)};
}

/// leading_figure's number alone.
inline std::optional<double> leading_number(std::string_view text) {
  const auto f = leading_figure(text);
  return f ? std::optional<double>(f->value) : std::nullopt;
}

/// `text` after `key`, past the blanks, ':' and '=' that separate a name from its value; nullopt
/// when `key` is absent. An occurrence right after a '-' is another name ("encoder-tensor-model-
/// parallel size" is not "tensor-model-parallel size").
inline std::optional<std::string_view> text_after(std::string_view line, std::string_view key) {
  auto at = line.find(key);
  while (at != std::string_view::npos && at > 0 && line[at - 1] == '-') at = line.find(key, at + 1);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + key.size();
  while (i < line.size() && (line[i] == ' ' || line[i] == ':' || line[i] == '=' || line[i] == '\t'))
    ++i;
  return line.substr(i);
}

/// The number right after `key`; nullopt if `key` or the number is absent.
inline std::optional<double> number_after(std::string_view line, std::string_view key) {
  const auto rest = text_after(line, key);
  return rest ? leading_number(*rest) : std::nullopt;
}

/// `text` up to the first blank, '|', ',', ')' or ']': the value of a "name: value" field.
inline std::string_view first_word(std::string_view text) {
  const auto end = text.find_first_of(" \t|,)]\r");
  return text.substr(0, end);
}

inline std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

/// The data a log names, as a label: "['1.0', '/data/a_text_document']" or "(['/data/a'], None)"
/// -> "1.0 /data/a_text_document"; "" when it names none ("None", "[]").
inline std::string data_label(std::string_view value) {
  std::string out, word;
  const auto flush = [&] {
    if (!word.empty() && word != "None" && word != "null") out += (out.empty() ? "" : " ") + word;
    word.clear();
  };
  for (const char ch : trimmed(value)) {
    if (ch == ' ' || ch == ',' || ch == '\t') {
      flush();
    } else if (ch != '[' && ch != ']' && ch != '(' && ch != ')' && ch != '\'' && ch != '"') {
      word += ch;
    }
  }
  flush();
  return out;
}

}  // namespace detail

/// Records that the log states `value` for `name` at `where`. A different value already stated
/// means the log contradicts itself (two runs in one file, or a damaged log): bad input naming
/// both, never one of them silently.
inline void record(std::optional<Stated>& slot, std::string_view name, long long value,
                   std::string where, std::string_view log) {
  if (!slot) {
    slot = Stated{value, std::move(where)};
    return;
  }
  if (slot->value != value)
    throw core::InputError(std::string(log) + " contradicts itself: " + std::string(name) + " " +
                               std::to_string(slot->value) + " at " + slot->where + ", " +
                               std::to_string(value) + " at " + where,
                           "a log of one run is imported at a time: split the log, or repair it");
}

/// A count as a log writes it (`text`, e.g. "4"), checked to lie in 1..`most`; nullopt when the
/// text is no number at all ("None", "auto"), which states nothing. A number that is not such a
/// count (0, -8, 4.5, nan) is a damaged log: bad input naming it.
inline std::optional<long long> stated_count(std::string_view text, std::string_view name,
                                             long long most, const std::string& where,
                                             std::string_view log) {
  text = detail::first_word(detail::trimmed(text));
  const bool digits =
      !text.empty() && text.size() <= 18 && text.find_first_not_of("0123456789") == text.npos;
  if (!digits && !detail::leading_number(text)) return std::nullopt;
  long long v = 0;
  if (digits) std::from_chars(text.data(), text.data() + text.size(), v);
  if (!digits || v < 1 || v > most)
    throw core::InputError(std::string(log) + " " + where + ": " + std::string(name) + " " +
                               std::string(text.substr(0, 40)) +
                               " is not a whole number from 1 to " + std::to_string(most),
                           "the log is damaged: repair that line or import another log");
  return v;
}

/// Reads a log's configuration line by line, beside the iteration parser.
class LogConfigReader {
 public:
  explicit LogConfigReader(std::string log) : log_(std::move(log)) {}

  /// Megatron-LM and Primus: the arguments block Megatron prints at start
  /// ("  tensor_model_parallel_size ...................... 4"), its "using world size: 8, ..."
  /// line, and Primus's "[rank-7/8]" line prefix.
  void megatron_line(std::string_view line, std::size_t n) {
    if (line.find("end of arguments") != line.npos) {
      in_arguments_ = false;
    } else if (line.find("-- arguments --") != line.npos) {
      in_arguments_ = true;
    } else if (in_arguments_) {
      megatron_argument(line, n);
    } else if (line.find("using world size:") != line.npos) {
      const auto where = detail::log_line(n, "'using world size' line");
      count_after(line, "world size:", c_.num_gpus, "num_gpus", max_gpu_count, where);
      count_after(line, "tensor-model-parallel size:", c_.tp, "tensor_model_parallel_size",
                  max_gpu_count, where);
      count_after(line, "pipeline-model-parallel size:", c_.pp, "pipeline_model_parallel_size",
                  max_gpu_count, where);
      count_after(line, "context-parallel size:", c_.cp, "context_parallel_size", max_gpu_count,
                  where);
      // Older Megatron-LM writes "data-parallel-size".
      count_after(line, "data-parallel size:", c_.dp, "data_parallel_size", max_gpu_count, where);
      count_after(line, "data-parallel-size:", c_.dp, "data_parallel_size", max_gpu_count, where);
    }
    if (const auto at = line.find("[rank-"); at != line.npos) {
      const auto slash = line.find('/', at);
      const auto close = line.find(']', at);
      if (slash != line.npos && close != line.npos && slash < close)
        count(line.substr(slash + 1, close - slash - 1), c_.num_gpus, "num_gpus", max_gpu_count,
              detail::log_line(n, "[rank-R/W] prefix"));
    }
  }

  /// NeMo: Megatron core's group lines ("All tensor model parallel group ranks: [[0, 1], ...]"),
  /// Lightning's "Starting with 8 processes", NeMo 2's dataset config ("sequence_length=2048")
  /// and NeMo 1's configuration dump ("  global_batch_size: 128").
  void nemo_line(std::string_view line, std::size_t n) {
    group_sizes(line, n, "All tensor model parallel group ranks:", c_.tp,
                "tensor_model_parallel_size", "tensor model parallel groups");
    group_sizes(line, n, "All pipeline model parallel group ranks:", c_.pp,
                "pipeline_model_parallel_size", "pipeline model parallel groups");
    group_sizes(line, n, "All context parallel group ranks:", c_.cp, "context_parallel_size",
                "context parallel groups");
    count_after(line, "processes registered. Starting with", c_.num_gpus, "num_gpus", max_gpu_count,
                detail::log_line(n, "process count"));
    if (line.find("DatasetConfig(") != line.npos)
      count_after(line, "sequence_length=", c_.sequence, "sequence_length", max_batch_or_sequence,
                  detail::log_line(n, "dataset config"));
    // Lightning's seed_everything: "Seed set to 1234" (older: "Global seed set to 1234").
    for (const std::string_view key : {"Seed set to", "seed set to"})
      if (const auto rest = detail::text_after(line, key))
        record_text(c_.seed, "seed", StatedText{std::string(detail::first_word(*rest)), ""},
                    detail::log_line(n, "seed line"));
    config_repr_line(line, n);
    config_dump_line(line, n);
  }

  /// torchtitan: its job config dump ("Running with args: {'job': {...}, 'training': {...}}",
  /// printed with job.print_args) and its device mesh line ("Building 2-D device mesh with
  /// ['dp_shard', 'tp'], [4, 2]": the world is the product).
  void torchtitan_line(std::string_view line, std::size_t n) {
    if (const auto at = line.find("device mesh with"); at != line.npos) {
      const auto open = line.rfind('['), close = line.rfind(']');
      if (open != line.npos && close != line.npos && open > at && close > open) {
        long long world = 1;
        std::string_view dims = line.substr(open + 1, close - open - 1);
        const std::string where = detail::log_line(n, "device mesh line");
        while (!dims.empty()) {
          const auto comma = dims.find(',');
          const auto v = stated_count(dims.substr(0, comma), "device mesh dimension", max_gpu_count,
                                      where, log_);
          if (!v) return;
          world *= *v;
          if (world > max_gpu_count)
            return count(std::to_string(world), c_.num_gpus, "num_gpus", max_gpu_count, where);
          dims = comma == dims.npos ? std::string_view() : dims.substr(comma + 1);
        }
        count(std::to_string(world), c_.num_gpus, "num_gpus", max_gpu_count, where);
      }
    }
    const auto args = line.find("Running with args:");
    if (args == line.npos) return;
    const std::string where = detail::log_line(n, "job config");
    std::vector<std::string> path;  // the sections the scan is in: "training"
    std::string_view rest = line.substr(args + 18);
    const auto skip = [&](std::string_view chars) {
      while (!rest.empty() && chars.find(rest.front()) != chars.npos) rest.remove_prefix(1);
    };
    skip(" \t");
    if (rest.empty() || rest.front() != '{') return;
    rest.remove_prefix(1);
    while (!rest.empty()) {
      skip(" \t,");
      if (rest.empty()) break;
      if (rest.front() == '}') {
        rest.remove_prefix(1);
        if (path.empty()) break;
        path.pop_back();
        continue;
      }
      if (rest.front() != '\'' && rest.front() != '"') return;  // not a dict repr: stop
      const char quote = rest.front();
      const auto key_end = rest.find(quote, 1);
      if (key_end == rest.npos) return;
      const std::string key(rest.substr(1, key_end - 1));
      rest.remove_prefix(key_end + 1);
      skip(" \t:");
      if (!rest.empty() && rest.front() == '{') {
        rest.remove_prefix(1);
        path.push_back(key);
        continue;
      }
      // The value runs to the ',' or '}' outside brackets and quotes.
      std::size_t end = 0;
      int depth = 0;
      char in = 0;
      for (; end < rest.size(); ++end) {
        const char ch = rest[end];
        if (in != 0) {
          if (ch == in) in = 0;
          continue;
        }
        if (ch == '\'' || ch == '"') in = ch;
        if (ch == '[' || ch == '(') ++depth;
        if (ch == ']' || ch == ')') --depth;
        if (depth == 0 && (ch == ',' || ch == '}')) break;
      }
      torchtitan_setting(path.empty() ? "" : path.back(), key, detail::trimmed(rest.substr(0, end)),
                         where);
      rest.remove_prefix(end);
    }
  }

  /// The configuration, once every line is read.
  LogConfig finish() {
    if (devices_ && nodes_)
      count(std::to_string(devices_->value * nodes_->value), c_.num_gpus, "num_gpus", max_gpu_count,
            devices_->where + " x " + nodes_->where + " (devices x num_nodes)");
    // Megatron prints bf16, fp16 and fp8 apart, NeMo a precision and fp8: fp8 rules the linear
    // layers whatever the rest runs in.
    const auto is = [](const std::optional<StatedPrecision>& p, std::string_view v) {
      return p && p->value == v;
    };
    if (fp8_ && !is(fp8_, "None") && !is(fp8_, "False") && !is(fp8_, "false") && !is(fp8_, "null"))
      c_.precision = StatedPrecision{"fp8 (" + fp8_->value + ")", fp8_->where};
    else if (precision_)
      c_.precision = StatedPrecision{
          precision_->value.find("bf16") != std::string::npos                            ? "bf16"
          : precision_->value.starts_with("16") || precision_->value.starts_with("fp16") ? "fp16"
          : precision_->value.starts_with("32") || precision_->value.starts_with("fp32")
              ? "fp32"
              : precision_->value,
          precision_->where};
    else if (is(fp16_, "True"))
      c_.precision = StatedPrecision{"fp16", fp16_->where};
    else if (is(bf16_, "True"))
      c_.precision = StatedPrecision{"bf16", bf16_->where};
    else if (bf16_ && fp16_)
      c_.precision = StatedPrecision{"fp32", bf16_->where};
    return c_;
  }

 private:
  void count_after(std::string_view line, std::string_view key, std::optional<Stated>& slot,
                   std::string_view name, long long most, const std::string& where) {
    if (const auto rest = detail::text_after(line, key)) count(*rest, slot, name, most, where);
  }

  /// A precision setting stated as text ("None" is a value there: FP8 off): stated twice with
  /// two values (FP8 and then none, two learning rates), the log contradicts itself, as record()
  /// says of counts; never the last one wins.
  void record_text(std::optional<StatedPrecision>& slot, std::string_view name,
                   StatedPrecision stated) {
    record_stated(slot, name, std::move(stated));
  }

  void count(std::string_view text, std::optional<Stated>& slot, std::string_view name,
             long long most, const std::string& where) {
    if (const auto v = stated_count(text, name, most, where, log_))
      record(slot, name, *v, where, log_);
  }

  /// Records a setting the log states ("None" states nothing); the same setting stated again
  /// with another value is a log that contradicts itself (two runs, or a damaged log): refused,
  /// naming both.
  void record_text(std::optional<StatedText>& slot, std::string_view key, StatedText stated,
                   const std::string& where) {
    if (stated.value == "None" || stated.value == "null") return;  // states nothing
    if (stated.where.empty()) stated.where = where;
    record_stated(slot, key, std::move(stated));
  }

  /// The first statement of a setting, or a refusal where a later one differs (case aside; one
  /// number written two ways is one value).
  void record_stated(std::optional<StatedText>& slot, std::string_view key, StatedText stated) {
    if (!slot) {
      slot = std::move(stated);
      return;
    }
    const auto same = [](std::string a, std::string b) {
      for (auto* s : {&a, &b}) *s = core::ascii_lower(*s);
      const auto x = detail::leading_number(a), y = detail::leading_number(b);
      return a == b || (x && y && *x == *y && detail::first_word(a).size() == a.size() &&
                        detail::first_word(b).size() == b.size());
    };
    if (!same(slot->value, stated.value))
      throw core::InputError(log_ + " contradicts itself: " + std::string(key) + " " +
                                 core::shown(slot->value) + " at " + slot->where + ", " +
                                 core::shown(stated.value) + " at " + stated.where,
                             "a log of one run is imported at a time: split the log, or repair it");
  }

  /// Megatron core's config reprs as NeMo 2 logs them, "TransformerConfig(tensor_model_parallel_
  /// size=2, sequence_parallel=True, ...)": each name=value at the top level of the parentheses.
  void config_repr_line(std::string_view line, std::size_t n) {
    const auto open = line.find("Config(");
    if (open == line.npos) return;
    auto name_at = line.find_last_of(" \t:=([{,", open);
    name_at = name_at == line.npos ? 0 : name_at + 1;
    const std::string where =
        detail::log_line(n, std::string(line.substr(name_at, open + 6 - name_at)));
    int depth = 0;
    char quote = 0;
    std::size_t item = open + 7;
    for (std::size_t i = item; i < line.size() && depth >= 0; ++i) {
      const char ch = line[i];
      if (quote != 0) {
        if (ch == quote) quote = 0;
        continue;
      }
      if (ch == '\'' || ch == '"') quote = ch;
      if (ch == '(' || ch == '[' || ch == '{') ++depth;
      if (ch == ')' || ch == ']' || ch == '}') --depth;
      if ((ch == ',' && depth == 0) || depth < 0) {
        const auto pair = detail::trimmed(line.substr(item, i - item));
        if (const auto eq = pair.find('='); eq != pair.npos && eq > 0)
          argument(pair.substr(0, eq), detail::trimmed(pair.substr(eq + 1)), where);
        item = i + 1;
      }
    }
  }

  /// One setting of torchtitan's job config, by section and key (names of both its older
  /// `training` layout and its newer `parallelism`/`lr_scheduler` sections).
  void torchtitan_setting(std::string_view section, std::string_view key, std::string_view value,
                          const std::string& where) {
    const auto is = [&](std::string_view s, std::string_view k) {
      return section == s && key == k;
    };
    const auto unquoted = [&] {
      auto v = value;
      if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front())
        v = v.substr(1, v.size() - 2);
      return std::string(v);
    };
    if (is("training", "local_batch_size") || is("training", "batch_size"))
      return count(value, c_.micro_batch, "micro_batch_size", max_batch_or_sequence, where);
    if (is("training", "global_batch_size")) {
      if (value.starts_with('-')) return;  // -1: local batch x DP, derived by the import
      return count(value, c_.global_batch, "global_batch_size", max_batch_or_sequence, where);
    }
    if (is("training", "seq_len"))
      return count(value, c_.sequence, "sequence_length", max_batch_or_sequence, where);
    if (key == "tensor_parallel_degree")
      return count(value, c_.tp, "tensor_model_parallel_size", max_gpu_count, where);
    if (key == "pipeline_parallel_degree")
      return count(value, c_.pp, "pipeline_model_parallel_size", max_gpu_count, where);
    if (key == "context_parallel_degree")
      return count(value, c_.cp, "context_parallel_size", max_gpu_count, where);
    // FSDP's degree (-1: the DP ranks the replicas leave) and HSDP's replicas, read by the import.
    if (key == "data_parallel_shard_degree")
      return record_text(c_.dp_shard_degree, key, StatedText{unquoted(), where}, where);
    if (key == "data_parallel_replicate_degree")
      return record_text(c_.dp_replicate_degree, key, StatedText{unquoted(), where}, where);
    if (key == "seed") return record_text(c_.seed, "seed", StatedText{unquoted(), where}, where);
    if (is("training", "mixed_precision_param")) {
      const std::string p = unquoted();
      precision_ = StatedPrecision{p == "bfloat16" ? "bf16" : p == "float32" ? "fp32" : p, where};
      return;
    }
    if (is("training", "dataset"))
      return record_text(c_.data, "dataset", StatedText{unquoted(), where}, where);
    if (is("training", "max_norm"))
      return record_text(c_.clip_norm, "max_norm", StatedText{unquoted(), where}, where);
    if (key == "warmup_steps" && (section == "lr_scheduler" || section == "training"))
      return record_text(c_.lr_warmup_steps, "warmup_steps", StatedText{unquoted(), where}, where);
    if (section == "optimizer") {
      if (key == "lr") {
        if (const auto v = detail::leading_number(value); v && std::isfinite(*v) && *v > 0)
          c_.learning_rate = *v;
        return;
      }
      if (key == "eps") return record_text(c_.eps, key, StatedText{unquoted(), where}, where);
      if (key == "beta1") return record_text(c_.beta1, key, StatedText{unquoted(), where}, where);
      if (key == "beta2") return record_text(c_.beta2, key, StatedText{unquoted(), where}, where);
      if (key == "weight_decay")
        return record_text(c_.weight_decay, key, StatedText{unquoted(), where}, where);
    }
    // Float8 training: torchao's tensorwise recipe scales each tensor from its current amax
    // (E4M3 forward, E5M2 gradients: the hybrid format); rowwise is refused by the import.
    if (is("model", "converters") && value.find("float8") != value.npos)
      fp8_ = StatedPrecision{"hybrid", where};
    // Activation checkpointing: mode none, full or selective (Megatron's granularities).
    if (is("activation_checkpoint", "mode"))
      return record_text(c_.recompute_granularity, "activation_checkpoint.mode",
                         StatedText{unquoted(), where});
    if (is("float8", "recipe_name") || is("linear", "recipe_name")) {
      const std::string r = unquoted();
      c_.fp8_recipe = StatedPrecision{r == "None" || r == "tensorwise" ? "current" : r, where};
    }
  }

  /// One argument of the block, "  name ..... value" (a logger's prefix before it allowed).
  void megatron_argument(std::string_view line, std::size_t n) {
    const auto dots = line.find(" ..");
    if (dots == line.npos) return;
    const auto before = line.substr(0, dots);
    const auto space = before.find_last_of(" \t");
    const auto name = space == before.npos ? before : before.substr(space + 1);
    const auto value_at = line.find_first_not_of('.', dots + 1);
    if (value_at == line.npos) return;
    argument(name, detail::trimmed(line.substr(value_at)), detail::log_line(n, "arguments block"));
  }

  /// One line of NeMo 1's configuration dump, "  global_batch_size: 128", the whole line.
  void config_dump_line(std::string_view line, std::size_t n) {
    const auto body = detail::trimmed(line);
    const auto colon = body.find(": ");
    if (colon == body.npos || colon == 0) return;
    const auto key = body.substr(0, colon);
    if (key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != key.npos) return;
    const auto value = detail::trimmed(body.substr(colon + 2));
    if (key == "devices" && value.starts_with('-')) return;  // -1: every GPU the node has
    argument(key, value, detail::log_line(n, "configuration dump"));
  }

  /// A setting by the name Megatron-LM's arguments or NeMo's configuration give it.
  void argument(std::string_view key, std::string_view value, const std::string& where) {
    struct Count {
      std::string_view key;
      std::optional<Stated> LogConfig::*slot;
      std::string_view name;  ///< the result's name for it
      long long most;
    };
    static constexpr Count counts[] = {
        {"world_size", &LogConfig::num_gpus, "num_gpus", max_gpu_count},
        {"tensor_model_parallel_size", &LogConfig::tp, "tensor_model_parallel_size", max_gpu_count},
        {"pipeline_model_parallel_size", &LogConfig::pp, "pipeline_model_parallel_size",
         max_gpu_count},
        {"context_parallel_size", &LogConfig::cp, "context_parallel_size", max_gpu_count},
        {"data_parallel_size", &LogConfig::dp, "data_parallel_size", max_gpu_count},
        {"global_batch_size", &LogConfig::global_batch, "global_batch_size", max_batch_or_sequence},
        {"micro_batch_size", &LogConfig::micro_batch, "micro_batch_size", max_batch_or_sequence},
        {"seq_length", &LogConfig::sequence, "sequence_length", max_batch_or_sequence},
        {"encoder_seq_length", &LogConfig::sequence, "sequence_length", max_batch_or_sequence},
        {"num_layers", &LogConfig::layers, "num_layers", max_size},
        {"hidden_size", &LogConfig::hidden, "hidden_size", max_size},
        {"num_attention_heads", &LogConfig::heads, "num_attention_heads", max_size},
        {"ffn_hidden_size", &LogConfig::ffn, "ffn_hidden_size", max_size},
    };
    for (const auto& c : counts)
      if (key == c.key) return count(value, c_.*c.slot, c.name, c.most, where);
    const auto text = [&] {  // YAML and Python reprs may quote a string: 'hybrid'
      auto word = detail::first_word(value);
      if (word.size() >= 2 && (word.front() == '\'' || word.front() == '"') &&
          word.back() == word.front())
        word = word.substr(1, word.size() - 2);
      return StatedPrecision{std::string(word), where};
    };
    // Settings read to their type by the import; the names Megatron-LM's arguments, NeMo's
    // configuration dump and Megatron core's config reprs give them.
    struct Setting {
      std::string_view key;
      std::optional<StatedText> LogConfig::*slot;
    };
    static constexpr Setting settings[] = {
        {"use_distributed_optimizer", &LogConfig::distributed_optimizer},
        {"data_parallel_sharding_strategy", &LogConfig::sharding_strategy},
        {"use_megatron_fsdp", &LogConfig::megatron_fsdp},
        {"use_custom_fsdp", &LogConfig::megatron_fsdp},  // its name before Megatron core 0.15
        {"megatron_fsdp_version", &LogConfig::megatron_fsdp_version},
        {"use_torch_fsdp2", &LogConfig::torch_fsdp2},
        {"num_distributed_optimizer_instances", &LogConfig::optimizer_instances},
        {"sequence_parallel", &LogConfig::sequence_parallel},
        {"seed", &LogConfig::seed},
        {"min_lr", &LogConfig::lr_min},
        {"lr_warmup_iters", &LogConfig::lr_warmup_steps},
        {"lr_decay_iters", &LogConfig::lr_decay_steps},
        {"adam_beta1", &LogConfig::beta1},
        {"adam_beta2", &LogConfig::beta2},
        {"adam_eps", &LogConfig::eps},
        {"weight_decay", &LogConfig::weight_decay},
        {"clip_grad", &LogConfig::clip_norm},
        {"init_method_std", &LogConfig::init_std},
        {"mock_data", &LogConfig::mock_data},
        {"mock", &LogConfig::mock_data},  // Megatron core's GPTDatasetConfig
        {"first_last_layers_bf16", &LogConfig::first_last_layers_bf16},
        {"num_layers_at_start_in_bf16", &LogConfig::bf16_layers_at_start},
        {"num_layers_at_end_in_bf16", &LogConfig::bf16_layers_at_end},
    };
    for (const auto& st : settings)
      if (key == st.key) return record_text(c_.*st.slot, key, text(), where);
    // The data: Megatron's data_path (a list, with blend weights), NeMo's data_prefix, Megatron
    // core's blend=([paths], weights). "None" states nothing.
    if (key == "data_path" || key == "data_prefix" || key == "blend")
      if (auto label = detail::data_label(value); !label.empty())
        return record_text(c_.data, key, StatedText{std::move(label), where}, where);
    if (key == "bf16") record_text(bf16_, key, text());
    if (key == "fp16") record_text(fp16_, key, text());
    if (key == "fp8") record_text(fp8_, key, text());
    // Recomputation: "None" states that it is off, so these keep it.
    if (key == "recompute_granularity" || key == "activations_checkpoint_granularity")
      record_text(c_.recompute_granularity, key, text());
    if (key == "recompute_method" || key == "activations_checkpoint_method")
      record_text(c_.recompute_method, key, text());
    if (key == "recompute_num_layers" || key == "activations_checkpoint_num_layers")
      record_text(c_.recompute_num_layers, key, text());
    if (key == "recompute_activations") record_text(c_.recompute_activations, key, text());
    if (key == "recompute_modules") record_text(c_.recompute_modules, key, text());
    if (key == "fp8_recipe") record_text(c_.fp8_recipe, key, text());
    if (key == "fp8_amax_history_len") record_text(c_.fp8_amax_history_len, key, text());
    if (key == "fp8_amax_compute_algo") record_text(c_.fp8_amax_compute_algo, key, text());
    if (key == "fp8_margin") record_text(c_.fp8_margin, key, text());
    if (key == "precision") record_text(precision_, key, text());  // NeMo: bf16-mixed, 32, ...
    if (key == "lr")
      if (const auto v = detail::leading_number(value); v && std::isfinite(*v) && *v > 0) {
        // Compared as written: "3e-4" and "0.0003" are one rate, "3e-4" and "1e-4" are two.
        record_text(lr_, key, StatedPrecision{detail::figure_text(*v), where});
        c_.learning_rate = *v;
      }
    if (key == "devices") count(value, devices_, key, max_gpu_count, where);
    if (key == "num_nodes") count(value, nodes_, key, max_gpu_count, where);
  }

  /// "All tensor model parallel group ranks: [[0, 1], [2, 3]]": the ranks of one group are the
  /// group's size (TP 2), the ranks of all groups the world (4 GPUs).
  void group_sizes(std::string_view line, std::size_t n, std::string_view key,
                   std::optional<Stated>& slot, std::string_view name, std::string_view what) {
    const auto rest = detail::text_after(line, key);
    if (!rest || !rest->starts_with("[[")) return;
    long long first = 0, all = 0;
    int depth = 0;
    bool first_closed = false, in_number = false;
    for (const char ch : *rest) {
      const bool digit = ch >= '0' && ch <= '9';
      if (digit && !in_number) {
        ++all;
        if (!first_closed) ++first;
      }
      in_number = digit;
      if (ch == '[') ++depth;
      if (ch == ']') {
        first_closed = first_closed || depth == 2;
        if (--depth == 0) break;
      }
    }
    if (depth != 0 || first == 0) return;  // a line cut short states nothing
    const auto where = detail::log_line(n, what);
    count(std::to_string(first), slot, name, max_gpu_count, where);
    count(std::to_string(all), c_.num_gpus, "num_gpus", max_gpu_count, where);
  }

  std::string log_;
  LogConfig c_;
  bool in_arguments_ = false;
  std::optional<StatedPrecision> bf16_, fp16_, fp8_, precision_, lr_;  ///< as written
  std::optional<Stated> devices_, nodes_;
};

}  // namespace tprimat::report
