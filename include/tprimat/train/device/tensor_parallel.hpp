// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// TensorParallel: Megatron's TP collectives of the device engine: the row-parallel GEMMs' sums,
// the input gradients' all-reduces beside the weight-gradient GEMMs, the vocab-parallel loss, and
// sequence parallelism's all-gathers and reduce-scatters.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/buffer.hpp"
#include "tprimat/parallel/device_collectives.hpp"
#include "tprimat/profile/nvtx.hpp"
#include "tprimat/train/device/gemms.hpp"
#include "tprimat/train/device/phase_timer.hpp"
#include "tprimat/train/rank_plan.hpp"
#include "tprimat/train/device/resources.hpp"

namespace tprimat::train::device {

/// Every call is a no-op without a TP group. The forward's collectives run on the main stream
/// (everything after them depends on them); the backward's input-gradient all-reduces run on
/// the TP stream beside the layer's weight-gradient GEMMs (DeviceOptions::overlap), which do not
/// read them.
/// Sequence parallelism (RankPlan::sequence_parallel, Megatron's): the residual stream and the
/// norms hold this rank's RankPlan::rows token rows. A norm's bf16 output is all-gathered before
/// the column-parallel GEMMs (gather_rows); a row-parallel GEMM writes a bf16 partial product
/// that is reduce-scattered in bf16 and added to the fp32 residual rows (row_parallel_add,
/// scatter_add); backward mirrors it: the residual gradient's bf16 copy all-gathered before the
/// row-parallel GEMMs' backward, the input gradients reduce-scattered instead of all-reduced,
/// and the norm gains' partial gradients summed over TP once per step.
/// With overlap, sequence parallelism's collectives leave the critical path (Megatron's TP
/// communication overlap, in row chunks): an all-gather runs on the TP stream while the GEMMs
/// that read it start on this rank's own rows (gather_rows_then), or beside other GEMMs
/// (begin_gather, end_side); at TP 2 a row-parallel GEMM
/// computes the peer's rows first and exchanges them with the peer while it computes its own
/// (row_parallel_add). Larger TP groups keep the reduce-scatter in line.
class TensorParallel {
 public:
  using bf16 = backend::Gpu::bf16;

  TensorParallel(std::shared_ptr<parallel::DeviceCollectives> group, const RankPlan& p,
                 bool overlap)
      : group_(std::move(group)), plan_(&p), overlap_(overlap) {}

  void create() {
    stream_.create();
    ready_ = OwnedEvent(EventUse::order);
    done_ = OwnedEvent(EventUse::order);
  }
  /// The table's buffers (train/buffer_table.hpp's tensor_parallel_buffers): the statistics
  /// every TP rank's vocabulary slice contributes to the loss, [tp][n][3]; under sequence
  /// parallelism the row-parallel GEMMs' bf16 partial products [n, h].
  void allocate(BufferAllocator& a, const BufferTable& table) {
    for (const BufferEntry& e : table) {
      if (e.buffer == BufferId::tp_loss_stats) ce_stats_ = a.take<float>(e);
      if (e.buffer == BufferId::tp_partial) partial_ = a.take<bf16>(e);
    }
  }

  bool sequence_parallel() const { return group_ && plan_->sequence_parallel; }
  /// [n, h] bf16: where a row-parallel GEMM writes its partial product for scatter_add.
  bf16* partial() { return partial_.data(); }

  /// Sequence parallelism: every rank's own rows (RankPlan::own_rows) of x [n, h] all-gathered in
  /// place over TP on `main` (a norm's bf16 output before the column-parallel GEMMs, the residual
  /// gradient's before the row-parallel ones' backward). Nothing without it.
  void gather_rows(bf16* x, gpuStream_t main, PhaseTimer& timer) {
    if (!sequence_parallel()) return;
    const profile::Range range("tp all-gather");
    timer.mark("tp_comm");
    group_->all_gather_bytes(x, row_elements() * sizeof(bf16), main);
    timer.mark("elementwise");
  }

  /// gemms(begin, count): the GEMMs that read rows [begin, begin + count) of x [n, h] (bf16). Under
  /// sequence parallelism x holds this rank's rows (a norm's output, or the residual gradient's
  /// bf16 copy) and the others' are all-gathered first: with overlap on the TP stream while
  /// gemms runs over this rank's rows on `main`, then over the rest once they arrive; without,
  /// in line before gemms(0, n). Without sequence parallelism: gemms(0, n).
  template <class RowGemms>
  void gather_rows_then(bf16* x, gpuStream_t main, PhaseTimer& timer, RowGemms&& gemms) {
    const std::int64_t n = plan_->n;
    if (!gathers_beside()) {
      gather_rows(x, main, timer);
      return gemms(std::int64_t{0}, n);
    }
    const std::int64_t begin = std::int64_t{plan_->tp_rank} * plan_->rows;
    const std::int64_t end = begin + plan_->rows;
    begin_gather(x, main);
    gemms(begin, plan_->rows);
    end_side(main);
    if (begin > 0) gemms(std::int64_t{0}, begin);
    if (end < n) gemms(end, n - end);
  }

  /// Whether sequence parallelism's all-gathers run beside other work (begin_gather): under
  /// sequence parallelism with overlap.
  bool gathers_beside() const { return sequence_parallel() && overlap_; }
  /// gather_rows started on the TP stream once `main`'s work so far (x's own rows) is done;
  /// end_side() makes `main` wait for it. Only where gathers_beside().
  void begin_gather(bf16* x, gpuStream_t main) {
    const profile::Range range("tp all-gather (overlapped)");
    begin_side(main, [&](gpuStream_t side) {
      group_->all_gather_bytes(x, row_elements() * sizeof(bf16), side);
    });
  }

  /// Sequence parallelism: out [rows, h] = residual + this rank's rows of partial() summed over TP,
  /// reduce-scattered in bf16 on `main`.
  void scatter_add(const float* residual, float* out, gpuStream_t main, PhaseTimer& timer) {
    {
      const profile::Range range("tp reduce-scatter");
      timer.mark("tp_comm");
      group_->reduce_scatter_sum_bf16(partial_.data(), row_elements(), main);
      timer.mark("elementwise");
    }
    backend::Gpu::add_bf16(residual, plan_->own_rows(partial_.data()), out, row_elements(), main);
  }

  /// x [n, h]: each rank's partial rows (the embedding's of its vocabulary slice) summed over TP
  /// into out [rows, h] on `main`: all-reduced in place (out is x), or under sequence parallelism
  /// reduce-scattered in fp32 and this rank's rows copied to out.
  void sum_rows(float* x, float* out, gpuStream_t main, PhaseTimer& timer) {
    if (!sequence_parallel()) return all_reduce(x, plan_->n * plan_->d.hidden, main, timer);
    scatter_rows(x, main, timer);
    backend::gpu_check(gpuMemcpyAsync(out, plan_->own_rows(x), row_elements() * sizeof(float),
                                      gpuMemcpyDeviceToDevice, main),
                       "gpuMemcpyAsync");
  }

  /// The residual gradient dres [rows, h] as all n rows read it (the embedding's backward):
  /// dres itself, or under sequence parallelism its all-gather into `full` [n, h].
  const float* gather_residual_grad(const float* dres, float* full, gpuStream_t main,
                                    PhaseTimer& timer) {
    if (!sequence_parallel()) return dres;
    backend::gpu_check(gpuMemcpyAsync(plan_->own_rows(full), dres, row_elements() * sizeof(float),
                                      gpuMemcpyDeviceToDevice, main),
                       "gpuMemcpyAsync");
    const profile::Range range("tp all-gather");
    timer.mark("tp_comm");
    group_->all_gather_bytes(full, row_elements() * sizeof(float), main);
    timer.mark("elementwise");
    return full;
  }

  /// Sequence parallelism: a norm gain's gradient g [count], partial over this rank's rows,
  /// summed over TP on `main` (as Megatron all-reduces its sequence-parallel parameters'
  /// gradients), once per step before the gradient norm. Nothing without it.
  void sum_norm_grad(float* g, std::int64_t count, gpuStream_t main, PhaseTimer& timer) {
    if (sequence_parallel()) all_reduce(g, count, main, timer);
  }

  /// x summed over the TP ranks on `main`: the partial products of a row-parallel GEMM, or the
  /// embedding's rows of each vocabulary slice.
  void all_reduce(float* x, std::int64_t count, gpuStream_t main, PhaseTimer& timer) {
    if (!group_) return;
    const profile::Range range("tp all-reduce");
    timer.mark("tp_comm");
    group_->all_reduce_sum(x, static_cast<std::size_t>(count), main);
    timer.mark("elementwise");
  }

  /// x max-reduced over the TP ranks on `main` (FP8's amaxes of split tensors and weights).
  void all_reduce_max(float* x, std::int64_t count, gpuStream_t main) {
    if (!group_) return;
    const profile::Range range("tp amax max");
    group_->all_reduce_max(x, static_cast<std::size_t>(count), main);
  }

  /// The backward pass's sum of a column-parallel input gradient x [n, h] over TP, started where
  /// it is complete: on the TP stream (else in line); end() makes `main` wait for it before the
  /// RMSNorm backward, which reads RankPlan::own_rows(x): all-reduced, or under sequence
  /// parallelism reduce-scattered (fp32) to each rank's rows.
  void begin_all_reduce(float* x, gpuStream_t main, PhaseTimer& timer) {
    if (!group_) return;
    const bool scatter = plan_->sequence_parallel;
    const std::int64_t count = plan_->n * plan_->d.hidden;
    if (!overlap_)
      return scatter ? scatter_rows(x, main, timer) : all_reduce(x, count, main, timer);
    const profile::Range range(scatter ? "tp reduce-scatter" : "tp all-reduce");
    begin_side(main, [&](gpuStream_t side) {
      if (scatter)
        group_->reduce_scatter_sum(x, static_cast<std::size_t>(row_elements()), side);
      else
        group_->all_reduce_sum(x, static_cast<std::size_t>(count), side);
    });
  }
  void end_all_reduce(gpuStream_t main) { end_side(main); }
  /// `main` waits for what the TP stream was given last (begin_side).
  void end_side(gpuStream_t main) {
    if (!pending_) return;
    backend::gpu_check(gpuStreamWaitEvent(main, done_, 0), "gpuStreamWaitEvent");
    pending_ = false;
  }

  /// out[M, N] = residual + a[M, K] w[K, N] with w this rank's rows of a row-parallel weight (O,
  /// down): the partial products summed over TP, the residual added by TP rank 0 alone. Under
  /// sequence parallelism out and residual are this rank's rows: the bf16 partial product is
  /// reduce-scattered (scatter_add).
  void row_parallel_add(const Gemms& gemm, std::int64_t M, std::int64_t N, std::int64_t K,
                        const bf16* a, const bf16* w, const float* residual, float* out,
                        PhaseTimer& timer) {
    if (sequence_parallel()) {
      if (overlap_ && plan_->tp == 2) return exchange_add(gemm, N, K, a, w, residual, out);
      gemm(false, false, M, N, K, a, K, w, N, 0.f, partial_.data(), N);
      return scatter_add(residual, out, gemm.stream, timer);
    }
    if (plan_->tp_rank == 0)
      gemm.add(M, N, K, a, w, residual, out);
    else
      gemm(false, false, M, N, K, a, K, w, N, 0.f, out, N);
    all_reduce(out, M * N, gemm.stream, timer);
  }

  /// Row losses and, in place, grad_scale * dloss/dlogits of this rank's logits [n, d.vocab] (n
  /// rows, at most plan n: the head's chunk): the fused kernel alone, or each rank's per-row
  /// statistics all-gathered and combined in rank order (the same losses on every rank).
  void cross_entropy(bf16* logits, const std::int32_t* targets, std::int64_t n, float grad_scale,
                     float* row_loss, gpuStream_t main, PhaseTimer& timer) {
    using backend::Gpu;
    const int vocab = plan_->d.vocab;
    if (!group_) {
      Gpu::cross_entropy(logits, targets, n, vocab, grad_scale, true, row_loss, main);
      return;
    }
    const auto begin = static_cast<int>(plan_->vocab_begin);
    const std::int64_t per_rank = n * Gpu::cross_entropy_stats_per_row;
    Gpu::cross_entropy_stats(logits, targets, n, vocab, begin,
                             ce_stats_.data() + plan_->tp_rank * per_rank, main);
    {
      const profile::Range range("tp cross-entropy exchange");
      timer.mark("tp_comm");
      group_->all_gather_bytes(ce_stats_.data(), per_rank * sizeof(float), main);
      timer.mark("loss");
    }
    Gpu::cross_entropy_combine(logits, targets, n, vocab, begin, ce_stats_.data(), plan_->tp,
                               grad_scale, true, row_loss, main);
  }

  /// The loss and the squares over the TP group on `main`: the loss once (TP rank 0's; every TP
  /// rank has it), each rank's squares. results = [loss sum, squares].
  void sum_loss_and_squares(double* results, gpuStream_t main) {
    if (!group_) return;
    const profile::Range range("tp loss and norm");
    if (plan_->tp_rank != 0)
      backend::gpu_check(gpuMemsetAsync(results, 0, sizeof(double), main), "memset");
    group_->all_reduce_sum(results, 2, main);
  }

  void synchronize() {
    if (stream_) (void)gpuStreamSynchronize(stream_);
  }

 private:
  std::int64_t row_elements() const { return plan_->rows * plan_->d.hidden; }

  /// row_parallel_add under sequence parallelism at TP 2, overlapped: the peer's rows of a w
  /// first, into partial()'s first half, sent to the peer on the TP stream while its rows of
  /// this rank's product arrive in the second half; meanwhile this rank's own rows and the
  /// residual (out = residual + a w over its rows, fp32), then the peer's bf16 product added.
  void exchange_add(const Gemms& gemm, std::int64_t N, std::int64_t K, const bf16* a, const bf16* w,
                    const float* residual, float* out) {
    const std::int64_t rows = plan_->rows;
    const int me = plan_->tp_rank, peer = 1 - me;
    bf16* send = partial_.data();
    bf16* recv = partial_.data() + rows * N;
    gemm(false, false, rows, N, K, a + peer * rows * K, K, w, N, 0.f, send, N);
    {
      const profile::Range range("tp exchange (overlapped)");
      begin_side(gemm.stream, [&](gpuStream_t side) {
        group_->send_recv_bytes(send, peer, recv, peer,
                                static_cast<std::size_t>(rows * N) * sizeof(bf16), side);
      });
    }
    gemm.add(rows, N, K, a + me * rows * K, w, residual, out);
    end_side(gemm.stream);
    backend::Gpu::add_bf16(out, recv, out, rows * N, gemm.stream);
  }

  /// collective(side) enqueued on the TP stream once `main`'s work so far is done; end_side()
  /// makes `main` wait for it. The one way work leaves `main` for the TP stream.
  template <class Collective>
  void begin_side(gpuStream_t main, Collective&& collective) {
    stream_wait(stream_, main, ready_);
    collective(gpuStream_t(stream_));
    backend::gpu_check(gpuEventRecord(done_, stream_), "gpuEventRecord");
    pending_ = true;
  }

  /// x [n, h] summed over TP into each rank's own rows, fp32, in line on `main`.
  void scatter_rows(float* x, gpuStream_t main, PhaseTimer& timer) {
    const profile::Range range("tp reduce-scatter");
    timer.mark("tp_comm");
    group_->reduce_scatter_sum(x, static_cast<std::size_t>(row_elements()), main);
    timer.mark("elementwise");
  }

  std::shared_ptr<parallel::DeviceCollectives> group_;
  const RankPlan* plan_;
  bool overlap_ = true;
  OwnedStream stream_;
  OwnedEvent ready_, done_;
  bool pending_ = false;
  backend::DeviceBuffer<float> ce_stats_;
  backend::DeviceBuffer<bf16> partial_;  // [n, h] sequence parallelism only
};

}  // namespace tprimat::train::device
