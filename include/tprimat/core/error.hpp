// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Errors that name the problem and the fix; the CLI maps them to exit codes.
#pragma once

#include <stdexcept>
#include <string>

namespace tprimat::core {

/// Exit code for bad input (config, model, layout, paths): the run never started.
inline constexpr int exit_bad_input = 2;
/// Exit code for a run that started and failed (numerical blow-up, device error).
inline constexpr int exit_run_failed = 1;
/// Exit code of a run stopped by signal `signo` (SIGINT 130, SIGTERM 143), the shell's convention
/// for a process that a signal ended; the run still wrote what it had measured.
constexpr int exit_interrupted(int signo) { return 128 + signo; }

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
