// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// cli/config_documents.hpp: a config file is read once a run, so a file changed while a command
// runs cannot give its jobs two layouts; a bad file is refused as when read directly.
#include "cli/config_documents.hpp"

#include <string>

#include <gtest/gtest.h>

#include "tprimat/core/error.hpp"

#include "../support/temp_dir.hpp"

namespace {

using namespace tprimat;

using ConfigDocuments = test_support::TempDirTest;

TEST_F(ConfigDocuments, AFileIsReadOnceARun) {
  const auto file = write("tp2.json", R"({"tensor_model_parallel_size": 2})");
  const bench::ConfigDocument& first = cli::config_document(file);
  EXPECT_EQ(bench::load_config_strategy(first, "tiny", "cpu").tp, 2);
  write("tp2.json", R"({"tensor_model_parallel_size": 4})");  // changed while the run goes on
  const bench::ConfigDocument& again = cli::config_document(file);
  EXPECT_EQ(&again, &first);
  EXPECT_EQ(bench::load_config_strategy(again, "tiny", "cpu").tp, 2);
  // Read directly, the file says what it says now.
  EXPECT_EQ(bench::load_config_strategy(file, "tiny", "cpu").tp, 4);
}

TEST_F(ConfigDocuments, ABadFileIsRefusedAndNotKept) {
  const auto file = write("bad.json", R"({"tensor_model_parallel_size": 2,,})");
  EXPECT_THROW(cli::config_document(file), core::InputError);
  write("bad.json", R"({"tensor_model_parallel_size": 2})");  // fixed: read on the next use
  EXPECT_EQ(cli::config_document(file).root.at("tensor_model_parallel_size"), 2);
}

}  // namespace
