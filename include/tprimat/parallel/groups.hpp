// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Rank -> (tp, pp, dp) coordinates in Megatron's order, and the TP, PP and DP groups of a world.
#pragma once

#include <string>
#include <utility>

#include "tprimat/core/error.hpp"
#include "tprimat/parallel/communicator.hpp"

namespace tprimat::parallel {

/// Sizes of the three parallel dimensions; world = tp * pp * dp.
struct GridShape {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  constexpr int world() const { return tp * pp * dp; }
};

/// One rank's place on the grid.
struct Coords {
  int tp = 0;
  int pp = 0;
  int dp = 0;
  constexpr bool operator==(const Coords&) const = default;
};

/// Megatron's order: TP varies fastest, then DP, then PP (rank = tp + TP * (dp + DP * pp)).
/// TP ranks are consecutive so a TP group sits inside one node, where its two all-reduces per
/// block half (the most frequent, latency-bound collectives) run over NVLink/xGMI; DP next,
/// since its one gradient reduction per step is large but overlappable; PP slowest, because
/// its point-to-point activations are the cheapest traffic to send between nodes.
constexpr Coords coords_of(int rank, GridShape g) {
  return Coords{rank % g.tp, rank / (g.tp * g.dp), (rank / g.tp) % g.dp};
}
constexpr int rank_of(Coords c, GridShape g) { return c.tp + g.tp * (c.dp + g.dp * c.pp); }

static_assert(coords_of(5, GridShape{2, 2, 2}) == Coords{1, 1, 0});
static_assert(rank_of(Coords{1, 1, 0}, GridShape{2, 2, 2}) == 5);

/// The world and the three groups this rank belongs to, each a communicator of its own.
template <Communicator C>
struct Groups {
  C world;
  C tp;  ///< ranks of one layer shard set: same (pp, dp)
  C pp;  ///< the stages of one pipeline: same (tp, dp)
  C dp;  ///< the replicas: same (tp, pp)
  GridShape shape;
  Coords at;
  bool first_stage() const { return at.pp == 0; }
  bool last_stage() const { return at.pp == shape.pp - 1; }
};

/// Splits `world` into TP x PP x DP groups (collective over the world: every rank calls it).
/// Throws InputError, before any work, when the world size is not a multiple of TP x PP.
template <Communicator C>
Groups<C> make_groups(C world, int tp, int pp) {
  const int n = world.size();
  if (tp < 1 || pp < 1 || n % (tp * pp) != 0)
    throw core::InputError("layout TP=" + std::to_string(tp) + " x PP=" + std::to_string(pp) +
                               " needs a multiple of " + std::to_string(tp * pp) +
                               " ranks, but this run has " + std::to_string(n),
                           "launch with mpirun -np " + std::to_string(tp * pp) +
                               " (or a multiple of it), or pick a layout whose TP x PP divides " +
                               std::to_string(n));
  GridShape g{tp, pp, n / (tp * pp)};
  const Coords at = coords_of(world.rank(), g);
  // Colors: the coordinates that stay fixed inside the group; keys: the one that varies.
  C tp_group = world.split(at.pp * g.dp + at.dp, at.tp);
  C pp_group = world.split(at.dp * g.tp + at.tp, at.pp);
  C dp_group = world.split(at.pp * g.tp + at.tp, at.dp);
  return Groups<C>{
      std::move(world), std::move(tp_group), std::move(pp_group), std::move(dp_group), g, at};
}

}  // namespace tprimat::parallel
