// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Each --parallel config file read once a run: its run settings, its notice, every job and every
// plan of one command read the same document, even if the file changes while the command runs.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "tprimat/bench/config_file.hpp"

namespace tprimat::cli {

/// The document of config `spec` ("path.json[:name]"), read and checked on its first use in this
/// process (bench::read_config_document, whose InputErrors it passes on) and kept for the rest.
inline const bench::ConfigDocument& config_document(std::string_view spec) {
  static std::map<std::string, bench::ConfigDocument, std::less<>> read;
  auto it = read.find(spec);
  if (it == read.end())
    it = read.emplace(std::string(spec), bench::read_config_document(spec)).first;
  return it->second;
}

}  // namespace tprimat::cli
