// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Reads the .bin/.idx pair that Megatron-LM, NeMo and Primus preprocessing writes, memory-mapped.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/core/input_file.hpp"

namespace tprimat::data {

// The format is little-endian and read by plain copies.
static_assert(std::endian::native == std::endian::little,
              "tprimat: the Megatron .bin/.idx reader assumes a little-endian host");

/// The .idx layout, all little-endian (Megatron-LM megatron/core/datasets/indexed_dataset.py,
/// _IndexWriter): 9-byte magic, uint64 version (1), uint8 dtype code, uint64 sequence count S,
/// uint64 document-index count D, then int32 lengths[S] (tokens), int64 pointers[S] (byte offset
/// of each sequence in the .bin), int64 document_index[D] (sequence index where each document
/// starts, D = documents + 1: it opens with 0 and ends with S).
inline constexpr std::string_view indexed_magic{"MMIDIDX\0\0", 9};
inline constexpr std::uint64_t indexed_version = 1;
inline constexpr std::size_t indexed_header_bytes = 9 + 8 + 1 + 8 + 8;  // 34

/// Megatron's DType codes. The numbering is theirs; keep it.
enum class TokenType : std::uint8_t {
  uint8 = 1,
  int8 = 2,
  int16 = 3,
  int32 = 4,
  int64 = 5,
  float64 = 6,
  float32 = 7,
  uint16 = 8
};

inline constexpr TokenType all_token_types[] = {
    TokenType::uint8, TokenType::int8,    TokenType::int16,   TokenType::int32,
    TokenType::int64, TokenType::float64, TokenType::float32, TokenType::uint16};

inline bool valid_token_type(std::uint8_t code) { return code >= 1 && code <= 8; }

inline std::size_t token_bytes(TokenType t) {
  switch (t) {
    case TokenType::uint8:
    case TokenType::int8:
      return 1;
    case TokenType::int16:
    case TokenType::uint16:
      return 2;
    case TokenType::int32:
    case TokenType::float32:
      return 4;
    case TokenType::int64:
    case TokenType::float64:
      return 8;
  }
  return 0;
}

inline std::string_view token_type_name(TokenType t) {
  switch (t) {
    case TokenType::uint8:
      return "uint8";
    case TokenType::int8:
      return "int8";
    case TokenType::int16:
      return "int16";
    case TokenType::int32:
      return "int32";
    case TokenType::int64:
      return "int64";
    case TokenType::float64:
      return "float64";
    case TokenType::float32:
      return "float32";
    case TokenType::uint16:
      return "uint16";
  }
  return "unknown";
}

inline std::optional<TokenType> token_type_from_name(std::string_view name) {
  for (auto t : all_token_types)
    if (token_type_name(t) == name) return t;
  return std::nullopt;
}

/// Largest token id the type stores exactly (float32 stores integers exactly up to 2^24).
inline std::int64_t token_type_max(TokenType t) {
  switch (t) {
    case TokenType::uint8:
      return 255;
    case TokenType::int8:
      return 127;
    case TokenType::int16:
      return 32767;
    case TokenType::uint16:
      return 65535;
    case TokenType::int32:
      return std::numeric_limits<std::int32_t>::max();
    case TokenType::float32:
      return std::int64_t{1} << 24;
    case TokenType::int64:
    case TokenType::float64:
      return std::numeric_limits<std::int64_t>::max();
  }
  return 0;
}

namespace detail {

/// What a mapping names in messages by default: a file of a .bin/.idx pair.
inline constexpr core::InputKind token_data_input{"Megatron data file", core::no_size_cap,
                                                  "pass the prefix of a .bin/.idx pair"};

/// A read-only mapping of a whole file, opened as core::open_input_file opens every input (a
/// regular file only; a FIFO never blocks the open); empty files map to nothing (mmap rejects
/// length 0).
class MappedFile {
 public:
  MappedFile() = default;
  explicit MappedFile(const std::string& path, const core::InputKind& kind = token_data_input)
      : path_(path) {
    const core::InputFd fd = core::open_input_file(path, kind);
    size_ = static_cast<std::size_t>(fd.size());
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd.get(), 0);
      if (p == MAP_FAILED)
        throw core::InputError("cannot map " + path + " (" + std::strerror(errno) + ")", "");
      data_ = static_cast<const std::byte*>(p);
    }
  }  // the mapping keeps the file alive once `fd` closes
  MappedFile(MappedFile&& o) noexcept { *this = std::move(o); }
  MappedFile& operator=(MappedFile&& o) noexcept {
    if (this != &o) {
      unmap();
      path_ = std::move(o.path_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() { unmap(); }

  const std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  void unmap() {
    if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
    data_ = nullptr;
    size_ = 0;
  }
  std::string path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Unaligned little-endian read (the index arrays start at byte 34, not 8-aligned).
template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace detail

/// "PREFIX.bin" / "PREFIX.idx"; a prefix given with either suffix is accepted as that prefix.
inline std::string bin_path(const std::string& prefix) { return prefix + ".bin"; }
inline std::string idx_path(const std::string& prefix) { return prefix + ".idx"; }

/// "tokens.bin" or "tokens.idx" names the prefix "tokens" when a file of that pair is there:
/// users often pass a file of the pair rather than its prefix (a missing partner is then named).
inline std::string resolve_prefix(std::string p) {
  auto exists = [](const std::string& f) { return ::access(f.c_str(), F_OK) == 0; };
  for (std::string_view suffix : {".bin", ".idx"}) {
    if (p.size() > suffix.size() && p.ends_with(suffix) && !exists(bin_path(p))) {
      const std::string stem = p.substr(0, p.size() - suffix.size());
      if (exists(bin_path(stem)) || exists(idx_path(stem))) return stem;
    }
  }
  return p;
}

/// Lowest and highest token id of a data set.
struct TokenRange {
  std::int64_t min = 0;
  std::int64_t max = -1;  ///< -1 when the data set holds no tokens
};

/// One Megatron indexed data set, both files mapped: nothing is copied but the per-sequence token
/// offsets (one int64 per sequence). The constructor checks the whole index against the .bin, so
/// a truncated or foreign file fails here, naming the file and the problem, not mid-run.
class IndexedDataset {
 public:
  explicit IndexedDataset(const std::string& prefix) : prefix_(prefix) {
    const std::string bin = bin_path(prefix), idx = idx_path(prefix);
    if (::access(bin.c_str(), F_OK) != 0 || ::access(idx.c_str(), F_OK) != 0)
      throw core::InputError(
          "data set " + prefix + " not found: expected both " + bin + " and " + idx +
              (::access(bin.c_str(), F_OK) != 0 ? " (no " + bin + ")" : " (no " + idx + ")"),
          "pass the prefix of a Megatron .bin/.idx pair (tprimat data write makes one)");
    idx_ = detail::MappedFile(idx);
    bin_ = detail::MappedFile(bin);
    parse_index();
  }

  const std::string& prefix() const { return prefix_; }
  TokenType token_type() const { return type_; }
  std::int64_t sequences() const { return static_cast<std::int64_t>(lengths_.size()); }
  /// Documents (the index stores documents + 1 boundaries).
  std::int64_t documents() const { return static_cast<std::int64_t>(doc_index_.size()) - 1; }
  std::int64_t tokens() const { return starts_.back(); }
  std::size_t bin_bytes() const { return bin_.size(); }
  std::size_t idx_bytes() const { return idx_.size(); }
  std::span<const std::int32_t> sequence_lengths() const { return lengths_; }
  std::span<const std::int64_t> document_index() const { return doc_index_; }

  /// Tokens [first, first + out.size()) of the concatenation of all sequences in index order.
  void read(std::int64_t first, std::span<std::int64_t> out) const {
    if (first < 0 || first + static_cast<std::int64_t>(out.size()) > tokens())
      throw core::RunError("token range [" + std::to_string(first) + ", " +
                           std::to_string(first + static_cast<std::int64_t>(out.size())) +
                           ") is outside " + prefix_ + " (" + std::to_string(tokens()) +
                           " tokens)");
    // The sequence holding `first`: the last start <= first.
    auto seq = static_cast<std::size_t>(std::upper_bound(starts_.begin(), starts_.end(), first) -
                                        starts_.begin() - 1);
    std::int64_t in_seq = first - starts_[seq];
    std::size_t done = 0;
    while (done < out.size()) {
      const std::int64_t left = lengths_[seq] - in_seq;
      const std::size_t n = static_cast<std::size_t>(
          std::min<std::int64_t>(left, static_cast<std::int64_t>(out.size() - done)));
      decode(pointers_[seq] + in_seq * static_cast<std::int64_t>(width_), out.subspan(done, n));
      done += n;
      ++seq;
      in_seq = 0;
    }
  }

  /// Scans every token once. Fails on a value that is not a whole number (float data sets).
  TokenRange token_range() const {
    TokenRange r{std::numeric_limits<std::int64_t>::max(),
                 std::numeric_limits<std::int64_t>::min()};
    std::vector<std::int64_t> buf;
    const std::int64_t chunk = 1 << 16;
    for (std::int64_t at = 0; at < tokens(); at += chunk) {
      buf.resize(static_cast<std::size_t>(std::min(chunk, tokens() - at)));
      read(at, buf);
      const auto [lo, hi] = std::minmax_element(buf.begin(), buf.end());
      r.min = std::min(r.min, *lo);
      r.max = std::max(r.max, *hi);
    }
    if (tokens() == 0) return {};
    return r;
  }

 private:
  [[noreturn]] void bad_index(const std::string& problem) const {
    throw core::InputError(
        idx_.path() + ": " + problem,
        "rebuild the pair with Megatron's preprocess_data.py or tprimat data write");
  }

  void parse_index() {
    const std::byte* p = idx_.data();
    const std::size_t size = idx_.size();
    if (size < indexed_magic.size() ||
        std::memcmp(p, indexed_magic.data(), indexed_magic.size()) != 0)
      bad_index("not a Megatron index (wrong magic: expected \"MMIDIDX\\x00\\x00\")");
    if (size < indexed_header_bytes)
      bad_index("truncated: " + std::to_string(size) + " bytes, the header alone needs " +
                std::to_string(indexed_header_bytes));
    const auto version = detail::load<std::uint64_t>(p + 9);
    if (version != indexed_version)
      bad_index("index version " + std::to_string(version) + ", only version 1 is known");
    const auto code = detail::load<std::uint8_t>(p + 17);
    if (!valid_token_type(code))
      bad_index("unknown dtype code " + std::to_string(code) + " (known: 1 to 8)");
    type_ = static_cast<TokenType>(code);
    width_ = token_bytes(type_);
    const auto s = detail::load<std::uint64_t>(p + 18);
    const auto d = detail::load<std::uint64_t>(p + 26);
    // Guard the multiplications below against a garbage count before trusting it.
    const std::uint64_t room = size - indexed_header_bytes;
    if (s > room / 12 || d > room / 8 || 12 * s + 8 * d > room)
      bad_index("truncated: " + std::to_string(size) + " bytes cannot hold " + std::to_string(s) +
                " sequences and " + std::to_string(d) + " document boundaries (needs " +
                // Counts past what the file could hold overflow the product: no figure then.
                (s > room / 12 || d > room / 8
                     ? "more than " + std::to_string(size)
                     : std::to_string(indexed_header_bytes + 12 * s + 8 * d)) +
                ")");
    const std::byte* len_at = p + indexed_header_bytes;
    const std::byte* ptr_at = len_at + 4 * s;
    const std::byte* doc_at = ptr_at + 8 * s;
    lengths_.resize(s);
    pointers_.resize(s);
    doc_index_.resize(d);
    if (s > 0) {
      std::memcpy(lengths_.data(), len_at, 4 * s);
      std::memcpy(pointers_.data(), ptr_at, 8 * s);
    }
    if (d > 0) std::memcpy(doc_index_.data(), doc_at, 8 * d);

    // A .bin cut short and an index pointing elsewhere both leave a sequence past the end; they
    // are told apart by whether the pointers run back to back, as every writer lays them out.
    const auto bin_size = static_cast<std::int64_t>(bin_.size());
    const auto width = static_cast<std::int64_t>(width_);
    bool back_to_back = true;
    std::int64_t needed = 0, first_bad = -1;
    starts_.assign(s + 1, 0);
    for (std::size_t i = 0; i < s; ++i) {
      const std::int64_t len = lengths_[i], at = pointers_[i];
      if (len < 0) bad_index("sequence " + std::to_string(i) + " has negative length");
      if (at < 0)
        bad_index("sequence " + std::to_string(i) + " starts at byte " + std::to_string(at) +
                  ", before the start of " + bin_.path() + " (a pointer is a byte offset, 0 or "
                  "more)");
      if (at % width != 0)
        bad_index("sequence " + std::to_string(i) + " starts at byte " + std::to_string(at) +
                  ", not a multiple of the " + std::to_string(width_) + "-byte " +
                  std::string(token_type_name(type_)) + " tokens");
      back_to_back = back_to_back && at == needed;
      needed += len * width;
      if (first_bad < 0 && (at > bin_size || len * width > bin_size - at))
        first_bad = static_cast<std::int64_t>(i);
      starts_[i + 1] = starts_[i] + len;
    }
    if (first_bad >= 0) {
      if (back_to_back)
        throw core::InputError(bin_.path() + " is truncated: it holds " + std::to_string(bin_size) +
                                   " bytes, its index " + idx_.path() + " needs " +
                                   std::to_string(needed),
                               "rebuild or re-copy the pair");
      const auto i = static_cast<std::size_t>(first_bad);
      bad_index("sequence " + std::to_string(i) + " points past the end of " + bin_.path() +
                " (byte " + std::to_string(pointers_[i]) + " + " + std::to_string(lengths_[i]) +
                " tokens x " + std::to_string(width_) + " bytes > " + std::to_string(bin_size) +
                " bytes)");
    }
    if (d == 0 || doc_index_.front() != 0 || doc_index_.back() != static_cast<std::int64_t>(s))
      bad_index("document index must run from 0 to the sequence count " + std::to_string(s) +
                (d == 0 ? " (it is empty)" : ""));
    for (std::size_t i = 1; i < d; ++i)
      if (doc_index_[i] < doc_index_[i - 1])
        bad_index("document index decreases at entry " + std::to_string(i));
  }

  void decode(std::int64_t byte, std::span<std::int64_t> out) const {
    const std::byte* p = bin_.data() + byte;
    auto copy = [&]<class T>(T) {
      for (std::size_t i = 0; i < out.size(); ++i) {
        const T v = detail::load<T>(p + i * sizeof(T));
        if constexpr (std::is_floating_point_v<T>) {
          if (!(v == std::floor(v)) || std::fabs(double(v)) > 9.0e18)
            throw core::InputError(
                bin_.path() + ": token " + std::to_string(double(v)) + " is not a whole number",
                "token ids must be integers");
        }
        out[i] = static_cast<std::int64_t>(v);
      }
    };
    switch (type_) {
      case TokenType::uint8:
        copy(std::uint8_t{});
        break;
      case TokenType::int8:
        copy(std::int8_t{});
        break;
      case TokenType::int16:
        copy(std::int16_t{});
        break;
      case TokenType::uint16:
        copy(std::uint16_t{});
        break;
      case TokenType::int32:
        copy(std::int32_t{});
        break;
      case TokenType::int64:
        copy(std::int64_t{});
        break;
      case TokenType::float32:
        copy(float{});
        break;
      case TokenType::float64:
        copy(double{});
        break;
    }
  }

  std::string prefix_;
  detail::MappedFile idx_, bin_;
  TokenType type_ = TokenType::int32;
  std::size_t width_ = 4;
  std::vector<std::int32_t> lengths_;
  std::vector<std::int64_t> pointers_;
  std::vector<std::int64_t> doc_index_;
  std::vector<std::int64_t>
      starts_;  ///< token offset of each sequence in the concatenation; [S] = total
};

}  // namespace tprimat::data
