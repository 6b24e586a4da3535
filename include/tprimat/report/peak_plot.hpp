// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// peak_throughput_analysis.png/.svg: the seeds' peak panels, as a gnuplot script plus data files.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "tprimat/core/stats.hpp"
#include "tprimat/report/compare.hpp"
#include "tprimat/report/compare_plot.hpp"
#include "tprimat/report/gnuplot_text.hpp"
#include "tprimat/report/output.hpp"
#include "tprimat/report/peak.hpp"
#include "tprimat/report/plot_labels.hpp"

namespace tprimat::report {

/// A fixed jitter in [-0.25, 0.25] for the k-th point of a strip: golden-ratio steps spread any
/// number of points evenly and the data file is the same on every run (no random numbers).
inline double strip_jitter(std::size_t k) {
  const double golden = 0.6180339887498949;
  const double frac = (k + 1) * golden - std::floor((k + 1) * golden);
  return 0.5 * frac - 0.25;
}

/// Writes peak_bars.dat, peak_steps.dat, peak_labels.dat and peak.gp into `dir`; returns the
/// script's name.
inline std::string write_peak_plot(const std::filesystem::path& dir,
                                   const std::vector<Result>& rs) {
  // The peaks, then each flagged result apart, in the flag's colour and marked: never a peak.
  auto peaks = peaks_per_platform_model(rs);
  for (const auto* r : flagged_results(rs)) peaks.push_back(r);
  std::vector<std::vector<std::string>> bar_rows;
  std::vector<std::vector<const Result*>> bar_results;
  const auto configs = row_configurations(peaks);  // what differs beyond these fields
  for (std::size_t i = 0; i < peaks.size(); ++i) {
    const Result* r = peaks[i];
    bar_rows.push_back({printable(r->platform), printable(r->device_name), printable(r->model),
                        gpus_label(r->num_gpus), printable(configs[i])});
    bar_results.push_back({r});
  }
  const TickLabels bars = tick_labels(bar_rows);
  std::vector<std::vector<double>> columns(6);  // the bar panels' values, for their "n/a"s
  DataFile bar_data;
  bar_data.comment(
      "x label tokens_per_s tflops_total_palm mfu_percent tokens_per_s_per_gpu "
      "tflops_per_gpu_palm step_time_s colour flagged (the peak of each platform x model, "
      "then each flagged result, flagged 1: a figure no run can reach, never a peak)");
  for (std::size_t i = 0; i < peaks.size(); ++i) {
    const Result& r = *peaks[i];
    const double v[6] = {r.tokens_per_second, r.tflops_per_gpu() * r.num_gpus,
                         100 * r.mfu(),       r.tokens_per_second_per_gpu,
                         r.tflops_per_gpu(),  r.avg_step_time};
    for (int c = 0; c < 6; ++c) columns[c].push_back(v[c]);
    bar_data.row({i, bars.full[i], v[0], v[1], v[2], v[3], v[4], v[5],
                  DataField::colour(bar_colour(r)), r.usable_for_ranking() ? 0 : 1});
  }
  write_report_file(dir, "peak_bars.dat", bar_data.text());

  // The strip: every measured step of every configuration (runs pooled), one column each, and
  // the configuration's mean as a bar across it. A box plot of ten steps would draw quartiles
  // the data cannot support; the dots show all there is.
  const auto groups = group_results(rs);
  std::vector<const Result*> all_results;
  for (const auto& r : rs) all_results.push_back(&r);
  const TickLabels strips = tick_labels(group_label_rows(groups));
  DataFile steps;
  steps.comment(
      "x step_time_s colour (every measured step; x = the configuration's place plus a fixed "
      "jitter)");
  DataFile means;
  means.comment("x_from mean_step_time_s width (the mean of each configuration's steps)");
  std::vector<double> all_means;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const Group& g = groups[i];
    steps.comment(std::to_string(i) + ": " + strips.full[i]);
    std::vector<double> times;
    for (const auto* r : g.results)
      times.insert(times.end(), r->step_times.begin(), r->step_times.end());
    for (std::size_t k = 0; k < times.size(); ++k)
      steps.row({i + strip_jitter(k), times[k], DataField::colour(bar_colour(g))});
    if (times.empty()) continue;
    all_means.push_back(core::mean(times));
    means.row({i - 0.35, all_means.back(), 0.7});
  }
  write_report_file(dir, "peak_steps.dat", steps.next_block().text() + means.text());

  FigureText words;
  words.title_lines(
      "tprimat peak throughput (TFLOP/s: PaLM model FLOPs; MFU against dense bf16 peaks)");
  words.title_lines(strips.common_line("every result"));
  words.title_lines(bars.common_line("every peak", strips.common));
  words.title_lines(proxy_line(all_results));
  words.title_lines(bars.key("peaks"));
  words.title_lines(strips.key("step times"));
  for (const auto& line : flag_lines(bar_results, bars.full)) words.title_lines(line);
  words.list("bar_tick", bars.ticks);
  words.list("strip_tick", strips.ticks);
  write_report_file(dir, "peak_labels.dat", words.data("peak.gp's figure"));

  Script gp;
  figure_preamble(
      gp,
      "# tprimat peak: panels from peak_bars.dat (peaks) and peak_steps.dat (every step),\n"
      "# their names and titles from peak_labels.dat.\n"
      "# Restyle freely, then: gnuplot -e 'fmt=\"png\"' peak.gp (or fmt=\"svg\").\n",
      "peak_throughput_analysis.png", "peak_throughput_analysis.svg", words, "peak_labels.dat");
  gp << "set style fill solid 0.8 border -1\n"
        "set multiplot layout 2,3 title title_text font \",11\"\n";
  const auto bar_axes = [&] {
    gp << "set xrange [-0.5:" << peaks.size() - 0.5 << "]\n";
    xtics_from(gp, "bar_tick", peaks.size());
    gp << "set yrange [0:*]\nset offsets 0, 0, graph 0.12, 0\n";
  };
  gp << "set bmargin " << bars.lines + 2 << "\n";
  bar_axes();
  bar_panel(gp, "Peak throughput (tokens/s)", "peak_bars.dat", 3, 9, 10, columns[0]);
  bar_panel(gp, "Peak compute (TFLOP/s, all GPUs)", "peak_bars.dat", 4, 9, 10, columns[1]);
  bar_panel(gp, "MFU (% of the dense peak)", "peak_bars.dat", 5, 9, 10, columns[2]);
  gp << "set bmargin " << std::max(bars.lines, strips.lines) + 2 << "\n";
  bar_panel(gp, "Per-GPU throughput (tokens/s/GPU)", "peak_bars.dat", 6, 9, 10, columns[3]);
  bar_panel(gp, "Step time at peak (s)", "peak_bars.dat", 8, 9, 10, columns[5]);

  gp << "set title \"Step time of every measured step (s), per configuration; bar: mean\"\n"
        "set xrange [-0.5:"
     << groups.size() - 0.5 << "]\n";
  xtics_from(gp, "strip_tick", groups.size());
  gp << "set autoscale y\n"
        "set offsets 0, 0, graph 0.08, graph 0.08\n";
  if (all_means.empty()) {
    gp << "set label 99 \"no step times in the inputs\" at graph 0.5,0.5 center\n"
          "plot [][0:1] NaN notitle\n";
  } else {
    // Configurations an order of magnitude apart would flatten the fast ones' spread to a line.
    const auto [lo, hi] = std::minmax_element(all_means.begin(), all_means.end());
    // Never an axis below zero for times (a log axis has none).
    gp << (*lo > 0 && *hi / *lo >= 10 ? ScriptLiteral("set logscale y\n")
                                      : ScriptLiteral("set yrange [0<*:*]\n"));
    gp << "plot \"peak_steps.dat\" index 0 using 1:2:3 with points pt 7 ps 1.2 lc rgb variable "
          "notitle, \\\n     \"\" index 1 using 1:2:3:(0) with vectors nohead lw 2 lc rgb "
          "\"black\" notitle\n";
  }
  gp << "unset multiplot\n";
  write_report_file(dir, "peak.gp", gp.text());
  return "peak.gp";
}

}  // namespace tprimat::report
