// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// DeviceCollectives: the collectives a device engine enqueues on its streams (NCCL, host-staged).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

namespace tprimat::parallel {

/// One group's collectives on DEVICE memory, enqueued on a stream the caller names (a
/// gpuStream_t passed as void*, so this header needs no vendor header). The device engine is
/// written once for every communicator, so it reaches them through this interface: a few dozen
/// calls a step, none of them per element, and a CUDA graph replays them without the call at all.
/// - all_reduce_sum, all_reduce_max: in place (max: FP8's amaxes over a TP group).
/// - reduce_scatter_sum(x, chunk): x holds size() chunks; rank r's chunk (x + r * chunk) gets the
///   sum over ranks of chunk r; the other chunks are left undefined.
/// - reduce_scatter_sum_bf16(x, chunk): the same over bf16 elements (x: the backend's bf16, 2
///   bytes each), summed in bf16 as NCCL does (sequence parallelism's row-parallel sums).
/// - all_gather_bytes(x, chunk_bytes): in place; rank r's chunk at x + r * chunk_bytes goes to
///   every rank.
/// - send / recv / send_recv: n floats to / from one rank of the group (pipeline activations and
///   their gradients); send_recv is one operation, so two neighbours exchanging both ways cannot
///   deadlock, and a null `out` or `in` leaves out that half.
class DeviceCollectives {
 public:
  virtual ~DeviceCollectives() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Whether the operations may be captured in a CUDA/HIP graph (NCCL: yes; host-staged: no,
  /// they wait on the host).
  virtual bool capturable() const = 0;
  /// "nccl", "rccl" or "host-staged (mpi)", for the result JSON.
  virtual const char* name() const = 0;
  virtual void all_reduce_sum(float* x, std::size_t n, void* stream) = 0;
  virtual void all_reduce_sum(double* x, std::size_t n, void* stream) = 0;
  virtual void all_reduce_max(float* x, std::size_t n, void* stream) = 0;
  virtual void reduce_scatter_sum(float* x, std::size_t chunk, void* stream) = 0;
  virtual void reduce_scatter_sum_bf16(void* x, std::size_t chunk, void* stream) = 0;
  virtual void all_gather_bytes(void* x, std::size_t chunk_bytes, void* stream) = 0;
  virtual void send_recv(const float* out, int dest, float* in, int source, std::size_t n,
                         void* stream) = 0;
  /// send_recv of raw bytes (bf16 rows: a multiple of 4 bytes). send_recv moves its floats bit
  /// for bit, with no arithmetic, so any data rides as floats.
  void send_recv_bytes(const void* out, int dest, void* in, int source, std::size_t bytes,
                       void* stream) {
    if (bytes % sizeof(float) != 0)
      throw std::logic_error("send_recv_bytes: " + std::to_string(bytes) +
                             " bytes is not a whole number of 4-byte words");
    send_recv(static_cast<const float*>(out), dest, static_cast<float*>(in), source,
              bytes / sizeof(float), stream);
  }
  void send(const float* x, std::size_t n, int peer, void* stream) {
    send_recv(x, peer, nullptr, -1, n, stream);
  }
  void recv(float* x, std::size_t n, int peer, void* stream) {
    send_recv(nullptr, -1, x, peer, n, stream);
  }
};

/// A host communicator's collectives, type-erased: what the host-staged DeviceCollectives
/// (backend/gpu/host_staged_collectives.hpp) copies device memory through. Filled from any
/// Communicator by host_collectives_of().
struct HostCollectives {
  int rank = 0;
  int size = 1;
  std::function<void(std::span<float>)> all_reduce_sum_float;
  std::function<void(std::span<double>)> all_reduce_sum_double;
  std::function<void(std::span<float>)> all_reduce_max_float;
  std::function<void(std::span<const float>, std::span<float>)> reduce_scatter_sum;
  std::function<void(std::span<const float>, std::span<float>)> all_gather;
  std::function<void(std::span<const float>, int)> send;
  std::function<void(std::span<float>, int)> recv;
  std::function<void(std::span<const float>, int, std::span<float>, int)> send_recv;
};

/// The collectives of `c` (copied: copies of a communicator share its group).
template <class C>
HostCollectives host_collectives_of(const C& c) {
  auto shared = std::make_shared<C>(c);
  HostCollectives h;
  h.rank = c.rank();
  h.size = c.size();
  h.all_reduce_sum_float = [shared](std::span<float> x) { shared->all_reduce_sum(x); };
  h.all_reduce_sum_double = [shared](std::span<double> x) { shared->all_reduce_sum(x); };
  h.all_reduce_max_float = [shared](std::span<float> x) { shared->all_reduce_max(x); };
  h.reduce_scatter_sum = [shared](std::span<const float> in, std::span<float> out) {
    shared->reduce_scatter_sum(in, out);
  };
  h.all_gather = [shared](std::span<const float> in, std::span<float> out) {
    shared->all_gather(in, out);
  };
  h.send = [shared](std::span<const float> x, int peer) { shared->send(x, peer); };
  h.recv = [shared](std::span<float> x, int peer) { shared->recv(x, peer); };
  h.send_recv = [shared](std::span<const float> out, int dest, std::span<float> in, int source) {
    shared->send_recv(out, dest, in, source);
  };
  return h;
}

/// DeviceCollectives over a host communicator: each operation waits for `stream`, copies the
/// device data to the host, runs the host collective and copies the result back. Slow and not
/// capturable, but it runs where NCCL cannot: several ranks on one GPU (NCCL refuses them; the
/// equivalence tests use it on a one-GPU machine) and HIP builds without RCCL. Defined with the
/// device engine (backend/gpu/host_staged_collectives.hpp).
std::shared_ptr<DeviceCollectives> host_staged_collectives(HostCollectives host);

}  // namespace tprimat::parallel
