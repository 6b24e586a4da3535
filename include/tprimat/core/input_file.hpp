// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Every input file tprimat reads is opened here: a regular file only, never blocking, size-capped.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tprimat/core/error.hpp"

namespace tprimat::core {

inline constexpr std::uint64_t mib_bytes = std::uint64_t{1} << 20;
inline constexpr std::uint64_t gib_bytes = std::uint64_t{1} << 30;

// Caps on what tprimat reads of each kind of input, in bytes. Each is far above any real input of
// its kind and far below what exhausts a machine once parsed (nlohmann spends 16 bytes and more on
// each JSON value): a cap stops a wrong path or a hostile file, never a real input.

/// --parallel config files: the seeds' config.yaml, every strategy for every model, is ~2 kB.
inline constexpr std::uint64_t max_config_bytes = 1 * mib_bytes;
/// model.safetensors.index.json: a line per tensor; Llama 3.1 405B's index is ~70 kB.
inline constexpr std::uint64_t max_index_bytes = 16 * mib_bytes;
/// A result file: ~100 bytes a measured step (time, loss, rate, memory), so 256 MiB would hold
/// millions of steps; ours hold tens to thousands.
inline constexpr std::uint64_t max_result_bytes = 256 * mib_bytes;
/// A Chrome trace, as stored and once inflated: PyTorch's profiler writes tens to hundreds of MB
/// for a few steps of an 8B model, and the trace viewers (chrome://tracing, Perfetto) give up
/// near 1 to 2 GB.
inline constexpr std::uint64_t max_trace_bytes = 1 * gib_bytes;
/// A training log for `tprimat import`: Megatron prints ~400 bytes an iteration, so 1 GiB is
/// millions of iterations, with room for NCCL's debug output.
inline constexpr std::uint64_t max_log_bytes = 1 * gib_bytes;
/// `tprimat data write --input` JSONL (~6 bytes a token id), held in memory as 8-byte ids:
/// 1 GiB is ~180 million tokens. Bigger data sets: write parts, and blend them (--data).
inline constexpr std::uint64_t max_jsonl_bytes = 1 * gib_bytes;
/// `tprimat data write --text`: a byte a token, each held as an 8-byte id, so 256 MiB takes 2 GiB.
inline constexpr std::uint64_t max_text_bytes = 256 * mib_bytes;
/// Files read in place through mmap (.bin/.idx token data, safetensors): their size is the data
/// set's or the checkpoint's; the headers inside are bounded by their own formats.
inline constexpr std::uint64_t no_size_cap = std::numeric_limits<std::uint64_t>::max();

/// What a run does with an input once read: keeps it (no writer of the process may replace it:
/// core/output_file.hpp), or replaces it itself (the previous result a run overwrites).
enum class InputUse { kept, replaced_by_this_run };

/// One kind of input: how messages name it, the most tprimat reads of it, and what to pass
/// instead when the path is wrong.
struct InputKind {
  std::string_view noun;  ///< "config file", "trace", "log"
  std::uint64_t max_bytes = no_size_cap;
  std::string_view fix;
  InputUse use = InputUse::kept;
};

/// "1 MiB", "256 MiB", "1 GiB"; bytes below a KiB or off the binary units as "N bytes".
inline std::string byte_size_text(std::uint64_t n) {
  if (n >= gib_bytes && n % gib_bytes == 0) return std::to_string(n / gib_bytes) + " GiB";
  if (n >= mib_bytes && n % mib_bytes == 0) return std::to_string(n / mib_bytes) + " MiB";
  if (n >= 1024 && n % 1024 == 0) return std::to_string(n / 1024) + " KiB";
  return std::to_string(n) + " bytes";
}

/// A path that cannot be read as an input of its kind. what() is one line,
/// "tprimat: PATH: PROBLEM; FIX"; problem() alone lets a reader phrase its own line.
class InputFileError : public InputError {
 public:
  InputFileError(const std::string& path, const std::string& problem, std::string_view fix)
      : InputError(path + ": " + problem, std::string(fix)), path_(path), problem_(problem) {}
  const std::string& path() const { return path_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string path_, problem_;
};

/// What a file of mode `mode` is when it is not a regular file ("a directory", "a FIFO (named
/// pipe)", ...); "" for a regular file.
inline std::string_view special_file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/// special_file_kind of what `path` names, symbolic links followed; "" when it is a regular file
/// or cannot be examined (it does not exist: the caller decides what that means).
inline std::string special_file_kind(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  return std::string(special_file_kind(st.st_mode));
}

namespace detail {

/// A file as read: device and inode, and its change time, so that a file made later at a
/// recycled inode number (the input deleted meanwhile) is not taken for it.
struct FileIdentity {
  dev_t device;
  ino_t inode;
  struct timespec changed;

  bool same_file(const struct stat& st) const {
    return device == st.st_dev && inode == st.st_ino && changed.tv_sec == st.st_ctim.tv_sec &&
           changed.tv_nsec == st.st_ctim.tv_nsec;
  }
};

inline std::mutex& inputs_mutex() {
  static std::mutex m;
  return m;
}
inline std::vector<FileIdentity>& inputs_read() {
  static std::vector<FileIdentity> ids;
  return ids;
}
inline bool& inputs_guarded() {
  static bool on = false;
  return on;
}

}  // namespace detail

/// From now on, every file open_input_file opens is kept from every writer of this process
/// (core/output_file.hpp): a program whose run reads its inputs and then writes its outputs (the
/// tprimat CLI) turns it on at start, so that no output replaces an input however it is spelled.
/// Off by default: a library user may well save over a file it loaded earlier.
inline void guard_input_files() {
  const std::lock_guard lock(detail::inputs_mutex());
  detail::inputs_guarded() = true;
}

/// Notes a file this process reads (open_input_file calls it), so that no writer replaces it
/// (core/output_file.hpp), once guard_input_files() was called.
inline void note_input_file(const struct stat& st) {
  const std::lock_guard lock(detail::inputs_mutex());
  if (!detail::inputs_guarded()) return;
  detail::inputs_read().push_back({st.st_dev, st.st_ino, st.st_ctim});
}

/// Whether `st` is a file this process has read.
inline bool is_input_file(const struct stat& st) {
  const std::lock_guard lock(detail::inputs_mutex());
  for (const auto& id : detail::inputs_read())
    if (id.same_file(st)) return true;
  return false;
}

/// A read-only descriptor of a regular file, closed with the object.
class InputFd {
 public:
  InputFd(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
  InputFd(InputFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)), size_(o.size_) {}
  InputFd& operator=(InputFd&& o) noexcept {
    if (this != &o) {
      close();
      fd_ = std::exchange(o.fd_, -1);
      size_ = o.size_;
    }
    return *this;
  }
  InputFd(const InputFd&) = delete;
  InputFd& operator=(const InputFd&) = delete;
  ~InputFd() { close(); }

  int get() const { return fd_; }
  /// Gives the descriptor up: the caller closes it.
  int release() { return std::exchange(fd_, -1); }
  /// The size when opened.
  std::uint64_t size() const { return size_; }

 private:
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

namespace detail {

inline std::string not_a_file(std::string_view what, const InputKind& kind) {
  return "is " + std::string(what) + ", not a " + std::string(kind.noun);
}

/// "more than the 1 MiB tprimat reads from a config file"
inline std::string cap_text(const InputKind& kind) {
  return "more than the " + byte_size_text(kind.max_bytes) + " tprimat reads from a " +
         std::string(kind.noun);
}

}  // namespace detail

/// Opens `path` as an input of `kind`: a regular file (symbolic links followed) of at most
/// kind.max_bytes. A directory, FIFO, device or socket is refused from stat() before anything
/// opens it, and the open itself never waits (O_NONBLOCK: a FIFO put there in between opens at
/// once, and fstat() then refuses it). Throws InputFileError.
inline InputFd open_input_file(const std::filesystem::path& path, const InputKind& kind) {
  const std::string name = path.string();
  const auto unreadable = [&](int err) {
    return InputFileError(
        name, "cannot read the " + std::string(kind.noun) + ": " + std::strerror(err), kind.fix);
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw unreadable(errno);
  if (const auto what = special_file_kind(st.st_mode); !what.empty())
    throw InputFileError(name, detail::not_a_file(what, kind), kind.fix);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw unreadable(errno);
  InputFd file(fd, 0);
  if (::fstat(fd, &st) != 0) throw unreadable(errno);
  if (const auto what = special_file_kind(st.st_mode); !what.empty())
    throw InputFileError(name, detail::not_a_file(what, kind), kind.fix);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (kind.use == InputUse::kept) note_input_file(st);
  if (size > kind.max_bytes)
    throw InputFileError(name, "is " + std::to_string(size) + " bytes, " + detail::cap_text(kind),
                         kind.fix);
  return InputFd(file.release(), size);
}

/// The whole file, opened by open_input_file; one that grows past the cap while read (or reports
/// a size of 0 as /proc files do) is refused when it does.
inline std::string read_input_file(const std::filesystem::path& path, const InputKind& kind) {
  const InputFd file = open_input_file(path, kind);
  std::string text;
  text.resize(static_cast<std::size_t>(file.size()));
  std::size_t have = 0;
  for (;;) {
    if (have == text.size()) {
      // At the end of what fstat promised: a read of 0 confirms it, else the file is growing.
      if (text.size() > kind.max_bytes)
        throw InputFileError(path.string(), "holds " + detail::cap_text(kind), kind.fix);
      text.resize(std::min<std::uint64_t>(
          std::max<std::size_t>(2 * text.size(), 64 * 1024),
          kind.max_bytes == no_size_cap ? kind.max_bytes : kind.max_bytes + 1));
    }
    const ssize_t n = ::read(file.get(), text.data() + have, text.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw InputFileError(
          path.string(), "cannot read the " + std::string(kind.noun) + ": " + std::strerror(errno),
          kind.fix);
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  text.resize(have);
  return text;
}

}  // namespace tprimat::core
