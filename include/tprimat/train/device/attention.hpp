// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// DeviceAttention: the engine's attention kernels, cuDNN's fused SDPA (CUDA) or tprimat's flash
// kernels, chosen once per run.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/attention.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/train/config.hpp"

namespace tprimat::train::device {

/// Whether cuDNN's fused attention runs every one of `shapes` for what the run asked for
/// (automatic: where it supports them all, else the flash kernels). Refuses cuDNN where it cannot
/// run them (`blocks` says what they are, for the message) and on HIP.
inline bool runs_cudnn(AttentionChoice choice, std::span<const backend::AttentionShape> shapes,
                       const std::string& blocks) {
#if TPRIMAT_GPU_HIP
  (void)shapes;
  (void)blocks;
  if (choice == AttentionChoice::cudnn)
    throw core::SettingError("attention", "cuDNN's fused attention exists on NVIDIA GPUs only",
                             "flash (or auto) with the HIP backend");
  return false;
#else
  if (choice == AttentionChoice::flash) return false;
  const bool fits = std::all_of(shapes.begin(), shapes.end(),
                                [](const auto& s) { return backend::CudnnAttention::supports(s); });
  if (choice == AttentionChoice::cudnn && !fits)
    throw core::SettingError(
        "attention", "cuDNN's fused attention does not support " + blocks + " on this device/cuDNN",
        "flash (or auto)");
  return fits;
#endif
}

/// Refuses `shapes` where the flash kernels cannot run one of them (the kernels left when cuDNN
/// does not run).
inline void check_flash_runs(std::span<const backend::AttentionShape> shapes) {
  for (const backend::AttentionShape& s : shapes)
    if (!backend::FlashAttention::supports(s))
      throw core::InputError("no attention kernel supports head_dim " + std::to_string(s.head_dim) +
                             " (flash: 16, 32, 64, 128)");
}

class DeviceAttention {
 public:
  using bf16 = backend::Gpu::bf16;

  /// The policy `choice` names for `shape` (automatic: cuDNN where it supports the shape, else
  /// flash). Throws core::InputError when the named one cannot run it, or none can.
  DeviceAttention(AttentionChoice choice, const backend::AttentionShape& shape)
      : shape_(shape),
        use_cudnn_(runs_cudnn(choice, {&shape_, 1},
                              "head_dim " + std::to_string(shape.head_dim) + " at seq " +
                                  std::to_string(shape.seq))) {
    if (!use_cudnn_) check_flash_runs({&shape_, 1});
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
