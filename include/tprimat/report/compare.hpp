// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Groups results by model x strategy x platform, summarises runs and names each group's winner.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "tprimat/core/stats.hpp"
#include "tprimat/report/load.hpp"
#include "tprimat/report/text.hpp"

namespace tprimat::report {

/// Every result of one model x strategy x platform x GPU count: its runs pooled. The GPU count is
/// part of the key because per-GPU throughput changes with scale.
struct Group {
  std::string model, strategy, platform;
  int num_gpus = 0;
  std::vector<const Result*> results;
  core::Summary per_gpu;  ///< tokens/s/GPU over runs (one sample per run)

  const Result& first() const { return *results.front(); }
  std::string runs_label() const {
    std::string s;
    std::vector<std::string> seen;
    for (const auto* r : results) {
      if (std::find(seen.begin(), seen.end(), r->run) != seen.end()) continue;
      seen.push_back(r->run);
      s += (s.empty() ? "" : ",") + r->run;
    }
    return s;
  }
  /// Mean over the group's results of a per-result figure (NaN ones left out).
  template <class F>
  double average(F f) const {
    std::vector<double> v;
    for (const auto* r : results)
      if (double x = f(*r); std::isfinite(x)) v.push_back(x);
    return core::mean(v);
  }
  /// Largest relative step-to-step spread (std / mean) among the group's results.
  double step_cv() const {
    double cv = unknown;
    for (const auto* r : results)
      if (r->avg_step_time > 0 && std::isfinite(r->std_step_time))
        cv = std::isfinite(cv) ? std::max(cv, r->std_step_time / r->avg_step_time)
                               : r->std_step_time / r->avg_step_time;
    return cv;
  }
};

/// Groups of one model x strategy, the platforms side by side, and who wins.
struct Comparison {
  std::string model, strategy;
  int num_gpus = 0;
  std::vector<const Group*> platforms;  ///< fastest first (tokens/s/GPU)
  std::string verdict;                  ///< "" with a single platform
  std::string noise;                    ///< why the difference may not be real; "" otherwise
};

inline std::vector<Group> group_results(const std::vector<Result>& results) {
  std::map<std::tuple<std::string, std::string, int, std::string>, Group> by_key;
  for (const auto& r : results) {
    auto& g = by_key[{r.model, r.strategy, r.num_gpus, r.platform}];
    g.num_gpus = r.num_gpus;
    g.model = r.model;
    g.strategy = r.strategy;
    g.platform = r.platform;
    g.results.push_back(&r);
  }
  std::vector<Group> out;
  for (auto& [key, g] : by_key) {
    std::vector<double> samples;
    for (const auto* r : g.results)
      samples.insert(samples.end(), r->run_tokens_per_second_per_gpu.begin(),
                     r->run_tokens_per_second_per_gpu.end());
    g.per_gpu = core::summarize(samples);
    out.push_back(std::move(g));
  }
  return out;
}

/// Per-GPU throughput decides, so runs on different GPU counts compare fairly.
inline std::vector<Comparison> compare_groups(const std::vector<Group>& groups) {
  std::map<std::tuple<std::string, std::string, int>, Comparison> by_key;
  for (const auto& g : groups) {
    auto& c = by_key[{g.model, g.strategy, g.num_gpus}];
    c.num_gpus = g.num_gpus;
    c.model = g.model;
    c.strategy = g.strategy;
    c.platforms.push_back(&g);
  }
  std::vector<Comparison> out;
  for (auto& [key, c] : by_key) {
    std::stable_sort(c.platforms.begin(), c.platforms.end(), [](const Group* a, const Group* b) {
      return a->per_gpu.mean > b->per_gpu.mean;
    });
    if (c.platforms.size() >= 2) {
      const Group& w = *c.platforms[0];
      c.verdict = w.platform + " wins:";
      for (std::size_t i = 1; i < c.platforms.size(); ++i) {
        const Group& o = *c.platforms[i];
        c.verdict += " " + num(w.per_gpu.mean / o.per_gpu.mean, 2) + "x " + o.platform;
      }
      const Group& o = *c.platforms[1];
      if (w.per_gpu.count >= 3 && o.per_gpu.count >= 3) {
        if (w.per_gpu.mean - w.per_gpu.ci95 <= o.per_gpu.mean + o.per_gpu.ci95)
          c.noise = "the 95% confidence intervals of " + w.platform + " and " + o.platform +
                    " overlap: the difference is inside the noise";
      } else {
        const double diff = w.per_gpu.mean / o.per_gpu.mean - 1;
        const double cv = std::max(w.step_cv(), o.step_cv());
        c.noise = "fewer than 3 runs: no confidence interval";
        if (std::isfinite(cv) && diff <= cv)
          c.noise += "; the " + percent(diff) + " difference is inside the step-to-step spread (" +
                     percent(cv) + ")";
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

/// The terminal table: one row per model x strategy x platform.
inline Table results_table(const std::vector<Group>& groups) {
  Table t({"model", "strategy", "platform", "run", "device", "GPUs", "runs", "tokens/s/GPU",
           "step time (s)", "TFLOP/s/GPU", "MFU", "memory (GiB)"});
  for (const auto& g : groups) {
    const Result& r = g.first();
    t.add({g.model, g.strategy, g.platform, g.runs_label(), r.device_name, std::to_string(r.num_gpus),
           std::to_string(g.per_gpu.count), mean_std(g.per_gpu.mean, g.per_gpu.std, 1),
           num(g.average([](const Result& x) { return x.avg_step_time; }), 4),
           num(g.average([](const Result& x) { return x.tflops_per_gpu(); }), 3),
           percent(g.average([](const Result& x) { return x.mfu(); })),
           num(g.average([](const Result& x) { return x.memory_gb; }), 2)});
  }
  return t;
}

/// What `tprimat compare` prints: inputs, problems, table, verdicts, conventions.
inline std::string compare_text(const LoadOutcome& in, const std::vector<Group>& groups,
                                const std::vector<Comparison>& comparisons) {
  std::string out = "tprimat compare: " + std::to_string(in.results.size()) + " of " +
                    std::to_string(in.inputs.size()) + " inputs loaded\n";
  if (groups.empty()) return out;
  out += "\n" + results_table(groups).text() + "\n";
  for (const auto& c : comparisons) {
    if (c.verdict.empty()) continue;
    out += c.model + " / " + c.strategy + " / " + gpus_label(c.num_gpus) + ": " + c.verdict +
           " (tokens/s/GPU)";
    out += c.noise.empty() ? "\n" : "; " + c.noise + "\n";
  }
  out += "tokens/s/GPU: mean ± sample std over runs. TFLOP/s/GPU: model FLOPs, PaLM convention "
         "(6 P_matmul + 12 L H Dh S per token). MFU: against the dense bf16 peak (H100/H200 "
         "989.4, MI300X 1307.4 TFLOP/s); n/a where the device's peak is unknown.\n";
  return out;
}

}  // namespace tprimat::report
