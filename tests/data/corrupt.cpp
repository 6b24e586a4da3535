// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Test helper: damages a .bin/.idx pair in one named way, so the CLI's error for each is checked.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::vector<char> slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void spill(const std::string& path, const std::vector<char>& b) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(b.data(), static_cast<std::streamsize>(b.size()));
}

}  // namespace

// usage: tprimat_data_corrupt truncate-bin|wrong-magic|pointer-past-end|pointer-negative PREFIX
int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s truncate-bin|wrong-magic|pointer-past-end|pointer-negative PREFIX\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1], bin = std::string(argv[2]) + ".bin",
                    idx = std::string(argv[2]) + ".idx";
  if (mode == "truncate-bin") {
    auto b = slurp(bin);
    if (b.empty()) return 1;
    b.pop_back();
    spill(bin, b);
  } else if (mode == "wrong-magic") {
    auto b = slurp(idx);
    if (b.size() < 9) return 1;
    std::memcpy(b.data(), "GARBAGE!!", 9);
    spill(idx, b);
  } else if (mode == "pointer-past-end") {
    // The first sequence's byte pointer (after the 34-byte header and S int32 lengths) moves
    // to the end of the .bin: the index then points past it while the .bin is whole.
    auto b = slurp(idx);
    if (b.size() < 34) return 1;
    std::uint64_t s;
    std::memcpy(&s, b.data() + 18, 8);
    const std::int64_t far = static_cast<std::int64_t>(slurp(bin).size()) * 8;
    std::memcpy(b.data() + 34 + 4 * s, &far, 8);
    spill(idx, b);
  } else if (mode == "pointer-negative") {
    // The first sequence's byte pointer becomes -2: even (a whole uint16 token), yet before the
    // start of the .bin.
    auto b = slurp(idx);
    if (b.size() < 34) return 1;
    std::uint64_t s;
    std::memcpy(&s, b.data() + 18, 8);
    const std::int64_t before = -2;
    std::memcpy(b.data() + 34 + 4 * s, &before, 8);
    spill(idx, b);
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  return 0;
}
