// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Every file tprimat writes is made here: a new file under an unguessable name, then renamed.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/core/input_file.hpp"

namespace tprimat::core {

// One rule for every writer (results, logs, reports, plots, traces, --save, data write): create
// new files only (O_CREAT|O_EXCL|O_NOFOLLOW, under a name nobody can plant first, in the target's
// directory), then rename them over the target. So no writer opens what is already there: a link
// planted at a name is never followed, a device or FIFO never opened (nor blocked on), and a hard
// link to another file is replaced at this name only. Before the rename, what sits at the target
// is checked: a link, a device, a directory or a file this run reads is refused, never replaced.

/// A path tprimat will not write: bad input (exit 2), naming what is there.
class OutputFileError : public InputError {
 public:
  using InputError::InputError;
};

namespace detail {

/// ".NAME.tmp-<12 hex digits>": hidden (no reader of results globs it) and unguessable.
inline std::filesystem::path temporary_name_beside(const std::filesystem::path& target) {
  static thread_local std::mt19937_64 bits{std::random_device{}() ^
                                           (std::uint64_t(::getpid()) << 32)};
  char hex[13];
  std::snprintf(hex, sizeof hex, "%012llx",
                static_cast<unsigned long long>(bits() & 0xffffffffffffULL));
  return target.parent_path() / ("." + target.filename().string() + ".tmp-" + hex);
}

inline std::filesystem::path directory_of(const std::filesystem::path& path) {
  return path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
}

/// Makes a rename durable: without an fsync of the directory, a power cut may undo it.
inline void sync_directory(const std::filesystem::path& dir) {
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);  // best effort: the data itself is already on disk
    ::close(dfd);
  }
}

}  // namespace detail

/// Checks that a writer may put a file at `path`: nothing is there, or a regular file that is no
/// symbolic link and no input of this run. Throws OutputFileError naming what is there, with
/// `fix` (what to pass instead).
inline void check_output_path(const std::filesystem::path& path, std::string_view fix) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    throw OutputFileError(
        "cannot examine " + path.string() + ", where tprimat would write (" + std::strerror(errno) +
            ")",
        std::string(fix));
  }
  std::string what;
  if (S_ISLNK(st.st_mode)) what = "a symbolic link; tprimat writes no file through a link";
  else if (!S_ISREG(st.st_mode)) what = std::string(special_file_kind(st.st_mode)) +
                                        "; tprimat writes regular files only";
  else if (is_input_file(st)) what = "a file this run reads; writing it would destroy the input";
  if (!what.empty())
    throw OutputFileError(path.string() + " is " + what + ", nothing was written to it",
                          std::string(fix));
}

/// A new file beside `target` under an unguessable name, written, then renamed to `target` by
/// publish(); unpublished, it is removed with the object. Write errors (a full disk) throw
/// RunError naming the target and the cause.
class NewFile {
 public:
  NewFile(std::filesystem::path target, std::string_view fix)
      : target_(std::move(target)), fix_(fix) {
    check_output_path(target_, fix_);
    for (int attempt = 0; attempt < 100; ++attempt) {
      temp_ = detail::temporary_name_beside(target_);
      fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd_ >= 0 || errno != EEXIST) break;
    }
    if (fd_ < 0)
      throw OutputFileError("cannot create a file in " + detail::directory_of(target_).string() +
                                " to write " + target_.string() + " (" + std::strerror(errno) +
                                ")",
                            fix_);
  }
  NewFile(NewFile&& o) noexcept
      : target_(std::move(o.target_)),
        temp_(std::move(o.temp_)),
        fix_(std::move(o.fix_)),
        fd_(std::exchange(o.fd_, -1)),
        published_(o.published_) {}
  NewFile(const NewFile&) = delete;
  NewFile& operator=(const NewFile&) = delete;
  NewFile& operator=(NewFile&&) = delete;
  ~NewFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!published_ && !temp_.empty()) ::unlink(temp_.c_str());
  }

  int fd() const { return fd_; }
  const std::filesystem::path& target() const { return target_; }
  /// Where the bytes are until publish(); the target after it.
  const std::filesystem::path& path() const { return published_ ? target_ : temp_; }

  /// Appends `text`; a failure (ENOSPC, EIO, EFBIG) throws RunError.
  void write(std::string_view text) {
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("write");
      done += static_cast<std::size_t>(n);
    }
  }

  /// fsync, the target checked again, rename, fsync of the directory: `target` then holds the
  /// previous file or this whole one. The descriptor stays open (a live log keeps writing).
  void publish() {
    if (::fsync(fd_) != 0 && errno != EINVAL) fail("fsync");
    check_output_path(target_, fix_);
    if (::rename(temp_.c_str(), target_.c_str()) != 0) fail("rename");
    published_ = true;
    detail::sync_directory(detail::directory_of(target_));
  }

  /// Closes the descriptor, reporting a deferred write error (NFS reports ENOSPC at close).
  void close() {
    if (fd_ < 0) return;
    const int rc = ::close(std::exchange(fd_, -1));
    if (rc != 0 && errno != EINTR) fail("close");
  }

 private:
  [[noreturn]] void fail(const char* what) {
    const int err = errno;
    throw RunError("cannot " + std::string(what) + " " + target_.string() + " (" +
                   std::strerror(err) + (err == ENOSPC ? ": the disk is full" : "") + ")");
  }

  std::filesystem::path target_, temp_;
  std::string fix_;
  int fd_ = -1;
  bool published_ = false;
};

/// Writes `text` to `path` so that readers see the old file or the whole new one, never a
/// partial one, and nothing but `path` itself is ever replaced (NewFile).
inline void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                                  std::string_view fix = "pass another output path") {
  NewFile file(path, fix);
  file.write(text);
  file.publish();
  file.close();
}

/// Moves a file this process wrote in place (a live log at `written`) to `path`: the previous
/// file at `path` or this whole one, never anything through a link.
inline void publish_written_file(const std::filesystem::path& written,
                                 const std::filesystem::path& path, std::string_view fix) {
  struct stat st {};
  if (::lstat(written.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    throw RunError("cannot publish " + written.string() + ": it is gone or no longer a file");
  check_output_path(path, fix);
  if (::rename(written.c_str(), path.c_str()) != 0)
    throw RunError("cannot rename " + written.string() + " to " + path.string() + " (" +
                   std::strerror(errno) + ")");
  detail::sync_directory(detail::directory_of(path));
}

}  // namespace tprimat::core
