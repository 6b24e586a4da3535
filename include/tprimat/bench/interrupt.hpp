// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// SIGINT/SIGTERM during a bench: noted by the handler, acted on by the step loop between steps.
#pragma once

#include <signal.h>

#include <atomic>
#include <csignal>
#include <string>

namespace tprimat::bench {

namespace detail {

// The handler may run on any thread (OpenMP workers, MPI progress threads), so the flag is a
// lock-free atomic rather than a volatile sig_atomic_t, which is only safe for the main thread.
static_assert(std::atomic<int>::is_always_lock_free,
              "tprimat: the interrupt flag must be lock-free to be set from a signal handler");
inline std::atomic<int> interrupt_signal_seen{0};

inline void set_signal_action(int signo, void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a write to the log or a read of the data is not cut short
  (void)::sigaction(signo, &action, nullptr);
}

/// Async-signal-safe: an atomic store and sigaction/raise only. The first signal is noted and
/// hands SIGINT and SIGTERM back to their default action, so that a second one (the user who
/// does not want to wait for the step to finish) ends the process at once. The result file is
/// replaced atomically, so even that cannot leave a half-written one.
inline void on_interrupt(int signo) {
  int none = 0;
  const bool first = interrupt_signal_seen.compare_exchange_strong(none, signo);
  set_signal_action(SIGINT, SIG_DFL);
  set_signal_action(SIGTERM, SIG_DFL);
  if (!first) (void)::raise(signo);  // a guard installed after the first signal: die now
}

}  // namespace detail

/// While alive, SIGINT and SIGTERM are noted instead of ending the process; the previous
/// dispositions come back on destruction. A signal noted earlier stays noted (interrupt_signal),
/// so a later job sees that the user asked to stop.
class InterruptGuard {
 public:
  InterruptGuard() {
    struct sigaction action {};
    action.sa_handler = &detail::on_interrupt;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, SIGINT);  // one handler at a time, whichever signal came first
    sigaddset(&action.sa_mask, SIGTERM);
    action.sa_flags = SA_RESTART;
    (void)::sigaction(SIGINT, &action, &old_int_);
    (void)::sigaction(SIGTERM, &action, &old_term_);
  }
  ~InterruptGuard() {
    (void)::sigaction(SIGINT, &old_int_, nullptr);
    (void)::sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

/// The signal (SIGINT, SIGTERM) that asked this process to stop, or 0.
inline int interrupt_signal() {
  return detail::interrupt_signal_seen.load(std::memory_order_relaxed);
}

/// Forgets a noted signal; for tests that interrupt several runs in one process.
inline void clear_interrupt() { detail::interrupt_signal_seen.store(0); }

/// "SIGINT", "SIGTERM": the names users type to kill(1), used in the result's `error`.
inline std::string signal_name(int signo) {
  switch (signo) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal " + std::to_string(signo);
  }
}

/// The result's `error` for a run that a signal stopped: "interrupted by SIGINT".
inline std::string interruption_reason(int signo) { return "interrupted by " + signal_name(signo); }

}  // namespace tprimat::bench
