// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// run_with_model's definition (dispatch.hpp): every layout of a model, each a run_once, for the
// dispatch TUs to instantiate; nothing else includes it.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "tprimat/core/error.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/parallel/validate.hpp"
#include "cli/dispatch.hpp"
#include "cli/run_once.hpp"

namespace tprimat::cli {

namespace detail {

/// Calls run_once for Layout<tp, pp> of M if (tp, pp) is valid for M. Invalid pairs are never
/// instantiated (they would fire the layout static_asserts); run-time checks rejected them.
template <class Backend, model::ModelSpec M, class Comm, std::size_t... I>
bench::RunRecord dispatch_layout(const Job& job, int run, const Comm& comm, Reporter& rep,
                          std::index_sequence<I...>) {
  constexpr auto d = model::dims<M>();
  constexpr std::size_t n = dispatched_sizes.size();
  bench::RunRecord out;
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

template <class Backend, model::ModelSpec M, class Comm>
bench::RunRecord run_with_model(const Job& job, int run, const Comm& comm, Reporter& rep) {
  constexpr std::size_t n = dispatched_sizes.size();
  return detail::dispatch_layout<Backend, M>(job, run, comm, rep, std::make_index_sequence<n * n>{});
}


// Every model of model::Models, run_with_model<Backend, M, Comm> instantiated for each: the list
// the dispatch TUs spell once per backend and communicator.
static_assert(model::Models::size == 4,
              "a model was added: list it in TPRIMAT_CLI_EACH_MODEL (cli/dispatch_layouts.hpp)");
// Used inside namespace tprimat::cli.
#define TPRIMAT_CLI_RUN_WITH_MODEL(Backend, M, Comm) \
  template bench::RunRecord run_with_model<Backend, M, Comm>(const Job&, int, const Comm&, Reporter&)
#define TPRIMAT_CLI_EACH_MODEL(Backend, Comm)                              \
  TPRIMAT_CLI_RUN_WITH_MODEL(Backend, ::tprimat::model::Llama31_8B, Comm); \
  TPRIMAT_CLI_RUN_WITH_MODEL(Backend, ::tprimat::model::Qwen25_7B, Comm);  \
  TPRIMAT_CLI_RUN_WITH_MODEL(Backend, ::tprimat::model::Mistral7B, Comm);  \
  TPRIMAT_CLI_RUN_WITH_MODEL(Backend, ::tprimat::model::Tiny, Comm)

}  // namespace tprimat::cli
