// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// comm::Nccl: the Communicator interface over NCCL (RCCL on AMD), on device memory, bootstrapped
// by any launcher.
//
// One source for both platforms: RCCL implements NCCL's API under the same names (rccl/rccl.h,
// on hipStream_t), so the HIP build compiles this file against it and the runtime calls go
// through gpu_runtime.hpp's gpu* names. Compiled against RCCL 7.2.4's header (Debian
// experimental's librccl-dev); not run on AMD GPUs: none here.
#pragma once

#include "tprimat/backend/gpu/runtime.hpp"
#if TPRIMAT_GPU_HIP
#include <rccl/rccl.h>
#else
#include <nccl.h>
#endif

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/parallel/communicator.hpp"
#include "tprimat/parallel/device_collectives.hpp"

namespace tprimat::parallel::comm {

namespace nccl_detail {

inline void nccl_check(ncclResult_t status, const char* what) {
  if (status == ncclSuccess) return;
  throw core::RunError(std::string(what) + ": " + ncclGetErrorString(status) +
                       (status == ncclSystemError || status == ncclInternalError
                            ? " (NCCL_DEBUG=WARN prints why; RCCL reads it too)"
                            : ""));
}

inline void gpu_ok(gpuError_t status, const char* what) {
  if (status == gpuSuccess) return;
  (void)gpuGetLastError();
  throw core::RunError(std::string(what) + ": " + gpuGetErrorString(status));
}

/// "NCCL" or "RCCL": the library the messages and the result JSON name.
inline constexpr const char* library_name = TPRIMAT_GPU_HIP ? "RCCL" : "NCCL";

/// The NCCL communicator and the stream its collectives run on, shared by the copies of one
/// comm::Nccl and destroyed with the last of them.
struct NcclState {
  ncclComm_t comm = nullptr;
  gpuStream_t stream = nullptr;
  float* scratch = nullptr;  // one float for barrier()
  int rank = 0, size = 1;
  // Best effort: a destructor cannot report (HIP marks these [[nodiscard]]).
  ~NcclState() {
    if (stream) (void)gpuStreamSynchronize(stream);
    if (comm) (void)ncclCommDestroy(comm);
    if (scratch) (void)gpuFree(scratch);
    if (stream) (void)gpuStreamDestroy(stream);
  }
};

}  // namespace nccl_detail

/// Collectives over NCCL on DEVICE memory: the spans hold device pointers (never read on the
/// host). Each call enqueues on this communicator's stream and, being the Communicator
/// concept's blocking collective, waits for it; stream() lets a device engine order its own
/// work against it. NCCL's kernels thus run on their own stream, apart from the compute stream.
/// Bootstrapped over any launcher: rank 0 makes the unique id and `broadcast` (e.g. an
/// MPI_Bcast over the world) hands its bytes to every rank. One GPU per rank: set the device
/// (Gpu::use_device) before constructing.
class Nccl {
 public:
  /// Broadcasts `bytes` bytes at `data` from rank 0 to every rank of the job.
  using BroadcastBytes = std::function<void(void* data, std::size_t bytes)>;

  Nccl(int rank, int size, const BroadcastBytes& broadcast) {
    if (size < 1 || rank < 0 || rank >= size)
      throw core::InputError(std::string(nccl_detail::library_name) + " rank " +
                             std::to_string(rank) + " of " + std::to_string(size) +
                             " is out of range");
    ncclUniqueId id{};
    if (rank == 0) nccl_detail::nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    if (size > 1) broadcast(&id, sizeof id);
    auto s = std::make_shared<nccl_detail::NcclState>();
    s->rank = rank;
    s->size = size;
    nccl_detail::gpu_ok(gpuStreamCreateWithFlags(&s->stream, gpuStreamNonBlocking),
                    "gpuStreamCreate");
    nccl_detail::gpu_ok(gpuMalloc(reinterpret_cast<void**>(&s->scratch), sizeof(float)),
                    "gpuMalloc");
    nccl_detail::nccl_check(ncclCommInitRank(&s->comm, size, id, rank), "ncclCommInitRank");
    state_ = std::move(s);
  }

  int rank() const { return state_->rank; }
  int size() const { return state_->size; }
  gpuStream_t stream() const { return state_->stream; }
  ncclComm_t native() const { return state_->comm; }

  void all_reduce_sum(std::span<float> x) { all_reduce(x.data(), x.size(), ncclFloat, ncclSum); }
  void all_reduce_sum(std::span<double> x) {
    all_reduce(x.data(), x.size(), ncclDouble, ncclSum);
  }
  void all_reduce_max(std::span<float> x) { all_reduce(x.data(), x.size(), ncclFloat, ncclMax); }
  /// `in` holds size() chunks of out.size() elements; this rank gets the sum of chunk rank().
  void reduce_scatter_sum(std::span<const float> in, std::span<float> out) {
    check_chunks(in.size(), out.size(), "reduce_scatter_sum");
    nccl_detail::nccl_check(ncclReduceScatter(in.data(), out.data(), out.size(), ncclFloat, ncclSum,
                                         native(), stream()),
                       "ncclReduceScatter");
    wait("reduce_scatter_sum");
  }
  void all_gather(std::span<const float> in, std::span<float> out) {
    check_chunks(out.size(), in.size(), "all_gather");
    nccl_detail::nccl_check(
        ncclAllGather(in.data(), out.data(), in.size(), ncclFloat, native(), stream()),
        "ncclAllGather");
    wait("all_gather");
  }
  void send(std::span<const float> x, int peer) {
    nccl_detail::nccl_check(ncclSend(x.data(), x.size(), ncclFloat, peer, native(), stream()),
                       "ncclSend");
    wait("send");
  }
  void recv(std::span<float> x, int peer) {
    nccl_detail::nccl_check(ncclRecv(x.data(), x.size(), ncclFloat, peer, native(), stream()),
                       "ncclRecv");
    wait("recv");
  }
  /// One grouped operation, so neighbouring pipeline stages exchanging both ways cannot
  /// deadlock.
  void send_recv(std::span<const float> out, int dest, std::span<float> in, int source) {
    nccl_detail::nccl_check(ncclGroupStart(), "ncclGroupStart");
    const ncclResult_t s1 = ncclSend(out.data(), out.size(), ncclFloat, dest, native(), stream());
    const ncclResult_t s2 = ncclRecv(in.data(), in.size(), ncclFloat, source, native(), stream());
    nccl_detail::nccl_check(ncclGroupEnd(), "ncclGroupEnd");
    nccl_detail::nccl_check(s1, "ncclSend");
    nccl_detail::nccl_check(s2, "ncclRecv");
    wait("send_recv");
  }
  void broadcast(std::span<float> x, int root) {
    nccl_detail::nccl_check(
        ncclBroadcast(x.data(), x.data(), x.size(), ncclFloat, root, native(), stream()),
        "ncclBroadcast");
    wait("broadcast");
  }
  void barrier() { all_reduce(state_->scratch, 1, ncclFloat, ncclSum); }
  /// Collective over this communicator (ncclCommSplit): the ranks sharing `color`, by `key`.
  /// The sub-communicator gets its own stream.
  Nccl split(int color, int key) const {
    auto s = std::make_shared<nccl_detail::NcclState>();
    nccl_detail::gpu_ok(gpuStreamCreateWithFlags(&s->stream, gpuStreamNonBlocking),
                    "gpuStreamCreate");
    nccl_detail::gpu_ok(gpuMalloc(reinterpret_cast<void**>(&s->scratch), sizeof(float)),
                    "gpuMalloc");
    nccl_detail::nccl_check(ncclCommSplit(native(), color, key, &s->comm, nullptr), "ncclCommSplit");
    nccl_detail::nccl_check(ncclCommUserRank(s->comm, &s->rank), "ncclCommUserRank");
    nccl_detail::nccl_check(ncclCommCount(s->comm, &s->size), "ncclCommCount");
    return Nccl(std::move(s));
  }

  /// This group's collectives enqueued on a device engine's own streams (the engine orders them
  /// against its kernels and captures them in its graph), sharing this communicator.
  std::shared_ptr<DeviceCollectives> device_collectives() const;

  /// "NCCL 2.28.3" (or "RCCL 2.27.7": RCCL numbers itself by the NCCL API it implements): the
  /// library this process loaded, for the result JSON.
  static std::string version() {
    int v = 0;
    if (ncclGetVersion(&v) != ncclSuccess) return {};
    return std::string(nccl_detail::library_name) + " " + std::to_string(v / 10000) + "." +
           std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
  }

 private:
  explicit Nccl(std::shared_ptr<nccl_detail::NcclState> s) : state_(std::move(s)) {}

  template <class T>
  void all_reduce(T* data, std::size_t n, ncclDataType_t type, ncclRedOp_t op) {
    nccl_detail::nccl_check(ncclAllReduce(data, data, n, type, op, native(), stream()),
                       "ncclAllReduce");
    wait("all_reduce");
  }
  void wait(const char* what) { nccl_detail::gpu_ok(gpuStreamSynchronize(stream()), what); }
  void check_chunks(std::size_t whole, std::size_t chunk, const char* what) const {
    if (whole != chunk * static_cast<std::size_t>(size()))
      throw core::InputError(std::string(what) + ": " + std::to_string(whole) +
                             " elements are not " + std::to_string(size()) + " chunks of " +
                             std::to_string(chunk));
  }

  std::shared_ptr<nccl_detail::NcclState> state_;
};

static_assert(Communicator<Nccl>);

/// comm::Nccl as the device engine's DeviceCollectives: in-place NCCL calls on the caller's stream.
class NcclCollectives final : public DeviceCollectives {
 public:
  explicit NcclCollectives(Nccl comm) : comm_(std::move(comm)) {}
  int rank() const override { return comm_.rank(); }
  int size() const override { return comm_.size(); }
  bool capturable() const override { return true; }
  const char* name() const override { return TPRIMAT_GPU_HIP ? "rccl" : "nccl"; }
  void all_reduce_sum(float* x, std::size_t n, void* stream) override {
    nccl_detail::nccl_check(ncclAllReduce(x, x, n, ncclFloat, ncclSum, comm_.native(), cast(stream)),
                            "ncclAllReduce");
  }
  void all_reduce_sum(double* x, std::size_t n, void* stream) override {
    nccl_detail::nccl_check(
        ncclAllReduce(x, x, n, ncclDouble, ncclSum, comm_.native(), cast(stream)),
        "ncclAllReduce");
  }
  void all_reduce_max(float* x, std::size_t n, void* stream) override {
    nccl_detail::nccl_check(ncclAllReduce(x, x, n, ncclFloat, ncclMax, comm_.native(), cast(stream)),
                            "ncclAllReduce");
  }
  void reduce_scatter_sum(float* x, std::size_t chunk, void* stream) override {
    nccl_detail::nccl_check(ncclReduceScatter(x, x + chunk * rank(), chunk, ncclFloat, ncclSum,
                                              comm_.native(), cast(stream)),
                            "ncclReduceScatter");
  }
  void reduce_scatter_sum_bf16(void* x, std::size_t chunk, void* stream) override {
    auto* bytes = static_cast<std::uint8_t*>(x);  // 2-byte elements
    nccl_detail::nccl_check(ncclReduceScatter(bytes, bytes + 2 * chunk * rank(), chunk,
                                              ncclBfloat16, ncclSum, comm_.native(), cast(stream)),
                            "ncclReduceScatter");
  }
  void all_gather_bytes(void* x, std::size_t chunk_bytes, void* stream) override {
    auto* bytes = static_cast<std::uint8_t*>(x);
    nccl_detail::nccl_check(ncclAllGather(bytes + chunk_bytes * rank(), bytes, chunk_bytes,
                                          ncclUint8, comm_.native(), cast(stream)),
                            "ncclAllGather");
  }
  void send_recv(const float* out, int dest, float* in, int source, std::size_t n,
                 void* stream) override {
    nccl_detail::nccl_check(ncclGroupStart(), "ncclGroupStart");
    const ncclResult_t s1 =
        out ? ncclSend(out, n, ncclFloat, dest, comm_.native(), cast(stream)) : ncclSuccess;
    const ncclResult_t s2 =
        in ? ncclRecv(in, n, ncclFloat, source, comm_.native(), cast(stream)) : ncclSuccess;
    nccl_detail::nccl_check(ncclGroupEnd(), "ncclGroupEnd");
    nccl_detail::nccl_check(s1, "ncclSend");
    nccl_detail::nccl_check(s2, "ncclRecv");
  }

 private:
  static gpuStream_t cast(void* s) { return static_cast<gpuStream_t>(s); }
  Nccl comm_;
};

inline std::shared_ptr<DeviceCollectives> Nccl::device_collectives() const {
  return std::make_shared<NcclCollectives>(*this);
}

/// A host communicator (the harness's collectives on host memory: comm::Mpi) with NCCL over the
/// same ranks for the device engine (device_collectives()); split() splits both, so each TP,
/// PP or DP group has both. Collective construction: rank 0's NCCL id travels over `Host`.
template <Communicator Host>
class WithNccl : public Host {
 public:
  explicit WithNccl(Host host)
      : Host(std::move(host)),
        nccl_(Host::rank(), Host::size(), [this](void* data, std::size_t bytes) {
          broadcast_bytes(static_cast<Host&>(*this), data, bytes);
        }) {}

  WithNccl split(int color, int key) const {
    return WithNccl(Host::split(color, key), nccl_.split(color, key));
  }
  std::shared_ptr<DeviceCollectives> device_collectives() const {
    return nccl_.device_collectives();
  }
  const Nccl& nccl() const { return nccl_; }

 private:
  WithNccl(Host host, Nccl nccl) : Host(std::move(host)), nccl_(std::move(nccl)) {}
  /// Bytes through a float broadcast (the host communicators move floats; MPI copies bits).
  static void broadcast_bytes(Host& host, void* data, std::size_t bytes) {
    // The float count rounds up without bytes + 3, which could wrap.
    std::vector<float> carrier(bytes / sizeof(float) + (bytes % sizeof(float) != 0), 0.0f);
    std::memcpy(carrier.data(), data, bytes);
    host.broadcast(carrier, 0);
    std::memcpy(data, carrier.data(), bytes);
  }

  Nccl nccl_;
};

}  // namespace tprimat::parallel::comm
