// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Every numeric option of the CLI reads its text through core::parse_number, not CLI11's rules.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
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

/// Every numeric option under `app` (its subcommands' too) that add_number did not register is
/// read by the same rules over its type's whole range: one reading of numbers for the whole CLI,
/// whoever added the option. CLI11 names int and int64 alike "INT": such an option is read as an
/// int, the type of every one of them here (a wider field registers its range with add_number).
/// Call once, after every option is added.
inline void read_numbers_plainly(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    try {
      (void)opt->get_validator(number_check_name);
      continue;  // registered with its range
    } catch (const CLI::OptionNotFound&) {
    }
    const std::string type = opt->get_type_name();
    const std::string name = opt->get_name();
    if (type == "INT")
      opt->transform(number(name, core::Range<int>{}));
    else if (type == "UINT")
      opt->transform(number(name, core::Range<unsigned>{}));
    else if (type == "FLOAT")
      opt->transform(number(name, core::Range<double>{}));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    read_numbers_plainly(*sub);
}

}  // namespace tprimat::cli
