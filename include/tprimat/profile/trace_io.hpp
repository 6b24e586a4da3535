// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Trace files on disk: written whole (temporary file + rename), gzip-compressed through zlib in
// builds that define TPRIMAT_HAVE_ZLIB (the CLI does when CMake finds zlib), read either way.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#if defined(TPRIMAT_HAVE_ZLIB) && TPRIMAT_HAVE_ZLIB
#include <zlib.h>
#endif

#include "tprimat/core/error.hpp"

namespace tprimat::profile {

#if defined(TPRIMAT_HAVE_ZLIB) && TPRIMAT_HAVE_ZLIB
inline constexpr bool gzip_available = true;
#else
inline constexpr bool gzip_available = false;
#endif

/// The whole file, decompressed when it is gzip (by its magic bytes, whatever its name).
inline std::string read_trace_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw core::InputError("cannot read trace " + path.string(),
                           "pass an existing Chrome trace (.json or .json.gz)");
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const bool gz = raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f &&
                  static_cast<unsigned char>(raw[1]) == 0x8b;
  if (!gz) return raw;
#if defined(TPRIMAT_HAVE_ZLIB) && TPRIMAT_HAVE_ZLIB
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw core::InputError("cannot open gzip trace " + path.string());
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  const bool failed = n < 0;
  gzclose(f);
  if (failed)
    throw core::InputError("trace " + path.string() + " is a damaged gzip file",
                           "check the file (gzip -t)");
  return out;
#else
  throw core::InputError("trace " + path.string() +
                             " is gzip-compressed and this tprimat is "
                             "built without zlib",
                         "gunzip it first, or rebuild with zlib (zlib1g-dev)");
#endif
}

/// Writes `text` to `path` so that a reader never sees half a trace: a temporary file in the
/// same directory, then a rename. `gzip` compresses it (zlib builds only; callers check
/// gzip_available first and refuse the option otherwise).
inline void write_trace_text(const std::filesystem::path& path, std::string_view text, bool gzip) {
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const auto tmp = dir / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()));
  const auto fail = [&](const char* what) {
    const std::string msg =
        std::string("cannot ") + what + " trace " + tmp.string() + ": " + std::strerror(errno);
    std::remove(tmp.c_str());
    throw core::RunError(msg);
  };
  if (gzip) {
#if defined(TPRIMAT_HAVE_ZLIB) && TPRIMAT_HAVE_ZLIB
    gzFile f = gzopen(tmp.c_str(), "wb6");
    if (f == nullptr) fail("create");
    std::size_t done = 0;
    while (done < text.size()) {
      const auto chunk = static_cast<unsigned>(std::min<std::size_t>(text.size() - done, 1u << 30));
      if (gzwrite(f, text.data() + done, chunk) != static_cast<int>(chunk)) {
        gzclose(f);
        fail("write");
      }
      done += chunk;
    }
    if (gzclose(f) != Z_OK) fail("close");
#else
    throw core::RunError("gzip traces need a tprimat built with zlib");
#endif
  } else {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (f == nullptr) fail("create");
    const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !wrote) fail("write");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("rename");
}

}  // namespace tprimat::profile
