// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// peak_throughput_analysis.png/.svg: the seeds' peak panels, as a gnuplot script plus data files.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tprimat/report/compare_plot.hpp"
#include "tprimat/report/gnuplot.hpp"
#include "tprimat/report/output.hpp"
#include "tprimat/report/peak.hpp"

namespace tprimat::report {

/// Writes peak_bars.dat, peak_all.dat and peak.gp into `dir`; returns the script's name.
inline std::string write_peak_plot(const std::filesystem::path& dir, const std::vector<Result>& rs) {
  std::string bars =
      "# label tokens_per_s tflops_total_palm mfu_percent tokens_per_s_per_gpu "
      "tflops_per_gpu_palm step_time_s colour (the peak of each platform x model)\n";
  for (const auto* r : peaks_per_platform_model(rs))
    bars += gp_quote(r->platform + " " + r->model + " " + std::to_string(r->num_gpus) + " GPUs") +
            " " + data_number(r->tokens_per_second) + " " +
            data_number(r->tflops_per_gpu() * r->num_gpus) + " " + data_number(100 * r->mfu()) +
            " " + data_number(r->tokens_per_second_per_gpu) + " " +
            data_number(r->tflops_per_gpu()) + " " + data_number(r->avg_step_time) + " " +
            platform_colour(r->platform) + "\n";
  write_report_file(dir, "peak_bars.dat", bars);
  std::string all = "# platform_index tokens_per_s_per_gpu platform colour (every result)\n";
  std::vector<std::string> platforms;
  for (const auto& r : rs) {
    auto it = std::find(platforms.begin(), platforms.end(), r.platform);
    if (it == platforms.end()) it = platforms.insert(platforms.end(), r.platform);
    all += std::to_string(it - platforms.begin() + 1) + " " +
           data_number(r.tokens_per_second_per_gpu) + " " + gp_quote(r.platform) + " " +
           platform_colour(r.platform) + "\n";
  }
  write_report_file(dir, "peak_all.dat", all);

  const auto bar = [](const std::string& title, int column) {
    return "set title " + gp_quote(title) + "\nplot \"peak_bars.dat\" using 0:" +
           std::to_string(column) + ":(0.6):8:xtic(1) with boxes lc rgb variable notitle\n";
  };
  std::string gp =
      "# tprimat peak: panels from peak_bars.dat (peaks) and peak_all.dat (every result).\n"
      "# Restyle freely, then: gnuplot -e 'fmt=\"png\"' peak.gp (or fmt=\"svg\").\n"
      "if (!exists(\"fmt\")) fmt = \"png\"\n"
      "if (fmt eq \"svg\") {\n"
      "  set terminal svg size 1800,1000 dynamic font \"sans,11\"\n"
      "  set output \"peak_throughput_analysis.svg\"\n"
      "} else {\n"
      "  set terminal pngcairo size 1800,1000 font \"sans,10\"\n"
      "  set output \"peak_throughput_analysis.png\"\n"
      "}\n"
      "set termoption noenhanced\n"
      "set datafile missing \"NaN\"\n"
      "set grid ytics\n"
      "set style fill solid 0.8 border -1\n"
      "set xtics rotate by -25 font \",8\"\n"
      "set yrange [0:*]\n"
      "set offsets 0.5, 0.5, 0, 0\n"
      "set multiplot layout 2,3 title \"tprimat peak throughput (TFLOP/s: PaLM model FLOPs; "
      "MFU against dense bf16 peaks)\"\n";
  gp += bar("Peak throughput (tokens/s)", 2);
  gp += bar("Peak compute (TFLOP/s, all GPUs)", 3);
  gp += bar("MFU (% of the dense peak)", 4);
  gp += bar("Per-GPU throughput (tokens/s/GPU)", 5);
  gp += bar("Step time at peak (s)", 7);
  // A strip plot (one point per result, per platform): with a handful of results per platform,
  // gnuplot 5.4 draws boxplots as bare outliers, which would hide the spread they should show.
  gp += "set title \"Distribution: tokens/s/GPU of every result, per platform\"\n"
        "set offsets 0, 0, 0, 0\n"
        "set xrange [0.5:" + std::to_string(platforms.size()) + ".5]\n"
        "set xtics norotate font \",10\" (";
  for (std::size_t i = 0; i < platforms.size(); ++i)
    gp += std::string(i ? ", " : "") + gp_quote(platforms[i]) + " " + std::to_string(i + 1);
  gp += ")\nplot \"peak_all.dat\" using 1:2:4 with points pt 7 ps 1.5 lc rgb variable notitle\n"
        "unset multiplot\n";
  write_report_file(dir, "peak.gp", gp);
  return "peak.gp";
}

}  // namespace tprimat::report
