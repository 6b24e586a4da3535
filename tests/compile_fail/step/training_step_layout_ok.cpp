// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Positive control for the TrainingStep compile-fail example: the same code with a valid layout
// (Qwen 2.5 7B, TP=4 x PP=2, the seeds' truly_identical) compiles.
#include <tprimat/backend/cpu.hpp>
#include <tprimat/model/qwen25_7b.hpp>
#include <tprimat/parallel/layout.hpp>
#include <tprimat/train/training_step.hpp>

int main() {
  using namespace tprimat;
  train::TrainingStep<backend::Cpu, model::Qwen25_7B, parallel::Layout<4, 2>> step(
      train::StepShape{}, train::OptimizerConfig{});
  return step.steps_done();
}
