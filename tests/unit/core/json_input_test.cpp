// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// core/json_input.hpp: the depth limit holds at the limit, refuses one past it, never crashes,
// and agrees with nlohmann's own nesting; a key given twice in one object is refused at any
// depth, however many keys the object has.
#include "tprimat/core/json_input.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <string>

namespace {

namespace core = tprimat::core;

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

std::string nested_objects(std::size_t depth) {
  std::string s;
  for (std::size_t i = 0; i < depth; ++i) s += "{\"a\":";
  return s + "1" + std::string(depth, '}');
}

/// nlohmann's own nesting of a parsed document (a scalar is 0, `[]` is 1).
int depth_of(const nlohmann::json& j) {
  int d = 0;
  if (j.is_structured())
    for (const auto& v : j) d = std::max(d, depth_of(v));
  return j.is_structured() ? d + 1 : 0;
}

/// The message parse_json throws for `text`, or "" when it parses.
std::string parse_problem(const std::string& text) {
  try {
    core::parse_json(text, "config file c.json", "fix it");
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonDepth, AtTheLimitParses) {
  const auto arrays = core::parse_json(nested_arrays(core::max_json_depth), "a", "");
  EXPECT_EQ(depth_of(arrays), core::max_json_depth);
  const auto objects = core::parse_json(nested_objects(core::max_json_depth), "o", "");
  EXPECT_EQ(depth_of(objects), core::max_json_depth);
}

TEST(JsonDepth, OnePastTheLimitIsRefusedWhereItOpens) {
  const int past = core::max_json_depth + 1;
  EXPECT_EQ(parse_problem(nested_arrays(past)),
            "tprimat: config file c.json: nests arrays and objects deeper than the 64 levels "
            "tprimat reads (column 65); no real input nests that deep or holds a NUL byte: check "
            "what wrote the file");
  const auto at = core::json_nesting_past(nested_objects(past));
  ASSERT_TRUE(at);
  EXPECT_EQ(at->byte, 5u * core::max_json_depth);  // the 65th "{"
  EXPECT_FALSE(core::json_nesting_past(nested_objects(past), past));
}

TEST(JsonDepth, HundredThousandLevelsAreRefusedWithoutACrash) {
  for (const auto& text : {nested_arrays(100'000), nested_objects(100'000),
                           std::string(100'000, '['), std::string(100'000, '{')})
    EXPECT_NE(parse_problem(text).find("deeper than the 64 levels"), std::string::npos);
}

TEST(JsonDepth, PositionNamesLineAndColumn) {
  const std::string text = "{\n  \"x\":\n    " + nested_arrays(core::max_json_depth) + "}";
  const auto at = core::json_nesting_past(text);
  ASSERT_TRUE(at);
  EXPECT_EQ(at->line, 3u);
  EXPECT_EQ(at->column, 5u + core::max_json_depth - 1);
  EXPECT_NE(core::json_text_problem(text).find("(line 3, column 68)"), std::string::npos);
}

TEST(JsonDepth, BracketsInStringsDoNotCount) {
  const std::string deep_string =
      "[\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\\\\\", \"]]]\"]";
  EXPECT_FALSE(core::json_nesting_past(deep_string));
  EXPECT_EQ(depth_of(core::parse_json(deep_string, "s", "")), 1);
  // A quote escaped inside a string does not end it; an escaped backslash before one does.
  EXPECT_TRUE(core::json_nesting_past("[\"\\\\\"" + nested_arrays(100), 2));
}

TEST(JsonDepth, SyntaxErrorsKeepNlohmannsPlace) {
  const std::string problem = parse_problem("{\n  \"a\": ,\n}");
  EXPECT_EQ(problem.rfind("tprimat: config file c.json is not valid JSON (parse error at line 2, "
                          "column 8: syntax error while parsing value - unexpected ','",
                          0),
            0u)
      << problem;
  EXPECT_TRUE(problem.ends_with("); fix it")) << problem;
  EXPECT_NE(parse_problem("[1e400]").find("c.json is not valid JSON (number overflow"),
            std::string::npos);
}

TEST(JsonDepth, ScanAgreesWithNlohmannOnRandomTexts) {
  // Short texts over JSON's structural characters: wherever nlohmann parses a text, the scan
  // finds exactly its depth, so a text the scan passes never builds a deeper tree.
  std::mt19937 rng(22);
  const std::string alphabet = "[]{}\"\\,:1 a";
  int parsed = 0;
  for (int n = 0; n < 200'000; ++n) {
    std::string text(rng() % 24, ' ');
    for (auto& c : text) c = alphabet[rng() % alphabet.size()];
    const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) continue;
    ++parsed;
    const int d = depth_of(j);
    ASSERT_FALSE(core::json_nesting_past(text, d)) << text;
    if (d > 0) ASSERT_TRUE(core::json_nesting_past(text, d - 1)) << text;
  }
  EXPECT_GT(parsed, 1000);
}

TEST(JsonText, ANulByteIsRefusedWhereItSitsNotReadAsTheEnd) {
  // nlohmann stops at a NUL as at the end of its input: what follows would go unread.
  using namespace std::string_literals;
  EXPECT_EQ(parse_problem("{\"a\": 1}\0{\"b\""s),
            "tprimat: config file c.json: holds a NUL byte (column 9), which JSON text never "
            "does; no real input nests that deep or holds a NUL byte: check what wrote the file");
  EXPECT_NE(parse_problem("{\n \"a\": \"x\0y\"}"s).find("(line 2, column 9)"), std::string::npos);
  EXPECT_EQ(parse_problem(R"({"a": "x\u0000y"})"), "");  // written as JSON writes it
  EXPECT_EQ(core::json_text_problem("[1]"), "");
}

TEST(JsonKeysOnce, AKeyGivenTwiceIsRefusedNamingWhereItSits) {
  EXPECT_EQ(parse_problem(R"({"a": 1, "b": {"c": [{"d": 1, "e": 2}]}})"), "");
  EXPECT_EQ(parse_problem(R"({"a": 1, "a": 2})"),
            "tprimat: config file c.json: key \"a\" is given twice; give each key once: tprimat "
            "does not pick one of several values");
  EXPECT_NE(parse_problem(R"({"a": {"b": {"x": 1, "x": 1}}})").find(R"(key "x" under a.b is)"),
            std::string::npos);
  // Inside arrays, and the same key in sibling objects is no repeat.
  EXPECT_NE(parse_problem(R"([{"t": 1}, {"t": 2, "t": 3}])").find(R"(key "t" is given)"),
            std::string::npos);
  EXPECT_EQ(parse_problem(R"({"x": {"t": 1}, "y": {"t": 2}, "t": 3})"), "");
  // A key is shown as a message shows what a user typed: one line.
  EXPECT_NE(
      parse_problem(R"({"p\nq": {"a\nb": 1, "a\nb": 2}})").find(R"(key "a\x0ab" under p\x0aq)"),
      std::string::npos);
}

TEST(JsonKeysOnce, ObjectsOfManyKeysAreCheckedAsFast) {
  // 200,000 keys: hashed (a list searched key by key would take minutes).
  std::string text = "{";
  for (int i = 0; i < 200'000; ++i) text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\": 0";
  EXPECT_EQ(parse_problem(text + "}"), "");
  EXPECT_NE(parse_problem(text + ", \"k77\": 1}").find(R"(key "k77" is given twice)"),
            std::string::npos);
  try {
    (void)nlohmann::json::parse(R"({"w": 1, "w": 1})", core::KeysOnce("f.json"));
    ADD_FAILURE() << "not refused";
  } catch (const core::RepeatedKey& e) {
    EXPECT_EQ(e.problem(), R"(key "w" is given twice)");
  }
}

}  // namespace
