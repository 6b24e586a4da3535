// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// What the command line gave, judged after the parse: each flag at most once, no value empty, every
// value UTF-8 (results are JSON, whose strings hold nothing else).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "tprimat/core/error.hpp"
#include "tprimat/core/printable.hpp"

namespace tprimat::cli {

namespace detail {

/// "--precision", or the positional's name.
inline std::string option_name(const CLI::Option& opt) {
  const auto& longs = opt.get_lnames();
  if (!longs.empty()) return "--" + longs.front();
  const auto& shorts = opt.get_snames();
  if (!shorts.empty()) return "-" + shorts.front();
  return opt.get_name();
}

}  // namespace detail

/// Refuses what CLI11 takes silently: a switch given twice (`--distributed-optimizer` twice; CLI11
/// refuses a repeated value itself, retold by parse_errors.hpp) and an empty value
/// (`--precision ''` read as "not given"); a value that is not UTF-8 (`--device-name` in Latin-1,
/// a log's file name), which a result could not record.
/// Lists (`--data`'s blend, the report commands' inputs) may repeat; flags take no value. Walks
/// `app` and every subcommand that was parsed. Throws core::InputError.
inline void check_given_values(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->count() == 0) continue;
    const std::string name = detail::option_name(*opt);
    const int most = opt->get_items_expected_max();
    const bool list = most > 1 || opt->get_allow_extra_args();
    if (!list && opt->count() > 1)  // worded as parse_errors.hpp words a repeated value
      throw core::InputError(name + " was given " + std::to_string(opt->count()) + " times",
                             "pass it once: tprimat does not pick one of several values");
    if (most == 0) continue;  // a flag: no value to be empty
    for (const auto& value : opt->results()) {
      if (value.empty())
        throw core::InputError(name + " is given an empty value ('')",
                               "give " + name + " a value, or leave the flag out for its default");
      if (!core::valid_utf8(value))
        throw core::InputError(name + " '" + core::printable(value) +
                                   "' holds bytes that are not UTF-8 (shown as ?), which a result "
                                   "cannot record",
                               "write it in UTF-8 (rename a file or directory that has such a "
                               "name)");
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) check_given_values(*sub);
}

}  // namespace tprimat::cli
