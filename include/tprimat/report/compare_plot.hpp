// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// compare.png/.svg: the seeds' six panels, as a gnuplot script plus plain data files.
#pragma once

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "tprimat/report/compare.hpp"
#include "tprimat/report/gnuplot.hpp"
#include "tprimat/report/output.hpp"
#include "tprimat/report/plot_labels.hpp"

namespace tprimat::report {

/// Bar colour per platform, the vendors' own.
inline std::string platform_colour(const std::string& platform) {
  if (platform == "nvd") return "0x76B900";
  if (platform == "amd") return "0xED1C24";
  return "0x4C72B0";
}

/// The fields naming a group in the plots: platform, model, strategy, GPUs.
inline std::vector<std::string> group_fields(const Group& g) {
  return {g.platform, g.model, g.strategy, gpus_label(g.num_gpus)};
}

/// "proxies: llama 13 of 32 layers, qwen 12 of 28 layers" where results ran fewer layers than
/// their model has, so a reader of the figure alone does not take them for full models; else "".
inline std::string proxy_line(const std::vector<const Result*>& results) {
  std::vector<std::string> seen;
  for (const auto* r : results) {
    if (!r->layers_are_proxy) continue;
    const std::string s = r->model + (r->layers > 0 && r->layers_full > 0
                                          ? " " + std::to_string(r->layers) + " of " +
                                                std::to_string(r->layers_full) + " layers"
                                          : " (fewer layers than the full model)");
    if (std::find(seen.begin(), seen.end(), s) == seen.end()) seen.push_back(s);
  }
  std::string line;
  for (const auto& s : seen) line += (line.empty() ? "proxies: " : ", ") + s;
  return line;
}

/// The multiplot title: `headline`, then what every row shares, then any numbered keys.
inline std::string figure_title(const std::string& headline,
                                const std::vector<std::string>& lines) {
  std::string t = headline;
  for (const auto& l : lines)
    if (!l.empty()) t += "\n" + l;
  return "set multiplot layout 2,3 title " + gp_quote(t) + " font \",11\"\n";
}

/// One bar per row at x = 0, 1, ... from `column` of `data`, its value written above it (a bar
/// a thousandth of the tallest is still read); "n/a" where a row's value is unknown, and a notice
/// instead of the plot when no row has one (gnuplot would fail on it).
inline std::string bar_panel(const std::string& title, const std::string& data, int column,
                             int colour_column, const std::vector<double>& values) {
  std::string gp = "set title " + gp_quote(title) + "\n";
  if (std::none_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); }))
    return gp +
           "set label 99 \"no data in the inputs\" at graph 0.5,0.5 center\n"
           "plot [][0:1] NaN notitle\n"
           "unset label\n";
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      gp += "set label " + std::to_string(i + 1) + " \"n/a\" at " + std::to_string(i) +
            ", graph 0.04 center\n";
  const std::string c = std::to_string(column);
  gp += "plot " + gp_quote(data) + " using 1:" + c + ":(0.6):" + std::to_string(colour_column) +
        " with boxes lc rgb variable notitle, \\\n     \"\" using 1:" + c + ":(bar_value($" + c +
        ")) with labels offset 0,0.7 font \",9\" notitle\n";
  return gp + "unset label\n";
}

/// The gnuplot function bar_panel's value labels call: whole numbers from 1000 on, else three
/// significant digits.
inline constexpr const char* bar_value_function =
    "bar_value(v) = abs(v) >= 1000 ? sprintf(\"%.0f\", v) : sprintf(\"%.3g\", v)\n";

/// Writes compare_bars.dat, compare_series_N.dat and compare.gp into `dir`; returns the script.
inline std::string write_compare_plot(const std::filesystem::path& dir,
                                      const std::vector<Group>& groups) {
  std::vector<std::vector<std::string>> bar_rows;
  for (const auto& g : groups) bar_rows.push_back(group_fields(g));
  const TickLabels bars = tick_labels(bar_rows);
  std::vector<double> tflops, memory;
  std::string bar_data =
      "# x label tflops_per_gpu_palm memory_gib colour (one row per group, x its bar's place)\n";
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const Group& g = groups[i];
    tflops.push_back(g.average([](const Result& x) { return x.tflops_per_gpu(); }));
    memory.push_back(g.average([](const Result& x) { return x.memory_gb; }));
    bar_data += std::to_string(i) + " " + gp_quote(bars.full[i]) + " " +
                data_number(tflops.back()) + " " + data_number(memory.back()) + " " +
                platform_colour(g.platform) + "\n";
  }
  write_report_file(dir, "compare_bars.dat", bar_data);

  struct Series {
    std::string file, label;
    bool loss = false, lr = false, memory = false, time = false;
  };
  std::vector<const Result*> results;
  std::vector<std::vector<std::string>> series_rows;
  for (const auto& g : groups)
    for (const auto* r : g.results) {
      results.push_back(r);
      series_rows.push_back(
          {r->platform, r->model, r->strategy, gpus_label(r->num_gpus), "(" + r->run + ")"});
    }
  const auto labels = series_labels(series_rows);
  std::vector<Series> series;
  for (std::size_t k = 0; k < results.size(); ++k) {
    const Result& r = *results[k];
    Series s{"compare_series_" + std::to_string(k + 1) + ".dat", labels[k]};
    s.loss = !r.losses.empty();
    s.lr = !r.learning_rates.empty();
    s.memory = !r.memory.empty();
    s.time = !r.step_times.empty();
    const std::size_t n =
        std::max({r.losses.size(), r.learning_rates.size(), r.memory.size(), r.step_times.size()});
    const auto at = [](const std::vector<double>& v, std::size_t i) {
      return i < v.size() ? v[i] : unknown;
    };
    std::string text = "# " + r.file + "\n# step loss learning_rate memory_gib step_time_s\n";
    for (std::size_t i = 0; i < n; ++i)
      text += std::to_string(i + 1) + " " + data_number(at(r.losses, i)) + " " +
              data_number(at(r.learning_rates, i)) + " " + data_number(at(r.memory, i)) + " " +
              data_number(at(r.step_times, i)) + "\n";
    write_report_file(dir, s.file, text);
    series.push_back(std::move(s));
  }

  // The top row's bottom margin fits the tallest tick label (one field per line), and is the
  // same for the loss panel beside the bars, so the row's plots line up.
  const int top_margin = std::max(3, bars.lines + 2);
  std::string gp =
      "# tprimat compare: six panels from compare_bars.dat and compare_series_*.dat.\n"
      "# Restyle freely, then: gnuplot -e 'fmt=\"png\"' compare.gp (or fmt=\"svg\").\n"
      "if (!exists(\"fmt\")) fmt = \"png\"\n"
      "if (fmt eq \"svg\") {\n"
      "  set terminal svg size 1800,1000 dynamic font \"sans,10\"\n"
      "  set output \"compare.svg\"\n"
      "} else {\n"
      "  set terminal pngcairo size 1800,1000 font \"sans,10\"\n"
      "  set output \"compare.png\"\n"
      "}\n"
      "set termoption noenhanced  # names hold underscores, not subscripts\n"
      "set datafile missing \"NaN\"\n"
      "set grid ytics\n";
  gp += bar_value_function;
  gp += figure_title("tprimat compare (TFLOP/s: PaLM model FLOPs)",
                     {bars.common_line("every result"), proxy_line(results), bars.key("bars")});
  gp +=
      "set style fill solid 0.8 border -1\n"
      "set bmargin " +
      std::to_string(top_margin) +
      "\n"
      "set xrange [-0.5:" +
      data_number(groups.size() - 0.5) + "]\n" + bars.xtics_command() +
      "set yrange [0:*]\n"
      "set offsets 0, 0, graph 0.12, 0  # room for the tallest bar's value\n";
  gp += bar_panel("Per-GPU throughput (TFLOP/s/GPU)", "compare_bars.dat", 3, 5, tflops);
  gp += bar_panel("Peak memory per GPU (GiB)", "compare_bars.dat", 4, 5, memory);
  gp +=
      "set autoscale x\n"
      "set xtics autofreq font \",10\"\n"
      "set autoscale y\n"
      "set key top right opaque font \",8\"\n"
      "set xlabel \"measured step\"\n";
  int panels = 2;
  // Headroom above the lines for the key; below them too, except for the learning rate, whose
  // warm-up starts near 0 and would get a negative axis.
  const auto panel = [&](const std::string& title, int column, bool Series::*has,
                         bool pad_below = true) {
    if (++panels == 4) gp += "set bmargin  # the second row: automatic again\n";
    gp += std::string("set offsets 0, 0, graph 0.45, ") + (pad_below ? "graph 0.05" : "0") + "\n";
    gp += "set title " + gp_quote(title) + "\n";
    std::string cmd;
    for (const auto& s : series)
      if (s.*has)
        cmd += (cmd.empty() ? "plot " : ", \\\n     ") + gp_quote(s.file) +
               " using 1:" + std::to_string(column) + " with linespoints pt 7 ps 0.5 title " +
               gp_quote(s.label);
    if (cmd.empty())  // every input lacks this series: say so rather than fail the whole plot
      cmd =
          "set label 1 \"no data in the inputs\" at graph 0.5,0.5 center\n"
          "plot [0:1][0:1] NaN notitle\nunset label 1";
    gp += cmd + "\n";
  };
  panel("Training loss", 2, &Series::loss);
  panel("Learning rate", 3, &Series::lr, false);
  panel("Memory per GPU (GiB)", 4, &Series::memory);
  panel("Step time (s)", 5, &Series::time);
  gp += "unset multiplot\n";
  write_report_file(dir, "compare.gp", gp);
  return "compare.gp";
}

}  // namespace tprimat::report
