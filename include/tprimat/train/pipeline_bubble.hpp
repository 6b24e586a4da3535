// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The arithmetic of the 1F1B schedule (bubble fraction, micro-batches in flight); no engine needed.
#pragma once

#include <algorithm>

namespace tprimat::train {

/// Fraction of a step each stage idles under 1F1B with `micro_batches` micro-batches on `pp`
/// stages, (PP - 1) / (M + PP - 1) (Narayanan et al., SC'21), taking forward and backward of a
/// micro-batch to cost the same on every stage. 0 without pipelining.
constexpr double pipeline_bubble_fraction(int pp, int micro_batches) {
  return pp <= 1 ? 0.0 : static_cast<double>(pp - 1) / (micro_batches + pp - 1);
}

/// Micro-batches in flight at once on stage `stage` of `pp` (activation slots it needs): the
/// first stage keeps PP of them, the last one.
constexpr int pipeline_slots(int pp, int stage, int micro_batches) {
  return std::max(1, std::min(pp - stage, micro_batches));
}

}  // namespace tprimat::train
