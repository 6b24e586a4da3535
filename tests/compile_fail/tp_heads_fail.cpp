// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Llama 3.1 8B has 32 attention heads: TP=3 must not compile, and the diagnostic shows the numbers.
// EXPECT: tprimat: TP must divide the attention heads
// EXPECT: TpDividesHeads<tprimat::model::Llama31_8B, 3, 32, tprimat::parallel::Values<1, 2, 4, 8> ?>
#include "tprimat/model/llama31_8b.hpp"
#include "tprimat/parallel/layout.hpp"

namespace tp = tprimat::parallel;
static_assert(tp::LayoutFits<tprimat::model::Llama31_8B, tp::Layout<3, 1>>::value);
