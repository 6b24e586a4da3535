// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The report commands' --output-dir: created up front, so a bad one fails before any work.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "tprimat/bench/result.hpp"
#include "tprimat/core/error.hpp"

namespace tprimat::report {

inline void prepare_output_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw core::InputError("cannot create output directory " + dir.string() +
                               (ec ? " (" + ec.message() + ")" : " (not a directory)"),
                           "pass a writable --output-dir");
}

/// Writes one report file atomically and returns its path for the "wrote ..." line.
inline std::string write_report_file(const std::filesystem::path& dir, std::string_view name,
                                     std::string_view text) {
  const auto path = dir / name;
  bench::write_file_atomically(path, text, "pass another --output-dir");
  return path.string();
}

}  // namespace tprimat::report
