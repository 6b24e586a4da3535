// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// core/number.hpp: plain decimal only, nothing clamped, every message naming flag, value and range.
#include "tprimat/core/number.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace {

using namespace tprimat;

/// The message parse_number throws for `text`, or "accepted".
template <class T>
std::string refusal(std::string_view text, core::Range<T> r = {}) {
  try {
    (void)core::parse_number<T>("--n", text, r);
    return "accepted";
  } catch (const core::InputError& e) {
    return e.what();
  }
}

// A signed flag read over its type's whole range (its own range checked later) suggests no
// bounds it does not take: "from -2147483648 to 2147483647" for a sequence length misleads.
TEST(Number, BeyondTheTypeSuggestsNoBounds) {
  EXPECT_EQ(refusal<int>("2147483648"),
            "tprimat: --n 2147483648 is out of range; pass a smaller value");
  EXPECT_EQ(refusal<int>("-2147483649"),
            "tprimat: --n -2147483649 is out of range; pass a larger value");
}

TEST(Number, PlainDecimalIntegers) {
  const auto r = core::between(1, 1 << 20);
  EXPECT_EQ(core::parse_number<int>("--seq", "2048", r), 2048);
  EXPECT_EQ(core::parse_number<int>("--seq", "010", r), 10) << "decimal, not octal";
  EXPECT_EQ(core::parse_number<int>("--seq", "+7", r), 7);
  EXPECT_EQ(core::parse_number<int>("--seq", "-3", core::between(-5, 5)), -3);
  for (const char* text : {"0x10", "0b1", "0o7", "1e3", "2.0", "", " 4", "4 ", "4\n", "ten", "--4",
                           "+", "-", "1_000", "１"})
    EXPECT_EQ(refusal<int>(text, r).rfind("tprimat: --n takes a whole number (from 1 to 1048576), "
                                          "got '",
                                          0),
              0u)
        << text;
}

TEST(Number, NothingIsClamped) {
  EXPECT_EQ(refusal<std::int64_t>("99999999999999999999", core::at_least(std::int64_t{0})),
            "tprimat: --n 99999999999999999999 is out of range (from 0 to 9223372036854775807); "
            "pass --n from 0 to 9223372036854775807");
  EXPECT_EQ(refusal<int>("2147483648", core::between(1, 1 << 20)),
            "tprimat: --n 2147483648 is out of range (from 1 to 1048576); pass --n from 1 to "
            "1048576");
  EXPECT_EQ(refusal<int>("2147483647", core::between(1, 1000000)),
            "tprimat: --n 2147483647 is out of range (from 1 to 1000000); pass --n from 1 to "
            "1000000");
  EXPECT_EQ(refusal<int>("-4", core::between(1, 131072)),
            "tprimat: --n -4 is out of range (from 1 to 131072); pass --n from 1 to 131072");
  EXPECT_EQ(refusal<unsigned>("-1"),
            "tprimat: --n -1 is out of range (from 0 to 4294967295); pass --n from 0 to "
            "4294967295");
  EXPECT_EQ(refusal<int>("0", core::between(1, 8)),
            "tprimat: --n 0 is out of range (from 1 to 8); pass --n from 1 to 8");
}

TEST(Number, FloatingPointIsFiniteAndDecimal) {
  const auto lr = core::above(0.0);
  EXPECT_DOUBLE_EQ(core::parse_number<double>("--lr", "3e-4", lr), 3e-4);
  EXPECT_DOUBLE_EQ(core::parse_number<double>("--lr", ".5", lr), 0.5);
  EXPECT_DOUBLE_EQ(core::parse_number<double>("--lr", "2.", lr), 2.0);
  EXPECT_DOUBLE_EQ(core::parse_number<double>("--lr", "1E+2", lr), 100.0);
  for (const char* text :
       {"nan", "NaN", "inf", "-inf", "infinity", "0x1p3", "1e", "e5", "1.2.3", "3e-4x"})
    EXPECT_EQ(refusal<double>(text, lr).rfind(
                  "tprimat: --n takes a finite decimal number (above 0), got '", 0),
              0u)
        << text;
  EXPECT_EQ(refusal<double>("1e400", lr),
            "tprimat: --n 1e400 is larger than a double holds; pass --n above 0");
  EXPECT_EQ(refusal<double>("1e-400", lr),
            "tprimat: --n 1e-400 is closer to 0 than a double holds; pass --n above 0");
  EXPECT_EQ(refusal<double>("0", lr), "tprimat: --n 0 is out of range (above 0); pass --n above 0");
  EXPECT_EQ(refusal<double>("-1", core::between(0.01, 1.0)),
            "tprimat: --n -1 is out of range (from 0.01 to 1); pass --n from 0.01 to 1");
}

TEST(Number, ReadDecimalTellsUnderflowFromOverflow) {
  // from_chars reports both as result_out_of_range: a log's 1e-400 had read as infinity.
  const auto value = [](std::string_view text) { return core::read_decimal(text)->value; };
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(value("1e400"), inf);
  EXPECT_EQ(value("-1e400"), -inf);
  EXPECT_EQ(value("123456.7e304"), inf);
  EXPECT_EQ(value("1e-400"), 0.0);
  EXPECT_TRUE(std::signbit(value("-1e-400")));
  EXPECT_EQ(value("0.0000001e-320"), 0.0);
  EXPECT_EQ(value("1000e-330"), 0.0);
  EXPECT_EQ(value("0.001e312"), inf);
  EXPECT_EQ(value("1e99999999999999999999999"), inf);
  EXPECT_EQ(value("1e-99999999999999999999999"), 0.0);
  EXPECT_EQ(value(std::string(400, '9')), inf);
  EXPECT_EQ(value("0." + std::string(400, '0') + "1"), 0.0);
  EXPECT_EQ(value("2.5e-3"), 0.0025);
  EXPECT_EQ(core::read_decimal("4.5 ms")->length, 3u);
  EXPECT_EQ(core::read_decimal("1e-400x")->length, 6u);
  EXPECT_FALSE(core::read_decimal("x1"));
  EXPECT_FALSE(core::read_decimal(""));
}

TEST(Number, RangesReadShortly) {
  // CLI::PositiveNumber printed the largest double, all 309 digits of it.
  EXPECT_EQ(core::range_text(core::above(0.0, 16384.0)), "above 0 and at most 16384");
  EXPECT_EQ(core::range_text(core::above(0.0, 1e30)), "above 0 and at most 1e+30");
  EXPECT_EQ(core::range_text(core::at_least(0.5)), "0.5 or more");
  EXPECT_EQ(core::range_text(core::Range<double>{}), "any finite value");
  EXPECT_EQ(core::range_text(core::between(1, 128)), "from 1 to 128");
  EXPECT_EQ(refusal<double>("x"),
            "tprimat: --n takes a finite decimal number, got 'x'; write it in plain decimal "
            "digits, e.g. 0.25 or 3e-4");
}

TEST(Number, MessagesStayOneShortLine) {
  const std::string long_text(5000, '9');
  const std::string msg = refusal<int>(long_text, core::between(1, 8));
  EXPECT_LT(msg.size(), 200u) << msg;
  EXPECT_NE(msg.find("(5000 bytes)"), std::string::npos);
  // Cut between UTF-8 characters: 39 ASCII bytes, then a 2-byte é across the 40-byte mark.
  const std::string accented = std::string(39, '1') + "\xc3\xa9" + "1";
  EXPECT_NE(refusal<int>(accented).find("got '" + std::string(39, '1') + "... (42 bytes)'"),
            std::string::npos);
  EXPECT_EQ(refusal<int>("4\n5", core::between(1, 8)),
            "tprimat: --n takes a whole number (from 1 to 8), got '4\\x0a5'; write it in plain "
            "decimal digits, e.g. 16");
}

}  // namespace
