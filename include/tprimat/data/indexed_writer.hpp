// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Writes a Megatron .bin/.idx pair, laid out as Megatron's IndexedDatasetBuilder lays it out.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/core/output_file.hpp"
#include "tprimat/data/megatron_indexed.hpp"

namespace tprimat::data {

/// Megatron's choice when none is given: uint16 below 65500 ids, else int32 (DType.optimal_dtype).
inline TokenType default_token_type(std::int64_t max_id) {
  return max_id < 65500 ? TokenType::uint16 : TokenType::int32;
}

/// The narrowest of uint8, uint16, int32, int64 that holds `id` (a fix to name, never the type
/// that failed).
inline TokenType narrowest_token_type(std::int64_t id) {
  if (id >= 0 && id <= 255) return TokenType::uint8;
  if (id >= 0 && id <= 65535) return TokenType::uint16;
  if (id >= INT32_MIN && id <= INT32_MAX) return TokenType::int32;
  return TokenType::int64;
}

/// Why `prefix` names no .bin/.idx pair ("" or "DIR/" would write the hidden ".bin" and ".idx"),
/// or nullopt when it does. IndexedWriter refuses such a prefix; a caller that names the prefix in
/// its own words (a flag) checks it first.
inline std::optional<std::string> prefix_problem(const std::string& prefix) {
  const auto name = std::filesystem::path(prefix).filename().string();
  if (!name.empty() && name != "." && name != "..") return std::nullopt;
  return "names no file prefix (it would write the hidden files " + prefix + ".bin and " + prefix +
         ".idx)";
}

/// Appends documents (one sequence each, as preprocess_data.py writes without sentence
/// splitting) to PREFIX.bin, then writes PREFIX.idx on finish(). Both are new files
/// (core/output_file.hpp) renamed at the end, so a failed write leaves no half pair behind.
/// A token id that `token_type` cannot hold is a core::SettingError of "token_type"; `fix` is
/// what a file that cannot be written tells its reader to do, in the caller's words.
class IndexedWriter {
 public:
  IndexedWriter(std::string prefix, TokenType token_type,
                std::string_view fix = "pass another prefix")
      : prefix_(checked_prefix(std::move(prefix))),
        type_(token_type),
        bin_(bin_path(prefix_), fix),
        idx_(idx_path(prefix_), fix) {}

  /// Adds one document. Ids must be representable in the token type.
  void add_document(std::span<const std::int64_t> ids) {
    const std::int64_t hi = token_type_max(type_);
    // Unsigned types start at 0; floats hold integers exactly symmetrically (to +-2^24, +-2^53);
    // two's complement reaches one further below.
    const std::int64_t lo = type_ == TokenType::uint8 || type_ == TokenType::uint16 ? 0
                            : type_ == TokenType::float32 || type_ == TokenType::float64
                                ? -hi
                                : -hi - 1;
    std::vector<std::byte> buf(ids.size() * token_bytes(type_));
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::int64_t v = ids[i];
      if (v < lo || v > hi)
        throw core::SettingError(
            "token_type",
            "token id " + std::to_string(v) + " of document " + std::to_string(lengths_.size()) +
                " does not fit dtype " + std::string(token_type_name(type_)) + " (" +
                std::to_string(lo) + " to " + std::to_string(hi) + ")",
            std::string(token_type_name(narrowest_token_type(v))) + " or wider");
      std::byte* p = buf.data() + i * token_bytes(type_);
      auto put = [&]<class T>(T x) { std::memcpy(p, &x, sizeof x); };
      switch (type_) {
        case TokenType::uint8:
          put(static_cast<std::uint8_t>(v));
          break;
        case TokenType::int8:
          put(static_cast<std::int8_t>(v));
          break;
        case TokenType::int16:
          put(static_cast<std::int16_t>(v));
          break;
        case TokenType::uint16:
          put(static_cast<std::uint16_t>(v));
          break;
        case TokenType::int32:
          put(static_cast<std::int32_t>(v));
          break;
        case TokenType::int64:
          put(v);
          break;
        case TokenType::float32:
          put(static_cast<float>(v));
          break;
        case TokenType::float64:
          put(static_cast<double>(v));
          break;
      }
    }
    if (ids.size() > static_cast<std::size_t>(INT32_MAX))
      throw core::InputError("document " + std::to_string(lengths_.size()) + " has " +
                                 std::to_string(ids.size()) +
                                 " tokens, the index stores int32 lengths",
                             "split it into smaller documents");
    if (!buf.empty())
      bin_.write(std::string_view(reinterpret_cast<const char*>(buf.data()), buf.size()));
    pointers_.push_back(bytes_);
    lengths_.push_back(static_cast<std::int32_t>(ids.size()));
    bytes_ += static_cast<std::int64_t>(buf.size());
  }

  std::int64_t documents() const { return static_cast<std::int64_t>(lengths_.size()); }

  /// Closes the .bin and writes the .idx; the pair appears under its final names only now.
  void finish() {
    std::vector<std::byte> out;
    auto put = [&](const void* p, std::size_t n) {
      const auto* b = static_cast<const std::byte*>(p);
      out.insert(out.end(), b, b + n);
    };
    const std::uint64_t version = indexed_version, s = lengths_.size(), d = s + 1;
    const auto code = static_cast<std::uint8_t>(type_);
    put(indexed_magic.data(), indexed_magic.size());
    put(&version, 8);
    put(&code, 1);
    put(&s, 8);
    put(&d, 8);
    put(lengths_.data(), 4 * s);
    put(pointers_.data(), 8 * s);
    // One sequence per document: document k starts at sequence k, and the list ends with S.
    for (std::uint64_t k = 0; k <= s; ++k) put(&k, 8);
    idx_.write(std::string_view(reinterpret_cast<const char*>(out.data()), out.size()));
    bin_.publish();
    idx_.publish();
    bin_.close();
    idx_.close();
  }

 private:
  static std::string checked_prefix(std::string prefix) {
    if (const auto why = prefix_problem(prefix))
      throw core::InputError("prefix '" + prefix + "' " + *why,
                             "pass a prefix that ends in a file name, e.g. data/my_set (writes "
                             "data/my_set.bin and data/my_set.idx)");
    return prefix;
  }

  std::string prefix_;
  TokenType type_;
  core::NewFile bin_, idx_;  ///< new files, renamed to PREFIX.bin/.idx by finish() only
  std::vector<std::int32_t> lengths_;
  std::vector<std::int64_t> pointers_;
  std::int64_t bytes_ = 0;
};

}  // namespace tprimat::data
