// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The result file's refusals told in this program's flags (--output-dir, --overwrite).
#pragma once

#include "tprimat/bench/result.hpp"

namespace tprimat::cli {

/// bench::ResultFixes as this program's users act on them: the result's path is chosen by
/// --output-dir, and ResultContext::overwrite is set by --overwrite.
inline constexpr bench::ResultFixes result_fixes{
    .elsewhere = "pass another --output-dir",
    .occupied = "remove it, or pass another --output-dir",
    .conflict = "pass --overwrite to replace it, or another --output-dir",
};

}  // namespace tprimat::cli
