// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// From `--recompute-granularity/-method/-num-layers` to a train::Recompute, refusing what the
// engines do not run and method or layer flags given without a granularity.
#pragma once

#include <string>
#include <string_view>

#include "tprimat/core/error.hpp"
#include "tprimat/train/config.hpp"

namespace tprimat::cli {

/// The recomputation the flags ask for ("" and 0: not given). Megatron's names; selective
/// recomputation is refused until the engines run it.
inline train::Recompute recompute_from_flags(std::string_view granularity, std::string_view method,
                                             int num_layers) {
  train::Recompute r;
  if (granularity.empty()) {
    if (!method.empty() || num_layers != 0)
      throw core::InputError(
          std::string(!method.empty() ? "--recompute-method" : "--recompute-num-layers") +
              " was given without --recompute-granularity",
          "add --recompute-granularity full, or drop it");
    return r;
  }
  if (granularity == "selective")
    throw core::InputError("--recompute-granularity selective is not run by tprimat yet",
                           "use --recompute-granularity full");
  if (granularity != "full")
    throw core::InputError("unknown --recompute-granularity '" + core::shown(granularity) + "'",
                           "pick full");
  r.granularity = train::RecomputeGranularity::full;
  if (method == "block")
    r.method = train::RecomputeMethod::block;
  else if (!method.empty() && method != "uniform")
    throw core::InputError("unknown --recompute-method '" + core::shown(method) + "'",
                           "pick uniform or block");
  r.num_layers = num_layers == 0 ? 1 : num_layers;
  return r;
}

/// "full uniform 2", "full block 5", or "none": how results and the console name it.
inline std::string recompute_text(const train::Recompute& r) {
  if (!r.on()) return "none";
  return std::string("full ") +
         (r.method == train::RecomputeMethod::uniform ? "uniform " : "block ") +
         std::to_string(r.num_layers);
}

}  // namespace tprimat::cli
