// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// How this process was launched (mpirun, srun, or alone), read from the environment; no MPI needed.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "tprimat/core/error.hpp"

namespace tprimat::parallel {

/// This process's place in the job, as the launcher announced it.
struct Launch {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  /// Nodes of the job, from the ranks per node the launcher announces (Open MPI's local size,
  /// MPICH's MPI_LOCALNRANKS, Slurm's SLURM_NNODES); 1 when it announces none.
  int nodes = 1;
  std::string launcher = "single";  ///< "mpirun" | "srun" | "single"
};

namespace detail {
/// The integer value of environment variable `name`, or `fallback` when unset.
inline int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v, &end, 10);
  if (errno != 0 || *end != '\0' || x < 0 || x > 1 << 30)
    throw core::InputError(
        std::string("environment variable ") + name + "='" + v + "' is not a rank or size",
        "launch with mpirun or srun, or unset it for a single process");
  return static_cast<int>(x);
}
/// Nodes of `size` ranks placed `per_node` to a node (0: unknown, one node).
inline int nodes_of(int size, int per_node) {
  return per_node > 0 ? (size + per_node - 1) / per_node : 1;
}
inline bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}
}  // namespace detail

/// Open MPI's variables first (mpirun inside a Slurm allocation also sees the allocation's
/// SLURM_* values, which describe the batch step, not this job), then PMI (MPICH/Hydra, Intel
/// MPI), then Slurm's srun; otherwise a single process.
inline Launch detect_launch() {
  using detail::env_int;
  Launch l;
  if (detail::env_set("OMPI_COMM_WORLD_SIZE")) {
    l.launcher = "mpirun";
    l.rank = env_int("OMPI_COMM_WORLD_RANK", 0);
    l.size = env_int("OMPI_COMM_WORLD_SIZE", 1);
    l.local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0);
    l.nodes = detail::nodes_of(l.size, env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 0));
  } else if (detail::env_set("PMI_SIZE")) {
    l.launcher = "mpirun";
    l.rank = env_int("PMI_RANK", 0);
    l.size = env_int("PMI_SIZE", 1);
    l.local_rank = env_int("MPI_LOCALRANKID", env_int("PMI_LOCAL_RANK", 0));
    l.nodes = detail::nodes_of(l.size, env_int("MPI_LOCALNRANKS", 0));
  } else if (detail::env_set("SLURM_NTASKS") && detail::env_set("SLURM_PROCID")) {
    l.launcher = "srun";
    l.rank = env_int("SLURM_PROCID", 0);
    l.size = env_int("SLURM_NTASKS", 1);
    l.local_rank = env_int("SLURM_LOCALID", 0);
    l.nodes = std::max(1, env_int("SLURM_NNODES", 1));
  }
  if (l.size < 1 || l.rank >= l.size || l.local_rank > l.rank)
    throw core::InputError("launcher " + l.launcher + " reports rank " + std::to_string(l.rank) +
                               " of " + std::to_string(l.size) + " (local rank " +
                               std::to_string(l.local_rank) + ")",
                           "check the launcher's environment");
  return l;
}

/// The collective library's settings this job runs with, as set in the environment (what users
/// set on clusters: adapters, interfaces, transports), for the result JSON: "NAME=value" each.
inline std::vector<std::string> collective_settings() {
  std::vector<std::string> out;
  for (const char* name :
       {"NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_NET", "NCCL_NET_GDR_LEVEL", "NCCL_P2P_LEVEL",
        "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE", "NCCL_NVLS_ENABLE",
        "NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS"})
    if (detail::env_set(name)) out.push_back(std::string(name) + "=" + std::getenv(name));
  return out;
}

}  // namespace tprimat::parallel
