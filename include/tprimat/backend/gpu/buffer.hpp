// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// DeviceBuffer<T>: RAII over stream-ordered device memory, with host upload/download helpers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "tprimat/backend/gpu.hpp"

namespace tprimat::backend {

/// `size` elements of T in device memory from Gpu::allocate (the stream-ordered pool), freed on
/// the stream it was allocated on. Move-only.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t size, Gpu::Stream stream) : size_(size), stream_(stream) {
    if (size_ > 0) data_ = static_cast<T*>(Gpu::allocate(size_ * sizeof(T), stream_));
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    DeviceBuffer(std::move(o)).swap(*this);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_) Gpu::deallocate(data_, stream_);
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

  /// Synchronous copies (tests and set-up; the step's own copies are asynchronous).
  void upload(std::span<const T> host) {
    gpu_check(gpuMemcpyAsync(data_, host.data(), std::min(host.size(), size_) * sizeof(T),
                               gpuMemcpyHostToDevice, stream_),
               "copy to device");
    gpu_check(gpuStreamSynchronize(stream_), "copy to device");
  }
  std::vector<T> download() const {
    std::vector<T> host(size_);
    gpu_check(gpuMemcpyAsync(host.data(), data_, bytes(), gpuMemcpyDeviceToHost, stream_),
               "copy to host");
    gpu_check(gpuStreamSynchronize(stream_), "copy to host");
    return host;
  }
  /// Fills every byte with `byte` (0xFF: NaN in fp32 and bf16, to poison outputs in tests).
  void fill_bytes(int byte) {
    gpu_check(gpuMemsetAsync(data_, byte, bytes(), stream_), "memset");
  }

 private:
  void swap(DeviceBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(stream_, o.stream_);
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
  Gpu::Stream stream_ = nullptr;
};

}  // namespace tprimat::backend
