// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// --data-parallel-sharding-strategy beside --distributed-optimizer: the sharding a run asks for.
#pragma once

#include <string>

#include "tprimat/core/error.hpp"
#include "tprimat/train/config.hpp"
#include "cli/options.hpp"

namespace tprimat::cli {

/// The strategy --data-parallel-sharding-strategy names, or optim for --distributed-optimizer
/// alone, else no_shard. Refuses an unknown name, a strategy not built yet, and no_shard beside
/// --distributed-optimizer (a contradiction; any other strategy shards the optimizer too).
inline train::ShardingStrategy sharding_strategy(const BenchOptions& o) {
  using train::ShardingStrategy;
  if (o.sharding_strategy.empty())
    return o.distributed_optimizer ? ShardingStrategy::optim : ShardingStrategy::no_shard;
  constexpr const char* flag = "--data-parallel-sharding-strategy";
  ShardingStrategy s = ShardingStrategy::no_shard;
  bool known = false;
  for (std::size_t i = 0; i < train::sharding_strategy_names.size(); ++i)
    if (o.sharding_strategy == train::sharding_strategy_names[i]) {
      s = static_cast<ShardingStrategy>(i);
      known = true;
    }
  if (!known)
    throw core::InputError(std::string("unknown ") + flag + " '" + o.sharding_strategy + "'",
                           std::string("pass ") + flag +
                               " no_shard, optim (ZeRO-1) or optim_grads (ZeRO-2)");
  if (s == ShardingStrategy::optim_grads_params)
    throw core::InputError(std::string(flag) +
                               " optim_grads_params (FSDP: the weights sharded too) is not built "
                               "yet",
                           "pass " + std::string(flag) +
                               " optim_grads (ZeRO-2) or optim (ZeRO-1) for now");
  if (s == ShardingStrategy::no_shard && o.distributed_optimizer)
    throw core::InputError(std::string("--distributed-optimizer shards the optimizer, and ") +
                               flag + " no_shard shards nothing",
                           "drop one of the two");
  return s;
}

/// The label of a strategy that shards ("ZeRO-2"), "" for no_shard.
inline std::string sharding_label(train::ShardingStrategy s) {
  return s == train::ShardingStrategy::no_shard ? ""
                                                : "ZeRO-" + std::to_string(train::zero_stage(s));
}

/// " ZeRO-2" after a layout's description, "" for no_shard.
inline std::string sharding_suffix(train::ShardingStrategy s) {
  return s == train::ShardingStrategy::no_shard ? "" : " " + sharding_label(s);
}

}  // namespace tprimat::cli
