// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// DeviceAttention: the engine's attention kernels, cuDNN's fused SDPA (CUDA) or tprimat's flash
// kernels, chosen once per run.
#pragma once

#include <cstddef>
#include <string>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/attention.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/train/config.hpp"

namespace tprimat::train::device {

class DeviceAttention {
 public:
  using bf16 = backend::Gpu::bf16;

  /// The policy `choice` names for `shape` (automatic: cuDNN where it supports the shape, else
  /// flash). Throws core::InputError when the named one cannot run it, or none can.
  DeviceAttention(AttentionChoice choice, const backend::AttentionShape& shape) : shape_(shape) {
#if TPRIMAT_GPU_HIP
    if (choice == AttentionChoice::cudnn)
      throw core::SettingError("attention", "cuDNN's fused attention exists on NVIDIA GPUs only",
                               "flash (or auto) with the HIP backend");
#else
    const bool cudnn_fits =
        choice != AttentionChoice::flash && backend::CudnnAttention::supports(shape);
    if (choice == AttentionChoice::cudnn && !cudnn_fits)
      throw core::SettingError("attention",
                               "cuDNN's fused attention does not support head_dim " +
                                   std::to_string(shape.head_dim) + " at seq " +
                                   std::to_string(shape.seq) + " on this device/cuDNN",
                               "flash (or auto)");
    use_cudnn_ = cudnn_fits;
#endif
    if (!use_cudnn_ && !backend::FlashAttention::supports(shape))
      throw core::InputError("no attention kernel supports head_dim " +
                             std::to_string(shape.head_dim) + " (flash: 16, 32, 64, 128)");
  }

  std::string name() const { return use_cudnn_ ? "cudnn" : "flash"; }

  /// Plans and workspaces that must exist before a graph is captured.
  void prepare(gpuStream_t stream) const {
#if !TPRIMAT_GPU_HIP
    if (use_cudnn_) backend::CudnnAttention::prepare(shape_, stream);
#endif
    (void)stream;
  }

  std::size_t backward_workspace_bytes() const {
#if !TPRIMAT_GPU_HIP
    if (use_cudnn_) return backend::CudnnAttention::backward_workspace_bytes(shape_);
#endif
    return backend::FlashAttention::backward_workspace_bytes(shape_);
  }

  /// o and lse from q, k, v (layouts: backend::AttentionShape).
  void forward(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse,
               gpuStream_t stream) const {
#if !TPRIMAT_GPU_HIP
    if (use_cudnn_) return backend::CudnnAttention::forward(q, k, v, o, lse, shape_, stream);
#endif
    backend::FlashAttention::forward(q, k, v, o, lse, shape_, stream);
  }

  /// dq, dk, dv (written, not accumulated) from dout.
  void backward(const bf16* q, const bf16* k, const bf16* v, const bf16* o, const float* lse,
                const bf16* dout, bf16* dq, bf16* dk, bf16* dv, void* workspace,
                gpuStream_t stream) const {
#if !TPRIMAT_GPU_HIP
    if (use_cudnn_)
      return backend::CudnnAttention::backward(q, k, v, o, lse, dout, dq, dk, dv, shape_, workspace,
                                               stream);
#endif
    backend::FlashAttention::backward(q, k, v, o, lse, dout, dq, dk, dv, shape_, workspace, stream);
  }

 private:
  backend::AttentionShape shape_;
  bool use_cudnn_ = false;
};

}  // namespace tprimat::train::device
