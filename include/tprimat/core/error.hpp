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

}  // namespace tprimat::core
