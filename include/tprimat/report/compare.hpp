// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Groups results by their whole configuration, names what tells groups apart, and who wins.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "tprimat/bench/experiment.hpp"
#include "tprimat/core/stats.hpp"
#include "tprimat/report/load.hpp"
#include "tprimat/report/text.hpp"

namespace tprimat::report {

namespace detail {

using bench::experiment_field;
/// Fields every report names on their own (columns, label fields): a configuration label
/// leaves them out.
inline constexpr std::size_t named_apart[] = {
    experiment_field("/platform"), experiment_field("/model/cli_name"),
    experiment_field("/gpu_info/device_count"),
    experiment_field("/parallelism_config/strategy_name")};
/// Fields naming the hardware: what may differ between the platforms a comparison sets side by
/// side; everything else must be equal.
inline constexpr std::size_t hardware_fields[] = {experiment_field("/platform"),
                                                  experiment_field("/gpu_info/software_stack"),
                                                  experiment_field("/gpu_info/device_name")};

template <std::size_t N>
bool among(std::size_t field, const std::size_t (&fields)[N]) {
  return std::find(std::begin(fields), std::end(fields), field) != std::end(fields);
}

/// Field `i` of a configuration; null (unknown) past its end.
inline nlohmann::json field_value(const std::vector<nlohmann::json>& config, std::size_t i) {
  return i < config.size() ? config[i] : nlohmann::json(nullptr);
}

/// The fields, in bench::experiment_fields order, in which `configs` are not all equal (those
/// named apart left out).
inline std::vector<std::size_t> differing_fields(
    const std::vector<const std::vector<nlohmann::json>*>& configs) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < bench::experiment_field_count; ++i) {
    if (among(i, named_apart)) continue;
    for (const auto* c : configs)
      if (field_value(*c, i) != field_value(*configs.front(), i)) {
        out.push_back(i);
        break;
      }
  }
  return out;
}

/// "seq 256, gbs 64": `fields` of `config`, hardware fields left out unless `with_hardware`.
inline std::string configuration_label(const std::vector<nlohmann::json>& config,
                                       const std::vector<std::size_t>& fields, bool with_hardware) {
  std::string s;
  for (std::size_t i : fields)
    if (with_hardware || !among(i, hardware_fields))
      s += (s.empty() ? "" : ", ") + bench::experiment_label(i, field_value(config, i));
  return s;
}

}  // namespace detail

/// The results of one configuration (every experiment field equal) on one platform: its runs
/// pooled, and nothing else. Results that differ in any field that defines an experiment (seq,
/// gbs, TP/PP, layers, precision, ...) are never pooled.
struct Group {
  std::string model, strategy, platform;
  int num_gpus = 0;
  std::vector<nlohmann::json> experiment;  ///< the configuration, bench::experiment_fields order
  std::string framework;  ///< Result::framework: runs of two frameworks are never pooled
  /// Whether its results are flagged (Result::usable_for_ranking false): never pooled with
  /// usable runs, never compared, listed apart.
  bool flagged = false;
  /// The fields telling this group apart from the others of its model x strategy x GPU count,
  /// the groups a reader sets against it; empty where it is the only configuration there.
  std::vector<std::size_t> differing;
  bool name_framework = false;  ///< the frameworks differ there too: labels name it
  std::vector<const Result*> results;
  core::Summary per_gpu;  ///< tokens/s/GPU over runs (one sample per run): the spread
  /// tokens/s/GPU of every measured step of its runs (total tokens over total time): the figure
  /// a result file and `bench` state, so one result reads the same everywhere.
  double tokens_per_second_per_gpu = unknown;

  const Result& first() const { return *results.front(); }
  bool usable_for_ranking() const { return !flagged; }
  /// What tells it apart ("seq 256, gbs 64"), the device and stack only `with_hardware` (the
  /// tables have a column for the device); "" when nothing does.
  std::string configuration(bool with_hardware = false) const {
    std::string s = detail::configuration_label(experiment, differing, with_hardware);
    if (name_framework) s += (s.empty() ? "" : ", ") + framework_label();
    return s;
  }
  /// "framework megatron"; "framework n/a" where the file does not say.
  std::string framework_label() const {
    return "framework " + (framework.empty() ? std::string("n/a") : framework);
  }
  /// How a verdict names it: the platform, and its framework where frameworks differ.
  std::string name() const {
    return name_framework ? platform + " (" + framework_label() + ")" : platform;
  }
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
  /// "file: warning" for each impossible figure among its results (bench/sanity.hpp).
  std::vector<std::string> warnings() const {
    std::vector<std::string> out;
    for (const auto* r : results)
      for (const auto& w : r->warnings()) out.push_back(r->file + ": " + w);
    return out;
  }
};

/// The groups of one model x strategy x GPU count x configuration, platforms side by side.
struct Comparison {
  std::string model, strategy;
  int num_gpus = 0;
  std::string configuration;            ///< what tells it apart from the others of its model x
                                        ///< strategy x GPU count; "" when it is the only one
  std::vector<const Group*> platforms;  ///< fastest first (tokens/s/GPU)
  std::string verdict;                  ///< "" with a single platform
  bool has_winner = false;              ///< the leader is ahead outside the noise
  std::string noise;                    ///< why the difference may not be real; "" otherwise

  /// "llama / truly_identical / 8 GPUs / seq 256"
  std::string title() const {
    return model + " / " + strategy + " / " + gpus_label(num_gpus) +
           (configuration.empty() ? "" : " / " + configuration);
  }
};

namespace detail {

/// tokens/s/GPU over every measured step of `results` (total tokens over total time), each
/// result's figure weighted by its measured time; the plain mean where a time is unknown (a
/// seeds' file without step times). One result: its own figure, as its file states it.
inline double pooled_tokens_per_second_per_gpu(const std::vector<const Result*>& results) {
  double tokens = 0, seconds = 0;
  std::vector<double> figures;
  for (const auto* r : results) {
    figures.push_back(r->tokens_per_second_per_gpu);
    const double time = double(std::max<std::size_t>(1, r->step_times.size())) * r->avg_step_time;
    tokens += r->tokens_per_second_per_gpu * time;
    seconds += time;
  }
  if (figures.size() == 1) return figures.front();
  return std::isfinite(tokens) && seconds > 0 ? tokens / seconds : core::mean(figures);
}

}  // namespace detail

/// Groups in input order within each model x strategy x GPU count x platform (sorted); flagged
/// groups after every usable one.
inline std::vector<Group> group_results(const std::vector<Result>& results) {
  std::map<std::tuple<std::string, std::string, int, std::string>, std::vector<Group>> by_key;
  for (const auto& r : results) {
    auto& groups = by_key[{r.model, r.strategy, r.num_gpus, r.platform}];
    const bool flagged = !r.usable_for_ranking();
    auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) {
      return x.experiment == r.experiment && x.framework == r.framework && x.flagged == flagged;
    });
    if (g == groups.end()) {
      Group added;
      added.model = r.model;
      added.strategy = r.strategy;
      added.platform = r.platform;
      added.num_gpus = r.num_gpus;
      added.experiment = r.experiment;
      added.framework = r.framework;
      added.flagged = flagged;
      groups.push_back(std::move(added));
      g = groups.end() - 1;
    }
    g->results.push_back(&r);
  }
  std::vector<Group> out;
  for (auto& [key, groups] : by_key)
    for (auto& g : groups) {
      std::vector<double> samples;
      for (const auto* r : g.results)
        samples.insert(samples.end(), r->run_tokens_per_second_per_gpu.begin(),
                       r->run_tokens_per_second_per_gpu.end());
      g.per_gpu = core::summarize(samples);
      g.tokens_per_second_per_gpu = detail::pooled_tokens_per_second_per_gpu(g.results);
      out.push_back(std::move(g));
    }
  std::stable_partition(out.begin(), out.end(), [](const Group& g) { return !g.flagged; });
  // What a label must name: the fields in which the groups of one model x strategy x GPU count
  // differ (the platforms a reader compares, and any unlike configurations among them).
  std::map<std::tuple<std::string, std::string, int>, std::vector<Group*>> scopes;
  for (auto& g : out) scopes[{g.model, g.strategy, g.num_gpus}].push_back(&g);
  for (auto& entry : scopes) {
    const auto& scope = entry.second;  // a named reference: clang 15 cannot capture a binding
    std::vector<const std::vector<nlohmann::json>*> configs;
    for (const auto* g : scope) configs.push_back(&g->experiment);
    auto fields = detail::differing_fields(configs);
    // The hardware differs between platforms by nature, and the platform names it: name it
    // only where one platform ran on several (an H100 and an H200 result of nvd).
    std::erase_if(fields, [&](std::size_t f) {
      if (!detail::among(f, detail::hardware_fields)) return false;
      for (const auto* a : scope)
        for (const auto* b : scope)
          if (a->platform == b->platform &&
              detail::field_value(a->experiment, f) != detail::field_value(b->experiment, f))
            return false;
      return true;
    });
    const bool frameworks_differ = std::any_of(scope.begin(), scope.end(), [&](const Group* g) {
      return g->framework != scope.front()->framework;
    });
    for (auto* g : scope) {
      g->differing = fields;
      g->name_framework = frameworks_differ;
    }
  }
  return out;
}

/// Groups point into `results`: a temporary would leave them dangling.
std::vector<Group> group_results(std::vector<Result>&& results) = delete;

namespace detail {

/// A group's configuration without its hardware: equal between the platforms of a comparison.
inline std::vector<nlohmann::json> without_hardware(const Group& g) {
  std::vector<nlohmann::json> out;
  for (std::size_t i = 0; i < bench::experiment_field_count; ++i)
    out.push_back(among(i, hardware_fields) ? nlohmann::json(nullptr)
                                            : field_value(g.experiment, i));
  return out;
}

}  // namespace detail

/// Platforms side by side where they ran the same configuration (every experiment field but the
/// hardware's equal); per-GPU throughput decides, so runs on different GPU counts compare fairly.
inline std::vector<Comparison> compare_groups(const std::vector<Group>& groups) {
  std::map<std::tuple<std::string, std::string, int>,
           std::vector<std::pair<std::vector<nlohmann::json>, Comparison>>>
      by_key;
  for (const auto& g : groups) {
    if (!g.usable_for_ranking()) continue;  // listed apart, never a winner
    auto& list = by_key[{g.model, g.strategy, g.num_gpus}];
    const auto config = detail::without_hardware(g);
    auto it =
        std::find_if(list.begin(), list.end(), [&](const auto& x) { return x.first == config; });
    if (it == list.end()) {
      Comparison c;
      c.model = g.model;
      c.strategy = g.strategy;
      c.num_gpus = g.num_gpus;
      // What tells the comparison apart from others; each platform's framework is named in
      // the verdict, beside its platform, not in the title they share.
      c.configuration = detail::configuration_label(g.experiment, g.differing, false);
      list.emplace_back(config, std::move(c));
      it = list.end() - 1;
    }
    it->second.platforms.push_back(&g);
  }
  std::vector<Comparison> out;
  for (auto& [key, list] : by_key)
    for (auto& [config, c] : list) {
      std::stable_sort(c.platforms.begin(), c.platforms.end(), [](const Group* a, const Group* b) {
        return a->tokens_per_second_per_gpu > b->tokens_per_second_per_gpu;
      });
      if (c.platforms.size() >= 2) {
        const Group& w = *c.platforms[0];
        const Group& o = *c.platforms[1];
        const double diff = w.tokens_per_second_per_gpu / o.tokens_per_second_per_gpu - 1;
        // A win is a difference outside the noise, and one the report can show (not "0.0%").
        bool outside = percent(diff) != percent(0);
        if (!outside) {
          c.noise = "a " + percent(diff) + " difference";
        } else if (w.per_gpu.count >= 3 && o.per_gpu.count >= 3) {
          outside = w.per_gpu.mean - w.per_gpu.ci95 > o.per_gpu.mean + o.per_gpu.ci95;
          if (!outside)
            c.noise = "the 95% confidence intervals of " + w.name() + " and " + o.name() +
                      " overlap: the difference is inside the noise";
        } else {
          const double cv = std::max(w.step_cv(), o.step_cv());
          c.noise = "fewer than 3 runs: no confidence interval";
          if (!std::isfinite(cv)) {
            outside = false;
            c.noise += ", and no step times: the step-to-step spread is unknown";
          } else if (diff <= cv) {
            outside = false;
            c.noise += "; the " + percent(diff) +
                       " difference is inside the step-to-step spread (" + percent(cv) + ")";
          }
        }
        c.has_winner = outside;
        c.verdict = outside ? w.name() + " wins:" : "no winner: " + w.name();
        for (std::size_t i = 1; i < c.platforms.size(); ++i) {
          const Group& x = *c.platforms[i];
          // Loading refuses a figure that is not above 0, so a ratio is finite; should one not
          // be, the line names the platform without a ratio it cannot state.
          const double ratio = w.tokens_per_second_per_gpu / x.tokens_per_second_per_gpu;
          c.verdict += std::isfinite(ratio) ? " " + num(ratio, 2) + "x " + x.name()
                                            : " " + x.name() + " (no ratio: a figure unknown)";
        }
      }
      out.push_back(std::move(c));
    }
  return out;
}

/// Comparisons point into `groups`: a temporary would leave them dangling.
std::vector<Comparison> compare_groups(std::vector<Group>&& groups) = delete;

namespace detail {

/// "data: nvd unknown (imported nemo log), amd unknown (imported primus log); seq: ...": each of
/// `fields` with every value the platforms of `scope` hold for it, a platform named once a value.
inline std::string differences(const std::vector<const Comparison*>& scope,
                               const std::vector<std::size_t>& fields) {
  std::string out;
  for (std::size_t f : fields) {
    std::vector<std::pair<std::string, std::string>> seen;  // platform, value
    for (const auto* c : scope)
      for (const auto* g : c->platforms) {
        std::string v = bench::experiment_label(f, field_value(g->experiment, f))
                            .substr(bench::experiment_fields[f].name.size() + 1);
        if (v == "n/a" && g->first().imported) v = "not in log";
        if (std::find(seen.begin(), seen.end(), std::pair(g->platform, v)) == seen.end())
          seen.emplace_back(g->platform, v);
      }
    std::string values;
    for (const auto& [platform, v] : seen)
      values += (values.empty() ? "" : ", ") + platform + " " + v;
    out += (out.empty() ? "" : "; ") + std::string(bench::experiment_fields[f].name) + ": " +
           values;
  }
  return out;
}

/// What a user says where imported results' differing fields name one thing two ways: the
/// `import` flags that state them; "" where no result of `scope` is imported.
inline std::string sameness_hint(const std::vector<const Comparison*>& scope,
                                 const std::vector<std::size_t>& fields) {
  const bool imported = std::any_of(scope.begin(), scope.end(), [](const Comparison* c) {
    return std::any_of(c->platforms.begin(), c->platforms.end(),
                       [](const Group* g) { return g->first().imported; });
  });
  if (!imported) return "";
  std::string flags;
  for (std::size_t f : fields)
    if (!bench::experiment_fields[f].stated_by.empty())
      flags += (flags.empty() ? "" : " and ") + std::string(bench::experiment_fields[f].stated_by);
  if (flags.empty()) return "";
  return ". If they ran the same, say so: re-import each log with the same " + flags;
}

}  // namespace detail

/// One line per model x strategy x GPU count whose platforms ran unlike configurations, so no
/// verdict was drawn between them: "llama / s / 8 GPUs: amd and nvd are not compared: their
/// configurations differ in seq".
inline std::vector<std::string> uncompared_platforms(const std::vector<Comparison>& comparisons) {
  std::map<std::tuple<std::string, std::string, int>, std::vector<const Comparison*>> scopes;
  for (const auto& c : comparisons) scopes[{c.model, c.strategy, c.num_gpus}].push_back(&c);
  std::vector<std::string> out;
  for (const auto& [key, scope] : scopes) {
    std::vector<std::string> platforms;
    for (const auto* c : scope)
      for (const auto* g : c->platforms)
        if (std::find(platforms.begin(), platforms.end(), g->platform) == platforms.end())
          platforms.push_back(g->platform);
    // Every platform in one comparison: all were compared.
    if (platforms.size() < 2 || std::any_of(scope.begin(), scope.end(), [&](const auto* c) {
          return c->platforms.size() == platforms.size();
        }))
      continue;
    std::sort(platforms.begin(), platforms.end());
    std::string names;
    for (std::size_t i = 0; i < platforms.size(); ++i)
      names += (i == 0 ? "" : i + 1 == platforms.size() ? " and " : ", ") + platforms[i];
    // Every field the platforms' configurations differ in, those a table names apart (the GPU
    // count in gpu_info) included: the line must say what kept them apart.
    std::vector<const std::vector<nlohmann::json>*> configs;
    for (const auto* c : scope)
      for (const auto* g : c->platforms) configs.push_back(&g->experiment);
    std::vector<std::size_t> fields;
    for (std::size_t f = 0; f < bench::experiment_field_count; ++f) {
      if (detail::among(f, detail::hardware_fields)) continue;
      if (std::any_of(configs.begin(), configs.end(), [&](const auto* config) {
            return detail::field_value(*config, f) != detail::field_value(*configs.front(), f);
          }))
        fields.push_back(f);
    }
    const auto& c = *scope.front();
    out.push_back(c.model + " / " + c.strategy + " / " + gpus_label(c.num_gpus) + ": " + names +
                  " are not compared: not every one ran the same configuration (" +
                  detail::differences(scope, fields) + ")" + detail::sameness_hint(scope, fields));
  }
  return out;
}

/// "267.6% (!)": a figure with the marker of a flagged result (bench/sanity.hpp).
inline std::string flagged(const std::string& figure, bool flag) {
  return flag ? figure + " (!)" : figure;
}

/// "10503.0 ± 684.2": the group's tokens/s/GPU over all its steps, ± the sample std of its runs'
/// own figures (none with one run).
inline std::string tokens_cell(const Group& g) {
  return mean_std(g.tokens_per_second_per_gpu, g.per_gpu.std, 1);
}

/// The terminal table: one row per configuration x platform; a `configuration` column names
/// what tells groups of one model x strategy x GPU count apart, where anything does.
inline Table results_table(const std::vector<const Group*>& rows) {
  const bool configs = std::any_of(rows.begin(), rows.end(),
                                   [](const Group* g) { return !g->configuration().empty(); });
  std::vector<std::string> header{"model", "strategy", "platform", "run", "device", "GPUs"};
  if (configs) header.push_back("configuration");
  for (const char* h :
       {"runs", "tokens/s/GPU", "step time (s)", "TFLOP/s/GPU", "MFU PaLM (bf16 peak)",
        "MFU causal (bf16 peak)", "MFU PaLM (FP8 peak)", "MFU causal (FP8 peak)",
        "memory (GiB)"})
    header.push_back(h);
  Table t(header);
  for (const auto* row_group : rows) {
    const Group& g = *row_group;
    const Result& r = g.first();
    std::vector<std::string> row{g.model,        g.strategy,    g.platform,
                                 g.runs_label(), r.device_name, std::to_string(r.num_gpus)};
    if (configs) row.push_back(g.configuration().empty() ? "-" : g.configuration());
    for (auto cell :
         {std::to_string(g.per_gpu.count), tokens_cell(g),
          num(g.average([](const Result& x) { return x.avg_step_time; }), 4),
          num(g.average([](const Result& x) { return x.tflops_per_gpu(); }), 3),
          // Every MFU figure of a flagged result carries the marker: none is one.
          flagged(percent(g.average([](const Result& x) { return x.mfu(); })), g.flagged),
          flagged(percent(g.average([](const Result& x) { return x.mfu_causal(); })), g.flagged),
          flagged(percent(g.average([](const Result& x) { return x.mfu_fp8_peak(); })), g.flagged),
          flagged(percent(g.average([](const Result& x) { return x.mfu_fp8_peak_causal(); })),
                  g.flagged),
          num(g.average([](const Result& x) { return x.memory_gb; }), 2)})
      row.push_back(std::move(cell));
    t.add(std::move(row));
  }
  return t;
}

/// The groups a report ranks, in order.
inline std::vector<const Group*> usable_groups(const std::vector<Group>& groups) {
  std::vector<const Group*> out;
  for (const auto& g : groups)
    if (g.usable_for_ranking()) out.push_back(&g);
  return out;
}
/// The groups a report lists apart, with their flags, in order.
inline std::vector<const Group*> flagged_groups(const std::vector<Group>& groups) {
  std::vector<const Group*> out;
  for (const auto& g : groups)
    if (!g.usable_for_ranking()) out.push_back(&g);
  return out;
}
inline Table results_table(const std::vector<Group>& groups) {
  std::vector<const Group*> all;
  for (const auto& g : groups) all.push_back(&g);
  return results_table(all);
}

/// The heading above the results listed apart.
inline constexpr const char* flagged_heading =
    "FLAGGED: a figure no run can reach; never compared, ranked or projected (why below)";

/// "(!) file: warning" for every flagged result of `groups`, one line each (printable).
inline std::vector<std::string> warning_lines(const std::vector<Group>& groups) {
  std::vector<std::string> out;
  for (const auto& g : groups)
    for (const auto& w : g.warnings()) out.push_back("(!) " + printable(w));
  return out;
}

/// What `tprimat compare` prints: inputs, problems, table, verdicts, warnings, conventions.
inline std::string compare_text(const LoadOutcome& in, const std::vector<Group>& groups,
                                const std::vector<Comparison>& comparisons) {
  std::string out = "tprimat compare: " + std::to_string(in.results.size()) + " of " +
                    std::to_string(in.inputs.size()) + " inputs loaded\n";
  if (groups.empty()) return out;
  if (const auto usable = usable_groups(groups); !usable.empty())
    out += "\n" + results_table(usable).text();
  if (const auto apart = flagged_groups(groups); !apart.empty())
    out += "\n" + std::string(flagged_heading) + "\n" + results_table(apart).text();
  out += "\n";
  for (const auto& c : comparisons) {
    if (c.verdict.empty()) continue;
    out += printable(c.title()) + ": " + printable(c.verdict) + " (tokens/s/GPU)";
    out += c.noise.empty() ? "\n" : "; " + printable(c.noise) + "\n";
  }
  for (const auto& line : uncompared_platforms(comparisons)) out += printable(line) + "\n";
  const auto warnings = warning_lines(groups);
  for (const auto& line : warnings) out += line + "\n";
  out +=
      "tokens/s/GPU: every measured step of a configuration's runs (total tokens over total "
      "time, the figure its result file states) ± the sample std of its runs' own figures "
      "(results differing in any field that defines an experiment are never pooled). "
      "TFLOP/s/GPU: model FLOPs, PaLM convention (6 P_matmul + 12 L H Dh S per token), the same "
      "for every precision. "
      "MFU PaLM (bf16 peak): against the dense bf16 peak (H100/H200 989.4, MI300X 1307.4 "
      "TFLOP/s); MFU PaLM (FP8 peak): the same FLOPs against the dense FP8 peak (H100/H200 "
      "1978.9, MI300X 2614.9), the bound of an FP8 run; MFU causal: the attention term halved "
      "(6 P_matmul + 6 L H Dh S), the work a causal mask leaves, which the flags judge; n/a where "
      "the device's peak is unknown.";
  out += warnings.empty() ? "\n" : " (!): a figure no run can reach, named above.\n";
  return out;
}

}  // namespace tprimat::report
