// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// PipelineStage: one stage of Megatron's non-interleaved 1F1B on the device: the schedule
// train::one_f_one_b lists (the CPU engine walks the same one), with the transfers to its
// neighbours.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "tprimat/parallel/device_collectives.hpp"
#include "tprimat/profile/nvtx.hpp"
#include "tprimat/train/device/activations.hpp"
#include "tprimat/train/device/phase_timer.hpp"
#include "tprimat/train/rank_plan.hpp"
#include "tprimat/train/pipeline_schedule.hpp"

namespace tprimat::train::device {

/// The stage's output goes to the next stage and its gradient comes back point-to-point on the
/// main stream, each exchange with one neighbour both ways in one grouped send_recv. Transfers
/// are synchronous with the stream: the op after a receive needs what it receives, and
/// steady-state sends ride with a receive, so a side stream could hide only the sends' wire time,
/// 4 rows h bytes each (32 MiB for Llama at seq 2048, ~0.1 ms on NVLink; a TP rank's 1 / TP of
/// it under sequence parallelism), beside a stage's forward or backward of tens of ms.
class PipelineStage {
 public:
  explicit PipelineStage(std::shared_ptr<parallel::DeviceCollectives> group)
      : group_(std::move(group)) {}

  bool active() const { return group_ != nullptr; }

  /// The micro-batches of a step in 1F1B order: forward(micro, slot) and backward(micro, slot)
  /// run the stage's passes; the activations arrive in `acts`' slots and the gradients in
  /// `dres` (the stage output's gradient in, the input's out).
  template <class Forward, class Backward>
  void run(const RankPlan& p, Activations& acts, float* dres, gpuStream_t main, PhaseTimer& timer,
           Forward&& forward, Backward&& backward) {
    using K = PipelineOp::Kind;
    const int prev = p.stage - 1, next = p.stage + 1;
    auto p2p = [&](const float* out, int dest, float* in, int source) {
      const profile::Range range("pp transfer");
      timer.mark("pp_comm");
      group_->send_recv(out, dest, in, source, static_cast<std::size_t>(p.rows) * p.d.hidden, main);
      timer.mark("elementwise");
    };
    for (const PipelineOp& op : one_f_one_b(p.stages, p.stage, p.shape.grad_accum)) {
      switch (op.kind) {
        case K::forward:
          forward(op.micro, op.slot);
          break;
        case K::backward:
          backward(op.micro, op.slot);
          break;
        case K::recv_input:
          p2p(nullptr, -1, acts.stage_input(op.slot), prev);
          break;
        case K::send_output:
          p2p(acts.stage_output(op.slot), next, nullptr, -1);
          break;
        case K::send_output_recv_grad:
          p2p(acts.stage_output(op.slot), next, dres, next);
          break;
        case K::recv_grad:
          p2p(nullptr, -1, dres, next);
          break;
        case K::send_grad:
          p2p(dres, prev, nullptr, -1);
          break;
        case K::send_grad_recv_input:
          p2p(dres, prev, acts.stage_input(op.slot), prev);
          break;
      }
    }
  }

  /// The loss and the squares summed over the stages (each stage's squares of its own
  /// parameters; the loss is the last stage's, the others hold 0).
  void sum_loss_and_squares(double* results, gpuStream_t main) {
    if (!group_) return;
    const profile::Range range("pp loss and norm");
    group_->all_reduce_sum(results, 2, main);
  }

 private:
  std::shared_ptr<parallel::DeviceCollectives> group_;
};

}  // namespace tprimat::train::device
