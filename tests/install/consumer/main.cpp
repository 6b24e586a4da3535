// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Uses the installed headers: constexpr counts, the layout rules and, when present, one CPU step.
#include <tprimat/tprimat.hpp>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <vector>

namespace md = tprimat::model;
namespace par = tprimat::parallel;

static_assert(md::total_params(md::dims<md::Llama31_8B>()) == 8'030'261'248);
static_assert(par::LayoutFits<md::Qwen25_7B, par::Layout<4, 2>>::value);

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
