// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// example_main<Model, Layout>: the bench for one fixed model and layout, as a whole main().
#pragma once

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tprimat/backend/cpu.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/input_file.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/layout.hpp"
#include "cli/dispatch.hpp"
#include "cli/driver.hpp"
#include "cli/options.hpp"
#include "cli/runner.hpp"
#include "cli/session.hpp"

namespace tprimat::cli {

/// `int main(int argc, char** argv) { return example_main<model::Tiny, parallel::Layout<1, 1>>(
/// argc, argv, "minimal_communication"); }` — the tprimat bench flags minus --model/--parallel,
/// the same checks, files and exit codes (0 ok, 1 run failed, 2 bad input).
template <model::ModelSpec M, parallel::LayoutSpec L>
int example_main(int argc, char** argv, std::string_view strategy_name) {
  static_assert(parallel::LayoutFits<M, L>::value);
  core::guard_input_files();  // as the tprimat CLI: no output replaces an input
  try {
    BenchOptions opts;
    std::vector<std::string_view> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    if (!parse_args(opts, args, /*with_selection=*/false)) {
      std::printf("%s (%s, %s: TP=%d PP=%d)\n%s", argc > 0 ? argv[0] : "example",
                  std::string(M::name).c_str(), std::string(strategy_name).c_str(), L::tp, L::pp,
                  usage(argc > 0 ? argv[0] : "example", false).c_str());
      return 0;
    }
    opts.model = std::string(M::cli_name);
    return with_communicator(&argc, &argv, [&](auto comm) {
      Runtime rt;
      rt.env.device = backend::Cpu::device_info();
      rt.env.world = comm.size();
      rt.env.command_line = bench::command_line(argc, argv);
      rt.env.fixed = std::pair{std::string(strategy_name), parallel::TpPp{L::tp, L::pp}};
      rt.rank = comm.rank();
      rt.max_over_ranks = max_over_ranks(comm);
#ifdef TPRIMAT_SOURCE_DIR
      rt.git_dir = TPRIMAT_SOURCE_DIR;
#endif
      rt.run_once = [comm](const Job& job, int run, Reporter& rep) {
        // The CLI's compiled dispatch for M (dispatch_cpu.cpp), which runs this same
        // run_once<Cpu, M, L> when the plan is L's, as every job of this binary is.
        if (job.ctx.plan.tp != L::tp || job.ctx.plan.pp != L::pp)
          throw std::logic_error("example_main: a job's layout is not the binary's");
        return run_with_model<backend::Cpu, M>(job, run, comm, rep);
      };
      return run_bench(opts, rt);
    });
  } catch (const core::InputError& e) {
    return report_input_error(e, 0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return core::exit_run_failed;
  }
}

}  // namespace tprimat::cli
