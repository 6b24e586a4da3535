// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// A private temporary directory for harnesses whose parser reads files (mmap), not bytes.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>

namespace tprimat::fuzz {

/// mkdtemp under $TMPDIR (else /tmp), removed with its files when the process exits normally:
/// one per process, so parallel replays and fuzz jobs never share a file.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                          "/tprimat-fuzz-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("fuzz: cannot create a directory from " + pattern);
    path_ = pattern;
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  const std::filesystem::path& path() const { return path_; }
  /// `name` inside the directory.
  std::string file(const std::string& name) const { return (path_ / name).string(); }

  /// Writes `bytes` to `name` (replacing it) and returns its path.
  std::string write(const std::string& name, std::span<const std::uint8_t> bytes) const {
    const std::string p = file(name);
    std::FILE* f = std::fopen(p.c_str(), "wb");
    if (f == nullptr) throw std::runtime_error("fuzz: cannot write " + p);
    const bool ok = bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    if (std::fclose(f) != 0 || !ok) throw std::runtime_error("fuzz: short write to " + p);
    return p;
  }

 private:
  std::filesystem::path path_;
};

/// The process's scratch directory, made on first use.
inline const ScratchDir& scratch_dir() {
  static const ScratchDir dir;
  return dir;
}

}  // namespace tprimat::fuzz
