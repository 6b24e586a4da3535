// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// --data-parallel-sharding-strategy beside --distributed-optimizer: the sharding a run asks for.
#pragma once

#include <optional>
#include <string>

#include "tprimat/core/error.hpp"
#include "tprimat/train/config.hpp"
#include "cli/options.hpp"

namespace tprimat::cli {

/// The strategy --data-parallel-sharding-strategy names, or optim for --distributed-optimizer
/// alone, else no_shard. Refuses an unknown name, and no_shard beside --distributed-optimizer (a
/// contradiction; any other strategy shards the optimizer too).
inline train::ShardingStrategy sharding_strategy(const BenchOptions& o) {
  using train::ShardingStrategy;
  if (o.sharding_strategy.empty())
    return o.distributed_optimizer ? ShardingStrategy::optim : ShardingStrategy::no_shard;
  constexpr const char* flag = "--data-parallel-sharding-strategy";
  const std::optional<ShardingStrategy> named = train::sharding_strategy_named(o.sharding_strategy);
  if (!named)
    throw core::InputError(std::string("unknown ") + flag + " '" + core::shown(o.sharding_strategy) + "'",
                           std::string("pass ") + flag +
                               " no_shard, optim (ZeRO-1), optim_grads (ZeRO-2) or "
                               "optim_grads_params (FSDP)");
  const ShardingStrategy s = *named;
  if (s == ShardingStrategy::no_shard && o.distributed_optimizer)
    throw core::InputError(std::string("--distributed-optimizer shards the optimizer, and ") +
                               flag + " no_shard shards nothing",
                           "drop one of the two");
  return s;
}

/// The strategy a job of `strategy` runs: its config file's data_parallel_sharding_strategy
/// (`file`) where it states one, else the flags' (sharding_strategy(o)). A flag beside the file
/// may only agree with it: --data-parallel-sharding-strategy naming the same strategy,
/// --distributed-optimizer one that shards (any but no_shard).
inline train::ShardingStrategy sharding_strategy(const BenchOptions& o,
                                                 std::optional<train::ShardingStrategy> file,
                                                 const std::string& strategy) {
  using train::ShardingStrategy;
  const ShardingStrategy flags = sharding_strategy(o);
  if (!file) return flags;
  const std::string key = "data_parallel_sharding_strategy";
  const std::string name(train::name_of(*file));
  const std::string fix = "change " + key + " in the config";
  if (!o.sharding_strategy.empty() && flags != *file)
    throw core::InputError("--data-parallel-sharding-strategy " + o.sharding_strategy +
                               " contradicts strategy " + strategy + ", whose " + key + " is " +
                               name,
                           "drop --data-parallel-sharding-strategy, or " + fix);
  if (o.distributed_optimizer && *file == ShardingStrategy::no_shard)
    throw core::InputError("--distributed-optimizer shards the optimizer, and strategy " +
                               strategy + "'s " + key + " no_shard shards nothing",
                           "drop --distributed-optimizer, or " + fix);
  return *file;
}

/// The label of a strategy that shards ("ZeRO-2"), "" for no_shard.
inline std::string sharding_label(train::ShardingStrategy s) {
  return s == train::ShardingStrategy::no_shard ? "" : train::zero_label(s);
}

/// " ZeRO-2" after a layout's description, "" for no_shard.
inline std::string sharding_suffix(train::ShardingStrategy s) {
  return s == train::ShardingStrategy::no_shard ? "" : " " + sharding_label(s);
}

}  // namespace tprimat::cli
