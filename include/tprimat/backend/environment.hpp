// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The GPU backends' settings read from environment variables, each once a process. Kept apart from
// the headers that use them (which need a GPU toolchain) so that a program can read them all before
// a run starts (check_environment) and refuse an unreadable one then, not at the first GEMM.
#pragma once

#include <atomic>
#include <optional>

#include "tprimat/core/environment.hpp"

namespace tprimat::backend {

/// Candidates asked of the cuBLASLt / hipBLASLt heuristic for each GEMM shape and timed (those that
/// fit the workspace): default_gemm_candidates, or TPRIMAT_GEMM_CANDIDATES (1 to
/// max_gemm_candidates; the micro-benchmarks use it to see whether a wider search finds faster
/// algorithms than the default's).
inline constexpr int default_gemm_candidates = 16;
inline constexpr int max_gemm_candidates = 64;

namespace detail {
inline std::atomic<bool>& first_gemm_algorithms_kept() {
  static std::atomic<bool> kept{false};
  return kept;
}
}  // namespace detail

/// TPRIMAT_GEMM_TUNING as set: on (true), off, or not set (nullopt).
inline std::optional<bool> gemm_tuning_setting() {
  static const std::optional<bool> setting =
      core::env_text("TPRIMAT_GEMM_TUNING")
          ? std::optional<bool>(core::env_switch("TPRIMAT_GEMM_TUNING", true))
          : std::nullopt;
  return setting;
}

/// From now on every GEMM shape planned in this process keeps the heuristic's first candidate,
/// untimed: which of several timed candidates wins can differ run to run, and with it the
/// result's last bits (a program's --deterministic; call it before the first GEMM).
inline void keep_first_gemm_algorithms() { detail::first_gemm_algorithms_kept() = true; }

/// Whether the GEMM candidates are timed: not where TPRIMAT_GEMM_TUNING=0 keeps the heuristic's
/// first, nor after keep_first_gemm_algorithms().
inline bool gemm_tuning_enabled() {
  return gemm_tuning_setting().value_or(true) && !detail::first_gemm_algorithms_kept();
}

/// The candidates asked of the heuristic (above).
inline int gemm_candidate_count() {
  static const int count = core::env_number(
      "TPRIMAT_GEMM_CANDIDATES", core::between(1, max_gemm_candidates), default_gemm_candidates);
  return count;
}

/// TPRIMAT_CUDNN_DEBUG=1: print the engine cuDNN's attention chose for each plan.
inline bool cudnn_debug_enabled() {
  static const bool on = core::env_switch("TPRIMAT_CUDNN_DEBUG", false);
  return on;
}

/// TPRIMAT_CP_FUSED_BLOCKS=1: context parallelism's attention runs one cuDNN call per chunk (the
/// causal mask at the keys' end), not one per block of keys.
inline bool cp_fused_blocks_requested() {
  static const bool on = core::env_switch("TPRIMAT_CP_FUSED_BLOCKS", false);
  return on;
}

/// Reads every setting above: an unreadable one throws core::InputError here.
inline void check_environment() {
  (void)gemm_tuning_enabled();
  (void)gemm_candidate_count();
  (void)cudnn_debug_enabled();
  (void)cp_fused_blocks_requested();
}

}  // namespace tprimat::backend
