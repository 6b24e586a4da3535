// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Token positions grouped by id on the host: the schedule of the deterministic embedding backward.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

namespace tprimat::backend {

/// The n positions of a batch grouped by token id: group u is token group_ids[u] and holds
/// positions[offsets[u] .. offsets[u + 1]), ascending. Groups are ordered by id. Sized for the
/// worst case (every id distinct: group_ids [n], offsets [n + 1], positions [n]) so buffers of a
/// fixed size hold any batch; only the first `count` groups (count + 1 offsets) are meaningful.
/// Negative ids (tokens of another tensor-parallel rank's vocabulary slice) form no group: their
/// positions sort first and no offset points at them.
struct EmbeddingGroups {
  std::vector<std::int32_t> group_ids, offsets, positions;
  std::int32_t count = 0;
};

/// Fills caller-provided spans (e.g. pinned staging buffers reused every step) and returns the
/// group count; allocates nothing. Sorting positions by (id, position) is a total order, so the
/// result depends on `ids` alone. Entries past the count are set too (group_ids -1, offsets n)
/// so the buffers' contents are reproducible. Throws std::invalid_argument when a span is too
/// small for ids.size() tokens.
inline int embedding_groups_into(std::span<const std::int32_t> ids,
                                 std::span<std::int32_t> group_ids, std::span<std::int32_t> offsets,
                                 std::span<std::int32_t> positions) {
  const std::size_t n = ids.size();
  if (group_ids.size() < n || offsets.size() < n + 1 || positions.size() < n)
    throw std::invalid_argument(
        "tprimat: embedding_groups_into needs group_ids and positions of ids.size() entries and "
        "offsets of ids.size() + 1");
  auto pos = positions.first(n);
  std::iota(pos.begin(), pos.end(), std::int32_t{0});
  std::sort(pos.begin(), pos.end(), [&](std::int32_t a, std::int32_t b) {
    return ids[a] != ids[b] ? ids[a] < ids[b] : a < b;
  });
  std::size_t first = 0;
  while (first < n && ids[pos[first]] < 0) ++first;
  int count = 0;
  for (std::size_t i = first; i < n; ++i) {
    if (i == first || ids[pos[i]] != ids[pos[i - 1]]) {
      group_ids[count] = ids[pos[i]];
      offsets[count] = static_cast<std::int32_t>(i);
      ++count;
    }
  }
  std::fill(group_ids.begin() + count, group_ids.end(), std::int32_t{-1});
  std::fill(offsets.begin() + count, offsets.end(), static_cast<std::int32_t>(n));
  return count;
}

/// The grouping in freshly allocated vectors (tests, set-up).
inline EmbeddingGroups embedding_groups(std::span<const std::int32_t> ids) {
  EmbeddingGroups g;
  g.group_ids.resize(ids.size());
  g.offsets.resize(ids.size() + 1);
  g.positions.resize(ids.size());
  g.count = embedding_groups_into(ids, g.group_ids, g.offsets, g.positions);
  return g;
}

}  // namespace tprimat::backend
