// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// CLI11's parse errors retold as one line that names what was typed and the fix.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/core/near_name.hpp"

namespace tprimat::cli {

// The near-name rule is the library's (core/near_name.hpp): flags and config keys alike.
using core::edit_distance;
using core::nearest;

namespace detail {

/// The subcommand the parse reached: `app`, or the last parsed subcommand below it.
inline const CLI::App* reached(const CLI::App& app) {
  const CLI::App* at = &app;
  for (auto subs = at->get_subcommands(); !subs.empty(); subs = at->get_subcommands())
    at = subs.back();
  return at;
}

/// "tprimat data": the command line that leads to `app`.
inline std::string command_of(const CLI::App* app) {
  std::string out;
  for (; app != nullptr; app = app->get_parent()) {
    // The root's name is argv[0] as typed (a path, perhaps): people call it tprimat.
    const std::string name = app->get_parent() == nullptr ? "tprimat" : app->get_name();
    out = name + (out.empty() ? "" : " " + out);
  }
  return out;
}

inline std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// Every long name of the options of `app`, "--steps" and its aliases.
inline std::vector<std::string> option_names(const CLI::App* app) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : app->get_options())
    for (const auto& n : opt->get_lnames()) out.push_back("--" + n);
  return out;
}

/// Flags of other tools whose nearest name here means something else: what tprimat calls the
/// thing they ask for, where `option` exists in the command (nullopt: the near-name rule).
/// `--warmup-iters` is not `--warmup-steps` (unmeasured steps) but the LR warm-up.
inline std::optional<std::string> meant_by(std::string_view flag,
                                           const std::vector<std::string>& options) {
  struct Meaning {
    std::string_view flag, option, advice;
  };
  static constexpr Meaning meanings[] = {
      {"--fp8", "--precision", "--precision fp8 (FP8's hybrid recipe)"},
      {"--bf16", "--precision", "--precision bf16"},
      {"--fp16", "--precision", "--precision bf16 or fp8 (tprimat runs no fp16)"},
      {"--warmup-iters", "--warmup",
       "--warmup N (the learning-rate warm-up; --warmup-steps are the unmeasured steps before "
       "timing)"},
      {"--lr-warmup-steps", "--warmup",
       "--warmup N (the learning-rate warm-up; --warmup-steps are the unmeasured steps before "
       "timing)"},
  };
  for (const Meaning& m : meanings)
    if (flag == m.flag &&
        std::find(options.begin(), options.end(), std::string(m.option)) != options.end())
      return std::string(m.advice);
  return std::nullopt;
}

}  // namespace detail

/// A one-line retelling of CLI11's `e` after `app` failed to parse, as "problem; fix" without
/// the "tprimat: " prefix; nullopt where CLI11's own words serve. Covers an unknown command
/// (with the near one), an unknown option (likewise), a missing command, and an option given
/// twice.
inline std::optional<std::string> retell_parse_error(const CLI::App& app,
                                                     const CLI::ParseError& e) {
  const CLI::App* at = detail::reached(app);
  const std::string command = detail::command_of(at);
  std::vector<std::string> commands;
  for (const CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; }))
    commands.push_back(sub->get_name());
  const std::vector<std::string> left = at->remaining();
  const auto word = std::find_if(left.begin(), left.end(),
                                 [](const std::string& a) { return a.rfind('-', 0) != 0; });
  const auto dashed = std::find_if(left.begin(), left.end(),
                                   [](const std::string& a) { return a.rfind('-', 0) == 0; });
  // A command was expected (tprimat, tprimat data): a word that is none, or nothing.
  if (!commands.empty() && at->get_subcommands().empty() &&
      (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr ||
       dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr)) {
    const std::string list = detail::joined(commands);
    if (word != left.end()) {
      const auto near = nearest(*word, commands);
      return "unknown command '" + core::shown(*word) + "' for " + command +
             (near ? "; did you mean '" + command + " " + *near + "'? (commands: " + list + ")"
                   : "; pick one of " + list);
    }
    if (dashed != left.end())
      return "unknown option '" + core::shown(dashed->substr(0, dashed->find('='))) + "' for " +
             command + "; options follow the command: " + command + " COMMAND " +
             core::shown(*dashed) + " (commands: " + list + ")";
    return command + " needs a command; pick one of " + list;
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && dashed != left.end()) {
    const std::string flag = dashed->substr(0, dashed->find('='));
    const std::vector<std::string> options = detail::option_names(at);
    if (const auto meant = detail::meant_by(flag, options))
      return "unknown option '" + core::shown(flag) + "' for " + command + "; did you mean " +
             *meant + "?";
    const auto near = nearest(flag, options);
    return "unknown option '" + core::shown(flag) + "' for " + command +
           (near ? "; did you mean " + *near + "?"
                 : "; run " + command + " --help for the options");
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && word != left.end())
    return "unexpected argument '" + core::shown(*word) + "' for " + command +
           " (a value without its --flag, or one too many); run " + command +
           " --help for what it takes";
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    for (const CLI::App* a = at; a != nullptr; a = a->get_parent())
      for (const CLI::Option* opt : a->get_options()) {
        if (opt->get_items_expected_max() != 1 || opt->count() < 2) continue;
        std::string values;
        for (const auto& r : opt->results())
          values += (values.empty() ? "" : ", ") + core::shown(r);
        return opt->get_name() + " was given " + std::to_string(opt->count()) + " times (" +
               values + "); pass it once: tprimat does not pick one of several values";
      }
    // Otherwise a value is missing: CLI11's message starts with the option's name.
    const std::string what = e.what();
    const std::string name = what.substr(0, what.find(": "));
    for (const CLI::App* a = at; a != nullptr; a = a->get_parent())
      for (const CLI::Option* opt : a->get_options())
        if (opt->count() == 0 && name.rfind("--", 0) == 0 && opt->check_name(name)) {
          const std::string type = opt->get_type_name();  // "INT:from 1 to 1000000"
          const auto colon = type.find(':');
          return name + " needs a value; pass " + name + " " +
                 (type.empty() ? std::string("VALUE") : type.substr(0, colon)) +
                 (colon == std::string::npos ? "" : " (" + type.substr(colon + 1) + ")");
        }
  }
  return std::nullopt;
}

}  // namespace tprimat::cli
