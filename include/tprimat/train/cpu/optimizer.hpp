// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// AdamW state over a flat parameter buffer, global-norm clipping, per-tensor weight decay.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "tprimat/backend/concept.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/cpu/aligned_vector.hpp"
#include "tprimat/train/parameters.hpp"

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
/// The state may cover only the elements [offset, offset + size) of the flat parameter buffer:
/// the distributed optimizer (ZeRO-1) gives each DP rank one such shard.
template <class Backend, class T>
class AdamW {
 public:
  AdamW(const OptimizerConfig& config, std::int64_t size, std::int64_t offset = 0)
      : config_(config), offset_(offset), m_(size, T(0)), v_(size, T(0)) {}

  /// One update with learning rate `lr` of the owned elements. `params` is the whole flat
  /// buffer; `grads` holds the owned range only (element 0 is parameter `offset`).
  void update(std::span<T> params, std::span<const T> grads,
              const std::vector<ParamTensor>& tensors, double lr) {
    ++step_;
    const std::int64_t begin = offset_, end = offset_ + static_cast<std::int64_t>(m_.size());
    for (const auto& t : tensors) {
      const std::int64_t lo = std::max(begin, t.offset), hi = std::min(end, t.offset + t.size());
      if (lo >= hi) continue;
      backend::AdamWArgs args{
          lr,   config_.beta1, config_.beta2, config_.eps, t.decay ? config_.weight_decay : 0.0,
          step_};
      Backend::adamw(params.data() + lo, grads.data() + (lo - begin), m_.data() + (lo - begin),
                     v_.data() + (lo - begin), hi - lo, args);
    }
  }
  int steps() const { return step_; }
  std::int64_t offset() const { return offset_; }
  std::int64_t size() const { return static_cast<std::int64_t>(m_.size()); }
  std::size_t bytes() const { return (m_.size() + v_.size()) * sizeof(T); }
  std::span<const T> first_moment() const { return m_; }
  std::span<const T> second_moment() const { return v_; }

 private:
  OptimizerConfig config_;
  std::int64_t offset_ = 0;
  AlignedVector<T> m_, v_;
  int step_ = 0;
};

}  // namespace tprimat::train
