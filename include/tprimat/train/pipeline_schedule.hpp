// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The 1F1B schedule of one pipeline stage as a list of operations, for every engine that runs it.
#pragma once

#include <algorithm>
#include <vector>

#include "tprimat/train/pipeline_bubble.hpp"

namespace tprimat::train {

/// One operation of a stage's schedule. Activations travel to the next stage and their
/// gradients to the previous one; an exchange with one neighbour both ways is one operation (one
/// grouped send/receive, as Megatron batches its isend/irecv), so blocking transports cannot
/// deadlock.
struct PipelineOp {
  enum class Kind {
    forward,                ///< micro-batch `micro` forward, activations in slot `slot`
    backward,               ///< micro-batch `micro` backward from slot `slot`
    recv_input,             ///< the previous stage's output into slot `slot`'s input
    send_output,            ///< slot `slot`'s output to the next stage
    send_output_recv_grad,  ///< slot `slot`'s output to the next stage, then the gradient of
                            ///< the next output in line from it (one exchange)
    recv_grad,              ///< the gradient of this stage's output from the next stage
    send_grad,              ///< the gradient of this stage's input to the previous stage
    send_grad_recv_input,   ///< the input gradient to the previous stage and its next output
                            ///< into slot `slot` (one exchange)
  };
  Kind kind;
  int micro = -1;  ///< forward, backward
  int slot = -1;   ///< forward, backward, and the transfers of activations

  bool operator==(const PipelineOp&) const = default;
};

/// Megatron's non-interleaved 1F1B for stage `stage` of `stages` over `micro_batches`:
/// PP - stage - 1 warm-up forwards, then one forward and one backward each, then the remaining
/// backwards. Micro-batch m runs in slot m % pipeline_slots(...): the slot a backward frees is
/// the one the next forward's input lands in. One stage: forward and backward alternate.
inline std::vector<PipelineOp> one_f_one_b(int stages, int stage, int micro_batches) {
  using K = PipelineOp::Kind;
  const bool first = stage == 0, last = stage == stages - 1;
  const int slots = pipeline_slots(stages, stage, micro_batches);
  const int warmup = std::min(stages - stage - 1, micro_batches);
  const int remaining = micro_batches - warmup;
  std::vector<PipelineOp> ops;
  int fwd = 0, bwd = 0;  // the next micro-batch to run forward / backward
  auto forward = [&] {
    ops.push_back({K::forward, fwd, fwd % slots});
    return fwd++ % slots;
  };
  auto backward = [&] {
    ops.push_back({K::backward, bwd, bwd % slots});
    ++bwd;
  };
  for (int i = 0; i < warmup; ++i) {
    if (!first) ops.push_back({K::recv_input, -1, fwd % slots});
    const int slot = forward();
    if (!last) ops.push_back({K::send_output, -1, slot});
  }
  if (remaining > 0 && !first) ops.push_back({K::recv_input, -1, fwd % slots});
  for (int i = 0; i < remaining; ++i) {
    const int slot = forward();
    if (!last) ops.push_back({K::send_output_recv_grad, -1, slot});
    backward();
    if (first) continue;
    if (i == remaining - 1)
      ops.push_back({K::send_grad});
    else
      ops.push_back({K::send_grad_recv_input, -1, fwd % slots});
  }
  for (int i = 0; i < warmup; ++i) {
    if (!last) ops.push_back({K::recv_grad});
    backward();
    if (!first) ops.push_back({K::send_grad});
  }
  return ops;
}

}  // namespace tprimat::train
