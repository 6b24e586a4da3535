// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// What the CPU step tests train a few steps with: a short LR schedule and the synthetic batches
// of one rank holding the whole global batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tprimat/data/synthetic.hpp"
#include "tprimat/train/config.hpp"

namespace tprimat::testing {

/// AdamW at 1e-3 after one warm-up step, decaying over 10: a few steps move every weight.
inline train::OptimizerConfig short_schedule() {
  train::OptimizerConfig opt;
  opt.lr_peak = 1e-3;
  opt.warmup_steps = 1;
  opt.decay_steps = 10;
  return opt;
}

/// Step `step`'s global batch of `gbs` sequences of seq + 1 ids (vocabulary 256, seed 42).
inline std::vector<std::int32_t> synthetic_batch(std::int64_t step, int gbs, int seq) {
  const data::SyntheticTokens data(256, 42);
  std::vector<std::int32_t> out(static_cast<std::size_t>(gbs) * (seq + 1));
  data::fill_rank_batch(data, step, gbs, 0, 1, seq, out);
  return out;
}

}  // namespace tprimat::testing
