// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Tied embeddings are one matrix the first stage (embedding) and the last (head) would share: a
// model with them under PP=2 must not compile, though PP=2 divides its layers.
// EXPECT: tprimat: PP must be 1 for a model with tied embeddings
// EXPECT: PpKeepsTiedEmbeddingsWhole<Tied, 2, true>
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/layout.hpp"

struct Tied {
  static constexpr std::string_view name = "Tied";
  static constexpr std::string_view cli_name = "tied";
  static constexpr int hidden = 64, layers = 2, heads = 8, kv_heads = 8, head_dim = 8;
  static constexpr int ffn = 128, vocab = 256;
  static constexpr double rope_theta = 10000.0, norm_eps = 1e-5;
  static constexpr tprimat::model::RopeScaling rope_scaling{};
  static constexpr bool qkv_bias = false, tied_embeddings = true;
};
static_assert(tprimat::model::ModelSpec<Tied>);

namespace tp = tprimat::parallel;
static_assert(tp::LayoutFits<Tied, tp::Layout<1, 2>>::value);
