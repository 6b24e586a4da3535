// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// run_once<Backend, Model, Layout, Comm>: the step of one layout built and handed to the loop
// (runner.hpp), with --init and --save around it. Only the dispatch TUs include it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tprimat/backend/concept.hpp"
#include "tprimat/bench/result.hpp"
#include "tprimat/data/hf_weights.hpp"
#include "tprimat/data/safetensors.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/groups.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/profile/cupti.hpp"
#include "tprimat/train/gather.hpp"
#include "tprimat/train/training_step.hpp"
#include "cli/jobs.hpp"
#include "cli/progress.hpp"
#include "cli/runner.hpp"

namespace tprimat::cli {

/// `--save PATH`: the whole model gathered from every rank's shard (a collective: every rank
/// calls this), written by rank 0 with the fp32 weights, so `--init PATH` starts from exactly
/// them. Adam's moments are not saved. An incomplete run saves nothing; a failed write leaves
/// the run's figures in its record, marks it incomplete and says why.
template <class T, class Comm>
void save_weights(const Job& job, int run, bench::RunRecord& rec, const train::ParameterTable& table,
                  std::span<const T> params, Comm& comm, Reporter& rep) {
  const auto& c = job.ctx;
  if (!rec.complete) {
    rep.line("tprimat: --save: the run did not complete; no weights written to " + c.save);
    return;
  }
  const parallel::GridShape grid{c.plan.tp, c.plan.pp, c.plan.dp, c.plan.cp};
  const auto at = parallel::coords_of(comm.rank(), grid);
  // CP ranks hold the same weights as DP's: replica 0 of DP x CP gives them.
  const auto whole = train::gather_whole_model<T>(c.dims, table, params, at.tp,
                                                  parallel::replica_of(at, grid), comm);
  if (comm.rank() != 0) return;
  try {
    data::save_hf_weights<float>(c.save, train::make_parameter_table(c.dims, train::Shard{}),
                                 whole, data::WeightType::f32);
  } catch (const std::exception& e) {
    rec.complete = false;  // the runner reports rec.error
    rec.error = "--save failed: " + core::without_prefix(e.what());
    return;
  }
  rec.saved_weights = c.save;
  rep.line("tprimat: saved the weights after run " + std::to_string(run + 1) + " to " + c.save);
}

/// A built step of any model and layout (`Step`: TrainingStep's Base, which compiles once per
/// backend and communicator) handed to the loop, with --init before it and --save after.
template <class Backend, class Comm, class Step>
bench::RunRecord drive_step(const Job& job, int run, Comm& comm, Reporter& rep, Step& step) {
  const auto& c = job.ctx;
  // Megatron rank order (parallel/groups.hpp): every TP rank, CP rank and PP stage of a replica
  // reads the same DP share (each CP rank takes its tokens of every sequence).
  const int dp_rank =
      parallel::coords_of(comm.rank(), {c.plan.tp, c.plan.pp, c.plan.dp, c.plan.cp}).dp;
  if constexpr (backend::DeviceBackend<Backend>) {
    if (c.init != "random")  // PP = 1 on a GPU: each rank's table is its TP shard
      step.engine().load_parameters(init_weights(job, step.engine().table()));
    StepDriver d{[&](std::span<const std::int32_t> t) { return step.run(t); },
                 [&] { return step.peak_bytes(); }, dp_rank};
    d.peak_reserved_bytes = [&] { return step.peak_reserved_bytes(); };
    d.attention = [&] { return step.engine().attention_name(); };
    d.graph_captured = [&] { return step.engine().graph_captured(); };
    d.rank = comm.rank();
    d.make_collector = [] { return profile::make_collector<Backend>(); };
    agree_on_stop_across(d, comm);
    bench::RunRecord rec = run_steps(job, run, d, rep);
    memory_over_ranks(rec, comm);
    if (saves_after(job, run)) {
      const auto params = step.engine().parameters();
      save_weights<float>(job, run, rec, step.engine().table(), std::span<const float>(params),
                          comm, rep);
    }
    return rec;
  } else {
    if (c.init != "random") {
      auto& model = step.model();
      const auto w = init_weights(job, train::make_parameter_table(model.dims(), model.shard()));
      std::copy(w.begin(), w.end(), model.params().begin());
    }
    StepDriver d{[&](std::span<const std::int32_t> t) { return step.run(t); },
                 [&] { return step.peak_bytes(); }, dp_rank};
    d.rank = comm.rank();
    agree_on_stop_across(d, comm);
    bench::RunRecord rec = run_steps(job, run, d, rep);
    memory_over_ranks(rec, comm);
    if (saves_after(job, run)) {
      const auto& model = step.model();
      save_weights(job, run, rec, train::make_parameter_table(model.dims(), model.shard()),
                   model.params(), comm, rep);
    }
    return rec;
  }
}

/// The only code compiled per (backend, model, layout, communicator): build the step and hand
/// its Base to drive_step. A layout the backend cannot run yet throws core::InputError from the
/// constructor.
template <class Backend, model::ModelSpec M, parallel::LayoutSpec L, class Comm>
bench::RunRecord run_once(const Job& job, int run, Comm comm, Reporter& rep) {
  const auto& c = job.ctx;
  if (run == 0) refuse_conflicting_result(job, comm);
  using Step = train::TrainingStep<Backend, M, L, Comm>;
  const auto seed = static_cast<std::uint64_t>(c.seed);
  if constexpr (backend::DeviceBackend<Backend>) {
    Step step(step_shape(job), c.optimizer, seed, comm, c.device_options);
    return drive_step<Backend>(job, run, comm, rep, static_cast<typename Step::Base&>(step));
  } else {
    Step step(step_shape(job), c.optimizer, seed, comm);
    return drive_step<Backend>(job, run, comm, rep, static_cast<typename Step::Base&>(step));
  }
}

}  // namespace tprimat::cli
