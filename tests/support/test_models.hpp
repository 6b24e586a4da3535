// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Model variants the tests share (tied head, QKV bias, narrowed Llama/Qwen) and random token ids.
#pragma once

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "tprimat/model/llama31_8b.hpp"
#include "tprimat/model/qwen25_7b.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/model/tiny.hpp"

namespace tprimat::testing {

/// Tiny with the LM head tied to the embedding (small Qwen/Llama variants): the head's weight
/// gradient and the embedding's row gradients land in one tensor; no lm_head.weight on disk.
struct TinyTied : model::Tiny {
  static constexpr std::string_view name = "TinyTied";
  static constexpr std::string_view cli_name = "tiny-tied";
  static constexpr bool tied_embeddings = true;
};
static_assert(model::ModelSpec<TinyTied>);

/// Qwen2-shaped Tiny: QKV biases.
struct TinyBias : model::Tiny {
  static constexpr std::string_view name = "TinyBias";
  static constexpr std::string_view cli_name = "tiny-bias";
  static constexpr bool qkv_bias = true;
};
static_assert(model::ModelSpec<TinyBias>);

/// Llama 3.1 8B narrowed: 4 query heads per KV head and head_dim 128 as in the real model, its
/// vocabulary and RoPE (llama3 scaling), at a width a CPU reference runs in seconds.
struct LlamaNarrow : model::Llama31_8B {
  static constexpr std::string_view name = "LlamaNarrow";
  static constexpr std::string_view cli_name = "llama-narrow";
  static constexpr int hidden = 512;
  static constexpr int layers = 2;
  static constexpr int heads = 4;
  static constexpr int kv_heads = 1;
  static constexpr int head_dim = 128;
  static constexpr int ffn = 1792;
};
static_assert(model::ModelSpec<LlamaNarrow>);

/// LlamaNarrow with 4 layers: FP8's current recipe keeps the first and last in bf16, so it needs
/// more than 2 for any FP8 layer; PP 2 gives each stage one of each kind.
struct LlamaNarrow4 : LlamaNarrow {
  static constexpr std::string_view name = "LlamaNarrow4";
  static constexpr std::string_view cli_name = "llama-narrow-4";
  static constexpr int layers = 4;
};
static_assert(model::ModelSpec<LlamaNarrow4>);

/// LlamaNarrow with two KV heads (2 query heads each), so tensor parallelism 2 splits them.
struct LlamaNarrowKv2 : LlamaNarrow {
  static constexpr std::string_view name = "LlamaNarrowKv2";
  static constexpr std::string_view cli_name = "llama-narrow-kv2";
  static constexpr int kv_heads = 2;
};
static_assert(model::ModelSpec<LlamaNarrowKv2>);

/// Qwen 2.5 7B narrowed: 7 query heads per KV head, head_dim 128, QKV bias, its vocabulary and
/// RoPE theta.
struct QwenNarrow : model::Qwen25_7B {
  static constexpr std::string_view name = "QwenNarrow";
  static constexpr std::string_view cli_name = "qwen-narrow";
  static constexpr int hidden = 896;
  static constexpr int layers = 2;
  static constexpr int heads = 7;
  static constexpr int kv_heads = 1;
  static constexpr int head_dim = 128;
  static constexpr int ffn = 1536;
};
static_assert(model::ModelSpec<QwenNarrow>);

/// n token ids uniform in [0, vocab), from `seed`.
inline std::vector<std::int32_t> random_tokens(std::size_t n, int vocab, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int32_t> id(0, vocab - 1);
  std::vector<std::int32_t> t(n);
  for (auto& x : t) x = id(rng);
  return t;
}

}  // namespace tprimat::testing
