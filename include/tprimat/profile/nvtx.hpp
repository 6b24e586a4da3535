// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// profile::Range: a scoped host range, seen by Nsight Systems (NVTX, domain "tprimat") and by
// tprimat's own profiler (--profile) while it records. Without NVTX (CPU, HIP builds) it is only
// the latter; with neither tool nor recording it costs one relaxed atomic load.
#pragma once

#include <atomic>

#if defined(TPRIMAT_HAVE_NVTX) && TPRIMAT_HAVE_NVTX && __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define TPRIMAT_PROFILE_NVTX 1
#else
#define TPRIMAT_PROFILE_NVTX 0
#endif

namespace tprimat::profile {

/// Receives the ranges of the thread that steps the model while a profiler records them
/// (StepProfiler installs itself during its warm-up and active steps). Not thread-safe: ranges
/// opened on other threads must not reach it.
class RangeSink {
 public:
  /// `index` >= 0 is appended to the name ("forward layer 3"); `flops` > 0 is the work inside.
  virtual void push(const char* name, int index, double flops) = 0;
  virtual void pop() = 0;

 protected:
  ~RangeSink() = default;
};

namespace detail {
inline std::atomic<RangeSink*> range_sink{nullptr};

#if TPRIMAT_PROFILE_NVTX
inline nvtxDomainHandle_t nvtx_domain() {
  static const nvtxDomainHandle_t d = nvtxDomainCreateA("tprimat");
  return d;
}
#endif
}  // namespace detail

/// Installs (or, with nullptr, removes) the sink every Range reports to.
inline void set_range_sink(RangeSink* sink) {
  detail::range_sink.store(sink, std::memory_order_release);
}

/// FLOPs of the work a range encloses (a GEMM's 2·M·N·K), for achieved TFLOP/s in summaries.
struct Flops {
  double value = 0;
};

/// `profile::Range r("forward");` at the top of a scope. Names must outlive the range (string
/// literals). NVTX carries an index or FLOPs as the range's payload.
class Range {
 public:
  explicit Range(const char* name) : Range(name, -1, 0) {}
  Range(const char* name, int index) : Range(name, index, 0) {}
  Range(const char* name, Flops flops) : Range(name, -1, flops.value) {}
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
  ~Range() {
    if (sink_ != nullptr) sink_->pop();
#if TPRIMAT_PROFILE_NVTX
    nvtxDomainRangePop(detail::nvtx_domain());
#endif
  }

 private:
  Range(const char* name, int index, double flops)
      : sink_(detail::range_sink.load(std::memory_order_acquire)) {
#if TPRIMAT_PROFILE_NVTX
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    if (flops > 0) {
      a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
      a.payload.dValue = flops;
    } else if (index >= 0) {
      a.payloadType = NVTX_PAYLOAD_TYPE_INT32;
      a.payload.iValue = index;
    }
    nvtxDomainRangePushEx(detail::nvtx_domain(), &a);
#endif
    if (sink_ != nullptr) sink_->push(name, index, flops);
  }

  RangeSink* sink_;  // the sink at entry gets the pop too, even if removed meanwhile
};

}  // namespace tprimat::profile
