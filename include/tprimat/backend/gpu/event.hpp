// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// OwnedEvent: a GPU event destroyed with its owner, so that no error path leaks one.
#pragma once

#include <utility>

#include "tprimat/backend/gpu.hpp"

namespace tprimat::backend {

/// What an event is for: ordering streams only (created with timing disabled, cheaper to
/// record), or timing what lies between two of them.
enum class EventUse { order, timing };

class OwnedEvent {
 public:
  OwnedEvent() = default;
  explicit OwnedEvent(EventUse use) {
    gpu_check(use == EventUse::timing ? gpuEventCreate(&event_)
                                      : gpuEventCreateWithFlags(&event_, gpuEventDisableTiming),
              "gpuEventCreate");
  }
  OwnedEvent(OwnedEvent&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
  OwnedEvent& operator=(OwnedEvent&& o) noexcept {
    std::swap(event_, o.event_);
    return *this;
  }
  ~OwnedEvent() {
    if (event_) (void)gpuEventDestroy(event_);
  }
  operator gpuEvent_t() const { return event_; }

 private:
  gpuEvent_t event_ = nullptr;
};

}  // namespace tprimat::backend
