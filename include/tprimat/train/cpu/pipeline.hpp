// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The 1F1B schedule run on the CPU engine: a stage's operations over a host communicator.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>

#include "tprimat/parallel/communicator.hpp"
#include "tprimat/train/pipeline_schedule.hpp"
#include "tprimat/train/cpu/transformer.hpp"

namespace tprimat::train {

/// Runs forward and backward of `micro_batches` micro-batches (each `per_micro` ids of `tokens`)
/// on this pipeline stage in Megatron's non-interleaved 1F1B order (one_f_one_b): activations go
/// to the next stage and their gradients back point-to-point over `pp` (the stages of this
/// rank's pipeline), each exchange with one neighbour both ways in one send_recv. Gradients
/// accumulate in model.grads(), each micro-batch scaled by `scale`; `after_backward` runs after
/// each micro-batch's backward (ZeRO-2 reduces its gradients there). Returns scale x the loss
/// sum on the last stage, 0 elsewhere.
template <class Backend, class T, parallel::Communicator C>
double run_1f1b(Transformer<Backend, T>& model, C& pp, int micro_batches,
                std::span<const std::int32_t> tokens, std::int64_t per_micro, double scale,
                const std::function<void()>& after_backward = {}) {
  using K = PipelineOp::Kind;
  const int prev = pp.rank() - 1, next = pp.rank() + 1;
  double loss = 0;
  for (const PipelineOp& op : one_f_one_b(pp.size(), pp.rank(), micro_batches)) {
    switch (op.kind) {
      case K::forward:
        loss += scale * model.forward_micro(tokens.subspan(op.micro * per_micro, per_micro),
                                            op.slot, true, scale);
        break;
      case K::backward:
        model.backward_micro(op.slot);
        if (after_backward) after_backward();
        break;
      case K::recv_input: pp.recv(model.input_activation(op.slot), prev); break;
      case K::send_output: pp.send(model.output_activation(op.slot), next); break;
      case K::send_output_recv_grad:
        pp.send_recv(model.output_activation(op.slot), next, model.output_grad(), next);
        break;
      case K::recv_grad: pp.recv(model.output_grad(), next); break;
      case K::send_grad: pp.send(model.input_grad(), prev); break;
      case K::send_grad_recv_input:
        pp.send_recv(model.input_grad(), prev, model.input_activation(op.slot), prev);
        break;
    }
  }
  return loss;
}

}  // namespace tprimat::train
