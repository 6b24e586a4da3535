// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Trace files on disk: written whole (temporary file + rename), gzip-compressed through zlib in
// builds that define TPRIMAT_HAVE_ZLIB (the CLI does when CMake finds zlib), read either way.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

#if defined(TPRIMAT_HAVE_ZLIB) && TPRIMAT_HAVE_ZLIB
#include <zlib.h>
#endif

#include "tprimat/core/error.hpp"
#include "tprimat/core/input_file.hpp"
#include "tprimat/core/output_file.hpp"

namespace tprimat::profile {

#if defined(TPRIMAT_HAVE_ZLIB) && TPRIMAT_HAVE_ZLIB
inline constexpr bool gzip_available = true;
#else
inline constexpr bool gzip_available = false;
#endif

/// How a trace is read: a regular file of at most core::max_trace_bytes, as stored and inflated.
inline constexpr core::InputKind trace_input{"trace", core::max_trace_bytes,
                                             "pass a Chrome trace (.json or .json.gz)"};

/// `gz`, gzip data read from `path`, inflated: every member in turn, as gunzip does (bytes after
/// the last member that start no other are ignored, as gzread ignores them). Inflating stops at
/// `cap` bytes, so a small file cannot inflate without bound (a gzip bomb). InputError when the
/// data are damaged or truncated, or inflate past `cap`.
inline std::string gunzip(std::string_view gz, const std::filesystem::path& path,
                          std::uint64_t cap) {
#if defined(TPRIMAT_HAVE_ZLIB) && TPRIMAT_HAVE_ZLIB
  struct Stream {
    z_stream z{};
    Stream() {
      if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)  // 16: a gzip wrapper, not zlib's
        throw core::RunError("zlib: cannot start inflating (out of memory?)");
    }
    ~Stream() { inflateEnd(&z); }
  } s;
  const auto damaged = [&] {
    return core::InputError("trace " + path.string() + " is a damaged gzip file",
                            "check the file (gzip -t)");
  };
  // zlib counts input in 32 bits; read_trace_text passes at most trace_input.max_bytes.
  if (gz.size() > std::numeric_limits<uInt>::max())
    throw core::InputError("trace " + path.string() + " is " + std::to_string(gz.size()) +
                               " bytes of gzip, more than tprimat inflates",
                           "gunzip it first");
  s.z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  s.z.avail_in = static_cast<uInt>(gz.size());
  std::string out;
  char buf[1 << 16];
  for (;;) {
    s.z.next_out = reinterpret_cast<Bytef*>(buf);
    s.z.avail_out = sizeof buf;
    const int rc = inflate(&s.z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) throw damaged();
    const std::size_t n = sizeof buf - s.z.avail_out;
    if (out.size() + n > cap)
      throw core::InputError(
          "trace " + path.string() + " (" + std::to_string(gz.size()) +
              " bytes of gzip) inflates past the " + core::byte_size_text(cap) +
              " tprimat reads from a trace",
          "pass the trace itself, or check what wrote this file: no real trace is that large");
    out.append(buf, n);
    if (rc == Z_STREAM_END) {
      const bool another = s.z.avail_in >= 2 && s.z.next_in[0] == 0x1f && s.z.next_in[1] == 0x8b;
      if (!another) break;
      if (inflateReset(&s.z) != Z_OK) throw damaged();
    } else if (rc == Z_BUF_ERROR || (n == 0 && s.z.avail_in == 0)) {
      throw damaged();  // the input ended inside a member: truncated
    }
  }
  return out;
#else
  (void)gz;
  (void)cap;
  throw core::InputError("trace " + path.string() +
                             " is gzip-compressed and this tprimat is built without zlib",
                         "gunzip it first, or rebuild with zlib (zlib1g-dev)");
#endif
}

/// `raw`, the bytes of trace file `path`, inflated (within `cap`) when they are gzip (by their
/// magic bytes, whatever the name), else as they are.
inline std::string inflate_if_gzip(std::string raw, const std::filesystem::path& path,
                                   std::uint64_t cap = trace_input.max_bytes) {
  const bool gz = raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f &&
                  static_cast<unsigned char>(raw[1]) == 0x8b;
  if (!gz) return raw;  // moved, not copied: a trace may be a GiB
  return gunzip(raw, path, cap);
}

/// The whole file, decompressed when it is gzip; read and inflated within trace_input's cap.
inline std::string read_trace_text(const std::filesystem::path& path) {
  return inflate_if_gzip(core::read_input_file(path, trace_input), path);
}

/// Writes `text` to `path` so that a reader never sees half a trace: a new file in the same
/// directory, then a rename (core/output_file.hpp). `gzip` compresses it (zlib builds only; callers check
/// gzip_available first and refuse the option otherwise).
inline void write_trace_text(const std::filesystem::path& path, std::string_view text, bool gzip) {
  core::NewFile file(path, "pass another --output-dir");
  if (gzip) {
#if defined(TPRIMAT_HAVE_ZLIB) && TPRIMAT_HAVE_ZLIB
    // zlib closes the descriptor it is given: a duplicate, so the file stays open to publish.
    const int fd = ::dup(file.fd());
    gzFile f = fd < 0 ? nullptr : gzdopen(fd, "wb6");
    if (f == nullptr) {
      if (fd >= 0) ::close(fd);
      throw core::RunError("cannot compress trace " + path.string() + ": " + std::strerror(errno));
    }
    std::size_t done = 0;
    while (done < text.size()) {
      const auto chunk = static_cast<unsigned>(std::min<std::size_t>(text.size() - done, 1u << 30));
      if (gzwrite(f, text.data() + done, chunk) != static_cast<int>(chunk)) {
        gzclose(f);
        throw core::RunError("cannot write trace " + path.string() + ": " + std::strerror(errno));
      }
      done += chunk;
    }
    if (gzclose(f) != Z_OK)
      throw core::RunError("cannot write trace " + path.string() + ": " + std::strerror(errno));
#else
    throw core::RunError("gzip traces need a tprimat built with zlib");
#endif
  } else {
    file.write(text);
  }
  file.publish();
  file.close();
}

}  // namespace tprimat::profile
