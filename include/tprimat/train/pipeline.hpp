// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The 1F1B pipeline schedule (warm-up, steady, cool-down) of one stage, and its bubble fraction.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "tprimat/parallel/communicator.hpp"
#include "tprimat/train/pipeline_bubble.hpp"
#include "tprimat/train/transformer.hpp"

namespace tprimat::train {

/// Runs forward and backward of `micro_batches` micro-batches (each `per_micro` ids of `tokens`)
/// on this pipeline stage in Megatron's non-interleaved 1F1B order: warm-up forwards
/// (PP - stage - 1 of them), then one forward + one backward each, then the remaining
/// backwards. Activations go to the next stage and their gradients back point-to-point over
/// `pp` (the stages of this rank's pipeline); where a stage both sends and receives from the
/// same neighbour it does so in one send_recv, as Megatron batches its isend/irecv, so blocking
/// transports cannot deadlock. Gradients accumulate in model.grads(), each micro-batch scaled by
/// `scale`. Returns scale x the loss sum on the last stage, 0 elsewhere.
template <class Backend, class T, parallel::Communicator C>
double run_1f1b(Transformer<Backend, T>& model, C& pp, int micro_batches,
                std::span<const std::int32_t> tokens, std::int64_t per_micro, double scale) {
  const int stages = pp.size(), stage = pp.rank();
  const bool first = stage == 0, last = stage == stages - 1;
  const int slots = pipeline_slots(stages, stage, micro_batches);
  const int warmup = std::min(stages - stage - 1, micro_batches);
  const int remaining = micro_batches - warmup;
  int fwd = 0, bwd = 0;  // next micro-batch to run forward / backward
  double loss = 0;
  auto forward = [&] {
    const int slot = fwd % slots;
    loss +=
        scale * model.forward_micro(tokens.subspan(fwd * per_micro, per_micro), slot, true, scale);
    ++fwd;
    return slot;
  };
  auto backward = [&] { model.backward_micro(bwd++ % slots); };

  for (int i = 0; i < warmup; ++i) {
    if (!first) pp.recv(model.input_activation(fwd % slots), stage - 1);
    const int slot = forward();
    if (!last) pp.send(model.output_activation(slot), stage + 1);
  }
  if (remaining > 0 && !first) pp.recv(model.input_activation(fwd % slots), stage - 1);
  for (int i = 0; i < remaining; ++i) {
    const int slot = forward();
    if (!last)
      pp.send_recv(model.output_activation(slot), stage + 1, model.output_grad(), stage + 1);
    backward();
    if (first) continue;
    if (i == remaining - 1)
      pp.send(model.input_grad(), stage - 1);
    else  // this backward freed the slot the next forward's input lands in
      pp.send_recv(model.input_grad(), stage - 1, model.input_activation(fwd % slots), stage - 1);
  }
  for (int i = 0; i < warmup; ++i) {
    if (!last) pp.recv(model.output_grad(), stage + 1);
    backward();
    if (!first) pp.send(model.input_grad(), stage - 1);
  }
  return loss;
}

}  // namespace tprimat::train
