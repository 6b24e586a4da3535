// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// profile::make_cupti_collector: kernels, copies and memsets from CUPTI's activity API (see
// profile/cupti.hpp).
#pragma once

#include <memory>

#include "tprimat/config.hpp"
#include "tprimat/profile/cupti.hpp"

#if defined(TPRIMAT_HAVE_CUPTI) && TPRIMAT_HAVE_CUPTI

#include <cuda_runtime.h>
#include <cupti.h>
#include <cxxabi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tprimat/core/error.hpp"

namespace tprimat::profile {
namespace detail::cupti {

inline void cupti_check(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  throw core::RunError(std::string("profiling: CUPTI ") + what +
                       " failed: " + (text != nullptr ? text : "unknown error"));
}

inline std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Kineto's set, minus the API records' own output: kernels, copies and memsets are the trace;
// runtime and driver API records are enabled only because CUPTI emits an external-correlation
// record (launch -> profile::Range) ahead of each of them. Driver too, because cuDNN launches
// its runtime-compiled kernels through the driver API.
constexpr CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                        CUPTI_ACTIVITY_KIND_MEMCPY,
                                        CUPTI_ACTIVITY_KIND_MEMSET,
                                        CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                        CUPTI_ACTIVITY_KIND_RUNTIME,
                                        CUPTI_ACTIVITY_KIND_DRIVER};

constexpr CUpti_ExternalCorrelationKind correlation_kind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
constexpr std::size_t buffer_bytes = std::size_t{8} << 20;  // Kineto's default size
constexpr std::size_t buffer_align = 8;                     // CUPTI's requirement

/// Buffers CUPTI has filled. Process-wide, as CUPTI's callbacks are: plain functions, called
/// from CUPTI's worker thread or from inside cuptiActivityFlushAll.
struct Completed {
  std::mutex mutex;
  std::vector<std::pair<std::uint8_t*, std::size_t>> buffers;  // (buffer, valid bytes)
  std::size_t dropped = 0;
};
inline Completed& completed() {
  static Completed c;
  return c;
}

inline void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                      std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(buffer_align, buffer_bytes));
  *size = *buffer != nullptr ? buffer_bytes : 0;
  *max_records = 0;  // as many as fit
}

inline void CUPTIAPI buffer_completed(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer,
                                      std::size_t, std::size_t valid) {
  std::size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped);
  auto& c = completed();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.buffers.emplace_back(buffer, valid);
  c.dropped += dropped;
}

/// CUPTI timestamps (CLOCK_REALTIME on Linux, converted from the GPU's clock by CUPTI) minus
/// steady_clock: the smallest-latency of a few paired readings.
inline std::int64_t clock_offset() {
  std::int64_t best = 0, best_gap = -1;
  for (int i = 0; i < 5; ++i) {
    const std::int64_t a = steady_ns();
    std::uint64_t t = 0;
    cupti_check(cuptiGetTimestamp(&t), "cuptiGetTimestamp");
    const std::int64_t b = steady_ns();
    if (best_gap < 0 || b - a < best_gap) {
      best_gap = b - a;
      best = static_cast<std::int64_t>(t) - (a + (b - a) / 2);
    }
  }
  return best;
}

inline const char* memcpy_kind(std::uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "PtoP";
    default:
      return "Unknown";
  }
}

inline const char* memory_kind(std::uint32_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return "Pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return "Pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
      return "Device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return "Array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
      return "Managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return "Device Static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return "Managed Static";
    default:
      return "Unknown";
  }
}

class CuptiCollector final : public ActivityCollector {
 public:
  CuptiCollector() {
    // Once per process, and now rather than at the first profiled step: CUPTI set up before
    // the step is captured as a CUDA graph sees the graph's kernels when it replays.
    static std::once_flag once;
    std::call_once(once, [] {
      cupti_check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
                  "cuptiActivityRegisterCallbacks");
    });
  }

  ~CuptiCollector() override {
    if (!running_) return;
    for (auto k : kinds) cuptiActivityDisable(k);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    release(take_buffers());
  }

  std::string name() const override { return "cupti"; }

  void start() override {
    release(take_buffers());  // anything left from an earlier cycle
    for (auto k : kinds) cupti_check(cuptiActivityEnable(k), "cuptiActivityEnable");
    running_ = true;
    offset_ = clock_offset();
  }

  std::vector<TraceEvent> stop() override {
    if (!running_) return {};
    // The step already waited for its last event; this covers work outside the engine's stream.
    const cudaError_t sync = cudaDeviceSynchronize();
    for (auto k : kinds) cuptiActivityDisable(k);
    running_ = false;
    cupti_check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
    // Averaged with the start's reading: CLOCK_REALTIME may have been slewed meanwhile.
    offset_ = offset_ / 2 + clock_offset() / 2;
    auto buffers = take_buffers();
    std::vector<TraceEvent> out;
    std::unordered_map<std::uint32_t, std::uint64_t> external;  // correlation -> range id
    try {
      for (const auto& [buffer, valid] : buffers) convert(buffer, valid, out, external);
    } catch (...) {
      release(std::move(buffers));
      throw;
    }
    release(std::move(buffers));
    std::size_t dropped = 0;
    {
      std::lock_guard<std::mutex> lock(completed().mutex);
      dropped = std::exchange(completed().dropped, 0);
    }
    if (dropped > 0)
      std::fprintf(stderr,
                   "tprimat: profiling: CUPTI dropped %zu activity records (buffers full); "
                   "profile fewer steps (fewer active steps in the profiling schedule)\n",
                   dropped);
    if (sync != cudaSuccess)
      throw core::RunError(std::string("profiling: cudaDeviceSynchronize failed: ") +
                           cudaGetErrorString(sync));
    for (auto& e : out)
      if (auto it = external.find(static_cast<std::uint32_t>(e.correlation)); it != external.end())
        e.external_id = it->second;
    return out;
  }

  void push_correlation(std::uint64_t id) override {
    cuptiActivityPushExternalCorrelationId(correlation_kind, id);
  }
  void pop_correlation() override {
    std::uint64_t last = 0;
    cuptiActivityPopExternalCorrelationId(correlation_kind, &last);
  }

 private:
  static std::vector<std::pair<std::uint8_t*, std::size_t>> take_buffers() {
    auto& c = completed();
    std::lock_guard<std::mutex> lock(c.mutex);
    return std::exchange(c.buffers, {});
  }
  static void release(std::vector<std::pair<std::uint8_t*, std::size_t>> buffers) {
    for (auto& b : buffers) std::free(b.first);
  }

  /// Kernel names come mangled from CUPTI (Kineto demangles them too); each distinct name
  /// pointer is demangled once.
  const std::string& kernel_name(const char* mangled) {
    auto it = names_.find(mangled);
    if (it != names_.end()) return it->second;
    int status = 0;
    char* d =
        mangled != nullptr ? abi::__cxa_demangle(mangled, nullptr, nullptr, &status) : nullptr;
    std::string name = d != nullptr && status == 0 ? d : (mangled != nullptr ? mangled : "?");
    std::free(d);
    return names_.emplace(mangled, std::move(name)).first->second;
  }

  std::int64_t host_ns(std::uint64_t t) const { return static_cast<std::int64_t>(t) - offset_; }

  /// Where and when an activity record (kernel, memcpy, memset: the fields they share) ran, into
  /// `e`; false when CUPTI collected no timestamps for it.
  template <class Record>
  bool place(TraceEvent& e, const Record& r) const {
    if (r.start == 0 && r.end == 0) return false;
    e.pid = r.deviceId;
    e.tid = r.streamId;
    e.start_ns = host_ns(r.start);
    e.end_ns = host_ns(r.end);
    e.correlation = r.correlationId;
    return true;
  }

  void convert(std::uint8_t* buffer, std::size_t valid, std::vector<TraceEvent>& out,
               std::unordered_map<std::uint32_t, std::uint64_t>& external) {
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
      TraceEvent e;
      switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
          const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
          if (!place(e, *k)) continue;
          e.kind = Kind::kernel;
          e.category = std::string(category::kernel);
          e.name = kernel_name(k->name);
          e.grid = {k->gridX, k->gridY, k->gridZ};
          e.block = {k->blockX, k->blockY, k->blockZ};
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
          const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
          if (!place(e, *m)) continue;
          e.kind = Kind::memcpy;
          e.category = std::string(category::memcpy);
          e.name = std::string("Memcpy ") + memcpy_kind(m->copyKind) + " (" +
                   memory_kind(m->srcKind) + " -> " + memory_kind(m->dstKind) + ")";
          e.bytes = static_cast<std::int64_t>(m->bytes);
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
          const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
          if (!place(e, *m)) continue;
          e.kind = Kind::memset;
          e.category = std::string(category::memset);
          e.name = std::string("Memset (") + memory_kind(m->memoryKind) + ")";
          e.bytes = static_cast<std::int64_t>(m->bytes);
          break;
        }
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
          const auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
          if (x->externalKind == correlation_kind) external[x->correlationId] = x->externalId;
          continue;
        }
        default:
          continue;  // runtime/driver API records: only their external correlation was wanted
      }
      out.push_back(std::move(e));
    }
  }

  bool running_ = false;
  std::int64_t offset_ = 0;
  std::unordered_map<const char*, std::string> names_;
};

}  // namespace detail::cupti

TPRIMAT_GPU_INLINE std::unique_ptr<ActivityCollector> make_cupti_collector() {
  return std::make_unique<detail::cupti::CuptiCollector>();
}

}  // namespace tprimat::profile

#else  // built without CUPTI: host ranges only

namespace tprimat::profile {
TPRIMAT_GPU_INLINE std::unique_ptr<ActivityCollector> make_cupti_collector() { return nullptr; }
}  // namespace tprimat::profile

#endif
