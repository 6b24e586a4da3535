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
#include <cstdint>
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
class Mpi {
 public:
  explicit Mpi(MPI_Comm c = MPI_COMM_WORLD) : comm_(c) {
    detail::mpi_check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    detail::mpi_check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }
  int rank() const { return rank_; }
  int size() const { return size_; }
  void all_reduce_sum(std::span<float> x) { all_reduce(x.data(), x.size(), MPI_FLOAT); }
  void all_reduce_sum(std::span<double> x) { all_reduce(x.data(), x.size(), MPI_DOUBLE); }
  void broadcast(std::span<float> x, int root) {
    for (std::size_t done = 0; done < x.size();) {
      const int count = static_cast<int>(std::min<std::size_t>(x.size() - done, INT_MAX));
      detail::mpi_check(MPI_Bcast(x.data() + done, count, MPI_FLOAT, root, comm_), "MPI_Bcast");
      done += count;
    }
  }
  void barrier() { detail::mpi_check(MPI_Barrier(comm_), "MPI_Barrier"); }
  MPI_Comm native() const { return comm_; }

 private:
  template <class T>
  void all_reduce(T* data, std::size_t n, MPI_Datatype type) {
    // MPI counts are int: reduce in chunks so an 8B-parameter gradient buffer still works.
    for (std::size_t done = 0; done < n;) {
      const int count = static_cast<int>(std::min<std::size_t>(n - done, INT_MAX));
      detail::mpi_check(MPI_Allreduce(MPI_IN_PLACE, data + done, count, type, MPI_SUM, comm_),
                        "MPI_Allreduce");
      done += count;
    }
  }

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};
static_assert(Communicator<Mpi>);

}  // namespace comm
}  // namespace tprimat::parallel
