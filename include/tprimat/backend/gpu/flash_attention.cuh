// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::FlashAttention: the run-time head_dim dispatched to the kernels of flash_attention.cuh.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

#include "tprimat/backend/gpu/attention.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/kernels/flash_attention.cuh"

namespace tprimat::backend {
namespace detail::flash {

inline kernels::FlashParams params_for(const AttentionShape& s) {
  kernels::FlashParams p;
  p.batch = s.batch;
  p.seq = s.seq;
  p.heads = s.heads;
  p.kv_heads = s.kv_heads;
  p.kv_seq = s.keys();
  // The band of keys each query sees (AttentionShape::Mask).
  p.key_offset = s.mask == AttentionShape::Mask::none ? s.keys() - 1 : s.keys() - s.seq;
  p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  return p;
}

inline void require_supported(const AttentionShape& s, const char* what) {
  if (FlashAttention::supports(s)) return;
  throw core::RunError(std::string(what) + ": unsupported shape (batch " + std::to_string(s.batch) +
                       ", seq " + std::to_string(s.seq) + ", keys " + std::to_string(s.keys()) +
                       ", heads " + std::to_string(s.heads) + ", kv_heads " +
                       std::to_string(s.kv_heads) + ", head_dim " + std::to_string(s.head_dim) +
                       "); supported: head_dim 16, 32, 64 or 128, heads a multiple of kv_heads, "
                       "and a causal mask over as many keys as queries or at the keys' end over "
                       "at least as many");
}

/// Calls f.template operator()<D>() for the shape's head_dim (one of the four instantiated).
template <class F>
void with_head_dim(int head_dim, F&& f) {
  switch (head_dim) {
    case 16:
      f.template operator()<16>();
      break;
    case 32:
      f.template operator()<32>();
      break;
    case 64:
      f.template operator()<64>();
      break;
    case 128:
      f.template operator()<128>();
      break;
    default:
      break;  // excluded by supports()
  }
}

constexpr std::size_t round_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace detail::flash

TPRIMAT_GPU_INLINE bool FlashAttention::supports(const AttentionShape& s) {
  const bool head_dim_ok =
      s.head_dim == 16 || s.head_dim == 32 || s.head_dim == 64 || s.head_dim == 128;
  // Every mask but a causal one with the diagonal at the start of more keys than queries.
  using M = AttentionShape::Mask;
  const bool mask_ok = s.mask == M::causal ? s.self_causal()
                       : s.mask == M::causal_end ? s.keys() >= s.seq
                                                  : true;
  // heads and batch are grid dimensions y and z (at most 65535).
  return head_dim_ok && mask_ok && s.batch >= 1 && s.batch <= 65535 && s.seq >= 1 &&
         s.keys() >= 1 && s.kv_heads >= 1 && s.heads >= s.kv_heads && s.heads <= 65535 &&
         s.heads % s.kv_heads == 0;
}

TPRIMAT_GPU_INLINE void FlashAttention::forward(const Gpu::bf16* q, const Gpu::bf16* k,
                                                const Gpu::bf16* v, Gpu::bf16* o, float* lse,
                                                const AttentionShape& s, Gpu::Stream stream) {
  detail::flash::require_supported(s, "FlashAttention::forward");
  kernels::FlashParams p = detail::flash::params_for(s);
  p.q = q;
  p.k = k;
  p.v = v;
  p.out = o;
  p.lse_out = lse;
  detail::flash::with_head_dim(s.head_dim,
                               [&]<int D>() { kernels::flash_attention_forward<D>(p, stream); });
  gpu_check(gpuGetLastError(), "FlashAttention::forward launch");
}

TPRIMAT_GPU_INLINE std::size_t FlashAttention::backward_workspace_bytes(const AttentionShape& s) {
  // D_i = dO_i . O_i, fp32 [batch, heads, seq].
  return detail::flash::round_up(static_cast<std::size_t>(s.batch) * s.heads * s.seq *
                                 sizeof(float));
}

TPRIMAT_GPU_INLINE void FlashAttention::backward(const Gpu::bf16* q, const Gpu::bf16* k,
                                                 const Gpu::bf16* v, const Gpu::bf16* o,
                                                 const float* lse, const Gpu::bf16* dout,
                                                 Gpu::bf16* dq, Gpu::bf16* dk, Gpu::bf16* dv,
                                                 const AttentionShape& s, void* workspace,
                                                 Gpu::Stream stream) {
  detail::flash::require_supported(s, "FlashAttention::backward");
  kernels::FlashParams p = detail::flash::params_for(s);
  p.q = q;
  p.k = k;
  p.v = v;
  p.o = o;
  p.lse = lse;
  p.dout = dout;
  p.dq = dq;
  p.dk = dk;
  p.dv = dv;
  p.row_dot = static_cast<float*>(workspace);
  detail::flash::with_head_dim(s.head_dim,
                               [&]<int D>() { kernels::flash_attention_backward<D>(p, stream); });
  gpu_check(gpuGetLastError(), "FlashAttention::backward launch");
}

}  // namespace tprimat::backend
