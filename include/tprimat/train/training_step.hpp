// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// TrainingStep<Backend, Model, Layout, Comm>: one optimizer step, the whole benchmark.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>

#include "tprimat/backend/concept.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/communicator.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/optimizer.hpp"
#include "tprimat/train/schedule.hpp"
#include "tprimat/train/transformer.hpp"

namespace tprimat::train {

/// The whole benchmark: model M under layout L on backend Backend, data-parallel over `comm`.
/// Model and layout are compile-time (a bad layout does not compile: LayoutFits' static_asserts);
/// the numerics run at run-time dims in Transformer<Backend, float>, compiled once in src/.
/// Weights, gradients and AdamW moments are fp32: on the CPU the weights are the master copy.
template <class Backend, model::ModelSpec M, parallel::LayoutSpec L,
          parallel::Communicator C = parallel::comm::Single>
class TrainingStep {
  static_assert(parallel::LayoutFits<M, L>::value);
  static_assert(backend::Backend<Backend>, "tprimat: Backend must model backend::Backend");

 public:
  using Element = float;

  /// `comm` is the data-parallel group (world when TP = PP = 1). shape.layers 0 = full depth.
  TrainingStep(StepShape shape, OptimizerConfig opt, std::uint64_t seed = 42, C comm = {})
      : shape_(checked(shape)),
        opt_(opt),
        comm_(std::move(comm)),
        model_(model::dims<M>().with_layers(shape_.layers), shape_.mbs, shape_.seq, opt.init_std,
               seed),
        adam_(opt, model_.parameter_count()) {}

  /// One optimizer step over shape.grad_accum micro-batches of shape.mbs sequences of
  /// shape.seq + 1 ids (inputs [0, seq), targets [1, seq + 1)): this DP rank's share of the
  /// global batch. Loss and gradients are means over every target token of the GLOBAL batch, so
  /// the returned StepStats (and the update) are identical on every rank.
  StepStats run(std::span<const std::int32_t> tokens) {
    const std::int64_t per_micro = std::int64_t{shape_.mbs} * (shape_.seq + 1);
    const std::int64_t expected = per_micro * shape_.grad_accum;
    if (static_cast<std::int64_t>(tokens.size()) != expected)
      throw core::InputError("a step on this rank needs grad_accum x mbs x (seq + 1) = " +
                             std::to_string(shape_.grad_accum) + " x " +
                             std::to_string(shape_.mbs) + " x " + std::to_string(shape_.seq + 1) +
                             " = " + std::to_string(expected) + " token ids, got " +
                             std::to_string(tokens.size()));
    const int vocab = model_.dims().vocab;
    for (std::size_t i = 0; i < tokens.size(); ++i)
      if (tokens[i] < 0 || tokens[i] >= vocab)
        throw core::InputError("token id " + std::to_string(tokens[i]) + " at position " +
                                   std::to_string(i) + " is outside the vocabulary [0, " +
                                   std::to_string(vocab) + ") of " + std::string(M::name),
                               "use token ids below the model's vocab_size");

    // Each rank pre-scales by 1 / (target tokens of the global batch); the sum over ranks is the
    // global mean, whatever the DP size.
    const double global_tokens =
        static_cast<double>(shape_.grad_accum) * shape_.mbs * shape_.seq * comm_.size();
    const double scale = 1.0 / global_tokens;
    model_.zero_grads();
    double loss = 0;
    for (int micro = 0; micro < shape_.grad_accum; ++micro)
      loss += scale * model_.forward_backward(tokens.subspan(micro * per_micro, per_micro), scale);
    if (comm_.size() > 1) {
      comm_.all_reduce_sum(model_.grads());
      comm_.all_reduce_sum(std::span<double>(&loss, 1));
    }

    StepStats stats;
    stats.loss = loss;
    stats.grad_norm = global_norm<Backend, Element>(model_.grads());
    if (!std::isfinite(stats.loss) || !std::isfinite(stats.grad_norm))
      throw core::RunError("step " + std::to_string(steps_done_) + " diverged: loss " +
                           std::to_string(stats.loss) + ", gradient norm " +
                           std::to_string(stats.grad_norm));
    clip_by_global_norm<Backend, Element>(model_.grads(), stats.grad_norm, opt_.clip_norm);
    stats.lr = learning_rate(opt_, steps_done_);
    adam_.update(model_.params(), model_.grads(), model_.tensors(), stats.lr);
    ++steps_done_;
    return stats;
  }

  const model::Dims& dims() const { return model_.dims(); }
  /// Parameters held by this rank (a full replica: TP = PP = 1).
  std::int64_t parameter_count() const { return model_.parameter_count(); }
  /// Bytes held by the step's buffers: weights (the fp32 master), gradients, AdamW moments,
  /// activations, logits and workspace. All are allocated up front, so peak == held.
  std::size_t peak_bytes() const { return model_.bytes() + adam_.bytes(); }
  int steps_done() const { return steps_done_; }

  const StepShape& shape() const { return shape_; }
  C& comm() { return comm_; }
  /// The numerics, for tests and tools that inspect weights and gradients.
  Transformer<Backend, Element>& model() { return model_; }
  const Transformer<Backend, Element>& model() const { return model_; }

 private:
  /// Rejects what the CPU step cannot run before anything is allocated.
  static StepShape checked(StepShape shape) {
    if constexpr (L::tp > 1 || L::pp > 1)
      throw core::InputError(
          "tensor/pipeline parallelism on the CPU backend is not implemented yet (issue 3); use "
          "a TP=1, PP=1 strategy such as minimal_communication");
    if (shape.layers < 0 || shape.layers > M::layers)
      throw core::InputError(
          std::string(M::name) + " has " + std::to_string(M::layers) + " layers, cannot run " +
              std::to_string(shape.layers),
          "pass --layers between 1 and " + std::to_string(M::layers) + " (0 = all)");
    if (shape.layers == 0) shape.layers = M::layers;
    if (shape.mbs < 1 || shape.seq < 1 || shape.grad_accum < 1)
      throw core::InputError("mbs, seq and gradient accumulation must be at least 1 (got mbs " +
                             std::to_string(shape.mbs) + ", seq " + std::to_string(shape.seq) +
                             ", grad_accum " + std::to_string(shape.grad_accum) + ")");
    return shape;
  }

  StepShape shape_;
  OptimizerConfig opt_;
  C comm_;
  Transformer<Backend, Element> model_;
  AdamW<Backend, Element> adam_;
  int steps_done_ = 0;
};

}  // namespace tprimat::train
