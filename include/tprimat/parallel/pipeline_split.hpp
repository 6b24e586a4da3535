// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The layers of each pipeline stage: the even split, Megatron's first/last-stage counts, or the
// split that balances the stages' work (the last stage also runs the final norm, head and loss).
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/model/counts.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/validate.hpp"

namespace tprimat::parallel {

/// What a run asks of the pipeline split; nothing asked is the even split.
struct PipelineSplitRequest {
  int first = 0;          ///< layers of the first stage (Megatron's flag); 0: not given
  int last = 0;           ///< layers of the last stage; 0: not given
  bool balanced = false;  ///< choose the counts that balance the stages (balanced_stage_layers)
  bool given() const { return first > 0 || last > 0 || balanced; }
};

/// layers / pp each (PP must divide the layers: layout_error says so first).
inline std::vector<int> even_stage_layers(int layers, int pp) {
  return std::vector<int>(static_cast<std::size_t>(std::max(pp, 1)), layers / std::max(pp, 1));
}

/// Megatron's uneven split: the first stage runs `first` layers (0: not given), the last `last`,
/// and the layers left split evenly over the stages between them (the given ends excluded). A
/// remainder that does not divide evenly, or leaves a stage without layers, is an InputError
/// naming the numbers and the fix.
inline std::vector<int> stage_layers_from_ends(const model::Dims& d, int pp, int first, int last) {
  // The split as asked, in the layout's terms (the program names its own flags, SettingError).
  const std::string given_first = "a first stage of " + std::to_string(first) + " layers",
                    given_last = "a last stage of " + std::to_string(last) + " layers";
  const std::string given = first > 0 && last > 0 ? given_first + " and " + given_last
                            : first > 0           ? given_first
                                                  : given_last;
  const int ends = (first > 0) + (last > 0);
  const int others = pp - ends;  // stages that split the rest evenly
  const int rest = d.layers - std::max(first, 0) - std::max(last, 0);  // their layers
  const std::string of = " of " + std::string(d.name) + "'s " + std::to_string(d.layers) +
                         " layers over PP=" + std::to_string(pp);
  if (pp < 2)
    throw core::SettingError("pipeline_model_parallel_size",
                             given + ": a pipeline split needs PP of 2 or more, this layout has "
                                     "PP=" + std::to_string(pp),
                             "2 or more, or drop the split");
  if (others == 0 && rest != 0)
    throw core::InputError(
        given + " = " + std::to_string(d.layers - rest) + " layers" + of +
            ", which has no other stage to take the " + std::to_string(rest) + " left",
        "make the two sum to " + std::to_string(d.layers) + ", or pass only one of them");
  if (others > 0 && rest < others)
    throw core::InputError(
        given + " leave " + std::to_string(rest) + " layer(s)" + of + " for " +
            std::to_string(others) + " other stage(s), each needing one",
        "pass smaller counts: together at most " + std::to_string(d.layers - others));
  if (others > 0 && rest % others != 0) {
    // The nearest first-stage count (or last, when only it is given) that divides the rest.
    const int fix = (first > 0 ? first : last) + rest % others;
    throw core::SettingError(
        first > 0 ? "decoder_first_pipeline_num_layers" : "decoder_last_pipeline_num_layers",
        given + " leave " + std::to_string(rest) + " layers" + of +
            ", which do not split evenly over the " + std::to_string(others) +
            " other stage(s) (Megatron's rule: the stages between the given ends run equal "
            "counts)",
        std::to_string(fix) + ", which leaves a multiple of " + std::to_string(others));
  }
  std::vector<int> out(static_cast<std::size_t>(pp), others > 0 ? rest / others : 0);
  if (first > 0) out.front() = first;
  if (last > 0) out.back() = last;
  if (auto err = stage_layers_error(d, pp, out)) throw core::InputError(*err);
  return out;
}

/// Model FLOPs of one decoder layer per token, forward and backward: its projections (6 x its
/// parameters) and causal attention (6 x heads x head_dim x seq: half of the 12 the PaLM count
/// credits, since a causal kernel skips the masked half). The unit of the balanced split.
constexpr double layer_step_flops_per_token(const model::Dims& d, int seq) {
  return 6.0 * static_cast<double>(model::layer_params(d)) +
         6.0 * d.heads * double(d.head_dim) * seq;
}

/// FLOPs per token the last stage runs beyond its layers: the vocabulary head's GEMMs, forward
/// (2 V h), input gradient (2 V h) and weight gradient (2 V h). The final norm and the loss's
/// softmax are element-wise (their FLOPs are ~V per token, not V h) and left out, as is the first
/// stage's embedding: a row gather forward, a row scatter-add backward, no GEMM.
constexpr double head_step_flops_per_token(const model::Dims& d) {
  return 6.0 * double(d.vocab) * d.hidden;
}

/// The last stage's extra work in decoder layers: Llama 3.1 8B at seq 8192, 2.09 (measured on
/// H200: about 2.3, the rest being the loss's element-wise passes over the logits); Mistral 7B's
/// 32k vocabulary, 0.53. TP splits the head and the layers alike, so it leaves this unchanged.
constexpr double head_cost_in_layers(const model::Dims& d, int seq) {
  return head_step_flops_per_token(d) / layer_step_flops_per_token(d, seq);
}

/// Work of each stage under `stage_layers`, in decoder layers (the last stage's head included).
inline std::vector<double> stage_costs(const model::Dims& d, int seq,
                                       std::span<const int> stage_layers) {
  std::vector<double> out(stage_layers.begin(), stage_layers.end());
  if (!out.empty()) out.back() += head_cost_in_layers(d, seq);
  return out;
}

/// The split that balances the stages: 1F1B runs at the pace of its slowest stage, so it picks,
/// among Megatron's splits (first and last stage counts, the stages between them equal), one whose
/// largest stage cost (stage_costs) is least; of equal ones, the one with the fewest layers on the
/// first stage (it keeps the most micro-batches' activations, PP of them), then the most on the
/// last. The even split is among the candidates, so the balanced one is never worse by this
/// measure. Llama 3.1 8B, seq 8192: 17+15 at PP=2, 8+9+9+6 at PP=4; Qwen 2.5 7B: 15+13, 7+8+8+5.
inline std::vector<int> balanced_stage_layers(const model::Dims& d, int pp, int seq) {
  if (pp <= 1) return {d.layers};
  const double head = head_cost_in_layers(d, seq);
  std::vector<int> best;
  double best_cost = 0;
  for (int first = 1; first <= d.layers; ++first) {
    for (int last = 1; first + last <= d.layers; ++last) {
      const int rest = d.layers - first - last, middle = pp - 2;
      if (middle == 0 ? rest != 0 : rest < middle || rest % middle != 0) continue;
      const int each = middle == 0 ? 0 : rest / middle;
      const double cost = std::max({double(first), middle > 0 ? double(each) : 0.0, last + head});
      // Relative tolerance: costs that differ only by rounding are equal.
      const bool better = best.empty() || cost < best_cost * (1 - 1e-12) ||
                          (cost <= best_cost * (1 + 1e-12) &&
                           (first < best.front() || (first == best.front() && last > best.back())));
      if (!better) continue;
      best.assign(static_cast<std::size_t>(pp), each);
      best.front() = first;
      best.back() = last;
      best_cost = cost;
    }
  }
  if (best.empty())  // fewer layers than stages: the layout check names that
    throw core::SettingError("layers",
                             TPRIMAT_RULE_SPLIT_LAYER ": " + std::string(d.name) + " runs " +
                                 std::to_string(d.layers) + " layers, fewer than PP=" +
                                 std::to_string(pp) + " stages",
                             std::to_string(pp) + " or more, or fewer pipeline stages");
  return best;
}

/// The per-stage layer counts of `request` for `d.layers` layers over `pp` stages at `seq`:
/// the even split when nothing is asked (or PP is 1), else Megatron's given ends or the balanced
/// split. Throws InputError when the request cannot be met, or asks for both.
inline std::vector<int> resolve_stage_layers(const model::Dims& d, int pp, int seq,
                                             const PipelineSplitRequest& request) {
  if (request.balanced && (request.first > 0 || request.last > 0))
    throw core::InputError(
        "a balanced pipeline split chooses every stage's layers, and a given first or last "
        "stage's layers fix them",
        "ask for one of the two");
  if (pp <= 1 || !request.given()) {
    if (auto err = layout_error(d, 1, pp)) throw core::InputError(*err);
    return even_stage_layers(d.layers, pp);
  }
  if (request.balanced) return balanced_stage_layers(d, pp, seq);
  return stage_layers_from_ends(d, pp, request.first, request.last);
}

/// The layers [begin, begin + count) of stage `stage` under `stage_layers` (empty: the even split
/// of `layers` over `pp`).
struct StageRange {
  int begin = 0;
  int count = 0;
};
constexpr StageRange stage_range(int layers, int pp, std::span<const int> stage_layers, int stage) {
  if (stage_layers.empty()) return {stage * (layers / pp), layers / pp};
  StageRange r;
  for (int s = 0; s < stage; ++s) r.begin += stage_layers[static_cast<std::size_t>(s)];
  r.count = stage_layers[static_cast<std::size_t>(stage)];
  return r;
}

/// Whether `stage_layers` is the even split (or empty, which means it).
inline bool is_even_split(std::span<const int> stage_layers) {
  return std::adjacent_find(stage_layers.begin(), stage_layers.end(), std::not_equal_to<>()) ==
         stage_layers.end();
}

}  // namespace tprimat::parallel
