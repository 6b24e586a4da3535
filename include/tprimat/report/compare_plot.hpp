// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// compare.png/.svg: the seeds' six panels, as a gnuplot script plus plain data files.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tprimat/bench/experiment.hpp"
#include "tprimat/report/compare.hpp"
#include "tprimat/report/gnuplot_text.hpp"
#include "tprimat/report/output.hpp"
#include "tprimat/report/plot_labels.hpp"

namespace tprimat::report {

/// Bar colour per platform, the vendors' own.
inline std::uint32_t platform_colour(const std::string& platform) {
  if (platform == "nvd") return 0x76B900;
  if (platform == "amd") return 0xED1C24;
  return 0x4C72B0;
}

/// A flagged result's bar: a grey no platform has, so it never reads as one platform's bar.
inline constexpr std::uint32_t flagged_colour = 0x8C8C8C;

/// The colour of a result's bar, or a group's: its platform's, or the flag's where it is flagged.
inline std::uint32_t bar_colour(const Result& r) {
  return r.usable_for_ranking() ? platform_colour(r.platform) : flagged_colour;
}
inline std::uint32_t bar_colour(const Group& g) {
  return g.usable_for_ranking() ? platform_colour(g.platform) : flagged_colour;
}

/// The x tick step of a step axis of `steps` steps: a whole number (1, 2, 5, 10, 20, ...)
/// giving at most ten ticks, so a short run never reads "step 1.5".
inline long long step_tick_interval(std::size_t steps) {
  for (long long decade = 1;; decade *= 10)
    for (long long m : {1, 2, 5})
      if (static_cast<double>(steps) <= 10.0 * double(m * decade)) return m * decade;
}

/// The fields naming each group in the plots: platform, device, model, strategy, GPUs, then one
/// field per experiment field that tells some groups apart ("seq 256") and the framework where
/// frameworks differ, "" for a group where it does not (ticks leave empty fields out); a flagged
/// group's bar says so by its colour and value label. printable(): a line break in a label is
/// ours, never one that a name brought.
inline std::vector<std::vector<std::string>> group_label_rows(const std::vector<Group>& groups) {
  std::vector<std::size_t> named;
  for (const auto& g : groups) named.insert(named.end(), g.differing.begin(), g.differing.end());
  std::sort(named.begin(), named.end());
  named.erase(std::unique(named.begin(), named.end()), named.end());
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : groups) {
    std::vector<std::string> row{printable(g.platform), printable(g.first().device_name),
                                 printable(g.model), printable(g.strategy), gpus_label(g.num_gpus)};
    for (std::size_t f : named)
      row.push_back(
          std::find(g.differing.begin(), g.differing.end(), f) == g.differing.end()
              ? ""
              : printable(bench::experiment_label(f, detail::field_value(g.experiment, f))));
    row.push_back(g.name_framework ? printable(g.framework_label()) : "");
    rows.push_back(std::move(row));
  }
  return rows;
}

/// "proxies: llama 13 of 32 layers, qwen 12 of 28 layers" where results ran fewer layers than
/// their model has, so a reader of the figure alone does not take them for full models; else "".
inline std::string proxy_line(const std::vector<const Result*>& results) {
  std::vector<std::string> seen;
  for (const auto* r : results) {
    if (!r->layers_are_proxy) continue;
    const std::string s =
        printable(r->model) +
        (r->layers > 0 && r->layers_full > 0
             ? " " + std::to_string(r->layers) + " of " + std::to_string(r->layers_full) + " layers"
             : " (fewer layers than the full model)");
    if (std::find(seen.begin(), seen.end(), s) == seen.end()) seen.push_back(s);
  }
  std::string line;
  for (const auto& s : seen) line += (line.empty() ? "proxies: " : ", ") + s;
  return line;
}

/// "(!) nvd llama 8 GPUs: MFU 267.6% exceeds 100% (...)": a title line per flagged result of
/// each row (`names[i]` naming row i), so the figure alone says which bar is impossible.
inline std::vector<std::string> flag_lines(const std::vector<std::vector<const Result*>>& rows,
                                           const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (const auto* r : rows[i])
      for (const auto& w : r->warnings()) out.push_back("(!) " + names[i] + ": " + printable(w));
  return out;
}

/// One bar per row at x = 0, 1, ... from `column` of `data`, its value written above it (a bar
/// a thousandth of the tallest is still read) and "(!)" where the row's `flag_column` is 1; "n/a"
/// where a row's value is unknown, and a notice instead of the plot when no row has one (gnuplot
/// would fail on it).
inline void bar_panel(Script& gp, ScriptLiteral title, ScriptLiteral data, int column,
                      int colour_column, int flag_column, const std::vector<double>& values) {
  gp << "set title \"" << title << "\"\n";
  if (std::none_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); })) {
    gp << "set label 99 \"no data in the inputs\" at graph 0.5,0.5 center\n"
          "plot [][0:1] NaN notitle\n"
          "unset label\n";
    return;
  }
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      gp << "set label " << i + 1 << " \"n/a\" at " << i << ", graph 0.04 center\n";
  gp << "plot \"" << data << "\" using 1:" << column << ":(0.6):" << colour_column
     << " with boxes lc rgb variable notitle, \\\n     \"\" using 1:" << column << ":(bar_value($"
     << column << ") . ($" << flag_column
     << " > 0 ? \" (!)\" : \"\")) with labels offset 0,0.7 font \",9\" notitle\n";
  gp << "unset label\n";
}

/// The gnuplot function bar_panel's value labels call: whole numbers from 1000 on, else three
/// significant digits.
inline constexpr ScriptLiteral bar_value_function =
    "bar_value(v) = abs(v) >= 1000 ? sprintf(\"%.0f\", v) : sprintf(\"%.3g\", v)\n";

/// The lines that start each figure's script: its terminal and file names (`stem`.png/.svg),
/// and its words read from `words_file` before anything else.
inline void figure_preamble(Script& gp, ScriptLiteral comment, ScriptLiteral png, ScriptLiteral svg,
                            const FigureText& words, ScriptLiteral words_file) {
  gp << comment
     << "if (!exists(\"fmt\")) fmt = \"png\"\n"
        "if (fmt eq \"svg\") {\n"
        "  set terminal svg size 1800,1000 dynamic font \"sans,10\"\n"
        "  set output \""
     << svg
     << "\"\n"
        "} else {\n"
        "  set terminal pngcairo size 1800,1000 font \"sans,10\"\n"
        "  set output \""
     << png
     << "\"\n"
        "}\n"
        "set termoption noenhanced  # names hold underscores, not subscripts\n"
        "# Every name, title and key comes from the data: read, never parsed as script.\n";
  words.read_into(gp, words_file);
  gp << "set datafile missing \"NaN\"\n"
        "set grid ytics\n"
     << bar_value_function;
}

/// The most points a curve of the compare figure draws: a result of millions of steps plots as
/// a few thousand (a figure of every step would be hundreds of MB and no more readable).
inline constexpr std::size_t max_plotted_steps = 2000;

/// The 0-based steps of an n-step series the figure draws: every one up to `most`, else every
/// k-th from the first (k the smallest stride that keeps it within `most`) and the last.
inline std::vector<std::size_t> plotted_steps(std::size_t n, std::size_t most = max_plotted_steps) {
  std::vector<std::size_t> out;
  if (n == 0) return out;
  const std::size_t stride = n <= most ? 1 : (n - 1 + most - 2) / (most - 1);
  for (std::size_t k = 0; k < n; k += stride) out.push_back(k);
  if (out.back() != n - 1) out.push_back(n - 1);
  return out;
}

/// Writes compare_bars.dat, compare_series_N.dat, compare_labels.dat and compare.gp into `dir`;
/// returns the script's name.
inline std::string write_compare_plot(const std::filesystem::path& dir,
                                      const std::vector<Group>& groups) {
  const auto bar_rows = group_label_rows(groups);
  std::vector<std::vector<const Result*>> bar_results;
  for (const auto& g : groups) bar_results.push_back(g.results);
  const TickLabels bars = tick_labels(bar_rows);
  std::vector<double> tflops, memory;
  DataFile bar_data;
  bar_data.comment(
      "x label tflops_per_gpu_palm memory_gib colour flagged (one row per group, x its bar's "
      "place; flagged 1: a figure no run can reach)");
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const Group& g = groups[i];
    tflops.push_back(g.average([](const Result& x) { return x.tflops_per_gpu(); }));
    memory.push_back(g.average([](const Result& x) { return x.memory_gb; }));
    bar_data.row({i, bars.full[i], tflops.back(), memory.back(), DataField::colour(bar_colour(g)),
                  g.usable_for_ranking() ? 0 : 1});
  }
  write_report_file(dir, "compare_bars.dat", bar_data.text());

  struct Series {
    bool loss = false, lr = false, memory = false, time = false;
  };
  // One series per run, each from its step 1: --runs N overlays N lines (one chain would saw
  // back at each run's start).
  std::vector<const Result*> results;
  std::vector<std::vector<std::string>> series_rows;
  std::vector<Series> series;
  std::size_t most_steps = 1;
  for (std::size_t i = 0; i < groups.size(); ++i)
    for (const auto* r : groups[i].results) {
      results.push_back(r);
      for (std::size_t run = 0; run < r->run_series.size(); ++run) {
        const auto& rs = r->run_series[run];
        auto fields = bar_rows[i];
        fields.push_back("(" + printable(r->run) + ")");
        fields.push_back(r->run_series.size() > 1 ? "run " + std::to_string(run + 1) + "/" +
                                                        std::to_string(r->run_series.size())
                                                  : "");
        series_rows.push_back(std::move(fields));
        Series s;
        s.loss = !rs.losses.empty();
        s.lr = !rs.learning_rates.empty();
        s.memory = !rs.memory.empty();
        s.time = !rs.step_times.empty();
        const std::size_t n = std::max(
            {rs.losses.size(), rs.learning_rates.size(), rs.memory.size(), rs.step_times.size()});
        most_steps = std::max(most_steps, n);
        const auto at = [](const std::vector<double>& v, std::size_t k) {
          return k < v.size() ? v[k] : unknown;
        };
        DataFile text;
        text.comment(r->file + (r->run_series.size() > 1 ? " run " + std::to_string(run + 1) : ""))
            .comment("step loss learning_rate memory_gib step_time_s");
        const std::vector<std::size_t> steps = plotted_steps(n);
        if (steps.size() < n)
          text.comment(std::to_string(steps.size()) + " of " + std::to_string(n) +
                       " steps drawn: one in " + std::to_string(steps[1]) +
                       " from the first, and the last");
        for (const std::size_t k : steps)
          text.row({k + 1, at(rs.losses, k), at(rs.learning_rates, k), at(rs.memory, k),
                    at(rs.step_times, k)});
        write_report_file(dir, "compare_series_" + std::to_string(series.size() + 1) + ".dat",
                          text.text());
        series.push_back(s);
      }
    }

  FigureText words;
  words.title_lines("tprimat compare (TFLOP/s: PaLM model FLOPs)");
  words.title_lines(bars.common_line("every result"));
  words.title_lines(proxy_line(results));
  words.title_lines(bars.key("bars"));
  for (const auto& line : flag_lines(bar_results, bars.full)) words.title_lines(line);
  words.list("bar_tick", bars.ticks);
  words.list("series_title", series_labels(series_rows));
  write_report_file(dir, "compare_labels.dat", words.data("compare.gp's figure"));

  // The top row's bottom margin fits the tallest tick label (one field per line), and is the
  // same for the loss panel beside the bars, so the row's plots line up.
  const int top_margin = std::max(3, bars.lines + 2);
  Script gp;
  figure_preamble(gp,
                  "# tprimat compare: six panels from compare_bars.dat and compare_series_*.dat,\n"
                  "# their names and titles from compare_labels.dat.\n"
                  "# Restyle freely, then: gnuplot -e 'fmt=\"png\"' compare.gp (or fmt=\"svg\").\n",
                  "compare.png", "compare.svg", words, "compare_labels.dat");
  gp << "set multiplot layout 2,3 title title_text font \",11\"\n"
        "set style fill solid 0.8 border -1\n"
        "set bmargin "
     << top_margin << "\nset xrange [-0.5:" << groups.size() - 0.5 << "]\n";
  xtics_from(gp, "bar_tick", groups.size());
  gp << "set yrange [0:*]\n"
        "set offsets 0, 0, graph 0.12, 0  # room for the tallest bar's value\n";
  bar_panel(gp, "Per-GPU throughput (TFLOP/s/GPU)", "compare_bars.dat", 3, 5, 6, tflops);
  bar_panel(gp, "Peak memory per GPU (GiB)", "compare_bars.dat", 4, 5, 6, memory);
  gp << "set autoscale x\n"
        "set xtics "
     << step_tick_interval(most_steps)
     << " font \",10\"  # whole steps\n"
        "set autoscale y\n"
        "set key top right opaque font \",8\"\n"
        "set xlabel \"measured step\"\n";
  int panels = 2;
  // Headroom above the lines for the key, and a little below, but never an axis below zero:
  // every series is 0 or more (a loss, a learning rate, memory, a time).
  const auto panel = [&](ScriptLiteral title, int column, bool Series::*has) {
    if (++panels == 4) gp << "set bmargin  # the second row: automatic again\n";
    gp << "set offsets 0, 0, graph 0.45, graph 0.05\nset yrange [0<*:*]\nset title \"" << title
       << "\"\n";
    bool any = false;
    for (std::size_t k = 0; k < series.size(); ++k) {
      if (!(series[k].*has)) continue;
      gp << (any ? ScriptLiteral(", \\\n     ") : "plot ") << "\"compare_series_" << k + 1
         << ".dat\" using 1:" << column << " with linespoints pt 7 ps 0.5 title series_title["
         << k + 1 << "]";
      any = true;
    }
    if (!any)  // every input lacks this series: say so rather than fail the whole plot
      gp << "set label 1 \"no data in the inputs\" at graph 0.5,0.5 center\n"
            "plot [0:1][0:1] NaN notitle\nunset label 1";
    gp << "\n";
  };
  panel("Training loss", 2, &Series::loss);
  panel("Learning rate", 3, &Series::lr);
  panel("Memory per GPU (GiB)", 4, &Series::memory);
  panel("Step time (s)", 5, &Series::time);
  gp << "unset multiplot\n";
  write_report_file(dir, "compare.gp", gp.text());
  return "compare.gp";
}

}  // namespace tprimat::report
