// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Uses the installed headers: constexpr counts, the layout rules and, when present, one CPU step;
// and proves the umbrella brings the library only, none of the tprimat program.
#include <tprimat/tprimat.hpp>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <vector>

namespace md = tprimat::model;
namespace par = tprimat::parallel;

static_assert(md::total_params(md::dims<md::Llama31_8B>()) == 8'030'261'248);
static_assert(par::LayoutFits<md::Qwen25_7B, par::Layout<4, 2>>::value);

// The program (apps/tprimat: its flag table, jobs, bench loop, console) is neither installed nor
// declared by the umbrella: were any of these names declared, in the program's namespace or in
// the library's bench/ where they once lived, these aliases would not compile.
#if __has_include(<cli/options.hpp>) || __has_include(<tprimat/bench/options.hpp>)
#error "the program's flag table (apps/tprimat/cli/options.hpp) must not be installed"
#endif
namespace tprimat::cli {
using BenchOptions = void;    // the bench flag table
using Reporter = void;        // the console's progress line
using Job = void;             // flags turned into a validated job
using InterruptGuard = void;  // signal handling between steps
using OutputLock = void;      // locks on the files a run writes
}  // namespace tprimat::cli
namespace tprimat::bench {
using BenchOptions = void;
using Reporter = void;
using Job = void;
using parse_args = void;
using run_bench = void;
}  // namespace tprimat::bench

int main() {
  std::cout << "tprimat " << tprimat::version_string << " consumer: Llama 3.1 8B has "
            << md::total_params(md::dims<md::Llama31_8B>()) << " parameters\n";
  std::cout << *par::layout_error(md::dims<md::Qwen25_7B>(), 8, 1) << "\n";
#if __has_include(<tprimat/train/training_step.hpp>) && __has_include(<tprimat/backend/cpu.hpp>)
  // Header-only use: one optimizer step of Tiny on the CPU backend, no compiled library.
  tprimat::train::StepShape shape;
  shape.mbs = 1;
  shape.seq = 16;
  tprimat::train::TrainingStep<tprimat::backend::Cpu, md::Tiny, par::Layout<1, 1>> step(
      shape, tprimat::train::OptimizerConfig{});
  std::vector<std::int32_t> tokens(shape.seq + 1);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::int32_t>(i * 7 % 256);
  const auto stats = step.run(tokens);
  std::cout << "one Tiny step: loss " << stats.loss << "\n";
  if (!std::isfinite(stats.loss)) return 1;
#endif
  return 0;
}
