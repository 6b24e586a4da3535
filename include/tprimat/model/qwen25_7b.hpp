// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Qwen 2.5 7B architecture constants (Qwen/Qwen2.5-7B config.json).
#pragma once

#include "tprimat/model/spec.hpp"

namespace tprimat::model {

struct Qwen25_7B {
  static constexpr std::string_view name = "Qwen 2.5 7B";
  static constexpr std::string_view cli_name = "qwen";
  static constexpr int hidden = 3584;    ///< hidden_size
  static constexpr int layers = 28;      ///< num_hidden_layers
  static constexpr int heads = 28;       ///< num_attention_heads
  static constexpr int kv_heads = 4;     ///< num_key_value_heads (GQA, 7 queries per KV head)
  static constexpr int head_dim = hidden / heads;  // 128
  static constexpr int ffn = 18944;      ///< intermediate_size
  static constexpr int vocab = 152064;   ///< vocab_size
  static constexpr double rope_theta = 1000000.0;
  static constexpr RopeScaling rope_scaling{};  // none
  static constexpr double norm_eps = 1e-6;      ///< rms_norm_eps
  static constexpr bool qkv_bias = true;        ///< Qwen2 adds a bias to q, k and v projections
  static constexpr bool tied_embeddings = false;  ///< tie_word_embeddings: false for 7B
};
static_assert(ModelSpec<Qwen25_7B>);

}  // namespace tprimat::model
