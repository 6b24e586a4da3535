// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Under mpirun -np 2: a --parallel config file is read by rank 0 for every rank
// (cli::share_config_document). Each rank runs in a directory of its own, so one relative path
// names a different file on each: every rank must end with rank 0's document, or rank 0's error.
#include "cli/config_documents.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "tprimat/core/error.hpp"
#include "tprimat/parallel/mpi.hpp"

namespace {

using namespace tprimat;
namespace fs = std::filesystem;

/// A fresh directory of this process's own, current for the test's life.
class RankDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    if (world_.size() != 2) GTEST_SKIP() << "run under mpirun -np 2";
    previous_ = fs::current_path();
    dir_ = fs::temp_directory_path() / ("tprimat_config_sharing_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::current_path(dir_);
  }
  void TearDown() override {
    if (previous_.empty()) return;
    fs::current_path(previous_);
    fs::remove_all(dir_);
  }
  static void write(const std::string& name, std::string_view text) {
    std::ofstream(name) << text;
  }
  parallel::comm::Mpi world_;

 private:
  fs::path previous_, dir_;
};

TEST_F(RankDirectory, EveryRankParsesRankZerosText) {
  write("layout.json", "{\"tensor_model_parallel_size\": " + std::to_string(world_.rank() + 1) + "}");
  cli::share_config_document(world_, "layout.json");
  const bench::ConfigDocument& doc = cli::config_document("layout.json");
  EXPECT_EQ(doc.root.at("tensor_model_parallel_size"), 1) << "rank 0's file, on rank " << world_.rank();
  EXPECT_EQ(bench::load_config_strategy(doc, "tiny", "cpu").tp, 1);
}

TEST_F(RankDirectory, ANamedStrategyComesWithTheDocument) {
  write("two.json", world_.rank() == 0
                        ? R"({"tiny": {"cpu": {"tensor_model_parallel_size": 2}}})"
                        : R"({"tiny": {"cpu": {"tensor_model_parallel_size": 4}}})");
  cli::share_config_document(world_, "two.json");
  EXPECT_EQ(bench::load_config_strategy(cli::config_document("two.json"), "tiny", "cpu").tp, 2);
}

TEST_F(RankDirectory, AFileRankZeroLacksStopsEveryRank) {
  if (world_.rank() == 1) write("absent.json", R"({"tensor_model_parallel_size": 1})");
  try {
    cli::share_config_document(world_, "absent.json");
    ADD_FAILURE() << "rank " << world_.rank() << " went on without rank 0's file";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("config file absent.json not found"), std::string::npos)
        << e.what();
  }
}

TEST_F(RankDirectory, RankZerosMalformedTextStopsEveryRank) {
  write("malformed.json", world_.rank() == 0 ? R"({"tensor_model_parallel_size": 2,,})"
                                             : R"({"tensor_model_parallel_size": 2})");
  EXPECT_THROW(cli::share_config_document(world_, "malformed.json"), core::InputError)
      << "rank " << world_.rank();
}

}  // namespace
