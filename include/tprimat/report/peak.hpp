// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Peak throughput per platform x model, capacity per day, and a multi-node projection.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tprimat/backend/peaks.hpp"
#include "tprimat/bench/experiment.hpp"
#include "tprimat/report/compare.hpp"
#include "tprimat/report/csv.hpp"
#include "tprimat/report/load.hpp"
#include "tprimat/report/text.hpp"

namespace tprimat::report {

struct PeakOptions {
  double peak_tflops = 0;          ///< > 0 replaces every device's dense peak
  double scaling_efficiency = 0;   ///< > 0 forces this; 0: measured if possible, else 0.90
  bool show_all = false;
};

inline constexpr double default_scaling_efficiency = 0.90;

namespace detail {

/// Fields that follow from the GPU count when the per-GPU work stays the same: more data-parallel
/// replicas, each with the same micro batches, so a global batch that grows with them.
inline constexpr std::size_t scale_fields[] = {
    bench::experiment_field("/gpu_info/device_count"),
    bench::experiment_field("/parallelism_config/data_parallel_size"),
    bench::experiment_field("/training_config/global_batch_size")};

}  // namespace detail

/// How `r` differs from `peak` in more than its GPU count ("gbs/GPU 8 vs 16", "TP 2 vs 4"); empty
/// when it ran the same per-GPU work: every field that defines an experiment equal but the GPU
/// count and what follows from it (DP, and a global batch in proportion to the GPUs).
inline std::vector<std::string> per_gpu_work_differences(const Result& r, const Result& peak) {
  std::vector<std::string> out;
  // The model: the seeds' files name it only in their file name, not in a field.
  if (r.model != peak.model) out.push_back("model " + r.model + " vs " + peak.model);
  for (std::size_t i = 0; i < bench::experiment_field_count; ++i) {
    if (detail::among(i, detail::scale_fields)) continue;
    const auto a = detail::field_value(r.experiment, i),
               b = detail::field_value(peak.experiment, i);
    if (a != b)
      out.push_back(
          bench::experiment_label(i, a) + " vs " +
          bench::experiment_label(i, b).substr(bench::experiment_fields[i].name.size() + 1));
  }
  // tokens per GPU per step: the same work needs the same global batch per GPU.
  if (r.gbs <= 0 || peak.gbs <= 0)
    out.push_back("global batch unknown");
  else if (std::int64_t(r.gbs) * peak.num_gpus != std::int64_t(peak.gbs) * r.num_gpus)
    out.push_back("gbs/GPU " + num(double(r.gbs) / r.num_gpus, 2) + " vs " +
                  num(double(peak.gbs) / peak.num_gpus, 2));
  return out;
}

/// Per-GPU scaling measured between results that ran the peak's per-GPU work at different GPU
/// counts: (tokens/s/GPU at the most GPUs) / (tokens/s/GPU at the fewest), each the mean of its
/// results. Unlike results never count: a seq-128 run at 8 GPUs says nothing about how a seq-256
/// run scales.
struct MeasuredScaling {
  double efficiency;
  int from_gpus, to_gpus;
};
inline std::optional<MeasuredScaling> measured_scaling(const std::vector<Result>& rs,
                                                       const Result& peak) {
  std::map<int, std::vector<double>> per_gpu_by_count;
  for (const auto& r : rs)
    if (r.usable_for_ranking() && std::isfinite(r.tokens_per_second_per_gpu) &&
        per_gpu_work_differences(r, peak).empty())
      per_gpu_by_count[r.num_gpus].push_back(r.tokens_per_second_per_gpu);
  if (per_gpu_by_count.size() < 2) return std::nullopt;
  const auto& [lo, lo_values] = *per_gpu_by_count.begin();
  const auto& [hi, hi_values] = *per_gpu_by_count.rbegin();
  return MeasuredScaling{core::mean(hi_values) / core::mean(lo_values), lo, hi};
}

/// The efficiency a projection uses and where it came from, in words.
struct ScalingChoice {
  double efficiency = default_scaling_efficiency;
  std::string source;
};
inline ScalingChoice choose_scaling(const std::vector<Result>& rs, const Result& peak,
                                    const PeakOptions& o) {
  if (o.scaling_efficiency > 0) return {o.scaling_efficiency, "given with --scaling-efficiency"};
  if (const auto m = measured_scaling(rs, peak)) {
    const std::string measured = "measured: tokens/s/GPU at " + std::to_string(m->to_gpus) +
                                 " GPUs over " + std::to_string(m->from_gpus) +
                                 " GPUs, the same per-GPU work";
    // Faster per GPU with more GPUs is noise or a different machine: never project above linear.
    if (m->efficiency > 1)
      return {1.0, measured + ", " + num(m->efficiency, 2) + " capped at 1.00"};
    return {m->efficiency, measured};
  }
  // Say why not: the nearest candidates are the peak's platform x model at other GPU counts.
  std::string why = "no result of the peak's configuration at another GPU count";
  for (const auto& r : rs) {
    if (r.platform != peak.platform || r.model != peak.model || r.num_gpus == peak.num_gpus ||
        !r.usable_for_ranking())
      continue;
    const auto d = per_gpu_work_differences(r, peak);
    std::string list;
    for (const auto& x : d) list += (list.empty() ? "" : ", ") + x;
    why = "not measured: the " + gpus_label(r.num_gpus) + " result (" + r.file +
          ") differs from the peak in more than the GPU count (" + list + ")";
    break;
  }
  return {default_scaling_efficiency, why + "; default (pass --scaling-efficiency to change it)"};
}

/// The highest tokens/s of each platform x model among the results usable for ranking, best
/// first: a flagged result is never a peak (flagged_results lists it apart).
inline std::vector<const Result*> peaks_per_platform_model(const std::vector<Result>& rs) {
  std::map<std::pair<std::string, std::string>, const Result*> best;
  for (const auto& r : rs) {
    if (!r.usable_for_ranking()) continue;
    auto& b = best[{r.platform, r.model}];
    if (!b || r.tokens_per_second > b->tokens_per_second) b = &r;
  }
  std::vector<const Result*> out;
  for (const auto& [k, r] : best) out.push_back(r);
  std::stable_sort(out.begin(), out.end(), [](const Result* a, const Result* b) {
    return a->tokens_per_second > b->tokens_per_second;
  });
  return out;
}

/// The flagged results, in input order: listed apart, never ranked or projected.
inline std::vector<const Result*> flagged_results(const std::vector<Result>& rs) {
  std::vector<const Result*> out;
  for (const auto& r : rs)
    if (!r.usable_for_ranking()) out.push_back(&r);
  return out;
}

/// What tells each of `rows` apart beyond the table's own columns ("seq 4096, gbs 128"): the
/// experiment fields in which the rows differ, hardware left to the device column; "" for every
/// row where none does.
inline std::vector<std::string> row_configurations(const std::vector<const Result*>& rows) {
  std::vector<const std::vector<nlohmann::json>*> configs;
  for (const auto* r : rows) configs.push_back(&r->experiment);
  const auto fields = rows.empty() ? std::vector<std::size_t>{} : detail::differing_fields(configs);
  std::vector<std::string> out;
  for (const auto* r : rows)
    out.push_back(detail::configuration_label(r->experiment, fields, /*with_hardware=*/false));
  return out;
}

inline Table peak_table(const std::vector<const Result*>& rows) {
  // A configuration column only where the rows differ in more than the columns say.
  const auto configs = row_configurations(rows);
  const bool named = std::any_of(configs.begin(), configs.end(),
                                 [](const std::string& c) { return !c.empty(); });
  std::vector<std::string> header{"platform", "model", "device", "GPUs", "strategy", "run"};
  if (named) header.push_back("configuration");
  for (const char* h : {"tokens/s", "tokens/s/GPU", "TFLOP/s total", "TFLOP/s/GPU (PaLM)",
                        "TFLOP/s/GPU (6N)", "MFU PaLM (dense)", "MFU causal (dense)",
                        "step time (s)"})
    header.push_back(h);
  Table t(header);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Result* r = rows[i];
    std::vector<std::string> row{r->platform,   r->model, r->device_name, std::to_string(r->num_gpus),
                                 r->strategy, r->run};
    if (named) row.push_back(configs[i].empty() ? "-" : configs[i]);
    for (auto cell :
         {grouped(r->tokens_per_second), grouped(r->tokens_per_second_per_gpu),
          num(r->tflops_per_gpu() * r->num_gpus, 2), num(r->tflops_per_gpu(), 3),
          num(r->tflops_per_gpu_6n(), 3), flagged(percent(r->mfu()), !r->usable_for_ranking()),
          flagged(percent(r->mfu_causal()), !r->usable_for_ranking()),
          num(r->avg_step_time, 4)})
      row.push_back(std::move(cell));
    t.add(std::move(row));
  }
  return t;
}

/// peak.csv: every result (csv.hpp's columns), and whether it is its platform x model's peak.
inline std::string peak_csv(const std::vector<Result>& rs) {
  const auto peaks = peaks_per_platform_model(rs);
  std::vector<const Result*> rows;
  CsvColumn is_peak{"peak of its platform x model", {}};
  for (const auto& r : rs) {
    rows.push_back(&r);
    is_peak.cells.push_back(std::find(peaks.begin(), peaks.end(), &r) != peaks.end() ? "true"
                                                                                     : "false");
  }
  return results_csv(rows, {is_peak});
}

/// What ends `tprimat peak`'s text: the warnings, the inputs and the conventions.
inline std::string peak_text_tail(const LoadOutcome& in, const std::string& warnings,
                                  const PeakOptions& o) {
  std::string out;
  if (!warnings.empty())
    out +=
        "\nWARNINGS (figures no run can reach: a figure behind each is wrong; marked (!) "
        "above)\n" +
        warnings;

  out += "\nINPUTS\n";
  for (const auto& f : in.inputs) out += "  " + printable(f) + "\n";
  for (const auto& p : in.problems) out += "  not used: " + printable(without_prefix(p)) + "\n";

  out +=
      "\nConventions: tokens/s = global batch x sequence / mean step time. TFLOP/s (PaLM) = "
      "tokens/s x (6 P_matmul + 12 L H Dh S) / 1e12; (6N) = 6 x all parameters, the seeds' "
      "figure. MFU PaLM = PaLM TFLOP/s/GPU over the DENSE bf16 peak, MFU causal = the same with "
      "the attention term halved (6 P_matmul + 6 L H Dh S: the work a causal mask leaves, which "
      "the (!) flags judge), each";
  out += o.peak_tflops > 0 ? " given with --peak-tflops (" + num(o.peak_tflops, 1) + " TFLOP/s)"
                           : std::string(" (H100 SXM/H200 989.4, MI300X 1307.4 TFLOP/s)");
  out += ". The seeds used H100's 2:4-sparse " + num(backend::seeds_sparse_h100_tflops, 0) +
         " TFLOP/s, which halves its utilisation. Projection: 1 node as measured; n nodes = n x "
         "the node's tokens/s x scaling efficiency.\n";
  return out;
}

/// The whole `tprimat peak` text. `rs` must already carry any --peak-tflops override.
inline std::string peak_text(const LoadOutcome& in, const std::vector<Result>& rs,
                             const PeakOptions& o) {
  std::string out = "tprimat peak: " + std::to_string(rs.size()) + " of " +
                    std::to_string(in.inputs.size()) + " inputs loaded\n\n";
  const auto peaks = peaks_per_platform_model(rs);
  out += "PEAK THROUGHPUT PER PLATFORM x MODEL\n";
  out += peaks.empty() ? std::string("  none: every result is flagged (below)\n")
                       : peak_table(peaks).text();
  if (const auto apart = flagged_results(rs); !apart.empty())
    out += "\n" + std::string(flagged_heading) + "\n" + peak_table(apart).text();
  if (o.show_all) {
    std::vector<const Result*> all;
    for (const auto& r : rs) all.push_back(&r);
    std::stable_sort(all.begin(), all.end(), [](const Result* a, const Result* b) {
      return a->tokens_per_second > b->tokens_per_second;
    });
    out += "\nALL RESULTS\n" + peak_table(all).text();
  }

  std::string warnings;
  for (const auto& r : rs)
    for (const auto& w : r.warnings()) warnings += "  (!) " + printable(r.file + ": " + w) + "\n";
  if (peaks.empty()) {
    out += "\nOVERALL PEAK\n  none: every result is flagged, so nothing is projected\n";
    return out + peak_text_tail(in, warnings, o);
  }
  const Result& best = *peaks.front();
  const double daily_tokens = best.tokens_per_second * 86400;
  out += "\nOVERALL PEAK\n";
  out +=
      "  configuration:   " +
      printable(best.platform + " " + best.model + " " + best.strategy + " (" + best.file + ")") +
      "\n";
  out += "  hardware:        " + std::to_string(best.num_gpus) + " x " +
         printable(best.device_name) + "\n";
  if (best.layers_are_proxy)
    out += "  model:           " +
           (best.layers > 0 && best.layers_full > 0
                ? std::to_string(best.layers) + " of " + std::to_string(best.layers_full) + " layers"
                : std::string("fewer layers than the full model")) +
           " (a proxy): the figures below are the proxy's, not the full model's\n";
  out += "  throughput:      " + grouped(best.tokens_per_second) + " tokens/s, " +
         grouped(best.tokens_per_second_per_gpu) + " tokens/s/GPU\n";
  out += "  compute:         " + num(best.tflops_per_gpu() * best.num_gpus, 2) +
         " TFLOP/s total, " + num(best.tflops_per_gpu(), 3) + " TFLOP/s/GPU (PaLM), " +
         num(best.tflops_per_gpu_6n(), 3) + " TFLOP/s/GPU (6N)\n";
  out += "  MFU (dense):     " + percent(best.mfu()) + " PaLM, " + percent(best.mfu_causal()) +
         " causal, of " +
         (best.peak_tflops_dense > 0 ? num(best.peak_tflops_dense, 1) + " TFLOP/s"
                                     : std::string("an unknown peak")) + "\n";
  out += "  per day at peak: " + grouped(daily_tokens) + " tokens, " +
         (best.seq > 0 ? grouped(std::floor(daily_tokens / best.seq)) : std::string("n/a")) +
         " samples of " + std::to_string(best.seq) + " tokens\n";

  const auto [eff, eff_source] = choose_scaling(rs, best, o);
  out += "\nMULTI-NODE PROJECTION (one node = the peak run's " + gpus_label(best.num_gpus) +
         "; scaling efficiency " + num(eff, 2) + ", " + printable(eff_source) + ")\n";
  Table proj({"nodes", "GPUs", "tokens/s (linear, not reachable)", "tokens/s (projected)",
              "tokens/day (projected)"});
  bool floored = false;
  for (int nodes : {1, 2, 4, 8}) {
    const double linear = best.tokens_per_second * nodes;
    double projected = nodes == 1 ? linear : linear * eff;
    // More nodes never project below the one measured: at such an efficiency they would not
    // be used, and a figure under the measurement would read as a measured slowdown.
    const bool floor = projected < best.tokens_per_second;
    if (floor) projected = best.tokens_per_second;
    floored = floored || floor;
    proj.add({std::to_string(nodes), std::to_string(nodes * best.num_gpus), grouped(linear),
              grouped(projected) + (floor ? " *" : ""), grouped(projected * 86400)});
  }
  out += proj.text();
  if (floored)
    out += "* at efficiency " + num(eff, 2) +
           ", n nodes would project below one node; shown as "
           "one node's measured throughput, the floor of any projection\n";

  return out + peak_text_tail(in, warnings, o);
}

}  // namespace tprimat::report
