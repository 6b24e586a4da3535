// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Run-time (model name, TP, PP) to the compile-time TrainingStep that runs it, for the CLI.
#pragma once

#include <array>
#include <cstddef>
#include <utility>

#include "tprimat/bench/result.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/model/all.hpp"
#include "cli/jobs.hpp"
#include "cli/progress.hpp"

namespace tprimat::cli {

/// TP and PP values the CLI compiles, each combination filtered per model by the layout rules.
inline constexpr std::array<int, 4> dispatched_sizes{1, 2, 4, 8};

inline bool layout_dispatched(int tp, int pp) {
  auto in = [](int v) {
    for (int s : dispatched_sizes)
      if (s == v) return true;
    return false;
  };
  return in(tp) && in(pp);
}

/// Runs one run of `job` with model M and the layout its plan selects: every layout of M in
/// dispatched_sizes. Defined in dispatch_layouts.hpp and compiled once per backend, model and
/// communicator by the dispatch TUs (dispatch_cpu.cpp, dispatch_gpu.cpp), which callers link.
template <class Backend, model::ModelSpec M, class Comm>
bench::RunRecord run_with_model(const Job& job, int run, const Comm& comm, Reporter& rep);

/// Runs one run of `job` with the model its name selects and the layout its plan selects.
template <class Backend, class Comm>
bench::RunRecord run_dispatched(const Job& job, int run, const Comm& comm, Reporter& rep) {
  bench::RunRecord out;
  const bool found = model::Models::visit(job.ctx.full.cli_name, [&]<class M>() {
    out = run_with_model<Backend, M>(job, run, comm, rep);
  });
  if (!found)
    throw core::InputError("unknown model '" + std::string(job.ctx.full.cli_name) + "'",
                           "pick one of " + model::known_names());
  return out;
}

}  // namespace tprimat::cli

