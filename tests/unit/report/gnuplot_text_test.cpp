// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// report/gnuplot_text.hpp: no text from the data reaches a script; data files stay well formed.
#include "tprimat/report/gnuplot_text.hpp"

#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

namespace tprimat::report {
namespace {

// Only literals become script text: nothing read at run time converts to a ScriptLiteral, so a
// Script cannot be handed a label (tests/compile_fail/gnuplot_script_text_fail.cpp tries).
static_assert(!std::is_constructible_v<ScriptLiteral, std::string>);
static_assert(!std::is_constructible_v<ScriptLiteral, const char*>);
static_assert(!std::is_constructible_v<ScriptLiteral, std::string_view>);

/// Names a result file or a folder could hold, each of which gnuplot would act on in a script.
const char* const hostile[] = {"`touch PWNED`",
                               "system(\"touch PWNED\")",
                               "@fmt",
                               "x\" . system(\"id\") . \"",
                               "x' . system('id') . '",
                               "back\\slash\\",
                               "line1\nline2",
                               "ü µ é",
                               "\x1b[31mred"};

TEST(GnuplotText, DataStringsAreOneFieldOnOneLine) {
  EXPECT_EQ(data_string("plain"), "\"plain\"");
  EXPECT_EQ(data_string("say \"hi\""), "\"say 'hi'\"");
  EXPECT_EQ(data_string("a\nb\tc\r"), "\"a\\nb\\tc\\r\"");
  EXPECT_EQ(data_string("back\\slash\\"), "\"back\\slash\\\"");    // inert in a data file
  EXPECT_EQ(data_string("`touch x` @fmt"), "\"`touch x` @fmt\"");  // data is never expanded
  for (const char* h : hostile) {
    const std::string s = data_string(h);
    EXPECT_EQ(s.find('\n'), std::string::npos) << h;
    EXPECT_EQ(s.find('"', 1), s.size() - 1) << h;  // no quote before the closing one
  }
}

TEST(GnuplotText, PrintableEscapesControlsAndBadUtf8) {
  EXPECT_EQ(printable("ü µ ±"), "ü µ ±");
  EXPECT_EQ(printable("a\x1b[31m"), "a\\x1b[31m");
  EXPECT_EQ(printable("\x7f"), "\\x7f");
  EXPECT_EQ(printable("\xc2\x9b"), "\\u009b");  // C1 control: a terminal's CSI
  EXPECT_EQ(printable("\xff\xfe"), "??");       // not UTF-8
  EXPECT_EQ(printable("\xc3"), "?");            // truncated sequence
  EXPECT_EQ(printable("\xc0\xaf"), "??");       // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "???");  // a UTF-16 surrogate
  EXPECT_EQ(printable("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");
}

TEST(GnuplotText, ScriptHoldsNoLabelWhateverItIs) {
  FigureText words;
  std::vector<std::string> ticks;
  for (const char* h : hostile) {
    words.title_lines(h);
    ticks.emplace_back(h);
  }
  words.list("tick", ticks);
  Script gp;
  words.read_into(gp, "labels.dat");
  xtics_from(gp, "tick", ticks.size());
  for (const char* h : hostile) {
    EXPECT_EQ(gp.text().find(h), std::string::npos) << h;
  }
  EXPECT_EQ(gp.text().find('`'), std::string::npos);
  EXPECT_EQ(gp.text().find('@'), std::string::npos);
  EXPECT_EQ(gp.text().find("system"), std::string::npos);
  // The words are in the data file instead, one field each.
  const std::string data = words.data("a test");
  EXPECT_NE(data.find("\n1 \"`touch PWNED`\"\n"), std::string::npos) << data;
  EXPECT_NE(data.find("\n7 \"line1\"\n8 \"line2\"\n"), std::string::npos) << data;
}

TEST(GnuplotText, FigureTextRowsAndScript) {
  FigureText words;
  words.title_lines("head\nsecond");
  words.title_lines("");  // nothing
  words.list("bar_tick", {"amd\nqwen", "nvd"});
  EXPECT_EQ(words.data("x"),
            "# the words of x, read by its script into variables (never part of the script)\n"
            "# index 0: the title, one row per line\n"
            "1 \"head\"\n2 \"second\"\n\n\n"
            "# the gnuplot array bar_tick: item, line, text\n"
            "1 1 \"amd\"\n1 2 \"qwen\"\n2 1 \"nvd\"\n");
  Script gp;
  words.read_into(gp, "w.dat");
  EXPECT_EQ(gp.text(),
            "title_text = \"\"\n"
            "stats \"w.dat\" index 0 using (title_text = title_text . ($1 > 1 ? \"\\n\" : \"\") . "
            "strcol(2), 0) nooutput\n"
            "array bar_tick[2]\n"
            "do for [i=1:2] { bar_tick[i] = \"\" }\n"
            "stats \"w.dat\" index 1 using (bar_tick[int($1)] = bar_tick[int($1)] . ($2 > 1 ? "
            "\"\\n\" : \"\") . strcol(3), 0) nooutput\n");
}

TEST(GnuplotText, DataFieldsAndFiles) {
  DataFile d;
  d.comment("path/with\nnewline")
      .row(
          {0, "label", 1.5, std::numeric_limits<double>::quiet_NaN(), DataField::colour(0x76B900)});
  EXPECT_EQ(d.next_block().text(), "# path/with\\nnewline\n0 \"label\" 1.5 NaN 0x76B900\n\n\n");
}

}  // namespace
}  // namespace tprimat::report
