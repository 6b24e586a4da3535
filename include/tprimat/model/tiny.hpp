// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Tiny: a Llama-shaped model small enough for CPU tests and the no-GPU default run.
#pragma once

#include "tprimat/model/spec.hpp"

namespace tprimat::model {

/// Same block as Llama (GQA, SwiGLU, RMSNorm, RoPE) at toy width; byte-level vocabulary.
struct Tiny {
  static constexpr std::string_view name = "Tiny";
  static constexpr std::string_view cli_name = "tiny";
  static constexpr int hidden = 128;
  static constexpr int layers = 4;   ///< PP 1, 2, 4 all split it
  static constexpr int heads = 8;
  static constexpr int kv_heads = 4;  ///< GQA, 2 queries per KV head; TP 1, 2, 4 split it
  static constexpr int head_dim = hidden / heads;  // 16
  static constexpr int ffn = 352;
  static constexpr int vocab = 256;  ///< one token per byte
  static constexpr double rope_theta = 10000.0;
  static constexpr RopeScaling rope_scaling{};
  static constexpr double norm_eps = 1e-5;
  static constexpr bool qkv_bias = false;
  static constexpr bool tied_embeddings = false;
};
static_assert(ModelSpec<Tiny>);

}  // namespace tprimat::model
