// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The attention backward's workspace on the device, as each kernel asks for it: the memory plan
// counts it before any GPU exists; the engine takes what the kernel states at run time, and a GPU
// test checks that the two agree. Host code.
#pragma once

#include <algorithm>
#include <cstdint>

#include "tprimat/parallel/context_parallel.hpp"
#include "tprimat/train/rank_plan.hpp"

namespace tprimat::train {

/// The kernels the device engine's attention backward runs: cuDNN's fused SDPA (CUDA, the
/// default there) or tprimat's flash kernels (HIP, or asked).
enum class AttentionKernel : std::uint8_t { cudnn, flash };

/// One attention call: `queries` rows a sequence over `keys` keys, this TP rank's heads.
struct AttentionCall {
  std::int64_t batch = 1, queries = 0, keys = 0, heads = 0, head_dim = 0;
};

namespace detail {
constexpr std::int64_t round_up_256(std::int64_t bytes) { return (bytes + 255) / 256 * 256; }
}  // namespace detail

/// cuDNN's (backend::CudnnAttention::backward_workspace_bytes): the backward graph's own
/// workspace, then the fp32 softmax sums and dQ accumulator tprimat lays after it. At head_dim 128
/// (Llama's, Qwen's and Mistral's) cuDNN 9 states the graph's as one fp32 [batch, heads, keys,
/// head_dim] tensor and 256 bytes (measured on H200, 2026-11-29, at every sequence length and
/// context-parallel block the engine runs; tests/gpu/attention_test.cpp asks again on every GPU
/// run, so a cuDNN that asks otherwise fails there rather than in a plan). At smaller head dims
/// its engine may need no tensor of its own (64: 256 bytes), and this is an upper bound.
constexpr std::int64_t cudnn_backward_workspace(const AttentionCall& c) {
  const std::int64_t rows = c.batch * c.heads * c.queries;
  return detail::round_up_256(c.batch * c.heads * c.keys * c.head_dim * 4 + 256) +
         detail::round_up_256(rows * 4) + rows * c.head_dim * 4;
}

/// The flash kernels' (backend::FlashAttention): D_i = dO_i . O_i, fp32 [batch, heads, queries].
constexpr std::int64_t flash_backward_workspace(const AttentionCall& c) {
  return detail::round_up_256(c.batch * c.heads * c.queries * 4);
}

/// The largest backward workspace among the attention calls rank `p` makes with `kernel`: one
/// causal call over its micro-batch's sequences; under context parallelism one sequence's blocks:
/// in cuDNN a query chunk's diagonal block and each local chunk's unmasked prefix of the chunks
/// before it (train/device/context_parallel_attention.hpp; its TPRIMAT_CP_FUSED_BLOCKS variant,
/// whose calls reach one chunk further, asks for more); the flash kernels run each chunk in one
/// call over every key up to its own, and their workspace grows with the queries only, so the
/// blocks' count is theirs too.
inline std::int64_t attention_workspace_bytes(const RankPlan& p, AttentionKernel kernel) {
  const auto bytes = [kernel](const AttentionCall& c) {
    return kernel == AttentionKernel::cudnn ? cudnn_backward_workspace(c)
                                            : flash_backward_workspace(c);
  };
  const std::int64_t heads = p.d.heads, head_dim = p.d.head_dim;
  if (p.cp <= 1)
    return bytes({p.shape.mbs, p.shape.seq, p.shape.seq, heads, head_dim});
  const parallel::ContextSplit split{p.shape.seq, p.cp, p.cp_rank};
  const std::int64_t chunk = split.chunk();
  std::int64_t most = bytes({1, chunk, chunk, heads, head_dim});
  for (int local = 0; local < 2; ++local)
    if (const int g = split.global_chunk(local); g > 0)
      most = std::max(most, bytes({1, chunk, g * chunk, heads, head_dim}));
  return most;
}

}  // namespace tprimat::train
