// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Layout<TP, PP>: compile-time tensor and pipeline sizes; DP follows at run time.
#pragma once

#include <concepts>

#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/validate.hpp"

namespace tprimat::parallel {

/// Tensor- and pipeline-parallel sizes. DP and gradient accumulation come from the world size
/// and the global batch at run time (see parallel/strategy.hpp).
template <int Tp, int Pp>
struct Layout {
  static_assert(Tp >= 1, "tprimat: " TPRIMAT_RULE_TP_POSITIVE);
  static_assert(Pp >= 1, "tprimat: " TPRIMAT_RULE_PP_POSITIVE);
  static constexpr int tp = Tp;
  static constexpr int pp = Pp;
  static constexpr int model_parallel = Tp * Pp;  ///< ranks one model replica spans
};

template <class L>
concept LayoutSpec = requires {
  { L::tp } -> std::convertible_to<int>;
  { L::pp } -> std::convertible_to<int>;
};
static_assert(LayoutSpec<Layout<1, 1>>);

/// Where a model and a layout meet: one assertion per rule, most basic first. Instantiate it
/// (TrainingStep does) to get the rules checked; `value` is true when all hold.
template <class M, LayoutSpec L>
struct LayoutFits {
  static_assert(TpDividesHeads<M, L::tp>::value, "tprimat: " TPRIMAT_RULE_TP_HEADS);
  static_assert(TpDividesKvHeads<M, L::tp>::value, "tprimat: " TPRIMAT_RULE_TP_KV_HEADS);
  static_assert(TpDividesFfn<M, L::tp>::value, "tprimat: " TPRIMAT_RULE_TP_FFN);
  static_assert(TpDividesVocab<M, L::tp>::value, "tprimat: " TPRIMAT_RULE_TP_VOCAB);
  static_assert(PpDividesLayers<M, L::pp>::value, "tprimat: " TPRIMAT_RULE_PP_LAYERS);
  static_assert(PpKeepsTiedEmbeddingsWhole<M, L::pp>::value, "tprimat: " TPRIMAT_RULE_PP_TIED);
  static constexpr bool value = true;
};

}  // namespace tprimat::parallel
