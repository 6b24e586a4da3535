// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// core/printable.hpp's UTF-8 rules: what is valid, and each stray byte replaced by U+FFFD.
#include "tprimat/core/printable.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace tprimat;

TEST(Utf8, ValidOnlyWhereEverySequenceIs) {
  for (const char* ok : {"", "plain", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"})
    EXPECT_TRUE(core::valid_utf8(ok)) << core::printable(ok);
  for (const char* bad :
       {"caf\xe9", "\x80", "\xc0\xaf" /* overlong */, "\xed\xa0\x80" /* surrogate */,
        "\xf4\x90\x80\x80" /* > U+10FFFF */, "\xe2\x82" /* cut off */})
    EXPECT_FALSE(core::valid_utf8(bad)) << core::printable(bad);
}

TEST(Utf8, StrayBytesBecomeTheReplacementCharacter) {
  EXPECT_EQ(core::utf8_replaced("caf\xe9!"), "caf\xef\xbf\xbd!");
  EXPECT_EQ(core::utf8_replaced("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd") << "one per byte";
  EXPECT_EQ(core::utf8_replaced("caf\xc3\xa9"), "caf\xc3\xa9") << "valid text is kept";
  EXPECT_TRUE(core::valid_utf8(core::utf8_replaced("\xff\xfe\x80 x \xc0\xaf")));
}

}  // namespace
