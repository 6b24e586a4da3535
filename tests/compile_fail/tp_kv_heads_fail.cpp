// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Qwen 2.5 7B has 4 KV heads: TP=8 must not compile, and the diagnostic lists the valid TP values.
// EXPECT: tprimat: TP must divide the KV heads
// EXPECT: TpDividesKvHeads<tprimat::model::Qwen25_7B, 8, 4, tprimat::parallel::Values<1, 2, 4> ?>
#include "tprimat/model/qwen25_7b.hpp"
#include "tprimat/parallel/layout.hpp"

namespace tp = tprimat::parallel;
static_assert(tp::LayoutFits<tprimat::model::Qwen25_7B, tp::Layout<8, 1>>::value);
