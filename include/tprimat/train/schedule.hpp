// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The learning-rate schedule: linear warm-up, then cosine decay to lr_min.
#pragma once

#include <cmath>
#include <numbers>

#include "tprimat/train/config.hpp"

namespace tprimat::train {

/// Learning rate of optimizer step `step` (0-based). Warm-up: lr_peak * (step + 1) / warmup_steps
/// while step < warmup_steps (so step 0 already moves). Then cosine from lr_peak at warmup_steps
/// to lr_min at decay_steps; lr_min from decay_steps on.
inline double learning_rate(const OptimizerConfig& c, int step) {
  if (step < c.warmup_steps) return c.lr_peak * (step + 1) / c.warmup_steps;
  if (step >= c.decay_steps) return c.lr_min;
  const double progress =
      static_cast<double>(step - c.warmup_steps) / (c.decay_steps - c.warmup_steps);
  return c.lr_min + 0.5 * (c.lr_peak - c.lr_min) * (1.0 + std::cos(std::numbers::pi * progress));
}

}  // namespace tprimat::train
