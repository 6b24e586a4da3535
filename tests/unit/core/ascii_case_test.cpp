// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
#include "tprimat/core/ascii_case.hpp"

#include <gtest/gtest.h>

#include <string>

namespace core = tprimat::core;

TEST(AsciiCase, FoldsAsciiLettersOnly) {
  EXPECT_EQ(core::ascii_lower("NVIDIA H200 bf16-Mixed"), "nvidia h200 bf16-mixed");
  // Bytes past ASCII (UTF-8's É, Latin-1's) are left as they are, whatever the locale says.
  EXPECT_EQ(core::ascii_lower("\xC3\x89T\xC9"), "\xC3\x89t\xC9");
  EXPECT_EQ(core::ascii_lower(std::string("A\0B", 3)), std::string("a\0b", 3));
  EXPECT_EQ(core::ascii_lower(""), "");
  static_assert(core::ascii_lower('Z') == 'z' && core::ascii_lower('@') == '@' &&
                core::ascii_lower('[') == '[');
}

TEST(AsciiCase, FindsANamesPartCaseAside) {
  EXPECT_TRUE(core::contains_ignoring_case("NVIDIA H200", "h200"));
  EXPECT_TRUE(core::contains_ignoring_case("NVIDIA H100 PCIe", "pcie"));
  EXPECT_FALSE(core::contains_ignoring_case("NVIDIA H100", "h200"));
  EXPECT_FALSE(core::contains_ignoring_case("H1", "H100"));
  EXPECT_TRUE(core::contains_ignoring_case("anything", ""));
}
