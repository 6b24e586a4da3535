// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The Communicator concept (the collectives a step needs) and the single-process communicator.
#pragma once

#include <algorithm>
#include <concepts>
#include <span>

#include "tprimat/core/error.hpp"

namespace tprimat::parallel {

/// A group of ranks and the collectives the step uses. `comm::Mpi` implements it for the CPU
/// backend; NCCL and RCCL implement the same interface later. Collectives are blocking.
/// - all_reduce_sum / all_reduce_max: in place, every rank gets the result.
/// - reduce_scatter_sum(in, out): `in` holds size() equal chunks of out.size() elements; rank r
///   gets the sum over ranks of chunk r (the distributed optimizer's gradient reduction).
/// - all_gather(in, out): out holds size() chunks of in.size(); chunk r is rank r's `in`.
/// - send / recv: point-to-point to/from a rank of this group (pipeline activations);
///   send_recv sends to one peer while receiving from another, as one operation, so two
///   neighbouring stages exchanging activations and gradients cannot deadlock.
/// - split(color, key): the sub-group of ranks sharing `color`, ordered by `key` (TP/PP/DP
///   groups are carved out of the world this way, as MPI_Comm_split and ncclCommSplit do).
template <class C>
concept Communicator = requires(C& c, const C& cc, std::span<float> f, std::span<const float> cf,
                                std::span<double> d, int root) {
  { cc.rank() } -> std::convertible_to<int>;
  { cc.size() } -> std::convertible_to<int>;
  c.all_reduce_sum(f);
  c.all_reduce_sum(d);
  c.all_reduce_max(f);
  c.reduce_scatter_sum(cf, f);
  c.all_gather(cf, f);
  c.send(cf, root);
  c.recv(f, root);
  c.send_recv(cf, root, f, root);
  c.broadcast(f, root);
  c.barrier();
  { cc.split(root, root) } -> std::same_as<C>;
};

namespace comm {

/// One rank, no communication: every collective is the identity (a copy where in != out).
struct Single {
  int rank() const { return 0; }
  int size() const { return 1; }
  void all_reduce_sum(std::span<float>) {}
  void all_reduce_sum(std::span<double>) {}
  void all_reduce_max(std::span<float>) {}
  void reduce_scatter_sum(std::span<const float> in, std::span<float> out) {
    std::copy_n(in.begin(), std::min(in.size(), out.size()), out.begin());
  }
  void all_gather(std::span<const float> in, std::span<float> out) {
    std::copy_n(in.begin(), std::min(in.size(), out.size()), out.begin());
  }
  // A single rank has no peer; a pipeline of one stage never sends.
  void send(std::span<const float>, int peer) { no_peer(peer); }
  void recv(std::span<float>, int peer) { no_peer(peer); }
  void send_recv(std::span<const float>, int peer, std::span<float>, int) { no_peer(peer); }
  void broadcast(std::span<float>, int) {}
  void barrier() {}
  Single split(int, int) const { return {}; }

 private:
  [[noreturn]] static void no_peer(int peer) {
    throw core::RunError("point-to-point with rank " + std::to_string(peer) +
                         " in a single-process communicator");
  }
};
static_assert(Communicator<Single>);

}  // namespace comm
}  // namespace tprimat::parallel
