// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// MPI for the CPU backend: an RAII session and comm::Mpi, the Communicator over an MPI_Comm.
#pragma once

#if !defined(TPRIMAT_WITH_MPI)
#error \
    "tprimat: parallel/mpi.hpp needs MPI; link the tprimat::mpi target (it defines TPRIMAT_WITH_MPI)"
#endif

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "tprimat/core/error.hpp"
#include "tprimat/parallel/communicator.hpp"

namespace tprimat::parallel {

namespace detail {
inline void mpi_check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  throw core::RunError(std::string("MPI ") + what + " failed: " + std::string(text, len));
}
}  // namespace detail

/// Initialises MPI (funneled: only the main thread calls MPI) unless someone already did, and
/// finalises it on destruction only if it initialised it.
class MpiSession {
 public:
  MpiSession() : MpiSession(nullptr, nullptr) {}
  MpiSession(int* argc, char*** argv) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      detail::mpi_check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided),
                        "MPI_Init_thread");
      owns_ = true;
    }
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  ~MpiSession() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owns_ && !finalized) MPI_Finalize();
  }

 private:
  bool owns_ = false;
};

namespace comm {

/// Blocking collectives over an MPI communicator (world by default). Sums are in place.
/// Copies share the MPI_Comm; a communicator made by split() is freed with its last copy.
class Mpi {
 public:
  explicit Mpi(MPI_Comm c = MPI_COMM_WORLD) : comm_(c) {
    detail::mpi_check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    detail::mpi_check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }
  int rank() const { return rank_; }
  int size() const { return size_; }
  void all_reduce_sum(std::span<float> x) { all_reduce(x.data(), x.size(), MPI_FLOAT, MPI_SUM); }
  void all_reduce_sum(std::span<double> x) { all_reduce(x.data(), x.size(), MPI_DOUBLE, MPI_SUM); }
  void all_reduce_max(std::span<float> x) { all_reduce(x.data(), x.size(), MPI_FLOAT, MPI_MAX); }
  void reduce_scatter_sum(std::span<const float> in, std::span<float> out) {
    check_chunks(in.size(), out.size(), "reduce_scatter_sum");
    detail::mpi_check(MPI_Reduce_scatter_block(in.data(), out.data(), checked_count(out.size()),
                                               MPI_FLOAT, MPI_SUM, comm_),
                      "MPI_Reduce_scatter_block");
  }
  void all_gather(std::span<const float> in, std::span<float> out) {
    check_chunks(out.size(), in.size(), "all_gather");
    const int count = checked_count(in.size());
    detail::mpi_check(
        MPI_Allgather(in.data(), count, MPI_FLOAT, out.data(), count, MPI_FLOAT, comm_),
        "MPI_Allgather");
  }
  void send(std::span<const float> x, int peer) {
    detail::mpi_check(MPI_Send(x.data(), checked_count(x.size()), MPI_FLOAT, peer, 0, comm_),
                      "MPI_Send");
  }
  void recv(std::span<float> x, int peer) {
    detail::mpi_check(
        MPI_Recv(x.data(), checked_count(x.size()), MPI_FLOAT, peer, 0, comm_, MPI_STATUS_IGNORE),
        "MPI_Recv");
  }
  void send_recv(std::span<const float> out, int dest, std::span<float> in, int source) {
    detail::mpi_check(
        MPI_Sendrecv(out.data(), checked_count(out.size()), MPI_FLOAT, dest, 0, in.data(),
                     checked_count(in.size()), MPI_FLOAT, source, 0, comm_, MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
  }
  void broadcast(std::span<float> x, int root) {
    for (std::size_t done = 0; done < x.size();) {
      const int count = static_cast<int>(std::min<std::size_t>(x.size() - done, INT_MAX));
      detail::mpi_check(MPI_Bcast(x.data() + done, count, MPI_FLOAT, root, comm_), "MPI_Bcast");
      done += count;
    }
  }
  /// Root's bytes into every rank's `x` (of one size on every rank).
  void broadcast_bytes(std::span<std::byte> x, int root) {
    for (std::size_t done = 0; done < x.size();) {
      const int count = static_cast<int>(std::min<std::size_t>(x.size() - done, INT_MAX));
      detail::mpi_check(MPI_Bcast(x.data() + done, count, MPI_BYTE, root, comm_), "MPI_Bcast");
      done += count;
    }
  }
  void barrier() { detail::mpi_check(MPI_Barrier(comm_), "MPI_Barrier"); }
  /// Collective over this communicator: the ranks with the same `color`, ordered by `key`.
  Mpi split(int color, int key) const {
    MPI_Comm sub = MPI_COMM_NULL;
    detail::mpi_check(MPI_Comm_split(comm_, color, key, &sub), "MPI_Comm_split");
    Mpi out(sub);
    out.owned_ = std::shared_ptr<MPI_Comm>(new MPI_Comm(sub), [](MPI_Comm* c) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Comm_free(c);
      delete c;
    });
    return out;
  }
  MPI_Comm native() const { return comm_; }

 private:
  template <class T>
  void all_reduce(T* data, std::size_t n, MPI_Datatype type, MPI_Op op) {
    // MPI counts are int: reduce in chunks so an 8B-parameter gradient buffer still works.
    for (std::size_t done = 0; done < n;) {
      const int count = static_cast<int>(std::min<std::size_t>(n - done, INT_MAX));
      detail::mpi_check(MPI_Allreduce(MPI_IN_PLACE, data + done, count, type, op, comm_),
                        "MPI_Allreduce");
      done += count;
    }
  }
  static int checked_count(std::size_t n) {
    if (n > static_cast<std::size_t>(INT_MAX))
      throw core::RunError("MPI message of " + std::to_string(n) +
                           " elements exceeds MPI's int count; use more DP ranks or fewer layers");
    return static_cast<int>(n);
  }
  void check_chunks(std::size_t whole, std::size_t chunk, const char* what) const {
    if (whole != chunk * static_cast<std::size_t>(size_))
      throw core::RunError(std::string(what) + ": buffer of " + std::to_string(whole) +
                           " elements is not " + std::to_string(size_) + " chunks of " +
                           std::to_string(chunk));
  }

  MPI_Comm comm_;
  std::shared_ptr<MPI_Comm> owned_;  // set for communicators this class created (split)
  int rank_ = 0;
  int size_ = 1;
};
static_assert(Communicator<Mpi>);

}  // namespace comm
}  // namespace tprimat::parallel
