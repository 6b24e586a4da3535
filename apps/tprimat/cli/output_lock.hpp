// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Advisory locks on the files a run writes, so that two tprimat processes never write one result.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tprimat/core/error.hpp"

namespace tprimat::cli {

/// The lock of `file`: ".NAME.lock" beside it (hidden, and no reader of results globs it).
inline std::filesystem::path lock_file_of(const std::filesystem::path& file) {
  return file.parent_path() / ("." + file.filename().string() + ".lock");
}

/// Holds `file` against other processes until destroyed, through flock(2) on lock_file_of(file).
///
/// flock, not fcntl: a POSIX record lock is dropped when any descriptor of the file closes in the
/// process; flock belongs to the one open file, which the kernel releases when the process ends
/// however it ends, so a crashed run blocks nobody. (Linux's NFS client maps flock onto the
/// server's record locks, so the lock holds across hosts where the mount has locking.) The lock file
/// is removed on release; a file left by a killed run is only a file: whoever opens it next gets
/// its lock. Removal races are closed the usual way: after locking, the descriptor must still be
/// the file at the path, else the path was removed and recreated under us, and we try again.
/// The file holds the holder's description (pid, host, command line) for the refusal message.
class OutputLock {
 public:
  /// Locks `file`. Returns nullopt and sets `holder` (the lock file's text, possibly empty) when
  /// another process holds it. Where the file system has no locks (NFS mounted without a lock
  /// daemon), returns an OutputLock that holds nothing and says so in unsupported().
  static std::optional<OutputLock> try_take(const std::filesystem::path& file,
                                            std::string_view owner, std::string& holder) {
    const auto path = lock_file_of(file);
    for (int attempt = 0; attempt < 100; ++attempt) {
      // Never through a link, never blocking on a FIFO; and what is opened must be a lock file
      // as tprimat leaves one (a regular file of one link), or its truncation below would empty
      // whatever a planted hard link points to (the previous result included).
      const int fd =
          ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
      if (fd < 0)
        throw core::InputError(
            "cannot create the lock file " + path.string() + " (" +
                (errno == ELOOP ? std::string("it is a symbolic link") : std::strerror(errno)) +
                ")",
            "remove it, or pass another --output-dir");
      if (struct stat st {}; ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink > 1) {
        ::close(fd);
        throw core::InputError("the lock file " + path.string() + " is " +
                                   (S_ISREG(st.st_mode) ? "a hard link to another file"
                                                        : "not a regular file") +
                                   "; nothing ran and nothing was written to it",
                               "remove it, or pass another --output-dir");
      }
      int rc;
      do rc = ::flock(fd, LOCK_EX | LOCK_NB);
      while (rc != 0 && errno == EINTR);
      if (rc != 0 && errno == EWOULDBLOCK) {
        holder = read_all(fd);
        ::close(fd);
        return std::nullopt;
      }
      if (rc != 0) {  // ENOLCK, EOPNOTSUPP, ENOSYS: this file system keeps no locks
        OutputLock none;
        none.unsupported_ = std::string(std::strerror(errno));
        ::close(fd);
        (void)::unlink(path.c_str());
        return none;
      }
      struct stat held {};
      struct stat now {};
      if (::fstat(fd, &held) == 0 && ::stat(path.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
          held.st_ino == now.st_ino) {
        OutputLock lock;
        lock.fd_ = fd;
        lock.path_ = path;
        if (::ftruncate(fd, 0) == 0) write_all(fd, owner);  // best effort: a description only
        return lock;
      }
      ::close(fd);  // the holder removed this file as we opened it: lock the new one
    }
    throw core::InputError(
        "cannot take the lock " + path.string() + ": it is removed and recreated without end",
        "check what else writes into this --output-dir");
  }

  OutputLock(OutputLock&& o) noexcept
      : fd_(std::exchange(o.fd_, -1)),
        path_(std::move(o.path_)),
        unsupported_(std::move(o.unsupported_)) {}
  OutputLock& operator=(OutputLock&& o) noexcept {
    if (this != &o) {
      release();
      fd_ = std::exchange(o.fd_, -1);
      path_ = std::move(o.path_);
      unsupported_ = std::move(o.unsupported_);
    }
    return *this;
  }
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  ~OutputLock() { release(); }

  /// Why nothing is held ("No locks available"), or "" when the lock is held.
  const std::string& unsupported() const { return unsupported_; }

 private:
  OutputLock() = default;

  /// Unlink first, unlock second: whoever locks the old file after us sees it is gone.
  void release() {
    if (fd_ < 0) return;
    (void)::unlink(path_.c_str());
    ::close(fd_);
    fd_ = -1;
  }

  static std::string read_all(int fd) {
    std::string out;
    char buf[512];
    ssize_t n;
    while (out.size() < 4096 && (n = ::pread(fd, buf, sizeof buf, off_t(out.size()))) > 0)
      out.append(buf, static_cast<std::size_t>(n));
    for (char& c : out)  // one line in the refusal, whatever the command line held
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  }
  static void write_all(int fd, std::string_view text) {
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::pwrite(fd, text.data() + done, text.size() - done, off_t(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      done += static_cast<std::size_t>(n);
    }
  }

  int fd_ = -1;
  std::filesystem::path path_;
  std::string unsupported_;
};

/// "pid 4242 on node7: tprimat bench --seed 1 ...": what a refused run learns of the holder.
inline std::string lock_owner_text(std::string_view command_line) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return "pid " + std::to_string(::getpid()) + (host[0] != '\0' ? " on " + std::string(host) : "") +
         ": " + std::string(command_line) + "\n";
}

/// Locks every file of `files`, all or none: when another process holds one, throws
/// core::InputError naming that file and the holder (nothing is then held). A file system without
/// locks adds one line to `notices` per directory and the run goes on unprotected.
inline std::vector<OutputLock> lock_outputs(const std::vector<std::filesystem::path>& files,
                                            std::string_view owner,
                                            std::vector<std::string>& notices) {
  std::vector<OutputLock> held;
  std::vector<std::filesystem::path> unlocked_dirs;
  for (const auto& f : files) {
    std::string holder;
    auto lock = OutputLock::try_take(f, owner, holder);
    if (!lock)
      throw core::InputError(
          f.string() + " is being written by another tprimat run (" +
              (holder.empty() ? "it holds " + lock_file_of(f).string() : holder) + "); nothing ran",
          "wait for that run to end, or pass another --output-dir");
    if (!lock->unsupported().empty()) {
      const auto dir = f.parent_path();
      if (std::find(unlocked_dirs.begin(), unlocked_dirs.end(), dir) == unlocked_dirs.end()) {
        unlocked_dirs.push_back(dir);
        notices.push_back("tprimat: " + dir.string() + " keeps no file locks (" +
                          lock->unsupported() + "): nothing stops another run from writing " +
                          "there at the same time");
      }
    }
    held.push_back(std::move(*lock));
  }
  return held;
}

}  // namespace tprimat::cli
