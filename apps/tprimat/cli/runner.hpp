// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The benchmark loop (warm-up, timed steps, runs) and the result files of one job; run_once.hpp
// builds the step this loop drives.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tprimat/bench/result.hpp"
#include "tprimat/profile/collector.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/parameters.hpp"
#include "cli/jobs.hpp"
#include "cli/output_lock.hpp"
#include "cli/progress.hpp"
#include "cli/result_fixes.hpp"

namespace tprimat::cli {

/// A constructed training step, type-erased so that the loop below is compiled once, not once
/// per (backend, model, layout, communicator).
struct StepDriver {
  std::function<train::StepStats(std::span<const std::int32_t>)> step;
  std::function<std::size_t()> peak_bytes;
  int dp_rank = 0;
  /// GPU backends: the pool's reserved high-water mark, the attention policy, whether the step
  /// now replays a CUDA graph. Unset on the CPU.
  std::function<std::size_t()> peak_reserved_bytes;
  std::function<std::string()> attention;
  std::function<bool()> graph_captured;
  /// --profile: this process's rank (which ranks record), and the backend's device collector
  /// (CUPTI on CUDA; unset on the CPU: host ranges only). Called only when this rank profiles.
  int rank = 0;
  std::function<std::unique_ptr<profile::ActivityCollector>()> make_collector;
  /// Before each step: the stop signal all ranks agree on, from this rank's own (0: go on). One
  /// process decides alone; several take the largest, so that they all stop before the same step
  /// and none waits in a collective for a rank that has stopped.
  std::function<int(int)> agree_on_stop = [](int signo) { return signo; };
};

/// Why a run failed, for the console and the result's `error`. Running out of memory carries the
/// memory plan beside it: whether the plan or the allocator was wrong is then visible at once.
std::string failure_reason(const std::exception& e, const bench::ResultContext& c);

/// Runs warm-up then measured steps on this rank's share of the global batch (synthetic or
/// indexed data, split by the one rule of data::fill_rank_batch).
/// A failure (exception, non-finite loss) ends the run with `complete` false and the reason.
bench::RunRecord run_steps(const Job& job, int run, const StepDriver& d, Reporter& rep);

/// `--init PATH`: this rank's part (`table`: its TP block and pipeline stage) of the checkpoint,
/// in table order. Every run starts from it, so runs repeat one workload.
std::vector<float> init_weights(const Job& job, const train::ParameterTable& table);

/// The step shape of `job`: its micro-batch, sequence, accumulation, layers, pipeline split and
/// sequence parallelism.
train::StepShape step_shape(const Job& job);

/// Whether `--save` writes after this run: the job's last.
bool saves_after(const Job& job, int run);

/// Run 0, before the step is built: throws ResultConflict on every rank when the job may not
/// write its result file (result_refusal: something not a file is there, or a result of another
/// configuration without --overwrite). Rank 0 reads the file and broadcasts its verdict, so that
/// no rank builds a step the others have abandoned.
template <class Comm>
void refuse_conflicting_result(const Job& job, Comm& comm) {
  std::string message;
  float refused = 0;
  if (comm.rank() == 0) {
    const auto file = job.output_dir / bench::result_file_name(job.ctx.device, job.ctx.full.cli_name);
    message = bench::result_refusal(file, job.ctx, result_fixes);
    refused = message.empty() ? 0 : 1;
  }
  if (comm.size() > 1) comm.broadcast(std::span<float>(&refused, 1), 0);
  if (refused != 0)
    throw bench::ResultConflict(message.empty() ? "rank 0 refused to replace its result file" : message);
}

/// The largest of a small integer over the ranks of `comm` (a verdict, a signal number): one
/// max-reduction of a float, in which such integers are exact. Every rank must call it.
template <class Comm>
std::function<int(int)> max_over_ranks(Comm comm) {
  if (comm.size() <= 1) return [](int v) { return v; };
  return [comm](int v) mutable {
    float f = static_cast<float>(v);
    comm.all_reduce_max(std::span<float>(&f, 1));
    return static_cast<int>(f);
  };
}

/// Several ranks agree on stopping with one max-reduction per step; it runs between steps,
/// outside the timed region.
template <class Comm>
void agree_on_stop_across(StepDriver& d, Comm& comm) {
  if (comm.size() > 1) d.agree_on_stop = max_over_ranks(comm);
}

/// The busiest rank's memory in every rank's record: rank 0 writes the result, and under PP its
/// stage need not be the busiest (the plan in the result is the busiest stage's). The peaks are
/// max-reduced in MiB (the communicators reduce floats), this rank's exact bytes kept where it
/// is the busiest; the per-step values too, where every rank measured as many steps.
template <class Comm>
void memory_over_ranks(bench::RunRecord& rec, Comm& comm) {
  if (comm.size() <= 1) return;
  constexpr double mib = 1024.0 * 1024.0;
  const auto steps = static_cast<float>(rec.memory_gb.size());
  std::array<float, 4> m{float(rec.peak_bytes / mib), float(rec.peak_reserved_bytes / mib), steps,
                         -steps};
  const auto own = m;
  comm.all_reduce_max(std::span<float>(m));
  if (m[0] > own[0]) rec.peak_bytes = double(m[0]) * mib;
  if (m[1] > own[1]) rec.peak_reserved_bytes = double(m[1]) * mib;
  if (m[2] != -m[3] || rec.memory_gb.empty()) return;  // the ranks stopped apart: rank 0's
  std::vector<float> per_step(rec.memory_gb.begin(), rec.memory_gb.end());
  comm.all_reduce_max(std::span<float>(per_step));
  for (std::size_t i = 0; i < per_step.size(); ++i)
    rec.memory_gb[i] = std::max(rec.memory_gb[i], double(per_step[i]));
}

/// How a binary runs one run of a job: the CLI dispatches on model and layout, an example binary
/// has one fixed instantiation.
using RunOnce = std::function<bench::RunRecord(const Job&, int run, Reporter&)>;

/// Before the first job runs: rank 0 locks the result and log of every job (output_lock.hpp) for
/// the whole command, so that a second tprimat writing any of them is refused up front, and a
/// `--model all` or `--parallel all` run holds what it writes later too. Only rank 0 writes, so
/// only it locks; `max_over_ranks` carries its verdict to the others, which then stop as well
/// (one collective, reached by every rank). Throws core::InputError on every rank when refused.
std::vector<OutputLock> hold_outputs(const JobList& list, int rank,
                                            std::string_view command_line,
                                            const std::function<int(int)>& max_over_ranks,
                                            std::vector<std::string>& notices);

/// Runs every run of a job and (rank 0) writes the result atomically. Returns the exit code:
/// 0; 1 when a run failed after starting (the file then says "complete": false); 128 + signo
/// when SIGINT/SIGTERM stopped it (the file holds the steps completed); 2 when the result file
/// holds another configuration and --overwrite was not given (nothing runs, nothing is written).
/// A core::InputError from the first construction (layout the backend cannot run) propagates.
int run_job(const Job& job, int rank, const RunOnce& once, Reporter& rep);

}  // namespace tprimat::cli
