// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// From `--recompute-granularity/-method/-num-layers/-modules` to a train::Recompute, refusing
// what the engines do not run and flags given without the granularity they belong to.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

#include "tprimat/core/error.hpp"
#include "tprimat/train/config.hpp"

namespace tprimat::cli {

/// The modules of `--recompute-modules` ("layernorm,mlp": Megatron's names, comma-separated) as
/// RecomputeModule bits; "" is layernorm, tprimat's default (Megatron's, core_attn, reruns the
/// fused attention kernel, which keeps no score matrix to save).
inline unsigned recompute_modules_from_flag(std::string_view list) {
  if (list.empty()) return static_cast<unsigned>(train::RecomputeModule::layernorm);
  unsigned bits = 0;
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const std::string_view name = list.substr(at, comma - at);
    const unsigned bit = train::recompute_module_named(name);
    if ((bits & bit) != 0)
      throw core::InputError("--recompute-modules names " + std::string(name) + " twice",
                             "name each module once: layernorm, mlp or layernorm,mlp");
    bits |= bit;
    if (bit == 0) {
      if (name == "core_attn")
        throw core::InputError(
            "--recompute-modules core_attn is not run by tprimat: its fused attention keeps no "
            "score matrix, only the output and statistics the backward reads",
            "use layernorm, mlp or layernorm,mlp (comma-separated)");
      throw core::InputError("unknown --recompute-modules entry '" + core::shown(name) + "'",
                             "use layernorm, mlp or layernorm,mlp (comma-separated)");
    }
    at = comma + 1;
  }
  return bits;
}

/// The recomputation the flags ask for ("" and 0: not given). Megatron's names.
inline train::Recompute recompute_from_flags(std::string_view granularity, std::string_view method,
                                             int num_layers, std::string_view modules = {}) {
  train::Recompute r;
  if (granularity.empty()) {
    if (!method.empty() || num_layers != 0 || !modules.empty())
      throw core::InputError(std::string(!method.empty()      ? "--recompute-method"
                                         : !modules.empty()   ? "--recompute-modules"
                                                              : "--recompute-num-layers") +
                                 " was given without --recompute-granularity",
                             !modules.empty() ? "add --recompute-granularity selective, or drop it"
                                              : "add --recompute-granularity full, or drop it");
    return r;
  }
  if (granularity == "selective") {
    // Megatron's selective takes neither: they choose whole layers.
    if (!method.empty() || num_layers != 0)
      throw core::InputError(
          std::string(!method.empty() ? "--recompute-method" : "--recompute-num-layers") +
              " applies to --recompute-granularity full, not selective (which recomputes its "
              "modules in every layer)",
          "drop it, or use --recompute-granularity full");
    return train::selective_recompute(recompute_modules_from_flag(modules));
  }
  if (granularity != "full")
    throw core::InputError("unknown --recompute-granularity '" + core::shown(granularity) + "'",
                           "pick full or selective");
  if (!modules.empty())
    throw core::InputError("--recompute-modules applies to --recompute-granularity selective",
                           "drop it, or use --recompute-granularity selective");
  r.granularity = train::RecomputeGranularity::full;
  if (method == "block")
    r.method = train::RecomputeMethod::block;
  else if (!method.empty() && method != "uniform")
    throw core::InputError("unknown --recompute-method '" + core::shown(method) + "'",
                           "pick uniform or block");
  r.num_layers = num_layers == 0 ? 1 : num_layers;
  return r;
}

/// "full uniform 2", "full block 5", "selective layernorm,mlp" or "none": how results and the
/// console name it.
inline std::string recompute_text(const train::Recompute& r) {
  if (!r.on()) return "none";
  if (!r.full()) {
    std::string out = "selective ";
    for (const auto& name : train::recompute_module_names(r.modules))
      out += (out.back() == ' ' ? "" : ",") + name;
    return out;
  }
  return std::string("full ") +
         (r.method == train::RecomputeMethod::uniform ? "uniform " : "block ") +
         std::to_string(r.num_layers);
}

}  // namespace tprimat::cli
