// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Mistral 7B v0.3 architecture constants (mistralai/Mistral-7B-v0.3 config.json).
#pragma once

#include "tprimat/model/spec.hpp"

namespace tprimat::model {

struct Mistral7B {
  static constexpr std::string_view name = "Mistral 7B v0.3";
  static constexpr std::string_view cli_name = "mistral";
  static constexpr int hidden = 4096;    ///< hidden_size
  static constexpr int layers = 32;      ///< num_hidden_layers
  static constexpr int heads = 32;       ///< num_attention_heads
  static constexpr int kv_heads = 8;     ///< num_key_value_heads
  static constexpr int head_dim = hidden / heads;  // 128
  static constexpr int ffn = 14336;      ///< intermediate_size
  static constexpr int vocab = 32768;    ///< vocab_size (v0.3 extended vocabulary)
  static constexpr double rope_theta = 1000000.0;
  static constexpr RopeScaling rope_scaling{};  // none; v0.3 has no sliding window either
  static constexpr double norm_eps = 1e-5;      ///< rms_norm_eps
  static constexpr bool qkv_bias = false;
  static constexpr bool tied_embeddings = false;
};
static_assert(ModelSpec<Mistral7B>);

}  // namespace tprimat::model
