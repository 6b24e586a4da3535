// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// A checked profiling request (which steps, which ranks, gzip) and where each rank's trace goes.
// The tprimat program resolves it from its --profile flags and a config file's `profiling` block
// (apps/tprimat/cli/profile_flags.hpp).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "tprimat/profile/schedule.hpp"

namespace tprimat::profile {

/// A checked profiling request. `enabled` false: nothing is constructed, nothing recorded.
struct Settings {
  bool enabled = false;
  Schedule schedule;
  std::vector<int> ranks{0};  ///< the ranks that record (seeds: rank 0 only)
  bool all_ranks = false;
  bool gzip = false;

  bool profiles(int rank) const {
    return enabled && (all_ranks || std::find(ranks.begin(), ranks.end(), rank) != ranks.end());
  }
};

/// "profile_cuda_llama_0.json": the seeds' profile_<stack>_<model>_* naming, one file per rank.
inline std::string trace_file_name(std::string_view stack, std::string_view model, int rank,
                                   bool gzip) {
  return "profile_" + std::string(stack) + "_" + std::string(model) + "_" + std::to_string(rank) +
         ".json" + (gzip ? ".gz" : "");
}

}  // namespace tprimat::profile
