// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Shared by the CUDA micro-benchmarks: calls replayed from a CUDA graph and timed by events
// (UseManualTime), input sets rotated past L2, device-side random fills, the measured ceilings.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/buffer.hpp"
#include "tprimat/kernels/fp8_format.hpp"

namespace tprimat::gpu_bench {

using backend::Gpu;using backend::gpu_check;
using backend::DeviceBuffer;
using bf16 = Gpu::bf16;

/// Skips the benchmark, with the reason, where no GPU is visible (CI builds and lists these).
inline bool skip_without_gpu(benchmark::State& state) {
  if (Gpu::device_count() > 0) return false;
  state.SkipWithError("no CUDA device (driver or GPU missing): run on a GPU machine");
  return true;
}

/// The current device, read once: name (labels), dense bf16 peak (of_dense_peak), L2 size
/// (rotation_sets).
struct Device {
  std::string name;
  double peak_tflops = 0;
  std::size_t l2_bytes = 0;
  static const Device& get() {
    static const Device d = [] {
      const backend::DeviceInfo info = Gpu::device_info();
      int device = 0, l2 = 0;
      gpu_check(cudaGetDevice(&device), "cudaGetDevice");
      gpu_check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "L2 size");
      return Device{info.device_name, info.peak_tflops_dense, static_cast<std::size_t>(l2)};
    }();
    return d;
  }
};

/// A stream of its own for one benchmark, synchronised and destroyed at scope exit.
class Stream {
 public:
  Stream() { gpu_check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "stream"); }
  ~Stream() {
    cudaStreamSynchronize(s_);
    cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

/// Copies of a call's operands to rotate over so that together they span 4x L2 (at most 8):
/// each call then reads its inputs from device memory, as the step's kernels mostly do, not from
/// what the previous call left in L2 (METHOD.md: "rotate among several input sets").
inline int rotation_sets(double bytes_per_set) {
  const double l2 = static_cast<double>(Device::get().l2_bytes);
  return static_cast<int>(std::clamp(std::ceil(4.0 * l2 / std::max(bytes_per_set, 1.0)), 1.0, 8.0));
}

/// `n` values of stddev x N(0, 1), drawn on the device (Gpu::init_normal's counter hash, so
/// set-up costs milliseconds, not a host RNG pass over gigabytes). Never zeros: tensor cores run
/// faster on zeros than on real data.
inline void fill_normal(float* p, std::size_t n, std::uint64_t seed, cudaStream_t stream,
                        float stddev = 1.0f) {
  Gpu::init_normal(p, static_cast<std::int64_t>(n), stddev, seed, 0, stream);
}
inline void fill_normal(bf16* p, std::size_t n, std::uint64_t seed, cudaStream_t stream,
                        float stddev = 1.0f) {
  constexpr std::size_t chunk = std::size_t{1} << 24;
  DeviceBuffer<float> scratch(std::min(n, chunk), stream);
  for (std::size_t first = 0; first < n; first += chunk) {
    const std::size_t len = std::min(chunk, n - first);
    Gpu::init_normal(scratch.data(), static_cast<std::int64_t>(len), stddev, seed, first, stream);
    Gpu::to_bf16(scratch.data(), p + first, static_cast<std::int64_t>(len), stream);
  }
}

/// `n` random FP8 bytes of format `f`, every finite value about equally likely (a NaN or infinity
/// pattern is moved to the finite byte with bit 6 cleared), drawn on the host by splitmix64 and
/// uploaded: a pass of ~0.1 s over the largest operand, outside the timings.
inline void fill_fp8(std::uint8_t* p, std::size_t n, kernels::Fp8Format f, std::uint64_t seed,
                     cudaStream_t stream) {
  std::array<std::uint8_t, 256> finite{};
  for (int b = 0; b < 256; ++b) {
    const bool ok = std::isfinite(kernels::fp8_to_float(std::uint8_t(b), f));
    finite[b] = static_cast<std::uint8_t>(ok ? b : b ^ 0x40);
  }
  std::vector<std::uint8_t> host(n);
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < n; i += 8) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    for (std::size_t j = i; j < std::min(n, i + 8); ++j, z >>= 8) host[j] = finite[z & 0xff];
  }
  gpu_check(cudaMemcpyAsync(p, host.data(), n, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
  gpu_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (fill_fp8)");
}

/// `calls` calls call(0), call(1), ... (the callee picks its input set from the index) captured
/// once as a CUDA graph: a replay runs them back to back with no launch gaps, as the step's own
/// graph runs its kernels, and the two events around it time the GPU alone.
class CallGraph {
 public:
  template <class Call>
  CallGraph(cudaStream_t stream, int calls, Call& call) : stream_(stream), calls_(calls) {
    cudaGraph_t graph = nullptr;
    gpu_check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
               "cudaStreamBeginCapture");
    try {
      for (int i = 0; i < calls; ++i) call(i);
    } catch (...) {
      cudaStreamEndCapture(stream, &graph);
      if (graph) cudaGraphDestroy(graph);
      throw;
    }
    gpu_check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    const cudaError_t status = cudaGraphInstantiate(&exec_, graph, 0);
    cudaGraphDestroy(graph);
    gpu_check(status, "cudaGraphInstantiate");
    gpu_check(cudaEventCreate(&start_), "cudaEventCreate");
    gpu_check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~CallGraph() {
    cudaStreamSynchronize(stream_);
    if (exec_) cudaGraphExecDestroy(exec_);
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
  }
  CallGraph(const CallGraph&) = delete;
  CallGraph& operator=(const CallGraph&) = delete;

  int calls() const { return calls_; }
  /// GPU seconds per call over one replay.
  double replay() {
    gpu_check(cudaEventRecord(start_, stream_), "cudaEventRecord");
    gpu_check(cudaGraphLaunch(exec_, stream_), "cudaGraphLaunch");
    gpu_check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    gpu_check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    gpu_check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms * 1e-3 / calls_;
  }

 private:
  cudaStream_t stream_;
  int calls_;
  cudaGraphExec_t exec_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

/// Warms up (one eager call per input set: module load, cuBLASLt and cuDNN plans, all outside
/// the timings), times one more eager call to size the graph (enough calls for ~0.5 ms of GPU
/// time per replay, a multiple of `sets`, at most 512) and captures it.
template <class Call>
std::unique_ptr<CallGraph> capture_calls(cudaStream_t stream, int sets, Call& call) {
  for (int i = 0; i < sets; ++i) call(i);
  gpu_check(cudaStreamSynchronize(stream), "warm-up");
  cudaEvent_t start = nullptr, stop = nullptr;
  gpu_check(cudaEventCreate(&start), "cudaEventCreate");
  gpu_check(cudaEventCreate(&stop), "cudaEventCreate");
  gpu_check(cudaEventRecord(start, stream), "cudaEventRecord");
  call(0);
  gpu_check(cudaEventRecord(stop, stream), "cudaEventRecord");
  gpu_check(cudaEventSynchronize(stop), "probe");
  float ms = 0;
  gpu_check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  int calls = static_cast<int>(std::clamp(std::ceil(0.5 / std::max(ms, 1e-4f)), 1.0, 512.0));
  calls = (calls + sets - 1) / sets * sets;
  return std::make_unique<CallGraph>(stream, calls, call);
}

/// What a benchmark loop measured, GPU seconds per call.
struct Timing {
  double median = 0;
  double mean = 0;
  int calls_per_replay = 0;
};

inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

/// The benchmark loop: one graph replay per iteration, the per-call time handed to
/// SetIterationTime (register with UseManualTime, so Google Benchmark's time column and its
/// rates are GPU time per call).
template <class Call>
Timing time_calls(benchmark::State& state, cudaStream_t stream, int sets, Call&& call) {
  const std::unique_ptr<CallGraph> graph = capture_calls(stream, sets, call);
  std::vector<double> samples;
  for (auto _ : state) {
    const double seconds = graph->replay();
    state.SetIterationTime(seconds);
    samples.push_back(seconds);
  }
  Timing t;
  t.calls_per_replay = graph->calls();
  t.median = median_of(samples);
  for (double s : samples) t.mean += s / static_cast<double>(samples.size());
  return t;
}

/// Per-call seconds of `replays` replays, outside any benchmark loop (the ceilings).
template <class Call>
std::vector<double> sample_calls(cudaStream_t stream, int sets, int replays, Call&& call) {
  const std::unique_ptr<CallGraph> graph = capture_calls(stream, sets, call);
  std::vector<double> samples;
  for (int r = 0; r < replays; ++r) samples.push_back(graph->replay());
  return samples;
}

/// The two ceilings of METHOD.md, measured on this device once per process at first use
/// (defined in ceiling_cuda_bench.cpp): a 1 GiB device-to-device copy, counting bytes read plus
/// bytes written, and an 8192^3 bf16 GEMM through Gpu::gemm; medians of 10 replays. Beside them
/// the FP8 GEMMs' own: 8192^3 E4M3 x E4M3 -> bf16 with fast accumulation through fp8_gemm.
struct Ceilings {
  double copy_gbps = 0;
  double gemm_tflops = 0;
  double fp8_gemm_tflops = 0;
};
const Ceilings& ceilings();

/// What one call must do at least: bytes through device memory (each input read once, each
/// output written once) and FLOPs (0 where not meaningful: memory-bound kernels).
struct Work {
  double bytes = 0;
  double flops = 0;
};

/// Counters from the median per-call time (a stray slow replay moves it less than the mean):
/// GB/s and TFLOP/s, each also as a fraction of the ceiling measured in this process
/// (of_copy_ceiling, of_gemm_ceiling) and TFLOP/s of the data-sheet dense peak; plus Google
/// Benchmark's bytes_per_second (SetBytesProcessed: from the mean, over GPU time).
inline void report(benchmark::State& state, const Timing& t, Work w) {
  state.SetBytesProcessed(static_cast<std::int64_t>(w.bytes * double(state.iterations())));
  state.counters["median_us"] = t.median * 1e6;
  state.counters["calls_per_replay"] = t.calls_per_replay;
  if (t.median <= 0) return;
  const Ceilings& c = ceilings();
  if (w.bytes > 0) {
    const double gbps = w.bytes / t.median * 1e-9;
    state.counters["GB/s"] = gbps;
    if (c.copy_gbps > 0) state.counters["of_copy_ceiling"] = gbps / c.copy_gbps;
  }
  if (w.flops > 0) {
    const double tflops = w.flops / t.median * 1e-12;
    state.counters["TFLOP/s"] = tflops;
    if (c.gemm_tflops > 0) state.counters["of_gemm_ceiling"] = tflops / c.gemm_tflops;
    if (Device::get().peak_tflops > 0)
      state.counters["of_dense_peak"] = tflops / Device::get().peak_tflops;
  }
}

}  // namespace tprimat::gpu_bench
