// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The CLI's model list: lookup by --model name and visiting the compile-time type.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "tprimat/model/all.hpp"

namespace tprimat::model {
namespace {

TEST(ModelList, FindByCliName) {
  ASSERT_TRUE(find("llama").has_value());
  EXPECT_EQ(find("llama")->hidden, 4096);
  EXPECT_EQ(find("qwen")->heads, 28);
  EXPECT_EQ(find("mistral")->vocab, 32768);
  EXPECT_EQ(find("tiny")->layers, 4);
  EXPECT_FALSE(find("gpt2").has_value());
  EXPECT_FALSE(find("Llama").has_value());  // names are exact
}

TEST(ModelList, KnownNames) { EXPECT_EQ(known_names(), "llama, qwen, mistral, tiny"); }

TEST(ModelList, VisitReachesTheType) {
  int heads = 0;
  EXPECT_TRUE(Models::visit("qwen", [&]<class M>() { heads = M::heads; }));
  EXPECT_EQ(heads, 28);
  EXPECT_FALSE(Models::visit("nope", [&]<class M>() { heads = -1; }));
  EXPECT_EQ(heads, 28);
}

TEST(ModelList, ListMatchesDims) {
  EXPECT_EQ(Models::size, 4u);
  for (const auto& d : Models::all) {
    std::string_view seen;
    Models::visit(d.cli_name, [&]<class M>() { seen = M::name; });
    EXPECT_EQ(seen, d.name);
  }
}

}  // namespace
}  // namespace tprimat::model
