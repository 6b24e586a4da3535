// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Peak throughput per platform x model, capacity per day, and a multi-node projection.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tprimat/report/load.hpp"
#include "tprimat/report/peaks.hpp"
#include "tprimat/report/text.hpp"

namespace tprimat::report {

struct PeakOptions {
  double peak_tflops = 0;          ///< > 0 replaces every device's dense peak
  double scaling_efficiency = 0;   ///< > 0 forces this; 0: measured if possible, else 0.90
  bool show_all = false;
};

inline constexpr double default_scaling_efficiency = 0.90;

/// Measured per-GPU scaling from the same platform x model x strategy at different GPU counts:
/// (tokens/s/GPU at the most GPUs) / (tokens/s/GPU at the fewest). Nullopt with one count only.
struct MeasuredScaling {
  double efficiency;
  int from_gpus, to_gpus;
  std::string platform, model, strategy;
};
inline std::optional<MeasuredScaling> measured_scaling(const std::vector<Result>& rs,
                                                       const Result& peak) {
  const Result* lo = nullptr;
  const Result* hi = nullptr;
  for (const auto& r : rs) {
    if (r.platform != peak.platform || r.model != peak.model || r.strategy != peak.strategy)
      continue;
    if (!lo || r.num_gpus < lo->num_gpus) lo = &r;
    if (!hi || r.num_gpus > hi->num_gpus) hi = &r;
  }
  if (!lo || lo->num_gpus == hi->num_gpus) return std::nullopt;
  return MeasuredScaling{hi->tokens_per_second_per_gpu / lo->tokens_per_second_per_gpu,
                         lo->num_gpus, hi->num_gpus, peak.platform, peak.model, peak.strategy};
}

/// The highest tokens/s of each platform x model, best first.
inline std::vector<const Result*> peaks_per_platform_model(const std::vector<Result>& rs) {
  std::map<std::pair<std::string, std::string>, const Result*> best;
  for (const auto& r : rs) {
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

inline Table peak_table(const std::vector<const Result*>& rows) {
  Table t({"platform", "model", "device", "GPUs", "strategy", "run", "tokens/s", "tokens/s/GPU",
           "TFLOP/s total", "TFLOP/s/GPU (PaLM)", "TFLOP/s/GPU (6N)", "MFU (dense)",
           "step time (s)"});
  for (const auto* r : rows)
    t.add({r->platform, r->model, r->device_name, std::to_string(r->num_gpus), r->strategy,
           r->run, grouped(r->tokens_per_second), grouped(r->tokens_per_second_per_gpu),
           num(r->tflops_per_gpu() * r->num_gpus, 2), num(r->tflops_per_gpu(), 3),
           num(r->tflops_per_gpu_6n(), 3), percent(r->mfu()), num(r->avg_step_time, 4)});
  return t;
}

/// The whole `tprimat peak` text. `rs` must already carry any --peak-tflops override.
inline std::string peak_text(const LoadOutcome& in, const std::vector<Result>& rs,
                             const PeakOptions& o) {
  std::string out = "tprimat peak: " + std::to_string(rs.size()) + " of " +
                    std::to_string(in.inputs.size()) + " inputs loaded\n\n";
  const auto peaks = peaks_per_platform_model(rs);
  out += "PEAK THROUGHPUT PER PLATFORM x MODEL\n" + peak_table(peaks).text();
  if (o.show_all) {
    std::vector<const Result*> all;
    for (const auto& r : rs) all.push_back(&r);
    std::stable_sort(all.begin(), all.end(), [](const Result* a, const Result* b) {
      return a->tokens_per_second > b->tokens_per_second;
    });
    out += "\nALL RESULTS\n" + peak_table(all).text();
  }

  const Result& best = *peaks.front();
  const double daily_tokens = best.tokens_per_second * 86400;
  out += "\nOVERALL PEAK\n";
  out += "  configuration:   " + best.platform + " " + best.model + " " + best.strategy + " (" +
         best.file + ")\n";
  out += "  hardware:        " + std::to_string(best.num_gpus) + " x " + best.device_name + "\n";
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
  out += "  MFU (dense):     " + percent(best.mfu()) + " of " +
         (best.peak_tflops_dense > 0 ? num(best.peak_tflops_dense, 1) + " TFLOP/s"
                                     : std::string("an unknown peak")) + "\n";
  out += "  per day at peak: " + grouped(daily_tokens) + " tokens, " +
         (best.seq > 0 ? grouped(std::floor(daily_tokens / best.seq)) : std::string("n/a")) +
         " samples of " + std::to_string(best.seq) + " tokens\n";

  double eff = default_scaling_efficiency;
  std::string eff_source = "default (pass --scaling-efficiency to change it)";
  if (o.scaling_efficiency > 0) {
    eff = o.scaling_efficiency;
    eff_source = "given with --scaling-efficiency";
  } else if (const auto m = measured_scaling(rs, best)) {
    eff = m->efficiency;
    eff_source = "measured: tokens/s/GPU at " + std::to_string(m->to_gpus) + " GPUs over " +
                 std::to_string(m->from_gpus) + " GPUs";
  }
  out += "\nMULTI-NODE PROJECTION (one node = the peak run's " + gpus_label(best.num_gpus) +
         "; scaling efficiency " + num(eff, 2) + ", " + eff_source + ")\n";
  Table proj({"nodes", "GPUs", "tokens/s (linear, not reachable)", "tokens/s (projected)",
              "tokens/day (projected)"});
  for (int nodes : {1, 2, 4, 8}) {
    const double linear = best.tokens_per_second * nodes;
    const double projected = nodes == 1 ? linear : linear * eff;
    proj.add({std::to_string(nodes), std::to_string(nodes * best.num_gpus), grouped(linear),
              grouped(projected), grouped(projected * 86400)});
  }
  out += proj.text();

  out += "\nINPUTS\n";
  for (const auto& f : in.inputs) out += "  " + f + "\n";
  for (const auto& p : in.problems) out += "  not used: " + without_prefix(p) + "\n";

  out += "\nConventions: tokens/s = global batch x sequence / mean step time. TFLOP/s (PaLM) = "
         "tokens/s x (6 P_matmul + 12 L H Dh S) / 1e12; (6N) = 6 x all parameters, the seeds' "
         "figure. MFU = PaLM TFLOP/s/GPU over the DENSE bf16 peak";
  out += o.peak_tflops > 0 ? " given with --peak-tflops (" + num(o.peak_tflops, 1) + " TFLOP/s)"
                           : std::string(" (H100 SXM/H200 989.4, MI300X 1307.4 TFLOP/s)");
  out += ". The seeds used H100's 2:4-sparse " + num(seeds_sparse_h100_tflops, 0) +
         " TFLOP/s, which halves its utilisation. Projection: 1 node as measured; n nodes = n x "
         "the node's tokens/s x scaling efficiency.\n";
  return out;
}

}  // namespace tprimat::report
