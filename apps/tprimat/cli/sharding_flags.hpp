// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// --data-parallel-sharding-strategy beside --distributed-optimizer: the sharding a run asks for.
#pragma once

#include <optional>
#include <string>

#include "cli/options.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/rank_plan.hpp"

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

/// Whether --num-distributed-optimizer-instances asks for hybrid sharding that a job of
/// `replicas` (DP x CP) ranks can split into (what --parallel all applies where it can).
inline bool instances_split(const BenchOptions& o, int replicas) {
  return o.optimizer_instances > 1 && replicas % o.optimizer_instances == 0;
}

/// The hybrid sharding instances a job of `strategy` runs: --num-distributed-optimizer-instances,
/// else its config file's num_distributed_optimizer_instances (`file`), else 1; a flag beside
/// the file may only agree with it. Checked against the job's sharding and its `replicas` (DP x
/// CP ranks holding the same weights), the flag named in the message.
inline int optimizer_instances(const BenchOptions& o, std::optional<int> file,
                               train::ShardingStrategy sharding, int replicas,
                               const std::string& strategy) {
  const std::string flag = "--num-distributed-optimizer-instances";
  const std::string key = "num_distributed_optimizer_instances";
  if (o.optimizer_instances > 0 && file && o.optimizer_instances != *file)
    throw core::InputError(flag + " " + std::to_string(o.optimizer_instances) +
                               " contradicts strategy " + strategy + ", whose " + key + " is " +
                               std::to_string(*file),
                           "drop " + flag + ", or change " + key + " in the config");
  train::OptimizerConfig opt;
  opt.sharding = sharding;
  opt.optimizer_instances = o.optimizer_instances > 0 ? o.optimizer_instances : file.value_or(1);
  const bool from_flag = o.optimizer_instances > 0;
  const std::string n = std::to_string(opt.optimizer_instances);
  if (auto err = train::optimizer_instances_error(opt, replicas)) {
    const std::string where = from_flag ? flag + " " + n + " [strategy " + strategy + "]"
                                        : "strategy " + strategy + "'s " + key + " " + n;
    const std::string drop = from_flag ? "drop " + flag : "change " + key + " in the config";
    const std::string divisor = std::to_string(replicas) + " (DP x CP)";
    throw core::InputError(where + ": " + *err,
                           opt.sharding == train::ShardingStrategy::no_shard
                               ? "add --data-parallel-sharding-strategy optim, optim_grads or "
                                 "optim_grads_params (or --distributed-optimizer), or " +
                                     drop
                           : from_flag
                               ? "pass " + flag + " with a divisor of " + divisor + ", or " + drop
                               : "set " + key + " in the config to a divisor of " + divisor +
                                     ", or pass " + flag + " with one");
  }
  return opt.optimizer_instances;
}

/// The label of a strategy that shards ("ZeRO-2"), "" for no_shard.
inline std::string sharding_label(train::ShardingStrategy s) {
  return s == train::ShardingStrategy::no_shard ? "" : train::zero_label(s);
}

/// " ZeRO-2" after a layout's description, "" for no_shard.
inline std::string sharding_suffix(train::ShardingStrategy s) {
  return s == train::ShardingStrategy::no_shard ? "" : " " + sharding_label(s);
}

/// The same, with hybrid sharding's instances: " ZeRO-2 x2 instances".
inline std::string sharding_suffix(const train::OptimizerConfig& opt) {
  return sharding_suffix(opt.sharding) +
         (opt.optimizer_instances > 1 && opt.shards_optimizer()
              ? " x" + std::to_string(opt.optimizer_instances) + " instances"
              : "");
}

}  // namespace tprimat::cli
