// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The harnesses' check of core/json_input.hpp: no document a reader accepted nests past the limit.
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>

#include "tprimat/core/json_input.hpp"

namespace tprimat::fuzz {

/// Traps (a finding) when `j` nests deeper than core::max_json_depth: the depth check and
/// nlohmann's parser disagreed. Recurses at most one level past the limit.
inline void check_depth(const nlohmann::json& j, int depth = 0) {
  if (!j.is_structured()) return;
  if (++depth > core::max_json_depth) __builtin_trap();
  for (const auto& v : j) check_depth(v, depth);
}

}  // namespace tprimat::fuzz
