// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The Communicator concept (the collectives a step needs) and the single-process communicator.
#pragma once

#include <concepts>
#include <span>

namespace tprimat::parallel {

/// A group of ranks and the collectives the step uses. `comm::Mpi` implements it for the CPU
/// backend; NCCL and RCCL implement the same interface later. Collectives are blocking.
template <class C>
concept Communicator = requires(C& c, std::span<float> f, std::span<double> d, int root) {
  { c.rank() } -> std::convertible_to<int>;
  { c.size() } -> std::convertible_to<int>;
  c.all_reduce_sum(f);
  c.all_reduce_sum(d);
  c.broadcast(f, root);
  c.barrier();
};

namespace comm {

/// One rank, no communication: every collective is the identity.
struct Single {
  int rank() const { return 0; }
  int size() const { return 1; }
  void all_reduce_sum(std::span<float>) {}
  void all_reduce_sum(std::span<double>) {}
  void broadcast(std::span<float>, int) {}
  void barrier() {}
};
static_assert(Communicator<Single>);

}  // namespace comm
}  // namespace tprimat::parallel
