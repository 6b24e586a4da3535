// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Console and log output of a benchmark: a live progress line on a terminal, plain lines elsewhere.
#pragma once

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace tprimat::bench {

/// Only rank 0 reports (`enabled` false elsewhere). Every line also goes to the log file once
/// one is open; progress lines are rewritten in place (\r) only when stdout is a terminal.
class Reporter {
 public:
  explicit Reporter(bool enabled = true)
      : enabled_(enabled), tty_(enabled && ::isatty(STDOUT_FILENO) == 1) {}

  bool enabled() const { return enabled_; }

  /// Opens (truncating) the log beside the results; lines before this went to the console only.
  /// Lines reported since the last close_log() (the job's header) are written to it first.
  void open_log(const std::filesystem::path& path) {
    if (!enabled_) return;
    log_.close();
    log_.clear();
    log_.open(path, std::ios::out | std::ios::trunc);
    for (const auto& l : pending_) log_ << l << '\n';
    pending_.clear();
    log_ << std::flush;
  }
  void close_log() {
    log_.close();
    pending_.clear();
  }

  /// A line for the console and the log.
  void line(std::string_view text) {
    if (!enabled_) return;
    end_progress();
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    if (log_.is_open()) log_ << text << '\n' << std::flush;
    else pending_.emplace_back(text);
  }

  /// A line for the log only (details a terminal user does not need to see scroll by).
  void log_only(std::string_view text) {
    if (enabled_ && log_.is_open()) log_ << text << '\n' << std::flush;
  }

  /// One step's progress: "step k/N loss x step-time t tokens/s y ETA z".
  void step(int k, int n, bool warmup, double loss, double seconds, double tokens_per_second,
            double eta_seconds) {
    if (!enabled_) return;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s %d/%d loss %.4f step-time %.3fs tokens/s %.1f ETA %s",
                  warmup ? "warmup" : "step", k, n, loss, seconds, tokens_per_second,
                  format_duration(eta_seconds).c_str());
    if (log_.is_open()) log_ << buf << '\n' << std::flush;
    if (tty_) {
      std::fprintf(stdout, "\r\033[K%s", buf);
      open_progress_ = true;
    } else {
      std::fprintf(stdout, "%s\n", buf);
    }
    std::fflush(stdout);
  }

  /// Ends an in-place progress line so the next output starts on its own line.
  void end_progress() {
    if (open_progress_) std::fputc('\n', stdout);
    open_progress_ = false;
  }

  static std::string format_duration(double s) {
    if (!std::isfinite(s) || s < 0) return "?";
    char buf[32];
    const long t = std::lround(s);
    if (t >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t / 60) % 60);
    else if (t >= 60) std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
    else std::snprintf(buf, sizeof buf, "%.1fs", s);
    return buf;
  }

 private:
  bool enabled_;
  bool tty_;
  bool open_progress_ = false;
  std::ofstream log_;
  std::vector<std::string> pending_;  ///< lines waiting for the log to open
};

}  // namespace tprimat::bench
