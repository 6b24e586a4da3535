// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Qwen 2.5 7B with TP=8 must fail to compile: it has 4 KV heads (valid TP: 1, 2, 4).
//
// Not built by default; tests/compile_fail builds it and matches the diagnostic. Try it:
//   cmake --build build --target tprimat_compile_example_qwen25_7b_tp8_fail
// EXPECT: tprimat: TP must divide the KV heads
// EXPECT: TpDividesKvHeads<tprimat::model::Qwen25_7B, 8, 4, tprimat::parallel::Values<1, 2, 4> ?>
// EXPECT: TrainingStep<tprimat::backend::Cpu, tprimat::model::Qwen25_7B, tprimat::parallel::Layout<8, 1>
#include <tprimat/backend/cpu.hpp>
#include <tprimat/model/qwen25_7b.hpp>
#include <tprimat/parallel/layout.hpp>
#include <tprimat/train/training_step.hpp>

int main() {
  using namespace tprimat;
  train::TrainingStep<backend::Cpu, model::Qwen25_7B, parallel::Layout<8, 1>> step(
      train::StepShape{}, train::OptimizerConfig{});
  return step.steps_done();
}
