// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// A model whose FFN width 100 is not split by TP=8 (heads and KV heads are): the FFN rule fires.
// EXPECT: tprimat: TP must divide the FFN width
// EXPECT: TpDividesFfn<OddFfn, 8, 100, tprimat::parallel::Values<1, 2, 4> ?>
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/layout.hpp"

struct OddFfn {
  static constexpr std::string_view name = "OddFfn";
  static constexpr std::string_view cli_name = "odd";
  static constexpr int hidden = 64, layers = 2, heads = 8, kv_heads = 8, head_dim = 8;
  static constexpr int ffn = 100, vocab = 16;
  static constexpr double rope_theta = 10000.0, norm_eps = 1e-5;
  static constexpr tprimat::model::RopeScaling rope_scaling{};
  static constexpr bool qkv_bias = false, tied_embeddings = false;
};
static_assert(tprimat::model::ModelSpec<OddFfn>);

namespace tp = tprimat::parallel;
static_assert(tp::LayoutFits<OddFfn, tp::Layout<8, 1>>::value);
