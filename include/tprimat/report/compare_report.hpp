// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// comparison_report.md: the seeds' comparison report, with the statistics stated and sourced.
#pragma once

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "tprimat/report/compare.hpp"
#include "tprimat/report/text.hpp"

namespace tprimat::report {

inline std::string comparison_report(const LoadOutcome& in, const std::vector<Group>& groups,
                                     const std::vector<Comparison>& comparisons) {
  std::string md = "# tprimat comparison report\n\n## Inputs\n\n";
  for (const auto& f : in.inputs) md += "- `" + printable(f) + "`\n";
  for (const auto& p : in.problems) md += "- not used: " + printable(without_prefix(p)) + "\n";

  md += "\n## Executive summary\n\n";
  bool any = false;
  for (const auto& c : comparisons) {
    if (c.verdict.empty()) continue;
    any = true;
    md += "- **" + printable(c.title()) + "**: " + printable(c.verdict) + " in tokens/s/GPU" +
          (c.noise.empty() ? "" : " (" + printable(c.noise) + ")") + "\n";
  }
  if (!any)
    md +=
        "- a single platform per model, strategy and configuration: nothing to compare across "
        "platforms\n";
  for (const auto& line : uncompared_platforms(comparisons)) md += "- " + printable(line) + "\n";
  const auto warnings = warning_lines(groups);
  if (!warnings.empty()) {
    md +=
        "\n## Warnings\n\nFigures no run can reach: a figure behind each (FLOPs per token, "
        "batch, sequence, GPU count, peak) is wrong. Marked (!) in the tables and the plot.\n\n";
    for (const auto& w : warnings) md += "- " + w + "\n";
  }

  md += "\n## Hardware and software\n\n";
  Table hw({"platform", "device", "GPUs", "software stack", "driver", "runtime",
            "dense peak (TFLOP/s)"});
  std::set<std::string> seen;
  for (const auto& g : groups)
    for (const auto* r : g.results) {
      const std::string key = r->platform + r->device_name + std::to_string(r->num_gpus) +
                              r->driver_version + r->runtime_version;
      if (!seen.insert(key).second) continue;
      hw.add({r->platform, r->device_name, std::to_string(r->num_gpus),
              r->software_stack.empty() ? "n/a" : r->software_stack,
              r->driver_version.empty() ? "n/a" : r->driver_version,
              r->runtime_version.empty() ? "n/a" : r->runtime_version,
              r->peak_tflops_dense > 0 ? num(r->peak_tflops_dense, 1) : "unknown"});
    }
  md += hw.markdown();

  md += "\n## Performance\n\n";
  // A configuration column only where groups of one model x strategy x GPU count differ.
  const bool configs = std::any_of(groups.begin(), groups.end(),
                                   [](const Group& g) { return !g.configuration().empty(); });
  const auto with_configuration = [&](std::vector<std::string> row, const Group* g) {
    if (configs)
      row.insert(row.begin() + 4, !g                           ? "configuration"
                                  : g->configuration().empty() ? "-"
                                                               : g->configuration());
    return row;
  };
  const auto perf_table = [&](const std::vector<const Group*>& rows) {
    Table perf(with_configuration(
        {"model", "strategy", "GPUs", "platform", "runs", "tokens/s/GPU (all steps ± std of runs)",
         "95% CI of the runs' mean", "step time (s)", "TFLOP/s/GPU (PaLM)", "TFLOP/s/GPU (6N)",
         "MFU PaLM (dense bf16 peak)", "MFU causal (dense bf16 peak)", "MFU PaLM (dense FP8 peak)",
         "MFU causal (dense FP8 peak)"},
        nullptr));
    for (const auto* row : rows) {
      const Group& g = *row;
      perf.add(with_configuration(
          {g.model, g.strategy, std::to_string(g.num_gpus), g.platform,
           std::to_string(g.per_gpu.count), tokens_cell(g),
           g.per_gpu.count >= 3 ? "± " + num(g.per_gpu.ci95, 1) : "n/a (runs < 3)",
           num(g.average([](const Result& x) { return x.avg_step_time; }), 4),
           num(g.average([](const Result& x) { return x.tflops_per_gpu(); }), 3),
           num(g.average([](const Result& x) { return x.tflops_per_gpu_6n(); }), 3),
           flagged(percent(g.average([](const Result& x) { return x.mfu(); })), g.flagged),
           flagged(percent(g.average([](const Result& x) { return x.mfu_causal(); })),
                   g.flagged),
           flagged(percent(g.average([](const Result& x) { return x.mfu_fp8_peak(); })),
                   g.flagged),
           flagged(percent(g.average([](const Result& x) { return x.mfu_fp8_peak_causal(); })),
                   g.flagged)},
          &g));
    }
    return perf.markdown();
  };
  if (const auto usable = usable_groups(groups); !usable.empty()) md += perf_table(usable);
  if (const auto apart = flagged_groups(groups); !apart.empty())
    md +=
        "\n### Flagged results\n\nA figure no run can reach (see Warnings): never compared, "
        "ranked or projected.\n\n" +
        perf_table(apart);
  md +=
      "\ntokens/s/GPU: every measured step of the configuration's runs, total tokens over "
      "total time (warm-up excluded), the figure each result file states. One sample per run "
      "for the spread: the run's own tokens/s/GPU; std is their sample standard deviation "
      "(n - 1); the 95% confidence interval of their mean uses Student's t and is given from "
      "3 runs on.\n";

  md += "\n## Memory\n\n";
  Table mem(with_configuration(
      {"model", "strategy", "GPUs", "platform", "peak allocated per GPU (GiB)", "predicted (GiB)"},
      nullptr));
  for (const auto& g : groups)
    mem.add(with_configuration(
        {g.model, g.strategy, std::to_string(g.num_gpus), g.platform,
         num(g.average([](const Result& x) { return x.memory_gb; }), 2),
         num(g.average([](const Result& x) { return x.predicted_memory_gb; }), 2)},
        &g));
  md += mem.markdown();

  md += "\n## Analysis\n\n";
  for (const auto& c : comparisons) {
    if (c.verdict.empty()) continue;
    const Group& w = *c.platforms[0];
    md += "- " +
          printable(c.title() + ": " + w.name() + " (" + w.first().device_name + ") " +
                    (c.has_winner ? "leads with " : "is ahead, with no winner, at ") +
                    grouped(w.tokens_per_second_per_gpu, 1) + " tokens/s/GPU. " +
                    (c.noise.empty() ? "The difference is outside the noise."
                                     : (c.has_winner ? "Caution: " : "Why: ") + c.noise + ".")) +
          "\n";
  }
  for (const auto& g : groups)
    for (const auto* r : g.results) {
      if (r->layers_are_proxy)
        md += "- `" + printable(r->file) + "` ran " +
              (r->layers > 0 && r->layers_full > 0
                   ? std::to_string(r->layers) + " of " + std::to_string(r->layers_full) + " layers"
                   : std::string("fewer layers than the full model")) +
              " (a proxy): its throughput is not the full model's.\n";
      if (r->flops_source != "from the file (layers run)")
        md += "- `" + printable(r->file) + "`: FLOPs/token " + r->flops_source + ".\n";
    }

  md += "\n## Conventions\n\n"
        "- Throughput: global batch x sequence length / mean step time; per GPU: divided by the "
        "run's GPU count.\n"
        "- TFLOP/s/GPU (PaLM): tokens/s/GPU x (6 P_matmul + 12 L H Dh S) / 1e12, P_matmul all "
        "parameters that enter matrix products. (6N): 6 x all parameters, the seeds' figure.\n"
        "- MFU PaLM (dense bf16 peak): PaLM TFLOP/s/GPU over the device's dense bf16 peak (H100 "
        "SXM/H200 989.4, MI300X 1307.4 TFLOP/s), whatever the precision: model FLOPs do not "
        "change with it. The seeds used the 2:4-sparse 1979 TFLOP/s for H100, which halves "
        "utilisation; tprimat does not.\n"
        "- MFU PaLM (dense FP8 peak): the same FLOPs over the dense FP8 peak (H100 SXM/H200 "
        "1978.9, MI300X 2614.9 TFLOP/s), as NVIDIA states an FP8 run's MFU; an FP8 run is "
        "checked against it.\n"
        "- MFU causal: the same over each peak with the attention term halved (6 P_matmul + 6 L "
        "H Dh S), as Megatron-Bridge and NeMo count it: a causal mask leaves half the scores to "
        "compute. The flags of figures no run can reach judge this one.\n"
        "- Memory: peak allocated per GPU, GiB.\n";
  return md;
}

}  // namespace tprimat::report
