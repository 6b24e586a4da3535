// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Runs gnuplot as a child process on a script kept beside its data, so users can restyle plots.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace tprimat::report {

/// The binary: $TPRIMAT_GNUPLOT (tests point it at a missing file), else `gnuplot` on PATH.
inline std::string gnuplot_binary() {
  const char* env = std::getenv("TPRIMAT_GNUPLOT");
  return env && *env ? env : "gnuplot";
}

enum class GnuplotStatus { ok, not_found, failed };

/// `gnuplot -e 'fmt="png"' script` in `dir`; its output goes to dir/gnuplot.log.
inline GnuplotStatus run_gnuplot(const std::filesystem::path& dir, const std::string& script,
                                 const std::string& fmt) {
  const std::string bin = gnuplot_binary();
  const std::string expr = "fmt=\"" + fmt + "\"";
  // Absolute: the child changes into `dir` before it opens the log.
  std::error_code ec;
  const std::string log = std::filesystem::absolute(dir / "gnuplot.log", ec).string();
  const pid_t pid = ::fork();
  if (pid < 0) return GnuplotStatus::failed;
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<char*> argv{const_cast<char*>(bin.c_str()), const_cast<char*>("-e"),
                            const_cast<char*>(expr.c_str()), const_cast<char*>(script.c_str()),
                            nullptr};
    ::execvp(argv[0], argv.data());
    ::_exit(127);  // not installed: the caller prints the notice
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return GnuplotStatus::not_found;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? GnuplotStatus::ok
                                                       : GnuplotStatus::failed;
}

/// Draws `script` (in `dir`) to <stem>.png and <stem>.svg. Returns the lines to print: what was
/// written, or one notice saying why not — a missing gnuplot is not a failure of the report.
inline std::vector<std::string> draw(const std::filesystem::path& dir, const std::string& script,
                                     const std::string& stem) {
  std::vector<std::string> lines;
  for (const char* fmt : {"png", "svg"}) {
    const auto st = run_gnuplot(dir, script, fmt);
    if (st == GnuplotStatus::not_found) {
      return {"tprimat: gnuplot not found (install gnuplot-nox); no " + stem +
              ".png drawn, its script and data are in " + (dir / script).string()};
    }
    if (st == GnuplotStatus::failed) {
      return {"tprimat: gnuplot failed on " + (dir / script).string() + "; see " +
              (dir / "gnuplot.log").string()};
    }
    lines.push_back("wrote " + (dir / (stem + "." + fmt)).string());
  }
  return lines;
}

}  // namespace tprimat::report
