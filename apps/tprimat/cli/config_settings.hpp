// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// A --parallel config file's run settings (the seeds' training/benchmarking keys) as the flags
// they stand for: each applied where its flag is not given, checked as the flag is; and the
// notice naming the keys not applied.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

#include "tprimat/bench/config_file.hpp"
#include "tprimat/core/error.hpp"

#include "cli/options.hpp"

namespace tprimat::cli {

/// Applies `run` (from config file `run.file`) to `o`: each setting to the flag named after it
/// ("micro_batch_size": --micro-batch-size), where `given(flag)` says the command line (or the
/// flag's environment variable) did not set it. A value its flag would refuse is an InputError
/// naming the key.
template <class Given>
void apply_config_run(BenchOptions& o, const bench::ConfigRun& run, Given&& given) {
  const std::string& file = run.file;
  for (const auto& s : run.settings) {
    std::string flag = "--" + s.name;
    for (char& c : flag)
      if (c == '_') c = '-';
    bool found = false;
    const auto apply = [&](std::string_view names, auto& field, std::string_view,
                           std::string_view, const auto&... range) {
      const auto all = detail::flag_names(names);
      if (found || std::find(all.begin(), all.end(), flag) == all.end()) return;
      found = true;
      if (given(all[0])) return;
      const std::string text = s.value.is_string() ? s.value.get<std::string>() : s.value.dump();
      try {
        detail::parse_value(all[0], text, field, range...);
      } catch (const core::InputError& e) {
        std::string why = e.what();
        if (why.starts_with("tprimat: ")) why.erase(0, 9);
        throw core::InputError("config " + file + ": " + s.key + " is " + s.value.dump() +
                                   ", refused as " + std::string(all[0]) + " would be (" + why +
                                   ")",
                               "fix it in the file, or pass " + std::string(all[0]) +
                                   " to override it");
      }
    };
    for_each_run_flag(o, apply);
    if (!found)  // a setting config_run.hpp reads must have its flag here
      throw core::InputError("config " + file + ": " + s.key + " has no flag " + flag +
                             " in this program (a tprimat bug)");
  }
}

/// The one-line notice of `run`'s keys not applied ("" when none).
inline std::string not_applied_notice(const bench::ConfigRun& run) {
  if (run.not_applied.empty()) return "";
  std::string keys;
  for (const auto& k : run.not_applied) keys += (keys.empty() ? "" : ", ") + k;
  return "tprimat: config " + run.file + ": not applied: " + keys +
         " (they configured the seeds' Python reports and environment; tprimat writes its own "
         "result, log and plots: docs/layouts.md)";
}

}  // namespace tprimat::cli
