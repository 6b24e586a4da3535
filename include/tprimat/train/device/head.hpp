// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Head: the last stage's final norm, LM head (or the tied embedding) and loss, forward and
// backward, on the device.
#pragma once

#include <cstdint>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/buffer.hpp"
#include "tprimat/train/device/activations.hpp"
#include "tprimat/train/device/gemms.hpp"
#include "tprimat/train/device/parameters.hpp"
#include "tprimat/train/device/phase_timer.hpp"
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

  /// Logits of the stage's output in slot `slot`, then the loss of micro-batch `micro` (its
  /// targets at `targets`) added to *loss_sum (written by micro-batch 0) through `partials`
  /// (Gpu::reduce_partials doubles); the logits are overwritten by grad_scale * dloss/dlogits
  /// for backward().
  void forward(int micro, int slot, const std::int32_t* targets, float grad_scale, double* loss_sum,
               double* partials) {
    const model::Dims& d = plan.d;
    const std::int64_t n = plan.n, h = d.hidden, V = d.vocab;
    const gpuStream_t stream = gemm.stream;
    Gpu::rmsnorm_forward(acts.stage_output(slot), params.w(plan.table.final_norm), nullptr,
                         plan.rows, d.hidden, static_cast<float>(d.norm_eps),
                         plan.own_rows(acts.xn_final.data()), acts.rstd_final.data(), stream);
    tp.gather_rows(acts.xn_final.data(), stream, timer);  // the vocab-parallel head reads all rows
    if (d.tied_embeddings)  // logits = xn E^T, E [vocab, hidden]
      gemm(false, true, n, V, h, acts.xn_final.data(), h, params.w(plan.table.embedding), h, 0.f,
           acts.logits.data(), V);
    else
      gemm(false, false, n, V, h, acts.xn_final.data(), h, params.w(plan.table.head), V, 0.f,
           acts.logits.data(), V);
    timer.mark("loss");
    tp.cross_entropy(acts.logits.data(), targets, grad_scale, acts.row_loss.data(), stream, timer);
    Gpu::reduce_sum(acts.row_loss.data(), n, false, micro > 0, loss_sum, partials, stream);
    timer.mark("elementwise");
  }

  /// scratch.dres (and dres_bf) = d loss / d stage output of slot `slot` (this rank's rows under
  /// sequence parallelism); the head's and the final norm's weight gradients written (acc 0) or
  /// added (acc 1).
  void backward(int slot, float acc) {
    const model::Dims& d = plan.d;
    const std::int64_t n = plan.n, h = d.hidden, V = d.vocab;
    const gpuStream_t stream = gemm.stream;
    Scratch& s = scratch;
    const bf16* dlogits = acts.logits.data();  // the loss left grad_scale * dloss/dlogits here
    if (d.tied_embeddings) {
      gemm(false, false, n, h, V, dlogits, V, params.w(plan.table.embedding), h, 0.f, s.dxn.data(),
           h);
      tp.begin_all_reduce(s.dxn.data(), stream, timer);
      gemm(true, false, V, h, n, dlogits, V, acts.xn_final.data(), h, acc,
           params.g(plan.table.embedding), h);
    } else {
      gemm(false, true, n, h, V, dlogits, V, params.w(plan.table.head), V, 0.f, s.dxn.data(), h);
      tp.begin_all_reduce(s.dxn.data(), stream, timer);
      gemm(true, false, h, V, n, acts.xn_final.data(), h, dlogits, V, acc,
           params.g(plan.table.head), V);
    }
    tp.end_all_reduce(stream);
    backend::gpu_check(gpuMemsetAsync(s.dres.data(), 0, s.dres.bytes(), stream), "memset");
    Gpu::rmsnorm_backward(acts.stage_output(slot), params.w(plan.table.final_norm), nullptr,
                          acts.rstd_final.data(), plan.own_rows(s.dxn.data()), plan.rows, d.hidden,
                          s.dres.data(), plan.own_rows(s.dres_bf.data()),
                          params.g(plan.table.final_norm), s.norm_partials.data(), stream);
  }
};

}  // namespace tprimat::train::device
