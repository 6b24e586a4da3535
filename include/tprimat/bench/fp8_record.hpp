// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// A result's training_config.fp8: the FP8 recipe's settings as the run used them (docs/fp8.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tprimat/train/precision.hpp"

namespace tprimat::bench {

/// What training_config.fp8 records for a run of `layers` decoder layers in precision `p`:
/// null for a bf16 (or fp32) run; for FP8 the format (hybrid: E4M3 forward, E5M2 backward, in the
/// device's variants: `device_forward`/`device_backward` from DeviceInfo, gfx942's fnuz ones there;
/// empty: the settings' formats, as the CPU emulation casts them), the
/// recipe and its scaling settings (the amax history and how it is reduced apply to the delayed
/// recipe only: null for current), and which decoder layers stay in bf16 (0-based indices of
/// the layers run) beside the count that runs in FP8, and whether the FP8 copies were kept or
/// recast (memory and time, not numbers).
inline nlohmann::json fp8_record(const train::PrecisionConfig& p, int layers,
                                 const std::string& device_forward = {},
                                 const std::string& device_backward = {}) {
  using nlohmann::json;
  if (!p.is_fp8()) return json(nullptr);
  const bool delayed = p.fp8.recipe == train::Fp8Recipe::delayed;
  json bf16_layers = json::array();
  int fp8_layers = 0;
  for (int l = 0; l < layers; ++l) {
    if (p.layer_in_fp8(l, layers))
      ++fp8_layers;
    else
      bf16_layers.push_back(l);
  }
  const std::string forward = device_forward.empty()
                                  ? kernels::fp8_format_name(p.fp8.forward_format)
                                  : device_forward;
  const std::string backward = device_backward.empty()
                                   ? kernels::fp8_format_name(p.fp8.gradient_format)
                                   : device_backward;
  return {{"format", "hybrid"},
          {"forward", forward},
          {"backward", backward},
          {"recipe", train::recipe_name(p.fp8.recipe)},
          {"amax_history_len", delayed ? json(p.fp8.amax_history) : json(nullptr)},
          {"amax_compute_algo", delayed ? json("max") : json(nullptr)},
          {"margin", p.fp8.margin},
          {"bf16_layers", bf16_layers},
          {"fp8_layers", fp8_layers},
          {"copies", train::copies_name(p.fp8.copies)}};
}

}  // namespace tprimat::bench
