// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Each --parallel config file read once a job: its run settings, its notice, every job and every
// plan of one command read the same document, even if the file changes while the command runs;
// under several ranks rank 0 reads it for all of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "tprimat/bench/config_file.hpp"
#include "tprimat/core/error.hpp"

namespace tprimat::cli {

namespace detail {
/// The documents this process has, by spec.
inline std::map<std::string, bench::ConfigDocument, std::less<>>& config_documents() {
  static std::map<std::string, bench::ConfigDocument, std::less<>> read;
  return read;
}
}  // namespace detail

/// The document of config `spec` ("path.json[:name]"), read and checked on its first use in this
/// process (bench::read_config_document, whose InputErrors it passes on) and kept for the rest.
inline const bench::ConfigDocument& config_document(std::string_view spec) {
  auto& read = detail::config_documents();
  auto it = read.find(spec);
  if (it == read.end())
    it = read.emplace(std::string(spec), bench::read_config_document(spec)).first;
  return it->second;
}

/// Under several ranks (`comm`, whose broadcast_bytes sends rank 0's bytes to all), config `spec`
/// is read by rank 0 alone and its text sent to every rank, which parses it and keeps the
/// document for config_document: a file that changes while the job starts, or that another
/// node's rank sees otherwise (or not at all), cannot give the ranks two layouts. A file rank 0
/// cannot read stops every rank with rank 0's message (bad input, or a failure of another kind:
/// no rank is left waiting for a text that will not come). Collective; nothing for one rank.
template <class Comm>
void share_config_document(Comm& comm, std::string_view spec) {
  if (comm.size() <= 1 || detail::config_documents().contains(spec)) return;
  bench::ConfigDocument doc = bench::config_spec(spec);
  // Rank 0's text or its error, after one byte saying which: t (text), i (bad input), r (another
  // failure).
  std::string payload;
  if (comm.rank() == 0) {
    try {
      payload = "t" + bench::read_config_text(doc);
    } catch (const core::InputError& e) {
      payload = std::string("i") + e.what();
    } catch (const std::exception& e) {
      payload = std::string("r") + e.what();
    }
  }
  std::uint64_t size = payload.size();
  comm.broadcast_bytes(std::as_writable_bytes(std::span<std::uint64_t>(&size, 1)), 0);
  payload.resize(static_cast<std::size_t>(size));
  comm.broadcast_bytes(std::as_writable_bytes(std::span<char>(payload)), 0);
  if (payload.empty()) throw core::RunError("rank 0 sent no config text");
  if (payload[0] == 'i') throw core::InputError(payload.substr(1));
  if (payload[0] == 'r') throw core::RunError(payload.substr(1));
  detail::config_documents().emplace(
      std::string(spec), bench::parse_config_document(std::move(doc),
                                                      std::string_view(payload).substr(1)));
}

}  // namespace tprimat::cli
