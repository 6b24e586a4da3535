// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The message of the core::InputError a call throws, for tests of bad input.
#pragma once

#include <string>

#include "tprimat/core/error.hpp"

namespace tprimat::testing {

/// The message of the InputError `f` throws ("" when it throws none).
template <class F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace tprimat::testing
