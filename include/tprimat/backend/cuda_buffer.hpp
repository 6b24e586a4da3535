// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// DeviceBuffer<T>: RAII over stream-ordered device memory, with host upload/download helpers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "tprimat/backend/cuda.hpp"

namespace tprimat::backend {

/// `size` elements of T in device memory from Cuda::allocate (the stream-ordered pool), freed on
/// the stream it was allocated on. Move-only.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t size, Cuda::Stream stream) : size_(size), stream_(stream) {
    if (size_ > 0) data_ = static_cast<T*>(Cuda::allocate(size_ * sizeof(T), stream_));
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    DeviceBuffer(std::move(o)).swap(*this);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_) Cuda::deallocate(data_, stream_);
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

  /// Synchronous copies (tests and set-up; the step's own copies are asynchronous).
  void upload(std::span<const T> host) {
    cuda_check(cudaMemcpyAsync(data_, host.data(), std::min(host.size(), size_) * sizeof(T),
                               cudaMemcpyHostToDevice, stream_),
               "copy to device");
    cuda_check(cudaStreamSynchronize(stream_), "copy to device");
  }
  std::vector<T> download() const {
    std::vector<T> host(size_);
    cuda_check(cudaMemcpyAsync(host.data(), data_, bytes(), cudaMemcpyDeviceToHost, stream_),
               "copy to host");
    cuda_check(cudaStreamSynchronize(stream_), "copy to host");
    return host;
  }
  /// Fills every byte with `byte` (0xFF: NaN in fp32 and bf16, to poison outputs in tests).
  void fill_bytes(int byte) {
    cuda_check(cudaMemsetAsync(data_, byte, bytes(), stream_), "memset");
  }

 private:
  void swap(DeviceBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(stream_, o.stream_);
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
  Cuda::Stream stream_ = nullptr;
};

}  // namespace tprimat::backend
