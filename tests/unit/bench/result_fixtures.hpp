// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// A small complete CPU result for the result tests: its context and its run.
#pragma once

#include <string>
#include <utility>

#include "tprimat/bench/result.hpp"
#include "tprimat/model/tiny.hpp"
#include "tprimat/parallel/strategy.hpp"

namespace tprimat::testing {

/// A two-step run of Tiny on one CPU rank, fp32, gbs 2, seq 32 (the plan the caller's).
inline bench::ResultContext cpu_result_context(parallel::Plan plan, std::string command_line) {
  bench::ResultContext c;
  c.device.platform = "cpu";
  c.device.software_stack = "cpu";
  c.device.device_name = "check cpu";
  c.full = model::dims<model::Tiny>();
  c.dims = c.full;
  c.plan = std::move(plan);
  c.gbs = 2;
  c.seq = 32;
  c.steps = 2;
  c.warmup_steps = 1;
  c.precision = "fp32";
  c.command_line = std::move(command_line);
  c.timestamp = "2026-02-03T04:05:06Z";
  c.predicted.weights = c.predicted.total = 0.5 * bench::gib;
  return c;
}

/// One complete run of cpu_result_context's two steps, as the bench records it.
inline bench::RunRecord complete_cpu_run() {
  bench::RunRecord r;
  r.warmup_step_times = {0.3};
  r.step_times = {0.1, 0.2};
  r.losses = {5.0, 4.9};
  r.learning_rates = {1e-4, 2e-4};
  r.grad_norms = {1.0, 0.9};
  r.memory_gb = {0.1, 0.1};
  r.peak_bytes = 0.1 * bench::gib;
  r.complete = true;
  return r;
}

}  // namespace tprimat::testing
