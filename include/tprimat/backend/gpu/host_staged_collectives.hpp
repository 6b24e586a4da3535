// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// parallel::host_staged_collectives: a group's device collectives through its host communicator
// (MPI).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/core/bf16_bits.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/parallel/device_collectives.hpp"

namespace tprimat::parallel {

namespace detail::host_staged {

using backend::gpu_check;

class HostStaged final : public DeviceCollectives {
 public:
  explicit HostStaged(HostCollectives host) : host_(std::move(host)) {
    if (!host_.all_reduce_sum_float || !host_.all_reduce_sum_double ||
        !host_.all_reduce_max_float || !host_.reduce_scatter_sum ||
        !host_.all_gather || !host_.send || !host_.recv || !host_.send_recv)
      throw core::InputError("host-staged collectives need every host collective");
  }
  int rank() const override { return host_.rank; }
  int size() const override { return host_.size; }
  bool capturable() const override { return false; }
  const char* name() const override { return "host-staged"; }

  void all_reduce_sum(float* x, std::size_t n, void* stream) override {
    auto& h = staged(in_, x, n, stream);
    host_.all_reduce_sum_float(h);
    to_device(x, h.data(), n * sizeof(float), stream);
  }
  void all_reduce_sum(double* x, std::size_t n, void* stream) override {
    std::vector<double> h(n);
    copy(h.data(), x, n * sizeof(double), gpuMemcpyDeviceToHost, stream);
    host_.all_reduce_sum_double(h);
    to_device(x, h.data(), n * sizeof(double), stream);
  }
  void all_reduce_max(float* x, std::size_t n, void* stream) override {
    auto& h = staged(in_, x, n, stream);
    host_.all_reduce_max_float(h);
    to_device(x, h.data(), n * sizeof(float), stream);
  }
  /// Through the host all-reduce, not MPI's reduce-scatter: its sums then take the all-reduce's
  /// order (Open MPI's reduce-scatter adds three or more ranks' terms in another order), so the
  /// equivalence tests compare ZeRO-1 with the all-reduce path, and one GPU, bit for bit.
  void reduce_scatter_sum(float* x, std::size_t chunk, void* stream) override {
    auto& h = staged(in_, x, chunk * size(), stream);
    host_.all_reduce_sum_float(h);
    to_device(x + chunk * rank(), h.data() + chunk * rank(), chunk * sizeof(float), stream);
  }
  /// Each rank's bf16 widened to float on the host, summed through the host all-reduce (as
  /// reduce_scatter_sum) and this rank's chunk rounded back to bf16 (to nearest even): one
  /// rounding of the fp32 sum, where NCCL rounds after each addition (equal at TP = 2).
  void reduce_scatter_sum_bf16(void* x, std::size_t chunk, void* stream) override {
    const std::size_t n = chunk * size();
    auto* bytes = static_cast<std::uint8_t*>(x);
    bits_.resize(n);
    copy(bits_.data(), bytes, n * sizeof(std::uint16_t), gpuMemcpyDeviceToHost, stream);
    in_.resize(n);
    for (std::size_t i = 0; i < n; ++i) in_[i] = core::bf16_bits_to_float(bits_[i]);
    host_.all_reduce_sum_float(in_);
    const std::size_t first = chunk * rank();
    for (std::size_t i = 0; i < chunk; ++i) bits_[i] = core::float_to_bf16_bits(in_[first + i]);
    to_device(bytes + first * sizeof(std::uint16_t), bits_.data(), chunk * sizeof(std::uint16_t),
              stream);
  }
  /// Bytes travel as floats (the host communicators move floats; MPI copies their bits), each
  /// rank's chunk padded to whole floats.
  void all_gather_bytes(void* x, std::size_t chunk_bytes, void* stream) override {
    const std::size_t floats = (chunk_bytes + sizeof(float) - 1) / sizeof(float);
    auto* bytes = static_cast<std::uint8_t*>(x);
    in_.assign(floats, 0.0f);
    copy(in_.data(), bytes + chunk_bytes * rank(), chunk_bytes, gpuMemcpyDeviceToHost, stream);
    out_.resize(floats * size());
    host_.all_gather(in_, out_);
    packed_.resize(chunk_bytes * size());
    for (int r = 0; r < size(); ++r)
      std::memcpy(packed_.data() + chunk_bytes * r, out_.data() + floats * r, chunk_bytes);
    to_device(x, packed_.data(), packed_.size(), stream);
  }
  void send_recv(const float* out, int dest, float* in, int source, std::size_t n,
                 void* stream) override {
    if (out) staged(out_, out, n, stream);
    in_.resize(in ? n : 0);
    if (out && in)
      host_.send_recv(out_, dest, in_, source);
    else if (out)
      host_.send(out_, dest);
    else if (in)
      host_.recv(in_, source);
    if (in) to_device(in, in_.data(), n * sizeof(float), stream);
  }

 private:
  static gpuStream_t as_stream(void* s) { return static_cast<gpuStream_t>(s); }
  static void copy(void* dst, const void* src, std::size_t bytes, gpuMemcpyKind kind,
                   void* stream) {
    gpu_check(gpuMemcpyAsync(dst, src, bytes, kind, as_stream(stream)), "host-staged copy");
    gpu_check(gpuStreamSynchronize(as_stream(stream)), "host-staged copy");
  }
  static void to_device(void* dst, const void* src, std::size_t bytes, void* stream) {
    copy(dst, src, bytes, gpuMemcpyHostToDevice, stream);
  }
  std::vector<float>& staged(std::vector<float>& h, const float* x, std::size_t n, void* stream) {
    h.resize(n);
    copy(h.data(), x, n * sizeof(float), gpuMemcpyDeviceToHost, stream);
    return h;
  }

  HostCollectives host_;
  std::vector<float> in_, out_;
  std::vector<std::uint8_t> packed_;
  std::vector<std::uint16_t> bits_;
};

}  // namespace detail::host_staged

TPRIMAT_GPU_INLINE std::shared_ptr<DeviceCollectives> host_staged_collectives(
    HostCollectives host) {
  return std::make_shared<detail::host_staged::HostStaged>(std::move(host));
}

}  // namespace tprimat::parallel
