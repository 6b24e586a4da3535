// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Flags figures no run can reach, one check for every result written, imported or reported.
#pragma once

#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tprimat/backend/peaks.hpp"
#include "tprimat/core/number_text.hpp"

namespace tprimat::bench {

/// How far our TFLOP/s may stray from an imported log's own figure before a result is flagged:
/// both count the same model FLOPs, so more than this means the configuration read is wrong.
inline constexpr double log_tflops_tolerance = 0.10;

/// The bound for a result whose device has no peak in the table (backend/peaks.hpp).
inline constexpr double implausible_tflops_per_gpu = backend::implausible_tflops_per_device;

/// What the check needs of one result.
struct SanityFigures {
  double tflops_per_gpu = std::numeric_limits<double>::quiet_NaN();  ///< PaLM, as computed
  double mfu_peak_tflops = 0;  ///< the (bf16) peak MFU is taken against; 0 when unknown
  std::string device_name;     ///< its dense peak is checked too, whatever MFU was taken against
  double log_tflops_per_gpu = std::numeric_limits<double>::quiet_NaN();  ///< a log's own figure
  double tokens_per_gpu = std::numeric_limits<double>::quiet_NaN();      ///< tokens/s/GPU
  double log_tokens_per_gpu = std::numeric_limits<double>::quiet_NaN();  ///< a log's own (Primus)
  /// The run computed its linear layers in FP8: its bound is the FP8 peak (the same model FLOPs
  /// may pass the bf16 peak), which mfu_fp8_peak is taken against.
  bool fp8 = false;
  double fp8_peak_tflops = 0;  ///< the FP8 peak mfu_fp8_peak is taken against; 0 when unknown
  /// The same rate under the causal count (attention halved): the work the kernels really do,
  /// which the peaks bound. NaN where a result does not know it (then the PaLM figure is judged).
  double tflops_per_gpu_causal = std::numeric_limits<double>::quiet_NaN();
  /// The throughput three ways, which agree in any run: tokens/s of the whole run, tokens_per_gpu
  /// times num_gpus, and tokens_per_step over step_time. NaN (0 GPUs) where unknown.
  double tokens_per_second = std::numeric_limits<double>::quiet_NaN();
  int num_gpus = 0;
  double tokens_per_step = std::numeric_limits<double>::quiet_NaN();  ///< global batch x seq
  double step_time = std::numeric_limits<double>::quiet_NaN();        ///< mean, seconds
};

/// How far a result's tokens/s may stray from its own tokens/s/GPU x GPUs and global batch x
/// sequence / step time: the same measurement, so only rounding of the written figures parts them.
inline constexpr double throughput_tolerance = 0.02;

/// Whether training_config.precision `precision` names an FP8 run ("fp8-hybrid-delayed", ...).
inline bool is_fp8_precision(std::string_view precision) { return precision.starts_with("fp8"); }

namespace detail {

/// "1283.0", and three significant digits below 1 ("4.37e-05" on a CPU), never a bare "0.0".
inline std::string tflops_text(double v) {
  if (std::fabs(v) >= 1 || v == 0) return core::num(v, 1);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace detail

namespace detail {

/// sanity_warnings' lines for the rates (tokens/s/GPU, TFLOP/s) against the peaks and a log.
inline std::vector<std::string> rate_warnings(const SanityFigures& f) {
  std::vector<std::string> out;
  // Tokens/s do not depend on the model's FLOPs: a wrong GPU count, batch or sequence shows here
  // even where the log states no TFLOP/s.
  if (const double u = f.tokens_per_gpu, log = f.log_tokens_per_gpu;
      std::isfinite(u) && std::isfinite(log) && log > 0 &&
      std::fabs(u - log) > log_tflops_tolerance * log)
    out.push_back("computed " + core::num(u, 1) + " tokens/s/GPU differs from the log's own " +
                  core::num(log, 1) + " by " + (u > log ? "+" : "") + core::percent(u / log - 1) +
                  ": the global batch, sequence length or GPU count read for it is wrong");
  // The peaks bound the work really done: the causal count, where known (PaLM's counts the
  // masked half of attention too, and passes 100% at long context on a plausible run).
  const bool causal = std::isfinite(f.tflops_per_gpu_causal);
  const double t = causal ? f.tflops_per_gpu_causal : f.tflops_per_gpu;
  // Names the count judged, inside the parentheses that close each line's figures.
  const std::string counted = causal ? "; causal count: attention halved" : "";
  // The log's own figure is checked whatever the peaks say.
  const auto log_check = [&] {
    const double log = f.log_tflops_per_gpu;
    if (!std::isfinite(log) || !(log > 0)) return;
    // Frameworks print either count (Megatron-LM's older FLOPs PaLM's, Megatron-Bridge and NeMo
    // since 2025 the causal one): a log within reach of either agrees with us.
    const auto off = [&](double ours) {
      return std::isfinite(ours) && std::fabs(ours - log) > log_tflops_tolerance * log;
    };
    const double palm = f.tflops_per_gpu;
    if (!off(palm) || (causal && !off(f.tflops_per_gpu_causal))) return;
    out.push_back("computed " + detail::tflops_text(palm) +
                  " TFLOP/s/GPU differs from the log's own " + detail::tflops_text(log) + " by " +
                  (palm > log ? "+" : "") + core::percent(palm / log - 1) +
                  ": the global batch, sequence length, GPU count or model read for it is wrong");
  };
  if (!std::isfinite(t)) {
    log_check();
    return out;
  }
  // Each run against the peak of what it computes in: a bf16 (or fp32) run against the dense
  // bf16 peak of `mfu`, an FP8 run against the dense FP8 peak of `mfu_fp8_peak`.
  const double own = f.fp8 ? f.fp8_peak_tflops : f.mfu_peak_tflops;
  const std::string mfu_name = f.fp8 ? "MFU against the FP8 peak " : "MFU ";
  const std::string peak_name = f.fp8 ? "dense FP8 peak" : "dense peak";
  if (own > 0 && t > own)
    out.push_back(mfu_name + core::percent(t / own) + " exceeds 100% (" + detail::tflops_text(t) +
                  " TFLOP/s/GPU against a " + peak_name + " of " + detail::tflops_text(own) +
                  counted + "): a figure behind it is wrong");
  // Said apart only where MFU was taken against another peak (peak --peak-tflops).
  const double device =
      f.fp8 ? backend::dense_fp8_peak_tflops(f.device_name) : backend::dense_peak_tflops(f.device_name);
  if (device > 0 && device != own && t > device)
    out.push_back(detail::tflops_text(t) + " TFLOP/s/GPU exceeds the dense " +
                  (f.fp8 ? "FP8" : "bf16") + " peak of " + f.device_name + " (" +
                  core::num(device, 1) + " TFLOP/s" + counted + "): a figure behind it is wrong");
  // A run without a bf16 peak to judge it (its device's unknown to the table, no --peak-tflops)
  // is still bound by the FP8 peak where that one is known: no MFU over 100% of either passes.
  if (!f.fp8 && own <= 0 && device <= 0 && f.fp8_peak_tflops > 0 && t > f.fp8_peak_tflops)
    out.push_back("MFU against the FP8 peak " + core::percent(t / f.fp8_peak_tflops) +
                  " exceeds 100% (" + detail::tflops_text(t) +
                  " TFLOP/s/GPU against a dense FP8 peak of " +
                  detail::tflops_text(f.fp8_peak_tflops) + counted +
                  "): a figure behind it is wrong");
  // An unknown device has no peak to take MFU against; an absurd figure is still flagged.
  if (own <= 0 && device <= 0 && t > implausible_tflops_per_gpu)
    out.push_back(detail::tflops_text(t) + " TFLOP/s/GPU is more than any GPU reaches (" +
                  core::num(implausible_tflops_per_gpu, 0) +
                  "; the device has no peak in tprimat's table" + counted +
                  "): a figure behind it is wrong");
  log_check();
  return out;
}

/// sanity_warnings' lines for a throughput stated three ways that do not agree.
inline std::vector<std::string> throughput_warnings(const SanityFigures& f) {
  std::vector<std::string> out;
  // A result contradicting itself has no throughput to rank: whichever figure a report read
  // (compare tokens/s/GPU, peak tokens/s), the other says otherwise.
  const auto disagree = [&](double other, const std::string& how) {
    const double total = f.tokens_per_second;
    if (!std::isfinite(total) || !(total > 0) || !std::isfinite(other) ||
        std::fabs(other - total) <= throughput_tolerance * total)
      return;
    out.push_back(how + " gives " + core::num(other, 1) + " tokens/s, " +
                  core::percent(std::fabs(other / total - 1)) + " off the stated " +
                  core::num(total, 1) + ": a throughput figure is wrong");
  };
  if (f.num_gpus > 0)
    disagree(f.tokens_per_gpu * f.num_gpus,
             "tokens/s/GPU x " + std::to_string(f.num_gpus) + " GPUs");
  if (f.step_time > 0)
    disagree(f.tokens_per_step / f.step_time, "global batch x sequence / step time");
  return out;
}

}  // namespace detail

/// One line per impossible or contradicted figure; empty for a plausible result. A figure
/// behind such a result (FLOPs per token, batch, sequence, GPU count, peak) is wrong, and every
/// report that shows the result says so.
inline std::vector<std::string> sanity_warnings(const SanityFigures& f) {
  std::vector<std::string> out = detail::rate_warnings(f);
  for (auto& line : detail::throughput_warnings(f)) out.push_back(std::move(line));
  return out;
}

/// The figures of a result document as our writers make it (bench, import).
inline SanityFigures sanity_figures(const nlohmann::json& doc) {
  const auto number = [&](const char* pointer) {
    const nlohmann::json::json_pointer p{pointer};
    return doc.is_object() && doc.contains(p) && doc.at(p).is_number()
               ? doc.at(p).get<double>()
               : std::numeric_limits<double>::quiet_NaN();
  };
  SanityFigures f;
  f.tflops_per_gpu = number("/performance_metrics/model_tflops_per_gpu");
  f.tflops_per_gpu_causal = number("/performance_metrics/tflops_per_gpu_causal");
  const double peak = number("/performance_metrics/peak_tflops_dense");
  f.mfu_peak_tflops = peak > 0 ? peak : 0;
  const auto text = [&](const char* pointer) {
    const nlohmann::json::json_pointer p{pointer};
    return doc.is_object() && doc.contains(p) && doc.at(p).is_string() ? doc.at(p).get<std::string>()
                                                                       : std::string();
  };
  f.device_name = text("/gpu_info/device_name");
  f.fp8 = is_fp8_precision(text("/training_config/precision"));
  const double fp8_peak = number("/performance_metrics/peak_tflops_fp8_dense");
  f.fp8_peak_tflops = fp8_peak > 0 ? fp8_peak : backend::dense_fp8_peak_tflops(f.device_name);
  f.log_tflops_per_gpu = number("/imported/log_tflops_per_gpu_mean");
  f.tokens_per_gpu = number("/performance_metrics/tokens_per_second_per_gpu");
  f.log_tokens_per_gpu = number("/imported/log_tokens_per_second_per_gpu_mean");
  return f;
}

/// Sets `doc["warnings"]` to the document's sanity warnings (an empty array when none).
inline void set_sanity_warnings(nlohmann::json& doc) {
  doc["warnings"] = sanity_warnings(sanity_figures(doc));
}

}  // namespace tprimat::bench
