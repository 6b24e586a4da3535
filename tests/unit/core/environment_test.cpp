// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// core/environment.hpp: unset or empty gives the default, a readable value is taken, and an
// unreadable one is refused with the variable, its value, what it takes and the default.
#include "tprimat/core/environment.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace {

using namespace tprimat;

constexpr const char* name = "TPRIMAT_ENVIRONMENT_TEST";

/// Sets the test's variable for one scope (nullopt: unset), then unsets it.
class Variable {
 public:
  explicit Variable(std::optional<std::string> value) {
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~Variable() { ::unsetenv(name); }
  Variable(const Variable&) = delete;
  Variable& operator=(const Variable&) = delete;
};

template <class Read>
std::string refusal(const std::string& value, Read read) {
  const Variable v(value);
  try {
    (void)read();
    return "accepted";
  } catch (const core::InputError& e) {
    return e.what();
  }
}

TEST(Environment, SwitchReadsWordsAndDigitsInAnyCase) {
  for (const bool fallback : {false, true}) {
    {
      const Variable v(std::nullopt);
      EXPECT_EQ(core::env_switch(name, fallback), fallback);
    }
    {
      const Variable v("");
      EXPECT_EQ(core::env_switch(name, fallback), fallback) << "empty is unset";
    }
  }
  for (const char* on : {"1", "true", "On", "YES"}) {
    const Variable v(on);
    EXPECT_TRUE(core::env_switch(name, false)) << on;
  }
  for (const char* off : {"0", "false", "OFF", "no"}) {
    const Variable v(off);
    EXPECT_FALSE(core::env_switch(name, true)) << off;
  }
}

TEST(Environment, SwitchRefusesWhatItCannotRead) {
  for (const char* text : {"2", "enable", "of", " 1", "1 ", "00"})
    EXPECT_EQ(refusal(text, [] { return core::env_switch(name, true); }),
              "tprimat: environment variable TPRIMAT_ENVIRONMENT_TEST='" + std::string(text) +
                  "' cannot be read; set it to 0 or 1, or unset it for the default (1)")
        << text;
  EXPECT_EQ(refusal("\x1b[2J", [] { return core::env_switch(name, false); }),
            "tprimat: environment variable TPRIMAT_ENVIRONMENT_TEST='\\x1b[2J' cannot be read; set "
            "it to 0 or 1, or unset it for the default (0)")
      << "control characters are shown escaped";
}

TEST(Environment, NumberInItsRange) {
  {
    const Variable v(std::nullopt);
    EXPECT_EQ(core::env_number(name, core::between(1, 64), 16), 16);
  }
  {
    const Variable v("64");
    EXPECT_EQ(core::env_number(name, core::between(1, 64), 16), 64);
  }
  {
    const Variable v("0.5");
    EXPECT_EQ(core::env_number(name, core::above(0.0, 86400.0), 120.0), 0.5);
  }
  for (const char* text : {"0", "65", "abc", "16x", "0x10", "-1", "1e1"})
    EXPECT_EQ(refusal(text, [] { return core::env_number(name, core::between(1, 64), 16); }),
              "tprimat: environment variable TPRIMAT_ENVIRONMENT_TEST='" + std::string(text) +
                  "' cannot be read; set it to a whole number from 1 to 64, or unset it for the "
                  "default (16)")
        << text;
  for (const char* text : {"0", "-2", "nan", "inf", "86401", "1e999", "soon"})
    EXPECT_EQ(
        refusal(text, [] { return core::env_number(name, core::above(0.0, 86400.0), 120.0); }),
        "tprimat: environment variable TPRIMAT_ENVIRONMENT_TEST='" + std::string(text) +
            "' cannot be read; set it to a number above 0 and at most 86400, or unset it "
            "for the default (120)")
        << text;
}

}  // namespace
