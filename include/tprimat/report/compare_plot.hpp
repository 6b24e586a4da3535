// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// compare.png/.svg: the seeds' six panels, as a gnuplot script plus plain data files.
#pragma once

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tprimat/report/compare.hpp"
#include "tprimat/report/gnuplot.hpp"
#include "tprimat/report/output.hpp"

namespace tprimat::report {

/// Bar colour per platform, the vendors' own.
inline std::string platform_colour(const std::string& platform) {
  if (platform == "nvd") return "0x76B900";
  if (platform == "amd") return "0xED1C24";
  return "0x4C72B0";
}

inline std::string series_label(const Result& r) {
  return r.platform + " " + r.model + " " + r.strategy + " " + std::to_string(r.num_gpus) +
         " GPUs (" + r.run + ")";
}

/// Writes compare_bars.dat, compare_series_N.dat and compare.gp into `dir`; returns the script.
inline std::string write_compare_plot(const std::filesystem::path& dir,
                                      const std::vector<Group>& groups) {
  std::string bars = "# label tflops_per_gpu_palm memory_gib colour (one row per group)\n";
  for (const auto& g : groups)
    bars += gp_quote(g.platform + " " + g.model + " " + g.strategy + " " +
                     std::to_string(g.num_gpus)) +
            " " + data_number(g.average([](const Result& x) { return x.tflops_per_gpu(); })) +
            " " + data_number(g.average([](const Result& x) { return x.memory_gb; })) + " " +
            platform_colour(g.platform) + "\n";
  write_report_file(dir, "compare_bars.dat", bars);

  struct Series {
    std::string file, label;
    bool loss = false, lr = false, memory = false, time = false;
  };
  std::vector<Series> series;
  for (const auto& g : groups)
    for (const auto* r : g.results) {
      Series s{"compare_series_" + std::to_string(series.size() + 1) + ".dat", series_label(*r)};
      s.loss = !r->losses.empty();
      s.lr = !r->learning_rates.empty();
      s.memory = !r->memory.empty();
      s.time = !r->step_times.empty();
      const std::size_t n = std::max({r->losses.size(), r->learning_rates.size(),
                                      r->memory.size(), r->step_times.size()});
      const auto at = [](const std::vector<double>& v, std::size_t i) {
        return i < v.size() ? v[i] : unknown;
      };
      std::string text = "# " + r->file + "\n# step loss learning_rate memory_gib step_time_s\n";
      for (std::size_t i = 0; i < n; ++i)
        text += std::to_string(i + 1) + " " + data_number(at(r->losses, i)) + " " +
                data_number(at(r->learning_rates, i)) + " " + data_number(at(r->memory, i)) +
                " " + data_number(at(r->step_times, i)) + "\n";
      write_report_file(dir, s.file, text);
      series.push_back(std::move(s));
    }

  std::string gp =
      "# tprimat compare: six panels from compare_bars.dat and compare_series_*.dat.\n"
      "# Restyle freely, then: gnuplot -e 'fmt=\"png\"' compare.gp (or fmt=\"svg\").\n"
      "if (!exists(\"fmt\")) fmt = \"png\"\n"
      "if (fmt eq \"svg\") {\n"
      "  set terminal svg size 1800,1000 dynamic font \"sans,11\"\n"
      "  set output \"compare.svg\"\n"
      "} else {\n"
      "  set terminal pngcairo size 1800,1000 font \"sans,10\"\n"
      "  set output \"compare.png\"\n"
      "}\n"
      "set termoption noenhanced  # names hold underscores, not subscripts\n"
      "set datafile missing \"NaN\"\n"
      "set grid ytics\n"
      "set key top right opaque font \",8\"\n"
      "set multiplot layout 2,3 title \"tprimat compare (TFLOP/s: PaLM model FLOPs)\"\n"
      "set style fill solid 0.8 border -1\n"
      "set xtics rotate by -25 font \",8\"\n"
      "set yrange [0:*]\n"
      "set offsets 0.5, 0.5, 0, 0\n"
      "set title \"Per-GPU throughput (TFLOP/s/GPU)\"\n"
      "plot \"compare_bars.dat\" using 0:2:(0.6):4:xtic(1) with boxes lc rgb variable notitle\n"
      "set title \"Peak memory per GPU (GiB)\"\n"
      "plot \"compare_bars.dat\" using 0:3:(0.6):4:xtic(1) with boxes lc rgb variable notitle\n"
      "set xtics norotate font \",10\"\n"
      "set offsets 0, 0, graph 0.45, 0  # headroom for the key above the lines\n"
      "set autoscale y\n"
      "set xlabel \"measured step\"\n";
  const auto panel = [&](const std::string& title, int column, bool Series::*has) {
    gp += "set title " + gp_quote(title) + "\n";
    std::string cmd;
    for (const auto& s : series)
      if (s.*has)
        cmd += (cmd.empty() ? "plot " : ", \\\n     ") + gp_quote(s.file) + " using 1:" +
               std::to_string(column) + " with linespoints pt 7 ps 0.5 title " + gp_quote(s.label);
    if (cmd.empty())  // every input lacks this series: say so rather than fail the whole plot
      cmd = "set label 1 \"no data in the inputs\" at graph 0.5,0.5 center\n"
            "plot [0:1][0:1] NaN notitle\nunset label 1";
    gp += cmd + "\n";
  };
  panel("Training loss", 2, &Series::loss);
  panel("Learning rate", 3, &Series::lr);
  panel("Memory per GPU (GiB)", 4, &Series::memory);
  panel("Step time (s)", 5, &Series::time);
  gp += "unset multiplot\n";
  write_report_file(dir, "compare.gp", gp);
  return "compare.gp";
}

}  // namespace tprimat::report
