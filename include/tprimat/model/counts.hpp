// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Parameter and FLOP counts of a model, constexpr from its Dims.
#pragma once

#include <cstdint>

#include "tprimat/model/projection.hpp"
#include "tprimat/model/spec.hpp"

namespace tprimat::model {

/// Parameters of one transformer layer: two RMSNorm gains, QKV (+bias), O, gate/up/down.
constexpr std::int64_t layer_params(const Dims& d) {
  const std::int64_t biases = d.qkv_bias ? std::int64_t{d.q_dim()} + 2 * d.kv_dim() : 0;
  return projection_params(d) + biases + 2 * std::int64_t{d.hidden};
}

constexpr std::int64_t embedding_params(const Dims& d) {
  return std::int64_t{d.vocab} * d.hidden;
}

/// The LM head; zero when it shares the embedding matrix.
constexpr std::int64_t head_params(const Dims& d) {
  return d.tied_embeddings ? 0 : std::int64_t{d.vocab} * d.hidden;
}

/// All parameters, as published model cards count them.
constexpr std::int64_t total_params(const Dims& d) {
  return embedding_params(d) + d.layers * layer_params(d) + d.hidden + head_params(d);
}

/// PaLM's P: every parameter that enters a matrix product, i.e. all but the input
/// embedding lookup (a tied embedding is also the head, so it stays in).
constexpr std::int64_t matmul_params(const Dims& d) {
  return total_params(d) - (d.tied_embeddings ? 0 : embedding_params(d));
}

/// The attention products (scores QK^T and their product with V) per trained token, forward +
/// backward, every query against every key: PaLM's 12·L·H·Dh·S.
constexpr double full_attention_flops_per_token(const Dims& d, int seq) {
  return 12.0 * d.layers * d.heads * d.head_dim * static_cast<double>(seq);
}

/// Model FLOPs per trained token, PaLM convention (appendix B): 6P + 12·L·H·Dh·S.
/// Forward + backward, no recomputation, attention counted as if not causal (NVIDIA's dgxc
/// tables count so).
constexpr double flops_per_token(const Dims& d, int seq) {
  return 6.0 * static_cast<double>(matmul_params(d)) + full_attention_flops_per_token(d, seq);
}

/// Model FLOPs per trained token with causal attention: a causal mask leaves half the score
/// matrix to compute, so the attention term is halved, 6P + 6·L·H·Dh·S (Megatron-Bridge's and
/// NeMo's convention). The work the kernels really do: what an MFU over 100% is judged by.
constexpr double flops_per_token_causal(const Dims& d, int seq) {
  return flops_per_token(d, seq) - full_attention_flops_per_token(d, seq) / 2;
}

/// The seeds' "6N" figure (6 x all parameters), reported beside the PaLM one, never instead.
constexpr double flops_per_token_6n(const Dims& d) {
  return 6.0 * static_cast<double>(total_params(d));
}

}  // namespace tprimat::model
