// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Fp8Linears: the FP8 side of the decoder layers' linear projections (docs/fp8.md): the weights'
// casts (once a step, or at each use when the copies are recast), the activations' transposes
// for the weight gradients, the gradients' casts, the scales, and the three GEMMs of a projection.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/buffer.hpp"
#include "tprimat/backend/gpu/fp8_gemm.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/kernels/fp8_format.hpp"
#include "tprimat/parallel/device_collectives.hpp"
#include "tprimat/parallel/validate.hpp"
#include "tprimat/train/buffer_table.hpp"
#include "tprimat/train/device/fp8_scales.hpp"
#include "tprimat/train/device/gemms.hpp"
#include "tprimat/train/device/parameters.hpp"
#include "tprimat/train/device/resources.hpp"
#include "tprimat/train/device/tensor_parallel.hpp"
#include "tprimat/train/fp8_tensors.hpp"
#include "tprimat/train/gradient_buckets.hpp"
#include "tprimat/train/precision.hpp"
#include "tprimat/train/rank_plan.hpp"

namespace tprimat::train::device {

using model::index_of;

/// One cast tensor as a GEMM reads it: row-major bytes and their scale_inv.
struct Fp8Cast {
  const std::uint8_t* rows = nullptr;  ///< [r, c]
  const std::uint8_t* cols = nullptr;  ///< [c, r]: the transpose
  const float* scale_inv = nullptr;
};

/// What an input's cast reads: a bf16 tensor, or SwiGLU's gate and up, its output h computed in
/// the cast's pass (Gpu::fp8_swiglu_cast) and never written in bf16.
struct Fp8Source {
  using bf16 = backend::Gpu::bf16;
  const bf16* x = nullptr;
  const bf16* gate = nullptr;
  const bf16* up = nullptr;

  Fp8Source(const bf16* tensor) : x(tensor) {}  // NOLINT(google-explicit-constructor): a tensor
  static Fp8Source swiglu(const bf16* gate, const bf16* up) {
    Fp8Source s(nullptr);
    s.gate = gate;
    s.up = up;
    return s;
  }
};

/// Whether a tensor of a layer is split over TP (each rank holds part of it: its amax is the
/// group's max) or replicated.
enum class TpSplit : bool { replicated, split };

class Fp8Linears {
 public:
  using bf16 = backend::Gpu::bf16;

  bool enabled() const { return enabled_; }
  /// Whether local layer l runs its projections in FP8.
  bool on(int l) const { return enabled_ && on_[static_cast<std::size_t>(l)]; }
  /// on() of every local layer (empty when FP8 is off).
  const std::vector<bool>& layers_on() const { return on_; }

  /// Under TP, `tp` max-reduces the amaxes of split tensors and of the weights (docs/fp8.md);
  /// under context parallelism `cp` those of every activation and gradient (each CP rank holds
  /// other tokens of the sequences: every rank casts with the scales of the whole sequences);
  /// under FSDP `shard` those of the weights (each rank holds slices of them). The FP8 buffers
  /// are the table's (train/buffer_table.hpp's fp8_buffers), allocated in its order.
  void allocate(BufferAllocator& a, const RankPlan& p, const PrecisionConfig& precision,
                TensorParallel& tp, std::shared_ptr<parallel::DeviceCollectives> cp,
                std::shared_ptr<parallel::DeviceCollectives> shard, const BufferTable& table) {
    precision_ = precision;
    tp_ = &tp;
    cp_ = std::move(cp);
    shard_ = std::move(shard);
    enabled_ = precision.is_fp8();
    if (!enabled_) return;
    // The device's FP8 formats: OCP E4M3/E5M2 on NVIDIA and gfx950, the fnuz ones on gfx942;
    // a HIP build without hipBLASLt refuses here, naming the fix.
    const backend::Fp8GemmFormats formats = backend::fp8_gemm_formats();
    plan_ = &p;
    layers_ = p.local_layers;
    slots_ = p.slots;
    parallel::check_fp8_gemm_shapes(p.full, p.tp, p.n);
    on_.assign(static_cast<std::size_t>(layers_), false);
    for (int l = 0; l < layers_; ++l) on_[l] = local_layer_in_fp8(p, precision, l);
    // Weight w of layer l: [in, out] as the bf16 weight, and its transpose.
    kept_ = precision.fp8.copies == Fp8Copies::kept;
    for (Projection w : model::projections)
      weight_shape_[index_of(w)] = model::projection_shape(p.d, w);
    weights_.resize(static_cast<std::size_t>(layers_));
    input_width_ = fp8_input_widths(p.d);
    saved_.resize(static_cast<std::size_t>(slots_) * layers_);
    using B = BufferId;
    for (const BufferEntry& e : table) {
      const auto i = static_cast<std::size_t>(e.index);
      const auto part = static_cast<std::size_t>(e.part);
      switch (e.buffer) {
        case B::fp8_weight_rows: weights_.at(i).rows.at(part) = a.take<std::uint8_t>(e); break;
        case B::fp8_weight_cols: weights_.at(i).cols.at(part) = a.take<std::uint8_t>(e); break;
        // Recast: one weight at a time, cast just before the GEMM that reads it (the stream
        // orders the next cast after that GEMM).
        case B::fp8_recast_weight: recast_weight_ = a.take<std::uint8_t>(e); break;
        // Each slot's transposed inputs for the weight gradients: [h, n] [qd, n] [h, n] [f, n].
        case B::fp8_saved_input: saved_.at(i).at(part) = a.take<std::uint8_t>(e); break;
        // The forward's rows of an input in flight; with recast copies also the backward's
        // transpose.
        case B::fp8_input_scratch: input_scratch_ = a.take<std::uint8_t>(e); break;
        case B::fp8_grad_rows: grad_pairs_.at(part).rows = a.take<std::uint8_t>(e); break;
        case B::fp8_grad_cols: grad_pairs_.at(part).cols = a.take<std::uint8_t>(e); break;
        default: break;
      }
    }
    forward_.allocate(a, formats.forward, fp8_forward_scales(layers_, slots_, precision), table, 0);
    backward_.allocate(a, formats.gradient, fp8_backward_scales(layers_, precision), table, 1);
  }

  // ---- once a step ---------------------------------------------------------------------------
  /// The weights' scales for the step, and with kept copies every FP8 layer's weights cast (and
  /// transposed), before the step's first micro-batch.
  /// Scaled from their own amaxes, every weight's amax pass comes first, then one max over the
  /// TP group for all of them (each rank holds a shard), one scale update, and the casts. Recast
  /// copies record the delayed recipe's weight amaxes here too, in an amax pass of their own.
  /// FSDP (recast copies, check_sharding_built): each rank's amax pass reads the part of each
  /// weight its slices hold (`buckets` places them), and the sharding group takes the max.
  void cast_weights(const RankPlan& p, const DeviceParameters& params, const BucketPlan& buckets,
                    gpuStream_t stream) {
    if (!enabled_) return;
    params_ = &params;
    auto for_each_weight = [&](auto&& f) {
      for (int l = 0; l < layers_; ++l) {
        if (!on_[l]) continue;
        for (Projection w : model::projections)
          f(l, index_of(w), params.w(p.table.layers[l][w]));
      }
    };
    auto size = [&](int w) { return weight_shape_[w].size(); };
    const std::int64_t count = std::int64_t{layers_} * fp8_weights;
    // Every FP8 weight's amax into amax_of(its id), the sharding group's max under FSDP.
    auto amax_pass = [&](auto&& amax_of) {
      const bool sliced = params.sharded_weights();
      for_each_weight([&](int l, int w, const bf16* x) {
        if (!sliced) {
          backend::Gpu::fp8_amax(x, size(w), amax_of(weight_id(l, w)), stream);
          return;
        }
        const auto [held, n] = params.held_part(buckets.buckets[p.layer_segment(l)],
                                                p.table.layers[l][model::projections[w]], size(w));
        backend::Gpu::fp8_amax(held, n, amax_of(weight_id(l, w)), stream);
      });
      if (sliced && shard_)
        shard_->all_reduce_max(amax_of(0), static_cast<std::size_t>(count), stream);
    };
    if (scaled_alone()) {
      amax_pass([&](int id) { return forward_.amax_now(id); });
      tp_->all_reduce_max(forward_.amax_now(0), count, stream);
      forward_.update_current(0, static_cast<int>(count), precision_.fp8.margin, stream);
    }
    if (!kept_) {
      if (records_amax()) amax_pass([&](int id) { return forward_.amax(id); });
      return;
    }
    for_each_weight([&](int l, int w, const bf16* x) {
      const int id = weight_id(l, w);
      backend::Gpu::fp8_cast_transpose(x, weight_shape_[w].in, weight_shape_[w].out,
                                       forward_.format(), forward_.scale(id),
                                       weights_[l].rows[w].data(), weights_[l].cols[w].data(),
                                       records_amax() ? forward_.amax(id) : nullptr, stream);
    });
  }
  /// After the step's last backward pass: delayed scaling's history update (in the graph); the
  /// first step's scales came from the tensors' own amaxes, every later one's from the history.
  void end_step(gpuStream_t stream) {
    if (!enabled_) return;
    if (precision_.fp8.recipe == Fp8Recipe::delayed) {
      // Replicated tensors' amaxes are equal on every TP rank; split ones take the group's max.
      tp_->all_reduce_max(forward_.amaxes(), forward_.base(), stream);
      tp_->all_reduce_max(backward_.amaxes(), backward_.base(), stream);
      if (cp_) {
        cp_->all_reduce_max(forward_.amaxes(), static_cast<std::size_t>(forward_.base()), stream);
        cp_->all_reduce_max(backward_.amaxes(), static_cast<std::size_t>(backward_.base()),
                            stream);
      }
      forward_.update_delayed(precision_.fp8.margin, stream);
      backward_.update_delayed(precision_.fp8.margin, stream);
    }
    calibrated_ = true;
  }

  // ---- a projection's operands ----------------------------------------------------------------
  /// The forward's input x [n, width] of layer l in slot `slot` cast (E4M3): its rows for the
  /// forward GEMMs, its transpose kept for the weight gradients.
  Fp8Cast cast_input(int slot, int l, Fp8Input i, const Fp8Source& x, gpuStream_t stream) {
    const int id = input_id(scaled_alone() ? slot : 0, l, i);
    // x_o and x_down are split over TP (heads, FFN); x_qkv and x_mlp are replicated.
    std::uint8_t* kept = saved(slot, l)[i].data();  // null when recast: rows alone
    const TpSplit split = i == x_o || i == x_down ? TpSplit::split : TpSplit::replicated;
    cast<1>(forward_, id, input_id(0, l, i), split, {{{input_scratch_.data(), kept}}}, stream,
            [&](const kernels::Fp8Targets<1>& t) {
              pass(x, input_width_[i], forward_.format(), t.t[0], stream);
            });
    return Fp8Cast{input_scratch_.data(), kept, forward_.scale_inv(id)};
  }
  /// The transposed input the weight gradient of the same step and slot reads: the one the
  /// forward kept, or with recast copies (x_o, x_down) `x` cast again with the forward's scale:
  /// the attention output the backward keeps, the SwiGLU output computed again from gate and up,
  /// bit for bit the forward's.
  Fp8Cast saved_input(int slot, int l, Fp8Input i, const Fp8Source& x, gpuStream_t stream) {
    const int id = input_id(scaled_alone() ? slot : 0, l, i);
    if (kept_ || !recast_input(i))
      return Fp8Cast{nullptr, saved(slot, l)[i].data(), forward_.scale_inv(id)};
    pass(x, input_width_[i], forward_.format(),
         {forward_.scale(id), nullptr, input_scratch_.data(), nullptr}, stream);
    return Fp8Cast{nullptr, input_scratch_.data(), forward_.scale_inv(id)};
  }
  /// The gradient g [n, width] of layer l cast (E5M2) into scratch pair `pair` at byte `offset`.
  Fp8Cast cast_grad(int l, Fp8Grad g, const bf16* x, std::int64_t width, int pair,
                    std::int64_t offset, gpuStream_t stream) {
    const int id = l * fp8_grads + g;
    std::uint8_t* rows = grad_pairs_[pair].rows.data() + offset;
    std::uint8_t* cols = grad_pairs_[pair].cols.data() + offset;
    // The gradients of the layer's output and of the attention residual are replicated over TP;
    // q, k, v, gate and up are split.
    const TpSplit split = g != g_down && g != g_o ? TpSplit::split : TpSplit::replicated;
    cast<1>(backward_, id, id, split, {{{rows, cols}}}, stream,
            [&](const kernels::Fp8Targets<1>& t) {
              pass(x, width, backward_.format(), t.t[0], stream);
            });
    return Fp8Cast{rows, cols, backward_.scale_inv(id)};
  }
  /// SwiGLU's gradients of layer l (E5M2) computed from gate, up and dh where they are cast
  /// (Gpu::fp8_swiglu_grad_cast), never written in bf16: dgate's into scratch pair 1, dup's into
  /// pair 0, as cast_grad would place them.
  std::array<Fp8Cast, 2> cast_swiglu_grads(int l, const bf16* gate, const bf16* up, const bf16* dh,
                                           gpuStream_t stream) {
    static_assert(g_up == g_gate + 1, "tprimat: one scale update takes both");
    const int id = l * fp8_grads + g_gate;
    const std::int64_t f = input_width_[x_down];
    Pair &pg = grad_pairs_[1], &pu = grad_pairs_[0];
    // Both split over TP (FFN columns).
    cast<2>(backward_, id, id, TpSplit::split,
            {{{pg.rows.data(), pg.cols.data()}, {pu.rows.data(), pu.cols.data()}}}, stream,
            [&](const kernels::Fp8Targets<2>& t) {
              backend::Gpu::fp8_swiglu_grad_cast(gate, up, dh, plan_->n, f, backward_.format(),
                                                 t.t[0], t.t[1], stream);
            });
    return {Fp8Cast{pg.rows.data(), pg.cols.data(), backward_.scale_inv(id)},
            Fp8Cast{pu.rows.data(), pu.cols.data(), backward_.scale_inv(id + 1)}};
  }
  /// Weight w of layer l as the forward GEMM reads it (the transpose), cast now if recast.
  Fp8Cast forward_weight(const LayerParams& lp, int l, Projection w, gpuStream_t stream) {
    const int id = weight_id(l, index_of(w));
    const auto& shape = weight_shape_[index_of(w)];
    if (kept_)
      return Fp8Cast{nullptr, weights_[l].cols[index_of(w)].data(), forward_.scale_inv(id)};
    backend::Gpu::fp8_cast_transpose(params_->w(lp[w]), shape.in, shape.out,
                                     forward_.format(), forward_.scale(id),
                                     nullptr, recast_weight_.data(), nullptr, stream);
    return Fp8Cast{nullptr, recast_weight_.data(), forward_.scale_inv(id)};
  }
  /// Weight w of layer l as the input-gradient GEMM reads it (the rows), cast now if recast.
  Fp8Cast backward_weight(const LayerParams& lp, int l, Projection w, gpuStream_t stream) {
    const int id = weight_id(l, index_of(w));
    if (kept_)
      return Fp8Cast{weights_[l].rows[index_of(w)].data(), nullptr, forward_.scale_inv(id)};
    backend::Gpu::fp8_cast(params_->w(lp[w]), weight_shape_[index_of(w)].size(), forward_.format(),
                           forward_.scale(id), recast_weight_.data(), nullptr, stream);
    return Fp8Cast{recast_weight_.data(), nullptr, forward_.scale_inv(id)};
  }

  // ---- the three GEMMs of y[n, out] = x[n, in] W[in, out] ------------------------------------
  /// y = x W (+ bias) (+ residual): E4M3 x E4M3, fast accumulation.
  template <class Out>
  void forward(const Gemms& gemm, const Fp8Cast& x, const Fp8Cast& w, std::int64_t in,
               std::int64_t out, Out* y, const Out* residual = nullptr,
               const bf16* bias = nullptr) const {
    gemm.fp8<Out>(plan_->n, out, in, {x.rows, forward_.format(), x.scale_inv, in},
                  {w.cols, forward_.format(), w.scale_inv, in}, residual ? 1.f : 0.f, y,
                  backend::Fp8Accumulation::fast, residual, bias);
  }
  /// dx (+)= g W^T: E5M2 x E4M3, split accumulation.
  template <class Out>
  void input_grad(const Gemms& gemm, const Fp8Cast& g, const Fp8Cast& w, std::int64_t in,
                  std::int64_t out, float beta, Out* dx) const {
    gemm.fp8<Out>(plan_->n, in, out, {g.rows, backward_.format(), g.scale_inv, out},
                  {w.rows, forward_.format(), w.scale_inv, out}, beta, dx,
                  backend::Fp8Accumulation::split);
  }
  /// dW[in, out] (+)= x^T g: E4M3 x E5M2, split accumulation, fp32.
  void weight_grad(const Gemms& gemm, const Fp8Cast& x, const Fp8Cast& g, std::int64_t in,
                   std::int64_t out, float acc, float* dw) const {
    gemm.fp8<float>(in, out, plan_->n, {x.cols, forward_.format(), x.scale_inv, plan_->n},
                    {g.cols, backward_.format(), g.scale_inv, plan_->n}, acc, dw,
                    backend::Fp8Accumulation::split);
  }

  std::vector<float> forward_scales() const { return forward_.scales(); }
  std::vector<float> backward_scales() const { return backward_.scales(); }

 private:
  struct LayerWeights {
    std::array<backend::DeviceBuffer<std::uint8_t>, fp8_weights> rows, cols;
  };
  struct Pair {
    backend::DeviceBuffer<std::uint8_t> rows, cols;
  };
  using Saved = std::array<backend::DeviceBuffer<std::uint8_t>, fp8_inputs>;

  /// This step scales each cast from its own amax: the current recipe, and the delayed recipe's
  /// first step (no history yet).
  bool scaled_alone() const { return precision_.fp8.recipe == Fp8Recipe::current || !calibrated_; }
  /// Casts record their tensor's amax for the history: delayed scaling only.
  bool records_amax() const { return precision_.fp8.recipe == Fp8Recipe::delayed; }

  int weight_id(int l, int w) const { return l * fp8_weights + w; }
  int input_id(int slot, int l, int i) const {
    const int base = layers_ * fp8_weights;
    if (slot == 0) return base + l * fp8_inputs + i;
    return base + layers_ * fp8_inputs + ((slot - 1) * layers_ + l) * fp8_inputs + i;
  }
  Saved& saved(int slot, int l) { return saved_[std::size_t(slot) * layers_ + std::size_t(l)]; }
  const Saved& saved(int slot, int l) const {
    return saved_[std::size_t(slot) * layers_ + std::size_t(l)];
  }

  /// Where a cast writes one tensor: its rows and its transpose (either may be null).
  struct CastBytes {
    std::uint8_t* rows = nullptr;
    std::uint8_t* cols = nullptr;
  };
  /// Tensors [id, id + N), which one `pass` computes from one source, cast into `bytes` with
  /// their scales: scaled from their own amaxes first when scaled_alone() (an amax-only pass);
  /// under delayed scaling the amaxes are recorded into [history_id, history_id + N)'s step
  /// amaxes.
  template <int N, class Pass>
  void cast(Fp8Scales& scales, int id, int history_id, TpSplit split,
            const std::array<CastBytes, N>& bytes, gpuStream_t stream, Pass&& pass) {
    kernels::Fp8Targets<N> t{};
    if (scaled_alone()) {
      for (int k = 0; k < N; ++k) t.t[k] = {nullptr, nullptr, nullptr, scales.amax_now(id + k)};
      pass(t);
      reduce_amax_now(scales, id, N, split, stream);
    }
    for (int k = 0; k < N; ++k)
      t.t[k] = {scales.scale(id + k), bytes[k].rows, bytes[k].cols,
                records_amax() ? scales.amax(history_id + k) : nullptr};
    pass(t);
  }
  /// Current scaling's step between the amax pass and the cast: tensors [id, id + count)'s
  /// amaxes maxed over the TP group (split tensors) and the CP group, then their scales.
  void reduce_amax_now(Fp8Scales& scales, int id, int count, TpSplit split, gpuStream_t stream) {
    if (split == TpSplit::split) tp_->all_reduce_max(scales.amax_now(id), count, stream);
    if (cp_) cp_->all_reduce_max(scales.amax_now(id), static_cast<std::size_t>(count), stream);
    scales.update_current(id, count, precision_.fp8.margin, stream);
  }
  /// One pass over `x` [plan n, cols] into `t`: the amax alone, the rows, the transpose, or both.
  void pass(const Fp8Source& x, std::int64_t cols, kernels::Fp8Format format,
            const kernels::Fp8Target& t, gpuStream_t stream) const {
    using backend::Gpu;
    const std::int64_t rows = plan_->n;
    if (x.gate != nullptr) return Gpu::fp8_swiglu_cast(x.gate, x.up, rows, cols, format, t, stream);
    if (t.out == nullptr && t.out_t == nullptr)
      return Gpu::fp8_amax(x.x, rows * cols, t.amax, stream);
    if (t.out_t == nullptr)
      return Gpu::fp8_cast(x.x, rows * cols, format, t.scale, t.out, t.amax, stream);
    Gpu::fp8_cast_transpose(x.x, rows, cols, format, t.scale, t.out, t.out_t, t.amax, stream);
  }

  PrecisionConfig precision_;
  bool enabled_ = false, calibrated_ = false, kept_ = true;
  const RankPlan* plan_ = nullptr;
  const DeviceParameters* params_ = nullptr;
  TensorParallel* tp_ = nullptr;
  std::shared_ptr<parallel::DeviceCollectives> cp_;     // null without context parallelism
  std::shared_ptr<parallel::DeviceCollectives> shard_;  // FSDP's sharding group, else null
  int layers_ = 0, slots_ = 1;
  std::vector<bool> on_;
  std::array<model::WeightShape, fp8_weights> weight_shape_{};  ///< this TP rank's [in, out]
  std::array<std::int64_t, fp8_inputs> input_width_{};
  std::vector<LayerWeights> weights_;
  std::vector<Saved> saved_;
  backend::DeviceBuffer<std::uint8_t> input_scratch_, recast_weight_;
  std::array<Pair, 2> grad_pairs_;
  Fp8Scales forward_, backward_;
};

}  // namespace tprimat::train::device
