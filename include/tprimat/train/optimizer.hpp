// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// AdamW state over a flat parameter buffer, global-norm clipping, per-tensor weight decay.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "tprimat/backend/concept.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/transformer.hpp"

namespace tprimat::train {

/// Global L2 norm of a gradient buffer (accumulated in double).
template <class Backend, class T>
double global_norm(std::span<const T> grads) {
  return std::sqrt(Backend::sum_squares(grads.data(), static_cast<std::int64_t>(grads.size())));
}

/// Scales grads by clip / norm when norm > clip (clip <= 0 disables); returns the factor used.
template <class Backend, class T>
double clip_by_global_norm(std::span<T> grads, double norm, double clip) {
  if (clip <= 0 || !(norm > clip)) return 1.0;
  const double factor = clip / norm;
  Backend::scale(grads.data(), static_cast<std::int64_t>(grads.size()), static_cast<T>(factor));
  return factor;
}

/// AdamW moments (first and second) in the parameters' element type; for float runs that is the
/// fp32 master state. Weight decay applies only to tensors with `decay` set.
template <class Backend, class T>
class AdamW {
 public:
  AdamW(const OptimizerConfig& config, std::int64_t size)
      : config_(config), m_(size, T(0)), v_(size, T(0)) {}

  /// One update with learning rate `lr`; `step` counts completed updates before this one.
  void update(std::span<T> params, std::span<const T> grads,
              const std::vector<ParamTensor>& tensors, double lr) {
    ++step_;
    for (const auto& t : tensors) {
      backend::AdamWArgs args{
          lr,   config_.beta1, config_.beta2, config_.eps, t.decay ? config_.weight_decay : 0.0,
          step_};
      Backend::adamw(params.data() + t.offset, grads.data() + t.offset, m_.data() + t.offset,
                     v_.data() + t.offset, t.size(), args);
    }
  }
  int steps() const { return step_; }
  std::size_t bytes() const { return (m_.size() + v_.size()) * sizeof(T); }
  std::span<const T> first_moment() const { return m_; }
  std::span<const T> second_moment() const { return v_; }

 private:
  OptimizerConfig config_;
  AlignedVector<T> m_, v_;
  int step_ = 0;
};

}  // namespace tprimat::train
