// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// `tprimat profile-summary TRACE`: what a Chrome trace (tprimat --profile, torch.profiler) says.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <string>

#include "tprimat/profile/summary.hpp"
#include "tprimat/profile/summary_text.hpp"
#include "tprimat/profile/trace_reader.hpp"
#include "cli/number_option.hpp"

namespace tprimat::cli {

struct ProfileCommand {
  CLI::App* summary = nullptr;
  std::string trace;
  int top = 10;
  bool markdown = false;
};

/// Registers the subcommand; `cmd` must outlive parsing (CLI11 keeps pointers to its fields).
inline void add_profile_command(CLI::App& app, ProfileCommand& cmd) {
  cmd.summary = app.add_subcommand(
      "profile-summary",
      "top kernels, GEMM TFLOP/s, GPU idle gaps, communication overlap and profiling overhead "
      "of a Chrome trace (tprimat --profile or the PyTorch profiler)");
  cmd.summary->add_option("trace", cmd.trace, "trace file (.json, or .json.gz in zlib builds)")
      ->required();
  cmd.summary->add_option("--top", cmd.top, "kernels listed")
      ->capture_default_str()
      ->transform(number("--top", core::between(1, 1'000'000)));
  cmd.summary->add_flag("--markdown", cmd.markdown, "print markdown (headings, tables)");
}

/// The exit code when profile-summary was parsed; nullopt otherwise. A file that is not a trace
/// is bad input (core::InputError, exit 2).
inline std::optional<int> run_profile_command(const ProfileCommand& cmd) {
  if (cmd.summary == nullptr || !cmd.summary->parsed()) return std::nullopt;
  const auto trace = profile::read_chrome_trace(cmd.trace);
  const auto s = profile::summarize(trace);
  std::fputs(profile::summary_text(s, cmd.trace, cmd.top, cmd.markdown).c_str(), stdout);
  return 0;
}

}  // namespace tprimat::cli
