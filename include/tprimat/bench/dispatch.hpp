// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Run-time (model name, TP, PP) to the compile-time TrainingStep that runs it, for the CLI.
#pragma once

#include <array>
#include <cstddef>
#include <utility>

#include "tprimat/bench/runner.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/model/all.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/parallel/validate.hpp"

namespace tprimat::bench {

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

namespace detail {

/// Calls run_once for Layout<tp, pp> of M if (tp, pp) is valid for M. Invalid pairs are never
/// instantiated (they would fire the layout static_asserts); run-time checks rejected them.
template <class Backend, model::ModelSpec M, class Comm, std::size_t... I>
RunRecord dispatch_layout(const Job& job, int run, const Comm& comm, Reporter& rep,
                          std::index_sequence<I...>) {
  constexpr auto d = model::dims<M>();
  constexpr std::size_t n = dispatched_sizes.size();
  RunRecord out;
  bool done = false;
  auto one = [&]<std::size_t K>() {
    constexpr int tp = dispatched_sizes[K / n];
    constexpr int pp = dispatched_sizes[K % n];
    if constexpr (parallel::tp_valid(d, tp) && parallel::pp_valid(d, pp)) {
      if (!done && job.ctx.plan.tp == tp && job.ctx.plan.pp == pp) {
        out = run_once<Backend, M, parallel::Layout<tp, pp>>(job, run, comm, rep);
        done = true;
      }
    }
  };
  (one.template operator()<I>(), ...);
  if (!done)
    throw core::InputError("layout TP=" + std::to_string(job.ctx.plan.tp) + " x PP=" +
                               std::to_string(job.ctx.plan.pp) + " of " + std::string(d.name) +
                               " is not compiled into this binary",
                           "use TP and PP in 1, 2, 4, 8");
  return out;
}

}  // namespace detail

/// Runs one run of `job` with model M and the layout its plan selects: every layout of M in
/// dispatched_sizes is compiled here. The in-tree build compiles it once per backend, model and
/// communicator (src/bench; extern_dispatch.hpp declares those).
template <class Backend, model::ModelSpec M, class Comm>
RunRecord run_with_model(const Job& job, int run, const Comm& comm, Reporter& rep) {
  constexpr std::size_t n = dispatched_sizes.size();
  return detail::dispatch_layout<Backend, M>(job, run, comm, rep, std::make_index_sequence<n * n>{});
}

/// Runs one run of `job` with the model its name selects and the layout its plan selects.
template <class Backend, class Comm>
RunRecord run_dispatched(const Job& job, int run, const Comm& comm, Reporter& rep) {
  RunRecord out;
  const bool found = model::Models::visit(job.ctx.full.cli_name, [&]<class M>() {
    out = run_with_model<Backend, M>(job, run, comm, rep);
  });
  if (!found)
    throw core::InputError("unknown model '" + std::string(job.ctx.full.cli_name) + "'",
                           "pick one of " + model::known_names());
  return out;
}

}  // namespace tprimat::bench

#include "tprimat/bench/extern_dispatch.hpp"
