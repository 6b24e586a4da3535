// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Errors that name the problem and the fix; the CLI maps them to exit codes.
#pragma once

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace tprimat::core {

/// Exit code for bad input (config, model, layout, paths): the run never started.
inline constexpr int exit_bad_input = 2;
/// Exit code for a run that started and failed (numerical blow-up, device error).
inline constexpr int exit_run_failed = 1;
/// Exit code of a run stopped by signal `signo` (SIGINT 130, SIGTERM 143), the shell's convention
/// for a process that a signal ended; the run still wrote what it had measured.
constexpr int exit_interrupted(int signo) { return 128 + signo; }

/// What the user typed, fit for a one-line message: control characters escaped, long text cut.
inline std::string shown(std::string_view text) {
  std::size_t most = std::min<std::size_t>(text.size(), 40);
  // Cut between UTF-8 characters, never inside one (continuation bytes are 10xxxxxx).
  while (most > 0 && most < text.size() && (static_cast<unsigned char>(text[most]) & 0xC0) == 0x80)
    --most;
  std::string out;
  for (std::size_t i = 0; i < most; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > most) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

/// A message without its "tprimat: " prefix, for embedding in a sentence or a report.
inline std::string without_prefix(const std::string& line) {
  return line.rfind("tprimat: ", 0) == 0 ? line.substr(9) : line;
}

/// Bad input from the user. `what()` is one line: "tprimat: <problem>; <fix>".
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& problem, const std::string& fix)
      : std::runtime_error("tprimat: " + problem + (fix.empty() ? "" : "; " + fix)) {}
  explicit InputError(const std::string& message)
      : std::runtime_error(message.rfind("tprimat:", 0) == 0 ? message : "tprimat: " + message) {}
};

/// A setting of a run the library cannot honour, told in the library's terms: which setting
/// (`setting`: "attention", "precision", "layers", as train::DeviceOptions, PrecisionConfig and
/// StepShape name them) and what would work (`suggestion`: "flash (or auto)"). what() reads
/// "tprimat: <problem>; set <setting> to <suggestion>"; a program that exposes the setting as a
/// flag tells its users the flag instead (the tprimat CLI: "use --attention flash (or auto)").
class SettingError : public InputError {
 public:
  SettingError(std::string setting, const std::string& problem, std::string suggestion)
      : InputError(problem, "set " + setting + " to " + suggestion),
        setting_(std::move(setting)),
        problem_(problem),
        suggestion_(std::move(suggestion)) {}
  const std::string& setting() const { return setting_; }
  const std::string& problem() const { return problem_; }
  const std::string& suggestion() const { return suggestion_; }

 private:
  std::string setting_, problem_, suggestion_;
};

/// A failure after the run started (backend, numerics, I/O of results).
class RunError : public std::runtime_error {
 public:
  explicit RunError(const std::string& message)
      : std::runtime_error(message.rfind("tprimat:", 0) == 0 ? message : "tprimat: " + message) {}
};

/// The device ran out of memory after the run started. Its own type so that the runner can put
/// the predicted memory plan beside the message instead of reporting a bare backend failure.
class OutOfMemoryError : public RunError {
 public:
  using RunError::RunError;
};

}  // namespace tprimat::core
