// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Every numeric option of the CLI reads its text through core::parse_number, not CLI11's rules.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "tprimat/core/number.hpp"

namespace tprimat::cli {

/// The name of the transform number() adds: an option that has it is read by tprimat's rules.
inline const std::string number_check_name = "tprimat-number";

/// A CLI11 transform (a check that may rewrite the text: Option::check would copy it) that reads
/// an option's text as core::parse_number does (plain decimal, finite,
/// within `range`) and leaves it as plain decimal digits for CLI11 to store: CLI11 alone reads
/// "010" as octal and "0x10" as hex, and clamps what overflows. A bad value throws
/// core::InputError naming `flag`, the value and the range; main prints it as one line, exit 2.
template <class T>
CLI::Validator number(std::string flag, core::Range<T> range) {
  return CLI::Validator(
      [flag = std::move(flag), range](std::string& text) {
        const T value = core::parse_number<T>(flag, text, range);
        if constexpr (std::is_floating_point_v<T>) {
          char buf[32];
          std::snprintf(buf, sizeof buf, "%.17g", double(value));  // reads back exactly
          text = buf;
        } else {
          text = std::to_string(value);
        }
        return std::string();
      },
      core::range_text(range), number_check_name);
}

/// `--flag VALUE` stored in `field`, read by number(). `flag` may list aliases:
/// "--tp,--tensor-...".
template <class T>
CLI::Option* add_number(CLI::App* app, const std::string& flag, T& field, const std::string& help,
                        core::Range<T> range) {
  const std::string first = flag.substr(0, flag.find(','));
  return app->add_option(flag, field, help)->transform(number(first, range));
}

/// `--flag VALUE` stored in an optional `field` (unset where the flag is not given).
template <class T>
CLI::Option* add_number(CLI::App* app, const std::string& flag, std::optional<T>& field,
                        const std::string& help, core::Range<T> range) {
  const std::string first = flag.substr(0, flag.find(','));
  return app->add_option(flag, field, help)->transform(number(first, range));
}

/// Stops the program at its start (std::logic_error, a programming error) where a numeric
/// option under `app` (its subcommands' too) was added without add_number or number(): CLI11
/// alone would read it by its own rules, and its help would print the type's range, not the
/// option's. CLI11 names every integer type "INT", so no rule can be guessed for such an option:
/// every one registers its type and range. Call once, after every option is added; every CLI
/// test runs it.
inline void require_number_rules(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    const std::string type = opt->get_type_name();
    if (type.rfind("INT", 0) != 0 && type.rfind("UINT", 0) != 0 && type.rfind("FLOAT", 0) != 0)
      continue;
    try {
      (void)opt->get_validator(number_check_name);
    } catch (const CLI::OptionNotFound&) {
      throw std::logic_error("option " + opt->get_name() + " of " + app.get_name() +
                             " reads a number without cli::add_number: register its range");
    }
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    require_number_rules(*sub);
}

}  // namespace tprimat::cli
