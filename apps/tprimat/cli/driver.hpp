// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// `tprimat bench` and `tprimat plan` as functions: validate everything, then run or print.
#pragma once

#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tprimat/core/error.hpp"
#include "cli/jobs.hpp"
#include "cli/runner.hpp"

namespace tprimat::cli {

/// Where the bench runs: the environment jobs are checked against, this rank, and how to run.
struct Runtime {
  Environment env;
  int rank = 0;
  RunOnce run_once;
  std::string git_dir;  ///< tree whose `git describe` identifies the code; "" for the cwd
  /// The largest of a value over the ranks (runner.hpp's max_over_ranks(comm)); one process: it.
  std::function<int(int)> max_over_ranks = [](int v) { return v; };
  /// --parallel all, after its closing table: compares the results it wrote (the directories
  /// that hold them), with reports and plots in `report_dir`. Unset: no comparison.
  std::function<void(const std::vector<std::filesystem::path>& result_dirs,
                     const std::filesystem::path& report_dir)>
      compare;
};

/// Prints an InputError the way every tprimat binary does: one line on stderr, rank 0 only.
inline int report_input_error(const std::exception& e, int rank) {
  if (rank == 0) std::fprintf(stderr, "%s\n", e.what());
  return core::exit_bad_input;
}

/// The bench: every check first (bad input: exit 2, nothing written), then each job in turn.
/// A job whose backend rejects the layout at construction is bad input when it is the only one,
/// and is skipped with its reason under --parallel all. Returns the process exit code.
int run_bench(const BenchOptions& opts, const Runtime& rt);

/// `tprimat plan`: the same checks as the bench (bar the output directory and the OOM check,
/// which the plan reports instead), then the predicted memory per GPU of each job.
int run_plan(BenchOptions opts, Environment env);
}  // namespace tprimat::cli
