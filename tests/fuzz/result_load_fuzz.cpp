// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Fuzz harness: result JSONs as `tprimat compare` and `tprimat peak` read them (report/load.hpp),
// then everything those commands compute and write from them, short of running gnuplot.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scratch_dir.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/report/compare.hpp"
#include "tprimat/report/compare_plot.hpp"
#include "tprimat/report/compare_report.hpp"
#include "tprimat/report/load.hpp"
#include "tprimat/report/peak.hpp"
#include "tprimat/report/peak_plot.hpp"

namespace report = tprimat::report;

// The input holds one or more result files separated by NUL bytes (JSON text has none), so one
// input can compare platforms. Each is loaded as load_inputs loads a file: a bad one becomes a
// problem line and the others go on. Bad input must end in core::InputError.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  report::LoadOutcome in;
  std::size_t start = 0;
  for (int k = 0; start <= all.size() && k < 16; ++k) {
    const std::size_t end = std::min(all.find('\0', start), all.size());
    // The seeds keep the model and platform in the file name and the run in its directory.
    const std::string file = "fuzz/output-0" + std::to_string(k % 3) + "/benchmark_" +
                             (k % 2 ? "rocm" : "cuda") + "_llama.json";
    in.inputs.push_back(file);
    try {
      in.results.push_back(report::load_text(all.substr(start, end - start), file));
    } catch (const tprimat::core::InputError& e) {
      in.problems.push_back(e.what());
    }
    start = end + 1;
  }
  if (in.results.empty()) return 0;  // the CLI stops here: "no usable result"

  const auto groups = report::group_results(in.results);
  const auto comparisons = report::compare_groups(groups);
  report::compare_text(in, groups, comparisons);
  report::comparison_report(in, groups, comparisons);
  for (bool show_all : {false, true})
    report::peak_text(in, in.results, report::PeakOptions{.show_all = show_all});
  const auto& dir = tprimat::fuzz::scratch_dir();
  report::write_compare_plot(dir.path(), groups);
  report::write_peak_plot(dir.path(), in.results);
  return 0;
}
