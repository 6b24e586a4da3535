// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Rank -> (tp, cp, dp, pp) coordinates in Megatron's order, and the TP, CP, PP and DP groups of a
// world.
#pragma once

#include <string>
#include <utility>

#include "tprimat/core/error.hpp"
#include "tprimat/parallel/communicator.hpp"

namespace tprimat::parallel {

/// Sizes of the four parallel dimensions; world = tp * pp * dp * cp.
struct GridShape {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;  ///< context parallelism: the ranks one micro-batch's sequence is split over
  constexpr int world() const { return tp * pp * dp * cp; }
};

/// One rank's place on the grid.
struct Coords {
  int tp = 0;
  int pp = 0;
  int dp = 0;
  int cp = 0;
  constexpr bool operator==(const Coords&) const = default;
};

/// Megatron's order: TP varies fastest, then CP, then DP, then PP
/// (rank = tp + TP * (cp + CP * (dp + DP * pp))). TP ranks are consecutive so a TP group sits
/// inside one node, where its two all-reduces per block half (the most frequent, latency-bound
/// collectives) run over NVLink/xGMI; CP next, whose K/V ring runs every layer; DP next, since
/// its one gradient reduction per step is large but overlappable; PP slowest, because its
/// point-to-point activations are the cheapest traffic to send between nodes.
constexpr Coords coords_of(int rank, GridShape g) {
  const int tp_cp = g.tp * g.cp;
  return Coords{rank % g.tp, rank / (tp_cp * g.dp), (rank / tp_cp) % g.dp, (rank / g.tp) % g.cp};
}
constexpr int rank_of(Coords c, GridShape g) {
  return c.tp + g.tp * (c.cp + g.cp * (c.dp + g.dp * c.pp));
}

/// A rank's place among those holding the same weights (same tp, pp): DP x CP, CP fastest.
constexpr int replica_of(Coords c, GridShape g) { return c.cp + g.cp * c.dp; }

static_assert(coords_of(5, GridShape{2, 2, 2}) == Coords{1, 1, 0});
static_assert(rank_of(Coords{1, 1, 0}, GridShape{2, 2, 2}) == 5);
static_assert(coords_of(6, GridShape{2, 1, 2, 2}) == Coords{0, 0, 1, 1});
static_assert(rank_of(Coords{1, 1, 1, 1}, GridShape{2, 2, 2, 2}) == 15);

/// The world and the groups this rank belongs to, each a communicator of its own.
template <Communicator C>
struct Groups {
  C world;
  C tp;  ///< ranks of one layer shard set: same (cp, dp, pp)
  C pp;  ///< the stages of one pipeline: same (tp, cp, dp)
  C dp;  ///< the replicas: same (tp, cp, pp)
  C cp;  ///< the ranks sharing one micro-batch's sequence: same (tp, dp, pp)
  /// The ranks holding the same weights, same (tp, pp): DP x CP, over which gradients are
  /// reduced and the distributed optimizer shards (the dp group itself without CP).
  C dp_cp;
  GridShape shape;
  Coords at;
  bool first_stage() const { return at.pp == 0; }
  bool last_stage() const { return at.pp == shape.pp - 1; }
  /// This rank's place in dp_cp.
  int dp_cp_rank() const { return replica_of(at, shape); }
  int dp_cp_size() const { return shape.dp * shape.cp; }
};

/// Splits `world` into TP x CP x DP x PP groups (collective over the world: every rank calls
/// it). Throws InputError, before any work, when the world size is not a multiple of
/// TP x PP x CP.
template <Communicator C>
Groups<C> make_groups(C world, int tp, int pp, int cp = 1) {
  const int n = world.size();
  const int model_ranks = tp * pp * cp;
  if (tp < 1 || pp < 1 || cp < 1 || n % model_ranks != 0) {
    const std::string layout = "TP=" + std::to_string(tp) + " x PP=" + std::to_string(pp) +
                               (cp > 1 ? " x CP=" + std::to_string(cp) : "");
    throw core::InputError("layout " + layout + " needs a multiple of " +
                               std::to_string(model_ranks) + " ranks, but this run has " +
                               std::to_string(n),
                           "launch with mpirun -np " + std::to_string(model_ranks) +
                               " (or a multiple of it), or pick a layout whose TP x PP" +
                               (cp > 1 ? " x CP" : "") + " divides " + std::to_string(n));
  }
  GridShape g{tp, pp, n / model_ranks, cp};
  const Coords at = coords_of(world.rank(), g);
  // Colors: the coordinates that stay fixed inside the group; keys: the one that varies.
  C tp_group = world.split((at.pp * g.dp + at.dp) * g.cp + at.cp, at.tp);
  C pp_group = world.split((at.dp * g.cp + at.cp) * g.tp + at.tp, at.pp);
  C dp_group = world.split((at.pp * g.cp + at.cp) * g.tp + at.tp, at.dp);
  C cp_group = world.split((at.pp * g.dp + at.dp) * g.tp + at.tp, at.cp);
  C dp_cp_group = world.split(at.pp * g.tp + at.tp, replica_of(at, g));
  return Groups<C>{std::move(world),    std::move(tp_group), std::move(pp_group),
                   std::move(dp_group), std::move(cp_group), std::move(dp_cp_group),
                   g,                   at};
}

/// Hybrid sharding's two groups inside the ranks holding the same weights (the replicas, DP x
/// CP): `shard`, the instance this rank shards over (size / instances consecutive replicas), and
/// `replicate`, the ranks holding the same shard in every instance.
template <Communicator C>
struct ShardGroups {
  C shard;
  C replicate;
};

/// The place of replica `replica` (of `replicas`, split into `instances` groups of consecutive
/// replicas): its instance and its rank inside that instance.
struct ShardPlace {
  int instance = 0;
  int rank = 0;
  int size = 1;
};
constexpr ShardPlace shard_place(int replica, int replicas, int instances) {
  const int size = replicas / instances;
  return ShardPlace{replica / size, replica % size, size};
}
static_assert(shard_place(5, 8, 2).instance == 1 && shard_place(5, 8, 2).rank == 1);

/// Splits `replicas` (every rank of it calls this) into hybrid sharding's groups; `instances`
/// must divide its size (train::check_optimizer_instances says so first).
template <Communicator C>
ShardGroups<C> split_shard_groups(const C& replicas, int instances) {
  const ShardPlace at = shard_place(replicas.rank(), replicas.size(), instances);
  C shard = replicas.split(at.instance, at.rank);
  C replicate = replicas.split(at.rank, at.instance);
  return ShardGroups<C>{std::move(shard), std::move(replicate)};
}

}  // namespace tprimat::parallel
