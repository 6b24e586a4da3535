// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Runs gnuplot as a child process on a script kept beside its data, so users can restyle plots.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tprimat/core/environment.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/output_file.hpp"

namespace tprimat::report {

/// The binary: $TPRIMAT_GNUPLOT (tests point it at a missing file), else `gnuplot` on PATH.
inline std::string gnuplot_binary() {
  const char* env = std::getenv("TPRIMAT_GNUPLOT");
  return env && *env ? env : "gnuplot";
}

enum class GnuplotStatus { ok, not_found, failed, timed_out, interrupted };

/// A program's interrupt flag, nonzero once a stop signal came (the tprimat CLI points it at its
/// own): a gnuplot still drawing is then stopped at once rather than waited for. Null: none.
inline const std::atomic<int>* interrupt_flag = nullptr;

/// How long one gnuplot run may take: $TPRIMAT_GNUPLOT_TIMEOUT seconds (tests shorten it), else
/// 120 s, far above the seconds the largest figure takes.
inline double gnuplot_time_limit_seconds() {
  static const double limit =
      core::env_number("TPRIMAT_GNUPLOT_TIMEOUT", core::above(0.0, 86400.0), 120.0);
  return limit;
}

namespace detail {

/// SIGCHLD at its default while a child is waited for: where the caller ignores it (SIG_IGN, as
/// `nohup` or some job runners leave it) the kernel reaps children itself, and waitpid could
/// only answer ECHILD, with no exit status.
class DefaultChildSignal {
 public:
  DefaultChildSignal() {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    restore_ = ::sigaction(SIGCHLD, &dfl, &saved_) == 0;
  }
  DefaultChildSignal(const DefaultChildSignal&) = delete;
  DefaultChildSignal& operator=(const DefaultChildSignal&) = delete;
  ~DefaultChildSignal() {
    if (restore_) ::sigaction(SIGCHLD, &saved_, nullptr);
  }

 private:
  struct sigaction saved_ {};
  bool restore_ = false;
};

/// Waits for `pid` at most `limit` seconds, or until interrupt_flag is set (`*interrupted`
/// then true), then kills it (SIGKILL) and reaps it. Returns the wait status, or nullopt when it
/// was killed (or cannot be waited for).
inline std::optional<int> wait_with_limit(pid_t pid, double limit, bool* interrupted) {
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return std::nullopt;  // ECHILD: nothing left to wait for
    if (interrupt_flag != nullptr && interrupt_flag->load() != 0) {
      *interrupted = true;
      break;
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= limit)
      break;
    ::usleep(10'000);
  }
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return std::nullopt;
}

}  // namespace detail

/// `gnuplot -e 'fmt="png"' script` in `dir`, its output to `log_fd`, for at most
/// gnuplot_time_limit_seconds().
inline GnuplotStatus run_gnuplot(const std::filesystem::path& dir, const std::string& script,
                                 const std::string& fmt, int log_fd) {
  const std::string bin = gnuplot_binary();
  const std::string expr = "fmt=\"" + fmt + "\"";
  const detail::DefaultChildSignal child_signal;
  const pid_t pid = ::fork();
  if (pid < 0) return GnuplotStatus::failed;
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    if (log_fd >= 0) {
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
    }
    std::vector<char*> argv{const_cast<char*>(bin.c_str()), const_cast<char*>("-e"),
                            const_cast<char*>(expr.c_str()), const_cast<char*>(script.c_str()),
                            nullptr};
    ::execvp(argv[0], argv.data());
    ::_exit(127);  // not installed: the caller prints the notice
  }
  bool interrupted = false;
  const auto status = detail::wait_with_limit(pid, gnuplot_time_limit_seconds(), &interrupted);
  if (interrupted) return GnuplotStatus::interrupted;
  if (!status) return GnuplotStatus::timed_out;
  if (WIFEXITED(*status) && WEXITSTATUS(*status) == 127) return GnuplotStatus::not_found;
  return WIFEXITED(*status) && WEXITSTATUS(*status) == 0 ? GnuplotStatus::ok
                                                         : GnuplotStatus::failed;
}

/// Draws `script` (in `dir`) to <stem>.png and <stem>.svg. Returns the lines to print: what was
/// written, or one notice saying why not — a missing gnuplot is not a failure of the report.
/// gnuplot.log is a new file (core/output_file.hpp) and each figure's name is checked first, so
/// gnuplot never writes through a link or into a FIFO or device planted at those names; one
/// planted there is refused, named in the notice.
inline std::vector<std::string> draw(const std::filesystem::path& dir, const std::string& script,
                                     const std::string& stem) {
  std::vector<std::string> lines;
  const auto log_path = dir / "gnuplot.log";
  std::optional<core::NewFile> log;
  try {
    log.emplace(log_path, "remove it, or pass another --output-dir");
    log->publish();
    for (const char* fmt : {"png", "svg"})
      core::check_output_path(dir / (stem + "." + fmt), "remove it, or pass another --output-dir");
  } catch (const std::exception& e) {
    return {"tprimat: no " + stem + ".png drawn: " + core::without_prefix(e.what())};
  }
  for (const char* fmt : {"png", "svg"}) {
    const auto st = run_gnuplot(dir, script, fmt, log->fd());
    if (st == GnuplotStatus::not_found) {
      return {"tprimat: gnuplot not found (install gnuplot-nox); no " + stem +
              ".png drawn, its script and data are in " + (dir / script).string()};
    }
    if (st == GnuplotStatus::timed_out || st == GnuplotStatus::interrupted) {
      std::error_code ec;  // what the stopped gnuplot wrote of the figure is not one
      std::filesystem::remove(dir / (stem + "." + fmt), ec);
    }
    if (st == GnuplotStatus::interrupted)
      return {"tprimat: interrupted while gnuplot drew " + (dir / (stem + "." + fmt)).string() +
              "; it was stopped, and its script and data are in " + (dir / script).string()};
    if (st == GnuplotStatus::timed_out) {
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g", gnuplot_time_limit_seconds());
      return {"tprimat: gnuplot did not finish " + (dir / (stem + "." + fmt)).string() + " in " +
              limit + " s and was stopped; its script and data are in " +
              (dir / script).string() + " (set TPRIMAT_GNUPLOT_TIMEOUT to wait longer)"};
    }
    if (st == GnuplotStatus::failed) {
      return {"tprimat: gnuplot failed on " + (dir / script).string() + "; see " +
              log_path.string()};
    }
    lines.push_back("wrote " + (dir / (stem + "." + fmt)).string());
  }
  return lines;
}

}  // namespace tprimat::report
