// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// What an equivalence test shards: a strategy, over one group of the weights' replicas or, under
// hybrid sharding, several (the CPU and the GPU equivalence tests alike).
#pragma once

#include <string>

#include "tprimat/train/config.hpp"

namespace tprimat::testing {

struct Sharding {
  train::ShardingStrategy strategy = train::ShardingStrategy::no_shard;
  int instances = 1;  ///< hybrid sharding's groups (OptimizerConfig::optimizer_instances)
  Sharding(train::ShardingStrategy s) : strategy(s) {}  // NOLINT(google-explicit-constructor)
  Sharding(train::ShardingStrategy s, int n) : strategy(s), instances(n) {}

  /// " ZeRO-2", " ZeRO-2 x2 instances", "" for no_shard: for a test's trace.
  std::string label() const {
    if (strategy == train::ShardingStrategy::no_shard) return "";
    return " " + train::zero_label(strategy) +
           (instances > 1 ? " x" + std::to_string(instances) + " instances" : "");
  }
  /// The optimizer `opt` with this sharding.
  train::OptimizerConfig applied_to(train::OptimizerConfig opt) const {
    opt.sharding = strategy;
    opt.optimizer_instances = instances;
    return opt;
  }
};

}  // namespace tprimat::testing
