// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// train::one_f_one_b: every stage's schedule, run together over a model of blocking transfers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tprimat/train/pipeline_schedule.hpp"

namespace {

using tprimat::train::one_f_one_b;
using tprimat::train::PipelineOp;
using tprimat::train::pipeline_slots;
using K = PipelineOp::Kind;

/// What one stage's operation moves: an activation to / from the next and previous stage, a
/// gradient likewise. Each half of an exchange completes when the neighbour's current operation
/// holds the matching half; an operation ends when all of its halves have (blocking transport).
struct Halves {
  bool send_act = false, recv_act = false, send_grad = false, recv_grad = false;
};

Halves halves_of(const PipelineOp& op) {
  Halves h;
  h.send_act = op.kind == K::send_output || op.kind == K::send_output_recv_grad;
  h.recv_grad = op.kind == K::recv_grad || op.kind == K::send_output_recv_grad;
  h.send_grad = op.kind == K::send_grad || op.kind == K::send_grad_recv_input;
  h.recv_act = op.kind == K::recv_input || op.kind == K::send_grad_recv_input;
  return h;
}

/// Runs all stages' schedules together; fails on a deadlock, on a forward that reads an input
/// that has not arrived or that belongs to another micro-batch, and on a backward without its
/// output gradient.
void simulate(int stages, int micro_batches) {
  SCOPED_TRACE("PP " + std::to_string(stages) + ", " + std::to_string(micro_batches) +
               " micro-batches");
  std::vector<std::vector<PipelineOp>> ops(stages);
  for (int s = 0; s < stages; ++s) ops[s] = one_f_one_b(stages, s, micro_batches);
  std::vector<std::size_t> at(stages, 0);
  std::vector<Halves> pending(stages);
  std::vector<bool> started(stages, false);
  // Per stage: the micro-batch whose input sits in each slot (-1 none), the micro-batch whose
  // output gradient has arrived (-1 none), the forwards and backwards run in order, and the
  // micro-batch each sent activation / gradient belongs to.
  std::vector<std::vector<int>> input_in_slot(stages);
  std::vector<int> grad_for(stages, -1), fwd_done(stages, 0), bwd_done(stages, 0);
  std::vector<std::vector<int>> slot_micro(stages);
  for (int s = 0; s < stages; ++s) {
    const int slots = pipeline_slots(stages, s, micro_batches);
    input_in_slot[s].assign(slots, -1);
    slot_micro[s].assign(slots, -1);
  }
  auto current = [&](int s) -> const PipelineOp* {
    return at[s] < ops[s].size() ? &ops[s][at[s]] : nullptr;
  };
  for (int guard = 0; guard < 100000; ++guard) {
    bool progress = false, done = true;
    for (int s = 0; s < stages; ++s) {
      const PipelineOp* op = current(s);
      if (!op) continue;
      done = false;
      if (!started[s]) {
        pending[s] = halves_of(*op);
        started[s] = true;
      }
      if (op->kind == K::forward) {
        ASSERT_EQ(op->micro, fwd_done[s]) << "stage " << s << ": forwards in order";
        if (s > 0)
          ASSERT_EQ(input_in_slot[s][op->slot], op->micro) << "stage " << s << " forward input";
        slot_micro[s][op->slot] = op->micro;
        ++fwd_done[s];
      } else if (op->kind == K::backward) {
        ASSERT_EQ(op->micro, bwd_done[s]) << "stage " << s << ": backwards in order";
        ASSERT_LT(op->micro, fwd_done[s]);
        ASSERT_EQ(slot_micro[s][op->slot], op->micro) << "stage " << s << ": slot overwritten";
        if (s < stages - 1) ASSERT_EQ(grad_for[s], op->micro) << "stage " << s << " grad";
        input_in_slot[s][op->slot] = -1;
        grad_for[s] = -1;
        ++bwd_done[s];
      } else {
        // Activation halves: stage s sends its last sent-in-order micro-batch to s + 1.
        Halves& mine = pending[s];
        if (mine.send_act && s + 1 < stages && started[s + 1] && pending[s + 1].recv_act) {
          const PipelineOp* peer = current(s + 1);
          ASSERT_EQ(input_in_slot[s + 1][peer->slot], -1) << "stage " << s + 1 << " slot busy";
          input_in_slot[s + 1][peer->slot] = slot_micro[s][op->slot];
          mine.send_act = pending[s + 1].recv_act = false;
          progress = true;
        }
        if (mine.send_grad && s > 0 && started[s - 1] && pending[s - 1].recv_grad) {
          grad_for[s - 1] = bwd_done[s] - 1;  // the gradient of the last backward's micro-batch
          mine.send_grad = pending[s - 1].recv_grad = false;
          progress = true;
        }
        if (mine.send_act || mine.recv_act || mine.send_grad || mine.recv_grad) continue;
      }
      ++at[s];
      started[s] = false;
      progress = true;
    }
    if (done) break;
    ASSERT_TRUE(progress) << "deadlock";
  }
  for (int s = 0; s < stages; ++s) {
    EXPECT_EQ(fwd_done[s], micro_batches) << "stage " << s;
    EXPECT_EQ(bwd_done[s], micro_batches) << "stage " << s;
  }
}

TEST(PipelineSchedule, EveryLayoutRunsWithoutDeadlockInOrder) {
  for (int stages : {1, 2, 3, 4, 8})
    for (int micro : {1, 2, 3, 4, 5, 8, 16}) simulate(stages, micro);
}

TEST(PipelineSchedule, TwoStagesFourMicroBatches) {
  // Stage 0: one warm-up forward, then forward / exchange / backward, then the last backward.
  const std::vector<PipelineOp> want = {
      {K::forward, 0, 0},  {K::send_output, -1, 0},           {K::forward, 1, 1},
      {K::send_output_recv_grad, -1, 1}, {K::backward, 0, 0}, {K::forward, 2, 0},
      {K::send_output_recv_grad, -1, 0}, {K::backward, 1, 1}, {K::forward, 3, 1},
      {K::send_output_recv_grad, -1, 1}, {K::backward, 2, 0}, {K::recv_grad},
      {K::backward, 3, 1}};
  EXPECT_EQ(one_f_one_b(2, 0, 4), want);
  // The last stage: its first input, then forward, backward and a gradient exchange per
  // micro-batch, one slot.
  const auto last = one_f_one_b(2, 1, 4);
  ASSERT_EQ(last.size(), 1u + 4u * 3u);
  EXPECT_EQ(last.front(), (PipelineOp{K::recv_input, -1, 0}));
  EXPECT_EQ(last.back(), (PipelineOp{K::send_grad}));
}

}  // namespace
