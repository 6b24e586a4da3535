// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Llama 3.1 8B architecture constants (meta-llama/Llama-3.1-8B config.json).
#pragma once

#include "tprimat/model/spec.hpp"

namespace tprimat::model {

struct Llama31_8B {
  static constexpr std::string_view name = "Llama 3.1 8B";
  static constexpr std::string_view cli_name = "llama";
  static constexpr int hidden = 4096;    ///< hidden_size
  static constexpr int layers = 32;      ///< num_hidden_layers
  static constexpr int heads = 32;       ///< num_attention_heads
  static constexpr int kv_heads = 8;     ///< num_key_value_heads (GQA, 4 queries per KV head)
  static constexpr int head_dim = hidden / heads;  // 128
  static constexpr int ffn = 14336;      ///< intermediate_size
  static constexpr int vocab = 128256;   ///< vocab_size
  static constexpr double rope_theta = 500000.0;
  /// rope_scaling {"rope_type": "llama3", factor 8, low 1, high 4, original 8192}
  static constexpr RopeScaling rope_scaling{8.0, 1.0, 4.0, 8192};
  static constexpr double norm_eps = 1e-5;  ///< rms_norm_eps
  static constexpr bool qkv_bias = false;
  static constexpr bool tied_embeddings = false;
};
static_assert(ModelSpec<Llama31_8B>);

}  // namespace tprimat::model
