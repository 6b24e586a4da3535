// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The Attention policies of the GPU backend: the project's flash kernels (both platforms) and
// cuDNN's fused SDPA (CUDA only).
#pragma once

#include <concepts>
#include <cstddef>
#include <string_view>

#include "tprimat/backend/gpu.hpp"

namespace tprimat::backend {

/// Shape of one grouped-query attention call. Layouts are the CPU reference's:
/// q, o [batch * seq, heads * head_dim] and k, v [batch * kv_seq, kv_heads * head_dim],
/// token-major (row b * seq + s); lse fp32 [batch, heads, seq] = log(sum_j exp(scale * q.k_j)),
/// natural log, scale = 1 / sqrt(head_dim). Query head h reads KV head h / (heads / kv_heads).
/// The model's attention is causal over one sequence (kv_seq = seq). Context parallelism's blocks
/// (train/device/context_parallel_attention.hpp) take a query chunk against keys of their own
/// length: every key visible (Mask::none), or causal with the diagonal at the keys' end
/// (Mask::causal_end: query i sees keys j <= i + kv_seq - seq, the queries being the keys' last
/// seq positions).
struct AttentionShape {
  int batch = 1;
  int seq = 0;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  int kv_seq = 0;  ///< keys and values a sequence; 0: seq
  enum class Mask { causal, none, causal_end } mask = Mask::causal;

  int keys() const { return kv_seq > 0 ? kv_seq : seq; }
  /// The model's own causal self-attention (what every policy supports).
  bool self_causal() const { return mask == Mask::causal && keys() == seq; }
};

/// An Attention policy: forward and backward of causal GQA softmax attention, bf16 in and out,
/// fp32 softmax statistics. Backward writes (not accumulates) dq, dk, dv.
template <class A>
concept AttentionPolicy = requires(const Gpu::bf16* c, Gpu::bf16* x, const float* cl, float* l,
                                   AttentionShape s, void* ws, Gpu::Stream st) {
  { A::name } -> std::convertible_to<std::string_view>;
  { A::supports(s) } -> std::convertible_to<bool>;
  A::forward(c, c, c, x, l, s, st);
  { A::backward_workspace_bytes(s) } -> std::convertible_to<std::size_t>;
  A::backward(c, c, c, c, cl, c, x, x, x, s, ws, st);
};

/// The project's own flash-attention kernels (online softmax, no seq x keys matrix in memory),
/// written once for nvcc and hipcc in kernels/tprimat/kernels/flash_attention.cuh.
struct FlashAttention {
  static constexpr std::string_view name = "flash";
  /// head_dim in {16, 32, 64, 128}; any seq and keys; heads a multiple of kv_heads; every mask
  /// (Mask::causal over as many keys as queries, causal_end over at least as many).
  static bool supports(const AttentionShape& s);
  static void forward(const Gpu::bf16* q, const Gpu::bf16* k, const Gpu::bf16* v,
                      Gpu::bf16* o, float* lse, const AttentionShape& s, Gpu::Stream stream);
  static std::size_t backward_workspace_bytes(const AttentionShape& s);
  static void backward(const Gpu::bf16* q, const Gpu::bf16* k, const Gpu::bf16* v,
                       const Gpu::bf16* o, const float* lse, const Gpu::bf16* dout,
                       Gpu::bf16* dq, Gpu::bf16* dk, Gpu::bf16* dv, const AttentionShape& s,
                       void* workspace, Gpu::Stream stream);
};

#if !TPRIMAT_GPU_HIP
/// cuDNN 9's fused flash attention (SDPA), built through the backend graph API of cudnn.h (no
/// frontend library); one execution plan per shape, built on first use and cached. Call
/// prepare() for a shape outside graph capture before the first forward/backward.
struct CudnnAttention {
  static constexpr std::string_view name = "cudnn";
  /// True when cuDNN is loaded, is 9.x or later and finds an engine for the shape.
  static bool supports(const AttentionShape& s);
  static void prepare(const AttentionShape& s, Gpu::Stream stream);
  static void forward(const Gpu::bf16* q, const Gpu::bf16* k, const Gpu::bf16* v,
                      Gpu::bf16* o, float* lse, const AttentionShape& s, Gpu::Stream stream);
  static std::size_t backward_workspace_bytes(const AttentionShape& s);
  static void backward(const Gpu::bf16* q, const Gpu::bf16* k, const Gpu::bf16* v,
                       const Gpu::bf16* o, const float* lse, const Gpu::bf16* dout,
                       Gpu::bf16* dq, Gpu::bf16* dk, Gpu::bf16* dv, const AttentionShape& s,
                       void* workspace, Gpu::Stream stream);
};

static_assert(AttentionPolicy<CudnnAttention>);
#endif

static_assert(AttentionPolicy<FlashAttention>);

}  // namespace tprimat::backend
