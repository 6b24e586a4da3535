// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Head: the last stage's final norm, LM head (or the tied embedding) and loss, forward and
// backward, on the device.
#pragma once

#include <algorithm>
#include <cstdint>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/buffer.hpp"
#include "tprimat/train/device/activations.hpp"
#include "tprimat/train/device/gemms.hpp"
#include "tprimat/train/device/parameters.hpp"
#include "tprimat/train/device/phase_timer.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/rank_plan.hpp"
#include "tprimat/train/device/tensor_parallel.hpp"

namespace tprimat::train::device {

struct Head {
  using Gpu = backend::Gpu;
  const RankPlan& plan;
  DeviceParameters& params;
  Activations& acts;
  Scratch& scratch;
  TensorParallel& tp;
  PhaseTimer& timer;
  Gemms gemm;

  /// The head of micro-batch `micro`, forward and most of its backward at once, chunk by chunk
  /// (train::loss_chunk_rows rows of logits at a time): the final norm of the stage's output in
  /// slot `slot`, then for each chunk its logits, its loss (targets at `targets`) with
  /// grad_scale * dloss/dlogits in place, the head's input gradient (into acts.head_dxn) and its
  /// weight gradient, written (`acc` 0, the first chunk) or added. The loss is added to
  /// *loss_sum (written by micro-batch 0) through `partials` (Gpu::reduce_partials doubles).
  /// backward() finishes from acts.head_dxn: nothing between the two may run another head.
  void forward(int micro, int slot, const std::int32_t* targets, float grad_scale, float acc,
               double* loss_sum, double* partials) {
    const model::Dims& d = plan.d;
    const std::int64_t n = plan.n, h = d.hidden, V = d.vocab;
    const gpuStream_t stream = gemm.stream;
    Gpu::rmsnorm_forward(acts.stage_output(slot), params.w(plan.table.final_norm), nullptr,
                         plan.rows, d.hidden, static_cast<float>(d.norm_eps),
                         plan.own_rows(acts.xn_final.data()), acts.rstd_final.data(), stream);
    tp.gather_rows(acts.xn_final.data(), stream, timer);  // the vocab-parallel head reads all rows
    bf16* logits = acts.logits.data();
    for (std::int64_t r0 = 0; r0 < n; r0 += loss_chunk_rows) {
      const std::int64_t rows = std::min(loss_chunk_rows, n - r0);
      const bf16* xn = acts.xn_final.data() + r0 * h;
      timer.mark("gemm");
      if (d.tied_embeddings)  // logits = xn E^T, E [vocab, hidden]
        gemm(false, true, rows, V, h, xn, h, params.w(plan.table.embedding), h, 0.f, logits, V);
      else
        gemm(false, false, rows, V, h, xn, h, params.w(plan.table.head), V, 0.f, logits, V);
      timer.mark("loss");
      tp.cross_entropy(logits, targets + r0, rows, grad_scale, acts.row_loss.data() + r0, stream,
                       timer);
      timer.mark("gemm");
      const float beta = r0 == 0 ? acc : 1.f;  // logits now hold the loss's gradient
      float* dxn = acts.head_dxn.data() + r0 * h;
      if (d.tied_embeddings) {
        gemm(false, false, rows, h, V, logits, V, params.w(plan.table.embedding), h, 0.f, dxn, h);
        gemm(true, false, V, h, rows, logits, V, xn, h, beta, params.g(plan.table.embedding), h);
      } else {
        gemm(false, true, rows, h, V, logits, V, params.w(plan.table.head), V, 0.f, dxn, h);
        gemm(true, false, h, V, rows, xn, h, logits, V, beta, params.g(plan.table.head), V);
      }
    }
    timer.mark("elementwise");
    Gpu::reduce_sum(acts.row_loss.data(), n, false, micro > 0, loss_sum, partials, stream);
  }

  /// scratch.dres (and dres_bf) = d loss / d stage output of slot `slot` (this rank's rows under
  /// sequence parallelism), from the head's input gradient forward() left; the final norm's
  /// weight gradient added (into what zero_gradients() cleared).
  void backward(int slot) {
    const model::Dims& d = plan.d;
    const gpuStream_t stream = gemm.stream;
    Scratch& s = scratch;
    float* dxn = acts.head_dxn.data();
    tp.begin_all_reduce(dxn, stream, timer);
    tp.end_all_reduce(stream);
    backend::gpu_check(gpuMemsetAsync(s.dres.data(), 0, s.dres.bytes(), stream), "memset");
    Gpu::rmsnorm_backward(acts.stage_output(slot), params.w(plan.table.final_norm), nullptr,
                          acts.rstd_final.data(), plan.own_rows(dxn), plan.rows, d.hidden,
                          s.dres.data(), plan.own_rows(s.dres_bf.data()),
                          params.g(plan.table.final_norm), s.norm_partials.data(), stream);
  }
};

}  // namespace tprimat::train::device
