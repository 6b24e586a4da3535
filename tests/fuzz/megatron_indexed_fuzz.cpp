// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Fuzz harness: Megatron .idx/.bin pairs (data/megatron_indexed.hpp), opened and read in full.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "scratch_dir.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/data/megatron_indexed.hpp"

namespace data = tprimat::data;

namespace {

/// Where the .idx ends in `bytes`: the length its own header declares (34 + 12 S + 8 D), or
/// the whole input when that cannot be read or runs past the end (then the .bin is empty).
std::size_t idx_length(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < data::indexed_header_bytes) return bytes.size();
  std::uint64_t s = 0, d = 0;
  std::memcpy(&s, bytes.data() + 18, 8);
  std::memcpy(&d, bytes.data() + 26, 8);
  const std::uint64_t room = bytes.size() - data::indexed_header_bytes;
  if (s > room / 12 || d > room / 8 || 12 * s + 8 * d > room) return bytes.size();
  return data::indexed_header_bytes + 12 * s + 8 * d;
}

}  // namespace

// The input is the .idx followed by the .bin (`cat ds.idx ds.bin` of a real pair is a seed).
// The reader maps files, so both are written to a scratch directory first. Bad input must end
// in core::InputError from the constructor or from decoding a token.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data_in, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data_in, size);
  const std::size_t split = idx_length(bytes);
  const auto& dir = tprimat::fuzz::scratch_dir();
  dir.write("ds.idx", bytes.first(split));
  dir.write("ds.bin", bytes.subspan(split));
  try {
    const data::IndexedDataset ds(dir.file("ds"));
    // What `tprimat data inspect` and the bench's data check read: counts, then every token.
    (void)ds.sequences();
    (void)ds.documents();
    (void)ds.token_type();
    const data::TokenRange range = ds.token_range();
    if (ds.tokens() > 0 && range.min > range.max) __builtin_trap();
    // A window across sequence boundaries, as a sample is cut.
    std::vector<std::int64_t> window(static_cast<std::size_t>(std::min<std::int64_t>(ds.tokens(), 65)));
    ds.read(ds.tokens() - static_cast<std::int64_t>(window.size()), window);
  } catch (const tprimat::core::InputError&) {
  }
  return 0;
}
