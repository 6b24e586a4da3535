// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Context parallelism's split of a sequence over the CP ranks: which tokens each rank holds.
#pragma once

#include <cstdint>
#include <vector>

namespace tprimat::parallel {

/// Megatron's load-balanced causal split: a sequence of `seq` tokens is cut into 2 x CP chunks
/// of seq / (2 x CP), and CP rank r holds chunks r and 2 x CP - 1 - r, in that order, so that
/// every rank's queries see the same number of causal keys. `seq` is a multiple of 2 x CP
/// (validate.hpp's context_parallel_error).
struct ContextSplit {
  int seq = 1;
  int cp = 1;
  int rank = 0;

  constexpr int chunk() const { return seq / (2 * cp); }
  /// Tokens of each sequence this rank holds.
  constexpr int local_seq() const { return seq / cp; }
  /// The position in the whole sequence of this rank's local token t, t in [0, local_seq()).
  constexpr int position(int t) const {
    if (cp == 1) return t;
    const int c = chunk();
    return t < c ? global_chunk(0) * c + t : global_chunk(1) * c + (t - c);
  }
  /// The chunk of the whole sequence (of 2 x CP) that is this rank's local chunk 0 or 1.
  constexpr int global_chunk(int local) const { return local == 0 ? rank : 2 * cp - 1 - rank; }
  struct ChunkOwner {
    int rank, local;
  };
  /// Which rank holds chunk `chunk` of the whole sequence, as its local chunk 0 or 1.
  constexpr ChunkOwner owner_of(int chunk) const {
    return chunk < cp ? ChunkOwner{chunk, 0} : ChunkOwner{2 * cp - 1 - chunk, 1};
  }
  /// The same split seen from another rank of the group.
  constexpr ContextSplit of_rank(int r) const { return ContextSplit{seq, cp, r}; }
  /// Every local token's position, in local order.
  std::vector<int> positions() const {
    std::vector<int> p(static_cast<std::size_t>(local_seq()));
    for (int t = 0; t < local_seq(); ++t) p[static_cast<std::size_t>(t)] = position(t);
    return p;
  }
};

static_assert(ContextSplit{16, 2, 0}.position(4) == 12);  // chunks of 4: rank 0 holds 0 and 3
static_assert(ContextSplit{16, 2, 1}.position(0) == 4 && ContextSplit{16, 2, 1}.position(7) == 11);
static_assert(ContextSplit{16, 2, 0}.owner_of(3).rank == 0 && ContextSplit{16, 2, 0}.owner_of(3).local == 1);

}  // namespace tprimat::parallel
