// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Console and log output of a benchmark: a live progress line on a terminal, plain lines elsewhere.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/core/output_file.hpp"
#include "tprimat/parallel/launch.hpp"

namespace tprimat::cli {

/// Whether progress may be redrawn in place (\r and an erase-line code): only on a terminal that
/// understands the code, and never under mpirun. Open MPI and MPICH give each rank a
/// pseudo-terminal for stdout whatever mpirun's own stdout is, so `mpirun ... > file` would
/// otherwise fill the file with redraws; srun passes a terminal only when asked (--pty).
inline bool redraws_progress(int fd = STDOUT_FILENO) {
  if (::isatty(fd) != 1) return false;
  const char* term = std::getenv("TERM");
  if (term == nullptr || std::string_view(term) == "dumb") return false;
  try {
    return parallel::detect_launch().launcher != "mpirun";
  } catch (const core::InputError&) {
    return false;  // a launcher's variables, inconsistent: a launcher all the same
  }
}

/// How step lines reach a terminal: a line each (the history kept), or one line redrawn in place
/// (`--progress-redraw`, where redraws_progress()).
enum class ProgressStyle { lines, redraw };
/// Where a step's line goes: the console and the log, or (between --log-interval's) the log.
enum class StepShown { everywhere, log_only };

/// One step's figures, as its progress line shows them.
struct StepLine {
  int k = 0, n = 0;  ///< step k of n
  bool warmup = false;
  double loss = 0, lr = 0, grad_norm = 0;
  double seconds = 0;  ///< the step's time
  double tokens_per_second = 0, tokens_per_second_per_gpu = 0;
  double tflops_per_gpu = 0;         ///< PaLM count
  std::optional<double> mfu;         ///< PaLM count, bf16 dense peak; none where it is unknown
  std::optional<double> mfu_causal;  ///< attention halved
  double memory_gib = 0;             ///< the step's peak per GPU
  double elapsed_seconds = 0;        ///< since the run's first step
  double eta_seconds = 0;
};

/// Only rank 0 reports (`enabled` false elsewhere). Every line also goes to the log file once
/// one is open; progress lines are rewritten in place (\r) only with ProgressStyle::redraw
/// where redraws_progress().
/// The console may go away mid-run (a closed pipe: EPIPE; a dropped SSH session: EIO): from the
/// first failed write on, the console is left alone and the log still gets every line.
class Reporter {
 public:
  explicit Reporter(bool enabled = true, ProgressStyle style = ProgressStyle::lines)
      : enabled_(enabled),
        tty_(enabled && style == ProgressStyle::redraw && redraws_progress()) {}

  bool enabled() const { return enabled_; }

  /// Starts the log at `path` as a new file (core/output_file.hpp: whatever was there is
  /// replaced, never written through); lines before this went to the console only. Lines
  /// reported since the last close_log() (the job's header) are written to it first. Returns
  /// false, having said why on the console and stderr, when no log can be made there: the run
  /// goes on without one.
  bool open_log(const std::filesystem::path& path) {
    if (!enabled_) return false;
    log_.reset();
    try {
      log_.emplace(path, "remove it, or pass another --output-dir");
      log_->publish();  // at its name from the first line, so `tail -f` can follow it
    } catch (const std::exception& e) {
      log_.reset();
      alert(core::without_prefix(e.what()).insert(0, "tprimat: no log is written: "));
      pending_.clear();
      return false;
    }
    std::string head;
    for (const auto& l : pending_) head.append(l).append("\n");
    pending_.clear();
    log_write(head);
    return log_.has_value();
  }
  void close_log() {
    if (log_) {
      try {
        log_->close();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
      }
    }
    log_.reset();
    pending_.clear();
  }

  /// A line for the console and the log.
  void line(std::string_view text) {
    if (!enabled_) return;
    end_progress();
    console(text, "\n");
    if (log_) log_write(std::string(text) + "\n");
    else pending_.emplace_back(text);
  }

  /// A line for the console, the log and stderr: what the user must see even where stdout is a
  /// closed pipe or a dropped terminal (an interruption, a failed run).
  void alert(std::string_view text) {
    if (!enabled_) return;
    line(text);
    std::fprintf(stderr, "%.*s\n", static_cast<int>(text.size()), text.data());
  }

  /// False once a write to stdout failed: nobody reads the console any more.
  bool console_open() const { return console_open_; }

  /// A line for the log only (details a terminal user does not need to see scroll by).
  void log_only(std::string_view text) {
    if (enabled_ && log_) log_write(std::string(text) + "\n");
  }

  /// One step's progress, what performance engineers watch: "step k/N loss x lr l grad-norm g
  /// step-time t tokens/s y tokens/s/GPU z TFLOP/s/GPU f MFU m% (PaLM) c% (causal) memory M GiB
  /// elapsed e ETA r". The log gets every step; the console those shown everywhere.
  void step(const StepLine& s, StepShown shown = StepShown::everywhere) {
    if (!enabled_) return;
    char buf[512];
    char mfu[96] = "";
    if (s.mfu && s.mfu_causal)
      std::snprintf(mfu, sizeof mfu, " MFU %.1f%% (PaLM) %.1f%% (causal)", 100.0 * *s.mfu,
                    100.0 * *s.mfu_causal);
    std::snprintf(buf, sizeof buf,
                  "%s %d/%d loss %.4f lr %.3g grad-norm %.4g step-time %.3fs tokens/s %.1f "
                  "tokens/s/GPU %.1f TFLOP/s/GPU %.4g%s memory %.2f GiB elapsed %s ETA %s",
                  s.warmup ? "warmup" : "step", s.k, s.n, s.loss, s.lr, s.grad_norm, s.seconds,
                  s.tokens_per_second, s.tokens_per_second_per_gpu, s.tflops_per_gpu, mfu,
                  s.memory_gib, format_duration(s.elapsed_seconds).c_str(),
                  format_duration(s.eta_seconds).c_str());
    if (log_) log_write(std::string(buf) + "\n");
    if (shown == StepShown::log_only) return;
    if (tty_) {
      console("\r\033[K", buf);
      open_progress_ = console_open_;
    } else {
      console(buf, "\n");
    }
  }

  /// Ends an in-place progress line so the next output starts on its own line.
  void end_progress() {
    if (open_progress_) console("", "\n");
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
  /// Appends to the log, one write a line (nothing buffered, so a crash loses no finished line).
  /// A failed write (a full disk) is said once on stderr and ends the log; the run goes on and
  /// its result keeps every step.
  void log_write(const std::string& text) {
    if (!log_) return;
    try {
      log_->write(text);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s; the log stops here, the run goes on\n", e.what());
      log_.reset();
    }
  }

  /// `a` then `b` on stdout, flushed; a failure closes the console for good. SIGPIPE, when a
  /// closed pipe raises it, is noted by cli/interrupt.hpp's handler and stops the run between
  /// steps; where it is ignored (nohup, trap '' PIPE) the run goes on with its log only.
  void console(std::string_view a, std::string_view b) {
    if (!console_open_) return;
    std::fwrite(a.data(), 1, a.size(), stdout);
    std::fwrite(b.data(), 1, b.size(), stdout);
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      console_open_ = false;
      // What stdio still buffers would be written again at exit, raising SIGPIPE after the
      // handler is gone: stdout goes to /dev/null from now on.
      if (const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC); null >= 0) {
        (void)::dup2(null, STDOUT_FILENO);
        ::close(null);
      }
      std::clearerr(stdout);
    }
  }

  bool enabled_;
  bool console_open_ = true;
  bool tty_;
  bool open_progress_ = false;
  std::optional<core::NewFile> log_;  ///< the live log, published at its name when opened
  std::vector<std::string> pending_;  ///< lines waiting for the log to open
};

}  // namespace tprimat::cli
