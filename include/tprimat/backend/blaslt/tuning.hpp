// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Choosing a GEMM's algorithm by timing the heuristic's candidates once per shape, on the call's
// own operands: the heuristic ranks algorithms by a model of the device, and its first is not
// always the fastest at the step's shapes (the weight gradients' fp32 accumulation over K = tokens
// most of all). TPRIMAT_GEMM_TUNING=0 keeps the heuristic's first (backend/environment.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>
#include <vector>

#include "tprimat/backend/blaslt/api.hpp"
#include "tprimat/backend/environment.hpp"
#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/event.hpp"

namespace tprimat::backend::detail::blaslt {

/// Another candidate replaces the heuristic's first only when this much faster: timing noise then
/// rarely changes the choice from one process to the next.
inline constexpr double tuning_margin = 0.01;

/// The heuristic's algorithms for a shape that fit the workspace, best first. An array, not a
/// std::vector: nvcc 13.0's front end fails an internal assertion constructing the libraries'
/// unnamed algorithm struct through std::construct_at (a consumer compiling this header as CUDA).
struct Candidates {
  std::array<ltMatmulAlgo_t, max_gemm_candidates> algos{};
  std::size_t count = 0;
  std::span<const ltMatmulAlgo_t> view() const { return {algos.data(), count}; }
};

/// Whether `stream` may be synchronised and timed now: not while a graph is being captured (the
/// shape then keeps the heuristic's first; the engine's first step is eager, so it sees every
/// shape before capture).
inline bool can_time_on(gpuStream_t stream) {
  gpuStreamCaptureStatus capture = gpuStreamCaptureStatusNone;
  gpu_check(gpuStreamIsCapturing(stream, &capture), "gpuStreamIsCapturing");
  return capture == gpuStreamCaptureStatusNone;
}

/// A GEMM's output that the candidates accumulate into (beta != 0, C read from D), copied to the
/// host and written back after timing, so the call then computes from what was there. No device
/// memory: the plan counts none for tuning.
class SavedOutput {
 public:
  SavedOutput(void* d, std::size_t bytes, gpuStream_t stream)
      : d_(d), stream_(stream), host_(bytes) {
    gpu_check(gpuMemcpyAsync(host_.data(), d_, bytes, gpuMemcpyDeviceToHost, stream_),
              "saving a GEMM's output for tuning");
    gpu_check(gpuStreamSynchronize(stream_), "saving a GEMM's output for tuning");
  }
  void restore() {
    gpu_check(gpuMemcpyAsync(d_, host_.data(), host_.size(), gpuMemcpyHostToDevice, stream_),
              "restoring a GEMM's output after tuning");
    gpu_check(gpuStreamSynchronize(stream_), "restoring a GEMM's output after tuning");
  }

 private:
  void* d_;
  gpuStream_t stream_;
  std::vector<std::byte> host_;
};

/// Bytes of a row-major [rows, cols] output with leading dimension ld.
constexpr std::size_t output_bytes(std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                   std::size_t element) {
  return static_cast<std::size_t>((rows - 1) * ld + cols) * element;
}

/// The index in `algos` (the heuristic's order) of the fastest, each run once to warm up and then
/// timed by events on `stream` (a few runs, fewer for a long GEMM); `run(algo)` enqueues the call
/// with that algorithm and returns the library's status. A candidate that fails to run is passed
/// over; index 0 is kept unless another is tuning_margin faster. The caller has saved what the
/// runs overwrite.
template <class Run>
std::size_t fastest(std::span<const ltMatmulAlgo_t> algos, Run&& run, gpuStream_t stream) {
  if (algos.size() < 2) return 0;
  gpu_check(gpuStreamSynchronize(stream), "GEMM tuning");  // the operands are ready
  const OwnedEvent start(EventUse::timing), stop(EventUse::timing);
  std::vector<float> ms(algos.size(), -1.0f);
  int runs = 0;
  for (std::size_t i = 0; i < algos.size(); ++i) {
    if (run(algos[i]) != LT_STATUS_SUCCESS) continue;  // warm-up; a failing candidate is skipped
    if (runs == 0) {  // the number of timed runs: about a millisecond of the first candidate
      gpu_check(gpuEventRecord(start, stream), "gpuEventRecord");
      (void)run(algos[i]);
      gpu_check(gpuEventRecord(stop, stream), "gpuEventRecord");
      gpu_check(gpuEventSynchronize(stop), "gpuEventSynchronize");
      float once = 0;
      gpu_check(gpuEventElapsedTime(&once, start, stop), "gpuEventElapsedTime");
      runs = std::clamp(static_cast<int>(1.0f / std::max(once, 1e-3f)), 2, 10);
    }
    gpu_check(gpuEventRecord(start, stream), "gpuEventRecord");
    for (int r = 0; r < runs; ++r) (void)run(algos[i]);
    gpu_check(gpuEventRecord(stop, stream), "gpuEventRecord");
    gpu_check(gpuEventSynchronize(stop), "gpuEventSynchronize");
    gpu_check(gpuEventElapsedTime(&ms[i], start, stop), "gpuEventElapsedTime");
  }
  (void)gpuGetLastError();  // a failed candidate's launch error is not the caller's
  std::size_t best = ms[0] >= 0 ? 0 : algos.size();
  for (std::size_t i = 1; i < algos.size(); ++i) {
    if (ms[i] < 0) continue;
    const double bar = best == algos.size()   ? 1e30
                       : best == 0            ? ms[0] * (1.0 - tuning_margin)
                                              : ms[best];
    if (ms[i] < bar) best = i;
  }
  return best == algos.size() ? 0 : best;
}

}  // namespace tprimat::backend::detail::blaslt
