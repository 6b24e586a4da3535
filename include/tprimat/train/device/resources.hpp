// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The device engine's runtime objects with owners: streams, events, page-locked host buffers, and
// the allocator that counts what the engine holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/buffer.hpp"
#include "tprimat/backend/gpu/event.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/train/buffer_table.hpp"

namespace tprimat::train::device {

/// A non-blocking stream, synchronised and destroyed with its owner. Created by create(), after
/// the engine's device checks. Declare it before the buffers that free on it.
class OwnedStream {
 public:
  OwnedStream() = default;
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  ~OwnedStream() {
    if (!stream_) return;
    (void)gpuStreamSynchronize(stream_);
    (void)gpuStreamDestroy(stream_);
  }
  void create() {
    backend::gpu_check(gpuStreamCreateWithFlags(&stream_, gpuStreamNonBlocking), "gpuStreamCreate");
  }
  operator gpuStream_t() const { return stream_; }

 private:
  gpuStream_t stream_ = nullptr;
};

using backend::EventUse;
using backend::OwnedEvent;

/// `waiter` waits for what `signaller` has enqueued so far.
inline void stream_wait(gpuStream_t waiter, gpuStream_t signaller, gpuEvent_t event) {
  backend::gpu_check(gpuEventRecord(event, signaller), "gpuEventRecord");
  backend::gpu_check(gpuStreamWaitEvent(waiter, event, 0), "gpuStreamWaitEvent");
}

/// Page-locked host memory: asynchronous copies from it overlap and never stage through pageable
/// buffers. Freed after the stream has finished with it (the engine synchronises every step).
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t n) : size_(n) {
    backend::gpu_check(gpuMallocHost(reinterpret_cast<void**>(&data_), n * sizeof(T)),
                       "gpuMallocHost");
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }
  ~PinnedBuffer() {
    if (data_) (void)gpuFreeHost(data_);
  }
  T* data() { return data_; }
  T& operator[](std::size_t i) { return data_[i]; }
  std::size_t size() const { return size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Allocates the engine's device buffers up front on its stream, each one an entry of the buffer
/// table, and counts the bytes it holds (DeviceTransformer::held_bytes).
struct BufferAllocator {
  gpuStream_t stream = nullptr;
  std::size_t held = 0;

  /// Table entry `e` as T elements; a table whose element size is not T's is a bug.
  template <class T>
  backend::DeviceBuffer<T> take(const BufferEntry& e) {
    if (e.element_bytes != static_cast<int>(sizeof(T)))
      throw core::RunError("buffer table: " + std::string(name_of(e.buffer)) + " holds " +
                           std::to_string(e.element_bytes) + "-byte elements, the engine reads " +
                           std::to_string(sizeof(T)));
    backend::DeviceBuffer<T> b(static_cast<std::size_t>(e.count), stream);
    held += b.bytes();
    return b;
  }
};

/// Every byte the table lists was taken: an entry no part of the engine knows would leave the
/// plan counting memory the engine never holds (and take is the allocator's only way to allocate).
inline void check_allocated(const BufferTable& table, const BufferAllocator& a) {
  std::int64_t listed = 0;
  for (const BufferEntry& e : table) listed += e.bytes();
  if (listed != static_cast<std::int64_t>(a.held))
    throw core::RunError("buffer table: " + std::to_string(listed) + " bytes listed, " +
                         std::to_string(a.held) + " allocated");
}

/// Copies a pinned host buffer into a device buffer of the same size on `stream`.
template <class T>
void upload(backend::DeviceBuffer<T>& dst, PinnedBuffer<T>& src, gpuStream_t stream) {
  backend::gpu_check(
      gpuMemcpyAsync(dst.data(), src.data(), dst.bytes(), gpuMemcpyHostToDevice, stream), "upload");
}

}  // namespace tprimat::train::device
