// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// A model whose vocabulary of 100 is not split by TP=8 (heads, KV heads and FFN are): the
// vocabulary rule fires (vocab-parallel embedding and head).
// EXPECT: tprimat: TP must divide the vocabulary
// EXPECT: TpDividesVocab<OddVocab, 8, 100, tprimat::parallel::Values<1, 2, 4> ?>
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/layout.hpp"

struct OddVocab {
  static constexpr std::string_view name = "OddVocab";
  static constexpr std::string_view cli_name = "odd";
  static constexpr int hidden = 64, layers = 2, heads = 8, kv_heads = 8, head_dim = 8;
  static constexpr int ffn = 128, vocab = 100;
  static constexpr double rope_theta = 10000.0, norm_eps = 1e-5;
  static constexpr tprimat::model::RopeScaling rope_scaling{};
  static constexpr bool qkv_bias = false, tied_embeddings = false;
};
static_assert(tprimat::model::ModelSpec<OddVocab>);

namespace tp = tprimat::parallel;
static_assert(tp::LayoutFits<OddVocab, tp::Layout<8, 1>>::value);
