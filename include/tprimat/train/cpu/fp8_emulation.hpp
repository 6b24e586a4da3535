// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The CPU model's FP8 emulation (docs/fp8.md): each FP8 tensor's scale and amax history, and the
// quantise-dequantise Q_F(x; s) applied wherever the device engine casts to FP8.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/kernels/fp8_cast_reference.hpp"
#include "tprimat/kernels/fp8_format.hpp"
#include "tprimat/train/parameters.hpp"
#include "tprimat/train/precision.hpp"

namespace tprimat::train {

/// The 18 FP8 tensors of one decoder layer (docs/fp8.md's table): the 7 weights, the 4
/// activations the forward GEMMs read, the 7 gradients the backward GEMMs read. Each has its own
/// scale per layer.
enum class Fp8Tensor : std::uint8_t {
  // E4M3 weights, cast once per optimizer step
  w_q,
  w_k,
  w_v,
  w_o,
  w_gate,
  w_up,
  w_down,
  // E4M3 activations, cast in the forward pass
  x_qkv,
  x_o,
  x_mlp,
  x_down,
  // E5M2 gradients, cast in the backward pass
  g_down,
  g_gate,
  g_up,
  g_o,
  g_q,
  g_k,
  g_v,
};
inline constexpr int fp8_tensors_per_layer = 18;
inline constexpr int fp8_weights_per_layer = model::projection_count;
inline constexpr int fp8_activations_per_layer = 4;

inline const char* fp8_tensor_name(Fp8Tensor t) {
  static constexpr const char* names[fp8_tensors_per_layer] = {
      "w_q",   "w_k",    "w_v",    "w_o",    "w_gate", "w_up", "w_down", "x_qkv", "x_o",
      "x_mlp", "x_down", "g_down", "g_gate", "g_up",   "g_o",  "g_q",    "g_k",   "g_v"};
  return names[static_cast<int>(t)];
}
inline bool fp8_is_weight(Fp8Tensor t) { return t <= Fp8Tensor::w_down; }
inline bool fp8_is_gradient(Fp8Tensor t) { return t >= Fp8Tensor::g_down; }
/// The hybrid recipe's formats: E4M3 for what the forward pass multiplies, E5M2 for gradients
/// (the settings' pair: OCP, or gfx942's fnuz).
inline kernels::Fp8Format fp8_format_of(Fp8Tensor t, const Fp8Settings& s = {}) {
  return fp8_is_gradient(t) ? s.gradient_format : s.forward_format;
}
/// Whether tensor parallelism splits the tensor over its group (its amax is then the max over
/// the group); the norm outputs and the residual stream's gradients are replicated.
inline bool fp8_split_by_tp(Fp8Tensor t) {
  return !(t == Fp8Tensor::x_qkv || t == Fp8Tensor::x_mlp || t == Fp8Tensor::g_down ||
           t == Fp8Tensor::g_o);
}
/// The FP8 tensor of projection w's weight: the weights lead the tensors in
/// model::projections' order.
constexpr Fp8Tensor fp8_weight(Projection w) {
  static_assert(int(Fp8Tensor::w_down) + 1 == model::projection_count);
  return static_cast<Fp8Tensor>(w);
}
/// Where weight `w` of a layer lives in the flat parameter buffer.
inline std::int64_t fp8_weight_offset(const LayerParams& lp, Fp8Tensor w) {
  return lp[static_cast<Projection>(w)];
}

/// Q_F(x; s) = decode_F(cast_F(x * s)) * (1.0f / s): the value an FP8 GEMM sees for `x`, through
/// the bit-exact CPU reference of the device cast (round to nearest even, saturating).
inline float fp8_quantize(float x, float scale, kernels::Fp8Format f) {
  const float scale_inv = 1.0f / scale;
  return kernels::fp8_to_float(kernels::fp8_reference_cast(x * scale, f), f) * scale_inv;
}

/// The largest |x| of n elements; NaN when any is NaN, so that a broken tensor keeps the previous
/// scale (kernels::fp8_reference_scale) instead of a scale from its finite part.
template <class T>
float fp8_amax(const T* x, std::int64_t n) {
  float m = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) {
    const float a = std::fabs(static_cast<float>(x[i]));
    if (std::isnan(a)) return a;
    m = std::max(m, a);
  }
  return m;
}

/// The FP8 state of one model shard's decoder layers and the casts its forward and backward
/// passes call. Without FP8 (default-constructed) it holds nothing and every layer is out of FP8.
///
/// Step protocol (TrainingStep follows it): begin_step() casts the weights before the step's
/// first micro-batch; forward and backward then cast activations and gradients; end_step() after
/// the last backward pass moves the delayed recipe's histories and scales on. Layers are this
/// shard's local indices; whether one runs in FP8 is decided by its GLOBAL index (current
/// recipe: not the model's first and last).
template <class T>
class Fp8Emulation {
 public:
  /// The TP group's in-place max (empty when TP = 1).
  using AllReduceMax = std::function<void(std::span<T>)>;
  /// Elements of this shard's 7 weights of a layer, in Fp8Tensor order (w_q ... w_down).
  using WeightSizes = std::array<std::int64_t, fp8_weights_per_layer>;

  Fp8Emulation() = default;
  /// FP8 for layers [layer_begin, layer_begin + layers) of a model of `model_layers`, with
  /// `slots` micro-batches in flight at most (their activation scales kept apart). `tp_max`
  /// takes a max over the TP group (for tensors TP splits), `cp_max` over the CP group (for
  /// every activation and gradient: each CP rank holds other tokens); unset when the group is 1.
  Fp8Emulation(const PrecisionConfig& precision, int layer_begin, int layers, int model_layers,
               int slots, WeightSizes sizes, AllReduceMax tp_max, AllReduceMax cp_max = nullptr)
      : precision_(precision),
        enabled_(precision.is_fp8()),
        layers_(layers),
        tp_max_(std::move(tp_max)),
        cp_max_(std::move(cp_max)) {
    if (!enabled_) return;
    if (precision.fp8.amax_history < 1)
      throw core::InputError("the FP8 amax history must hold at least 1 step (got " +
                                 std::to_string(precision.fp8.amax_history) + ")",
                             "set Fp8Settings::amax_history to 1 or more (NeMo's default is 1024)");
    std::int64_t per_layer = 0;
    for (int w = 0; w < fp8_weights_per_layer; ++w) {
      weight_offsets_[w] = per_layer;
      per_layer += sizes[w];
    }
    weight_layer_size_ = per_layer;
    in_fp8_.resize(layers);
    std::int64_t fp8_layers = 0;
    for (int l = 0; l < layers; ++l) {
      in_fp8_[l] = precision.layer_in_fp8(layer_begin + l, model_layers);
      fp8_layers += in_fp8_[l];
    }
    // Weight copies only for the layers in FP8: layer l's block sits at weight_base_[l].
    weight_base_.assign(layers, -1);
    std::int64_t next = 0;
    for (int l = 0; l < layers; ++l)
      if (in_fp8_[l]) {
        weight_base_[l] = next;
        next += weight_layer_size_;
      }
    weights_.assign(fp8_layers * weight_layer_size_, T(0));
    const std::size_t tensors = static_cast<std::size_t>(layers) * fp8_tensors_per_layer;
    scale_.assign(tensors, 1.0f);
    step_amax_.assign(tensors, 0.0f);
    slot_scale_.assign(static_cast<std::size_t>(slots) * layers * fp8_activations_per_layer, 1.0f);
    if (precision.fp8.recipe == Fp8Recipe::delayed)
      history_.assign(tensors * precision.fp8.amax_history, 0.0f);
    reduce_.assign(std::max<std::size_t>(tensors, 1), T(0));
  }

  bool enabled() const { return enabled_; }
  const PrecisionConfig& precision() const { return precision_; }
  /// Whether local layer `layer` runs its linear projections in FP8.
  bool layer_in_fp8(int layer) const { return enabled_ && in_fp8_[layer]; }
  /// Optimizer steps ended (end_step calls).
  int steps() const { return steps_; }
  /// Between begin_step and end_step.
  bool step_open() const { return step_open_; }

  // ---- the step ----------------------------------------------------------------------------
  /// Casts the FP8 layers' weights from the fp32 master `params` (the flat buffer the layers'
  /// offsets index) with this step's scales: current (and the delayed recipe's first step) from
  /// each weight's amax now, reduced over TP; delayed from the history. A step begun and never
  /// ended is abandoned: its amaxes are forgotten.
  void begin_step(const T* params, const std::vector<LayerParams>& layers) {
    if (!enabled_) return;
    std::fill(step_amax_.begin(), step_amax_.end(), 0.0f);
    const int count = static_cast<int>(layers.size());
    // All weight amaxes in one TP reduction (every weight is split under TP).
    for (int l = 0; l < count; ++l)
      for (int w = 0; w < fp8_weights_per_layer; ++w)
        reduce_[l * fp8_weights_per_layer + w] =
            in_fp8_[l] ? static_cast<T>(fp8_amax(
                             params + fp8_weight_offset(layers[l], Fp8Tensor(w)), weight_size(w)))
                       : T(0);
    if (scale_from_now() && tp_max_)
      tp_max_(std::span<T>(reduce_.data(), std::size_t(count) * fp8_weights_per_layer));
    for (int l = 0; l < count; ++l) {
      if (!in_fp8_[l]) continue;
      for (int w = 0; w < fp8_weights_per_layer; ++w) {
        const auto t = Fp8Tensor(w);
        const int i = index(l, t);
        const float amax = static_cast<float>(reduce_[l * fp8_weights_per_layer + w]);
        record(i, amax);
        if (scale_from_now())
          scale_[i] = kernels::fp8_reference_scale(amax, scale_[i], format(t), margin());
        quantize(params + fp8_weight_offset(layers[l], t), weights_.data() + weight_at(l, t),
                 weight_size(w), scale_[i], format(t));
      }
    }
    step_open_ = true;
  }

  /// After the step's last backward pass. Delayed: each tensor's step amax (max over the
  /// micro-batches, then over the TP group) enters its history and its scale becomes
  /// scale(max over the history) for every cast of the next step.
  void end_step() {
    if (!enabled_) return;
    if (!step_open_)
      throw core::RunError("FP8: end_step() without begin_step(): the step's casts were not made");
    if (precision_.fp8.recipe == Fp8Recipe::delayed) {
      // One reduction for all: the split tensors' local maxima meet here (the replicated ones
      // are equal on every rank, so the max leaves them as they are).
      // CP too: the weights' maxima are equal on every CP rank, the others' meet.
      if (tp_max_ || cp_max_) {
        for (std::size_t i = 0; i < step_amax_.size(); ++i) reduce_[i] = T(step_amax_[i]);
        for (const auto* group_max : {&tp_max_, &cp_max_})
          if (*group_max) (*group_max)(std::span<T>(reduce_.data(), step_amax_.size()));
        for (std::size_t i = 0; i < step_amax_.size(); ++i)
          step_amax_[i] = static_cast<float>(reduce_[i]);
      }
      const int h = precision_.fp8.amax_history;
      const int newest = steps_ % h;
      for (int l = 0; l < layers_; ++l) {
        if (!in_fp8_[l]) continue;
        for (int k = 0; k < fp8_tensors_per_layer; ++k) {
          const int i = index(l, Fp8Tensor(k));
          float* hist = history_.data() + std::size_t(i) * h;
          hist[newest] = step_amax_[i];
          scale_[i] = kernels::fp8_reference_scale(nan_max(hist, h), scale_[i],
                                                   format(Fp8Tensor(k)), margin());
        }
      }
    }
    ++steps_;
    step_open_ = false;
  }

  /// The FP8 copy (dequantised values) of weight `w` of local layer `layer`, laid out as the
  /// master's block; the forward and input-gradient GEMMs read it.
  const T* weight(int layer, Fp8Tensor w) const { return weights_.data() + weight_at(layer, w); }

  // ---- the casts ---------------------------------------------------------------------------
  /// Forward: writes Q(x) of activation `t` (x_qkv ... x_down) of the micro-batch in `slot` to
  /// `out` (may be x) and keeps the scale it used for that slot's backward pass.
  void cast_activation(int layer, Fp8Tensor t, int slot, const T* x, T* out, std::int64_t n) {
    const float s = cast_scale(layer, t, x, n);
    slot_scale_[slot_index(layer, t, slot)] = s;
    quantize(x, out, n, s, format(t));
  }
  /// Backward: the same Q(x) again from the unquantised activation, with the scale its forward
  /// cast used (the device keeps the FP8 bytes instead; the values are the same).
  void recast_activation(int layer, Fp8Tensor t, int slot, const T* x, T* out,
                         std::int64_t n) const {
    quantize(x, out, n, slot_scale_[slot_index(layer, t, slot)], format(t));
  }
  /// Backward: writes Q(g) of gradient `t` (g_down ... g_v) to `out` (may be g).
  void cast_gradient(int layer, Fp8Tensor t, const T* g, T* out, std::int64_t n) {
    quantize(g, out, n, cast_scale(layer, t, g, n), format(t));
  }

  // ---- inspection (the GPU step's tests compare these) -------------------------------------
  /// The scale of tensor `t` of local layer `layer`: delayed, the one this step's casts use (after
  /// end_step, the next step's); current, the one its latest cast used. 1 where never cast.
  float scale(int layer, Fp8Tensor t) const { return scale_.at(index(layer, t)); }
  /// The scale the forward cast of activation `t` used for the micro-batch in `slot`.
  float activation_scale(int layer, Fp8Tensor t, int slot) const {
    return slot_scale_.at(slot_index(layer, t, slot));
  }
  /// This step's amax of tensor `t` so far (max over its casts; after end_step under delayed,
  /// also over the TP group).
  float step_amax(int layer, Fp8Tensor t) const { return step_amax_.at(index(layer, t)); }
  /// Delayed: the amaxes recorded in the history, newest first (at most amax_history).
  std::vector<float> amax_history(int layer, Fp8Tensor t) const {
    std::vector<float> out;
    if (history_.empty()) return out;
    const int h = precision_.fp8.amax_history;
    const float* hist = history_.data() + std::size_t(index(layer, t)) * h;
    for (int k = 0; k < std::min(steps_, h); ++k)
      out.push_back(hist[((steps_ - 1 - k) % h + h) % h]);
    return out;
  }
  std::size_t bytes() const {
    return weights_.size() * sizeof(T) + reduce_.size() * sizeof(T) +
           (scale_.size() + step_amax_.size() + slot_scale_.size() + history_.size()) *
               sizeof(float);
  }

 private:
  int margin() const { return precision_.fp8.margin; }
  kernels::Fp8Format format(Fp8Tensor t) const { return fp8_format_of(t, precision_.fp8); }
  /// Whether a cast takes its scale from its tensor's amax now: always under current scaling,
  /// and in the delayed recipe's first step, which has no history yet.
  bool scale_from_now() const { return precision_.fp8.recipe == Fp8Recipe::current || steps_ == 0; }
  int index(int layer, Fp8Tensor t) const {
    return layer * fp8_tensors_per_layer + static_cast<int>(t);
  }
  std::size_t slot_index(int layer, Fp8Tensor t, int slot) const {
    const int a = static_cast<int>(t) - static_cast<int>(Fp8Tensor::x_qkv);
    return (std::size_t(slot) * layers_ + layer) * fp8_activations_per_layer + a;
  }
  std::int64_t weight_size(int w) const {
    const std::int64_t end =
        w + 1 < fp8_weights_per_layer ? weight_offsets_[w + 1] : weight_layer_size_;
    return end - weight_offsets_[w];
  }
  std::int64_t weight_at(int layer, Fp8Tensor w) const {
    return weight_base_[layer] + weight_offsets_[static_cast<int>(w)];
  }
  /// NaN-propagating max (a NaN amax keeps the previous scale, see fp8_amax).
  static float nan_max(const float* x, int n) {
    float m = 0.0f;
    for (int k = 0; k < n; ++k) {
      if (std::isnan(x[k])) return x[k];
      m = std::max(m, x[k]);
    }
    return m;
  }
  void record(int i, float amax) {
    float& m = step_amax_[i];
    if (std::isnan(amax) || amax > m) m = amax;
  }
  /// Records this cast's amax and returns its scale: from the amax now (over the TP group where
  /// the tensor is split) or the step's delayed scale.
  float cast_scale(int layer, Fp8Tensor t, const T* x, std::int64_t n) {
    const int i = index(layer, t);
    float amax = fp8_amax(x, n);
    const bool over_tp = tp_max_ && fp8_split_by_tp(t);
    if (scale_from_now() && (over_tp || cp_max_)) {
      reduce_[0] = static_cast<T>(amax);
      if (over_tp) tp_max_(std::span<T>(reduce_.data(), 1));
      if (cp_max_) cp_max_(std::span<T>(reduce_.data(), 1));
      amax = static_cast<float>(reduce_[0]);
    }
    record(i, amax);
    if (scale_from_now())
      scale_[i] = kernels::fp8_reference_scale(amax, scale_[i], format(t), margin());
    return scale_[i];
  }
  static void quantize(const T* x, T* out, std::int64_t n, float scale, kernels::Fp8Format f) {
    for (std::int64_t k = 0; k < n; ++k)
      out[k] = static_cast<T>(fp8_quantize(static_cast<float>(x[k]), scale, f));
  }

  PrecisionConfig precision_;
  bool enabled_ = false;
  int layers_ = 0;
  AllReduceMax tp_max_, cp_max_;
  std::vector<bool> in_fp8_;                                          // [layers]
  std::array<std::int64_t, fp8_weights_per_layer> weight_offsets_{};  // within a layer's block
  std::int64_t weight_layer_size_ = 0;
  std::vector<std::int64_t> weight_base_;  // [layers] block start in weights_, -1 if not FP8
  // Aligned as the model's buffers are, so the GEMMs reading it sum in one order every run.
  std::vector<T, Eigen::aligned_allocator<T>> weights_;
  std::vector<float> scale_, step_amax_;  // [layers x 18]
  std::vector<float> slot_scale_;         // [slots x layers x 4] activation scales per micro-batch
  std::vector<float> history_;            // delayed: [layers x 18 x amax_history], a ring
  std::vector<T> reduce_;                 // staging for the TP max
  int steps_ = 0;
  bool step_open_ = false;
};

}  // namespace tprimat::train
