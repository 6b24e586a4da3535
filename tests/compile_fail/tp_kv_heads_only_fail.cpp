// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Qwen 2.5 7B with TP=7 splits the 28 heads but not the 4 KV heads: only the KV rule fires.
// EXPECT: tprimat: TP must divide the KV heads
// EXPECT: TpDividesKvHeads<tprimat::model::Qwen25_7B, 7, 4, tprimat::parallel::Values<1, 2, 4> ?>
#include "tprimat/model/qwen25_7b.hpp"
#include "tprimat/parallel/layout.hpp"

namespace tp = tprimat::parallel;
// The heads rule holds, so only the KV-head assertion fires.
static_assert(tp::TpDividesHeads<tprimat::model::Qwen25_7B, 7>::value);
static_assert(tp::LayoutFits<tprimat::model::Qwen25_7B, tp::Layout<7, 1>>::value);
