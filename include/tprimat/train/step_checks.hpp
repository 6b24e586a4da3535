// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The input checks every TrainingStep makes (shape against model and layout, token ids).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "tprimat/core/error.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/parallel/validate.hpp"
#include "tprimat/train/config.hpp"

namespace tprimat::train {

/// Checks one rank's token ids for a step: grad_accum x mbs x (seq + 1) of them, each inside
/// the vocabulary. Shared by the host and device steps, so both refuse bad input alike.
inline void check_step_tokens(std::span<const std::int32_t> tokens, const StepShape& shape,
                              int vocab, std::string_view model_name) {
  const std::int64_t per_micro = std::int64_t{shape.mbs} * (shape.seq + 1);
  const std::int64_t expected = per_micro * shape.grad_accum;
  if (static_cast<std::int64_t>(tokens.size()) != expected)
    throw core::InputError("a step on this rank needs grad_accum x mbs x (seq + 1) = " +
                           std::to_string(shape.grad_accum) + " x " + std::to_string(shape.mbs) +
                           " x " + std::to_string(shape.seq + 1) + " = " +
                           std::to_string(expected) + " token ids, got " +
                           std::to_string(tokens.size()));
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= vocab)
      throw core::InputError("token id " + std::to_string(tokens[i]) + " at position " +
                                 std::to_string(i) + " is outside the vocabulary [0, " +
                                 std::to_string(vocab) + ") of " + std::string(model_name),
                             "use token ids below the model's vocab_size");
}

/// Checks recomputation's layer count against the `layers` run.
inline void check_recompute(const Recompute& recompute, int layers) {
  if (recompute.full() && (recompute.num_layers < 1 || recompute.num_layers > layers))
    throw core::SettingError("recompute_num_layers",
                             "recomputation of " + std::to_string(recompute.num_layers) +
                                 " layers a " +
                                 (recompute.method == RecomputeMethod::uniform ? "group" : "stage") +
                                 " cannot run with " + std::to_string(layers) + " layers",
                             "between 1 and " + std::to_string(layers));
  constexpr unsigned known = static_cast<unsigned>(RecomputeModule::layernorm) |
                             static_cast<unsigned>(RecomputeModule::mlp);
  if (recompute.granularity == RecomputeGranularity::selective &&
      (recompute.modules == 0 || (recompute.modules & ~known) != 0))
    throw core::SettingError("recompute_modules",
                             "selective recomputation needs modules tprimat reruns",
                             "layernorm, mlp or both");
}

/// Checks a step shape against model M and layout L; layers 0 becomes the full depth, and
/// sequence parallelism is off where TP = 1 (the value the step runs with).
template <model::ModelSpec M, parallel::LayoutSpec L>
StepShape check_step_shape(StepShape shape) {
  if (shape.layers < 0 || shape.layers > M::layers)
    throw core::SettingError(
        "layers",
        std::string(M::name) + " has " + std::to_string(M::layers) + " layers, cannot run " +
            std::to_string(shape.layers),
        "between 1 and " + std::to_string(M::layers) + " (0 = all)");
  if (shape.layers == 0) shape.layers = M::layers;
  // The layers run, not the model's: a proxy's layer count must split over the stages too
  // (evenly, unless the shape gives each stage's count).
  parallel::check_layout(model::dims<M>().with_layers(shape.layers), L::tp, L::pp,
                         shape.stage_layers);
  if (shape.mbs < 1 || shape.seq < 1 || shape.grad_accum < 1)
    throw core::InputError("mbs, seq and gradient accumulation must be at least 1 (got mbs " +
                           std::to_string(shape.mbs) + ", seq " + std::to_string(shape.seq) +
                           ", grad_accum " + std::to_string(shape.grad_accum) + ")");
  check_recompute(shape.recompute, shape.layers);
  parallel::check_context_parallel(shape.seq, shape.context_parallel);
  shape.sequence_parallel = shape.sequence_parallel && L::tp > 1;
  if (shape.sequence_parallel)
    parallel::check_sequence_parallel_rows(shape.mbs, shape.seq, L::tp, shape.context_parallel);
  return shape;
}

}  // namespace tprimat::train
