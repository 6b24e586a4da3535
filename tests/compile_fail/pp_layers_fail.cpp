// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Qwen 2.5 7B has 28 layers: PP=3 must not compile, and the diagnostic lists the valid PP values.
// EXPECT: tprimat: PP must divide the layers
// EXPECT: PpDividesLayers<tprimat::model::Qwen25_7B, 3, 28, tprimat::parallel::Values<1, 2, 4, 7, 14, 28> ?>
#include "tprimat/model/qwen25_7b.hpp"
#include "tprimat/parallel/layout.hpp"

namespace tp = tprimat::parallel;
static_assert(tp::LayoutFits<tprimat::model::Qwen25_7B, tp::Layout<1, 3>>::value);
