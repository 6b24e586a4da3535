// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The step shapes the CPU step tests build: micro-batches, sequence, accumulation, layers.
#pragma once

#include "tprimat/train/config.hpp"

namespace tprimat::testing {

/// A step of `accum` micro-batches of `mbs` sequences of `seq` tokens over `layers` layers (0:
/// the model's all).
inline train::StepShape step_shape(int mbs, int seq, int accum = 1, int layers = 0) {
  train::StepShape s;
  s.mbs = mbs;
  s.seq = seq;
  s.grad_accum = accum;
  s.layers = layers;
  return s;
}

}  // namespace tprimat::testing
