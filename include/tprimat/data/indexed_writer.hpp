// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Writes a Megatron .bin/.idx pair, laid out as Megatron's IndexedDatasetBuilder lays it out.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tprimat/core/error.hpp"
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

/// Appends documents (one sequence each, as preprocess_data.py writes without sentence
/// splitting) to PREFIX.bin, then writes PREFIX.idx on finish(). Both go to temporary names
/// first and are renamed at the end, so a failed write leaves no half pair behind.
class IndexedWriter {
 public:
  IndexedWriter(std::string prefix, TokenType type) : prefix_(std::move(prefix)), type_(type) {
    bin_tmp_ = bin_path(prefix_) + ".tmp";
    bin_ = std::fopen(bin_tmp_.c_str(), "wb");
    if (bin_ == nullptr)
      throw core::InputError(
          "cannot write " + bin_path(prefix_) + " (" + std::strerror(errno) + ")",
          "pass a writable --output prefix");
  }
  IndexedWriter(const IndexedWriter&) = delete;
  IndexedWriter& operator=(const IndexedWriter&) = delete;
  ~IndexedWriter() {
    if (bin_ != nullptr) {
      std::fclose(bin_);
      std::remove(bin_tmp_.c_str());
    }
  }

  /// Adds one document. Ids must be representable in the token type.
  void add_document(std::span<const std::int64_t> ids) {
    const std::int64_t hi = token_type_max(type_);
    const std::int64_t lo = type_ == TokenType::uint8 || type_ == TokenType::uint16 ? 0 : -hi - 1;
    std::vector<std::byte> buf(ids.size() * token_bytes(type_));
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::int64_t v = ids[i];
      if (v < lo || v > hi)
        throw core::InputError("token id " + std::to_string(v) + " of document " +
                                   std::to_string(lengths_.size()) + " does not fit dtype " +
                                   std::string(token_type_name(type_)) + " (" + std::to_string(lo) +
                                   " to " + std::to_string(hi) + ")",
                               "pass --dtype " +
                                   std::string(token_type_name(narrowest_token_type(v))) +
                                   " or wider");
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
    if (!buf.empty() && std::fwrite(buf.data(), 1, buf.size(), bin_) != buf.size())
      throw core::RunError("writing " + bin_tmp_ + " failed (" + std::strerror(errno) + ")");
    pointers_.push_back(bytes_);
    lengths_.push_back(static_cast<std::int32_t>(ids.size()));
    bytes_ += static_cast<std::int64_t>(buf.size());
  }

  std::int64_t documents() const { return static_cast<std::int64_t>(lengths_.size()); }

  /// Closes the .bin and writes the .idx; the pair appears under its final names only now.
  void finish() {
    if (std::fclose(std::exchange(bin_, nullptr)) != 0)
      throw core::RunError("writing " + bin_tmp_ + " failed (" + std::strerror(errno) + ")");
    const std::string idx_tmp = idx_path(prefix_) + ".tmp";
    std::FILE* f = std::fopen(idx_tmp.c_str(), "wb");
    if (f == nullptr)
      throw core::InputError(
          "cannot write " + idx_path(prefix_) + " (" + std::strerror(errno) + ")",
          "pass a writable --output prefix");
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
    const bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
    if (std::fclose(f) != 0 || !ok) {
      std::remove(idx_tmp.c_str());
      throw core::RunError("writing " + idx_tmp + " failed (" + std::strerror(errno) + ")");
    }
    std::filesystem::rename(bin_tmp_, bin_path(prefix_));
    std::filesystem::rename(idx_tmp, idx_path(prefix_));
  }

 private:
  std::string prefix_;
  TokenType type_;
  std::string bin_tmp_;
  std::FILE* bin_ = nullptr;
  std::vector<std::int32_t> lengths_;
  std::vector<std::int64_t> pointers_;
  std::int64_t bytes_ = 0;
};

}  // namespace tprimat::data
