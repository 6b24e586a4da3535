// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// parallel::detect_launch against faked launcher environments (mpirun, PMI, srun, none).
#include "tprimat/parallel/launch.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "tprimat/core/error.hpp"

namespace {

using tprimat::parallel::detect_launch;

/// Sets a fake launcher environment for one test and restores the real one afterwards (the
/// suite may itself run under mpirun or inside a Slurm job).
class FakeEnv {
 public:
  static constexpr const char* names[] = {"OMPI_COMM_WORLD_RANK",
                                          "OMPI_COMM_WORLD_SIZE",
                                          "OMPI_COMM_WORLD_LOCAL_RANK",
                                          "OMPI_COMM_WORLD_LOCAL_SIZE",
                                          "PMI_RANK",
                                          "PMI_SIZE",
                                          "PMI_LOCAL_RANK",
                                          "MPI_LOCALRANKID",
                                          "MPI_LOCALNRANKS",
                                          "SLURM_PROCID",
                                          "SLURM_NTASKS",
                                          "SLURM_LOCALID",
                                          "SLURM_NNODES"};
  explicit FakeEnv(const std::map<std::string, std::string>& values) {
    for (const char* n : names) {
      const char* v = std::getenv(n);
      saved_[n] = v ? std::optional<std::string>(v) : std::nullopt;
      unsetenv(n);
    }
    for (const auto& [k, v] : values) setenv(k.c_str(), v.c_str(), 1);
  }
  ~FakeEnv() {
    for (const auto& [k, v] : saved_) {
      if (v)
        setenv(k.c_str(), v->c_str(), 1);
      else
        unsetenv(k.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(Launch, SingleProcessWithoutLauncher) {
  FakeEnv env({});
  const auto l = detect_launch();
  EXPECT_EQ(l.launcher, "single");
  EXPECT_EQ(l.rank, 0);
  EXPECT_EQ(l.size, 1);
  EXPECT_EQ(l.local_rank, 0);
  EXPECT_EQ(l.nodes, 1);
}

TEST(Launch, OpenMpi) {
  FakeEnv env({{"OMPI_COMM_WORLD_RANK", "5"},
               {"OMPI_COMM_WORLD_SIZE", "8"},
               {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
  const auto l = detect_launch();
  EXPECT_EQ(l.launcher, "mpirun");
  EXPECT_EQ(l.rank, 5);
  EXPECT_EQ(l.size, 8);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.nodes, 1) << "no local size announced: one node";
}

// Two nodes of 8 GPUs: mpirun -np 16 --npernode 8.
TEST(Launch, OpenMpiAcrossNodes) {
  FakeEnv env({{"OMPI_COMM_WORLD_RANK", "12"},
               {"OMPI_COMM_WORLD_SIZE", "16"},
               {"OMPI_COMM_WORLD_LOCAL_RANK", "4"},
               {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}});
  const auto l = detect_launch();
  EXPECT_EQ(l.local_rank, 4);
  EXPECT_EQ(l.nodes, 2);
}

TEST(Launch, PmiLaunchers) {
  FakeEnv env({{"PMI_RANK", "2"},
               {"PMI_SIZE", "4"},
               {"MPI_LOCALRANKID", "0"},
               {"MPI_LOCALNRANKS", "2"}});
  const auto l = detect_launch();
  EXPECT_EQ(l.launcher, "mpirun");
  EXPECT_EQ(l.rank, 2);
  EXPECT_EQ(l.size, 4);
  EXPECT_EQ(l.local_rank, 0);
  EXPECT_EQ(l.nodes, 2);
}

TEST(Launch, Srun) {
  FakeEnv env({{"SLURM_PROCID", "3"},
               {"SLURM_NTASKS", "16"},
               {"SLURM_LOCALID", "3"},
               {"SLURM_NNODES", "2"}});
  const auto l = detect_launch();
  EXPECT_EQ(l.launcher, "srun");
  EXPECT_EQ(l.rank, 3);
  EXPECT_EQ(l.size, 16);
  EXPECT_EQ(l.local_rank, 3);
  EXPECT_EQ(l.nodes, 2);
}

// mpirun inside a Slurm allocation: the allocation's SLURM_* describe the batch step, Open MPI's
// variables describe this job, and win.
TEST(Launch, MpirunInsideSlurmAllocation) {
  FakeEnv env({{"SLURM_PROCID", "0"},
               {"SLURM_NTASKS", "1"},
               {"OMPI_COMM_WORLD_RANK", "1"},
               {"OMPI_COMM_WORLD_SIZE", "2"},
               {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
  const auto l = detect_launch();
  EXPECT_EQ(l.launcher, "mpirun");
  EXPECT_EQ(l.rank, 1);
  EXPECT_EQ(l.size, 2);
}

// The NCCL knobs set in the environment go into the result JSON, "NAME=value" each.
TEST(Launch, CollectiveSettingsAreTheOnesSet) {
  const char* name = "NCCL_IB_HCA";
  const char* was = std::getenv(name);
  const std::optional<std::string> saved = was ? std::optional<std::string>(was) : std::nullopt;
  setenv(name, "mlx5_0,mlx5_1", 1);
  const auto set = tprimat::parallel::collective_settings();
  EXPECT_NE(std::find(set.begin(), set.end(), "NCCL_IB_HCA=mlx5_0,mlx5_1"), set.end());
  unsetenv(name);
  const auto unset = tprimat::parallel::collective_settings();
  EXPECT_EQ(std::count_if(unset.begin(), unset.end(),
                          [](const std::string& s) { return s.rfind("NCCL_IB_HCA=", 0) == 0; }),
            0);
  if (saved) setenv(name, saved->c_str(), 1);
}

TEST(Launch, GarbageIsAnInputError) {
  {
    FakeEnv env({{"OMPI_COMM_WORLD_RANK", "one"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
    EXPECT_THROW(detect_launch(), tprimat::core::InputError);
  }
  {
    FakeEnv env({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}});  // rank must be < size
    EXPECT_THROW(detect_launch(), tprimat::core::InputError);
  }
}

}  // namespace
