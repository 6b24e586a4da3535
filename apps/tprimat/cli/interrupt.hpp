// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// SIGINT/SIGTERM/SIGHUP/SIGPIPE during a bench: noted by the handler, acted on between steps.
#pragma once

#include <signal.h>

#include <atomic>
#include <csignal>
#include <cstddef>
#include <iterator>
#include <string>

namespace tprimat::cli {

namespace detail {

// The handler may run on any thread (OpenMP workers, MPI progress threads), so the flag is a
// lock-free atomic rather than a volatile sig_atomic_t, which is only safe for the main thread.
static_assert(std::atomic<int>::is_always_lock_free,
              "tprimat: the interrupt flag must be lock-free to be set from a signal handler");
inline std::atomic<int> interrupt_signal_seen{0};

/// The signals that stop a run between steps. SIGINT and SIGTERM come from someone who wants it
/// to stop; SIGHUP from a terminal that went away (an SSH session dropped); SIGPIPE from a reader
/// of stdout that went away (`tprimat bench | head -3`). Either way the steps done are kept.
inline constexpr int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

/// SIGINT and SIGTERM are a person's: a second one means "now". SIGHUP and SIGPIPE are the
/// system's, and come again on their own (every write to the closed pipe raises SIGPIPE): a
/// second one is no more urgent than the first.
constexpr bool escalates(int signo) { return signo == SIGINT || signo == SIGTERM; }

inline void on_interrupt(int signo);

/// Async-signal-safe: sigaction only. SIGINT and SIGTERM go back to their default action if they
/// are ours, so a second one ends the process at once; one ignored from the start stays ignored.
inline void arm_escalation() {
  for (const int s : {SIGINT, SIGTERM}) {
    struct sigaction now {};
    if (::sigaction(s, nullptr, &now) != 0 || now.sa_handler != &on_interrupt) continue;
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    (void)::sigaction(s, &dfl, nullptr);
  }
}

/// Async-signal-safe: an atomic store, sigaction and raise only. The first signal is noted; the
/// result file is replaced atomically, so even a second SIGINT, which ends tprimat at once, cannot
/// leave a half-written one.
inline void on_interrupt(int signo) {
  int none = 0;
  const bool first = interrupt_signal_seen.compare_exchange_strong(none, signo);
  arm_escalation();
  // A guard installed after the first signal (the next job) held this one: its default now.
  if (!first && escalates(signo)) (void)::raise(signo);
}

}  // namespace detail

/// While alive, the stop signals are noted instead of ending the process; the previous
/// dispositions come back on destruction. A signal ignored when the guard is made stays ignored:
/// `nohup tprimat bench ...` keeps running when the terminal goes, as nohup promises. A signal
/// noted earlier stays noted (interrupt_signal), so a later job sees that the run was stopped.
class InterruptGuard {
 public:
  InterruptGuard() {
    struct sigaction action {};
    action.sa_handler = &detail::on_interrupt;
    sigemptyset(&action.sa_mask);
    for (const int s : detail::stop_signals)  // one handler at a time, whichever came first
      sigaddset(&action.sa_mask, s);
    action.sa_flags = SA_RESTART;  // a write to the log or a read of the data is not cut short
    for (std::size_t i = 0; i < std::size(detail::stop_signals); ++i) {
      const int s = detail::stop_signals[i];
      installed_[i] = ::sigaction(s, nullptr, &old_[i]) == 0 && old_[i].sa_handler != SIG_IGN &&
                      ::sigaction(s, &action, nullptr) == 0;
    }
  }
  ~InterruptGuard() {
    for (std::size_t i = 0; i < std::size(detail::stop_signals); ++i)
      if (installed_[i]) (void)::sigaction(detail::stop_signals[i], &old_[i], nullptr);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction old_[std::size(detail::stop_signals)] {};
  bool installed_[std::size(detail::stop_signals)] = {};
};

/// The signal (SIGINT, SIGTERM, SIGHUP, SIGPIPE) that asked this process to stop, or 0.
inline int interrupt_signal() {
  return detail::interrupt_signal_seen.load(std::memory_order_relaxed);
}

/// Forgets a noted signal; for tests that interrupt several runs in one process.
inline void clear_interrupt() { detail::interrupt_signal_seen.store(0); }

/// "SIGINT", "SIGHUP": the names users type to kill(1), used in the result's `error`.
inline std::string signal_name(int signo) {
  switch (signo) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGPIPE:
      return "SIGPIPE";
    default:
      return "signal " + std::to_string(signo);
  }
}

/// The result's `error` for a run that a signal stopped: "interrupted by SIGINT".
inline std::string interruption_reason(int signo) { return "interrupted by " + signal_name(signo); }

}  // namespace tprimat::cli
