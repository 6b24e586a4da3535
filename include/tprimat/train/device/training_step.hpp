// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// TrainingStep on a device backend (CUDA, HIP): the same interface, the step runs in a
// DeviceTransformer.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "tprimat/backend/concept.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/communicator.hpp"
#include "tprimat/parallel/device_collectives.hpp"
#include "tprimat/parallel/groups.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/device/transformer.hpp"
#include "tprimat/train/pipeline_bubble.hpp"
#include "tprimat/train/schedule.hpp"
#include "tprimat/train/step_checks.hpp"

namespace tprimat::train {

template <class Backend, model::ModelSpec M, parallel::LayoutSpec L, parallel::Communicator C>
class TrainingStep;

/// The device collectives of a DP group: its own when the communicator has them (comm::Nccl),
/// otherwise its host collectives staged through host memory (comm::Mpi: slow, but it runs
/// several ranks on one GPU, which NCCL refuses); none for one rank.
template <parallel::Communicator C>
std::shared_ptr<parallel::DeviceCollectives> device_collectives_of(const C& group) {
  if (group.size() <= 1) return nullptr;
  if constexpr (requires { group.device_collectives(); })
    return group.device_collectives();
  else
    return parallel::host_staged_collectives(parallel::host_collectives_of(group));
}

namespace device {

/// The device step of any model and layout, what TrainingStep<Backend, M, L, C> runs on a GPU
/// (its base): compiled once per backend and communicator, not once per model and layout.
template <class Backend, parallel::Communicator C>
class Step {
 public:
  using Element = float;

  /// Model `full` (layers: those run) with PP = `pp` over `groups`, split from the world in
  /// Megatron's order; `shape` already checked against the model and the layout. Under context
  /// parallelism the weights' replicas are the DP x CP group (gradients, ZeRO-1, the loss) and
  /// the CP group shares each sequence's attention.
  Step(const model::Dims& full, int pp, StepShape shape, OptimizerConfig opt, std::uint64_t seed,
       parallel::Groups<C> groups, DeviceOptions device)
      : full_(full),
        pp_(pp),
        shape_(std::move(shape)),
        opt_(opt),
        groups_(std::move(groups)),
        engine_(make_device_transformer<Backend>(full_, shape_, opt_, seed, device,
                                                 device_groups_of(groups_, opt_))) {}

  /// One optimizer step over this rank's shape.grad_accum micro-batches (see the host
  /// TrainingStep::run). StepStats::device_seconds holds the step's CUDA-event time.
  StepStats run(std::span<const std::int32_t> tokens) {
    check_step_tokens(tokens, shape_, full_.vocab, full_.name);
    const double lr = learning_rate(opt_, steps_done_);
    StepStats st = engine_->step(tokens, lr, steps_done_ + 1);
    if (!std::isfinite(st.loss) || !std::isfinite(st.grad_norm))
      throw core::RunError("step " + std::to_string(steps_done_) + " diverged: loss " +
                           std::to_string(st.loss) + ", gradient norm " +
                           std::to_string(st.grad_norm));
    ++steps_done_;
    return st;
  }

  const model::Dims& dims() const { return full_; }
  std::int64_t parameter_count() const { return engine_->parameter_count(); }
  /// The device pool's high-water mark of bytes in use since the step was built.
  std::size_t peak_bytes() const { return engine_->peak_allocated_bytes(); }
  std::size_t peak_reserved_bytes() const { return engine_->peak_reserved_bytes(); }
  int steps_done() const { return steps_done_; }
  double pipeline_bubble_fraction() const {
    return train::pipeline_bubble_fraction(pp_, shape_.grad_accum);
  }
  const StepShape& shape() const { return shape_; }
  C& comm() { return groups_.world; }
  const parallel::Groups<C>& groups() const { return groups_; }
  DeviceTransformer& engine() { return *engine_; }
  const DeviceTransformer& engine() const { return *engine_; }

 private:
  /// The groups' device collectives; under hybrid sharding the replicas split into its
  /// instances first (collective over them), where the instances can split them (the engine's
  /// plan refuses them otherwise).
  static DeviceGroups device_groups_of(const parallel::Groups<C>& g, const OptimizerConfig& opt) {
    DeviceGroups d{device_collectives_of(g.tp),
                   device_collectives_of(g.pp),
                   device_collectives_of(g.dp_cp),
                   device_collectives_of(g.cp),
                   nullptr,
                   nullptr};
    const int n = opt.optimizer_instances;
    if (n > 1 && opt.shards_optimizer() && g.dp_cp.size() % n == 0) {
      const parallel::ShardGroups<C> s = parallel::split_shard_groups(g.dp_cp, n);
      d.shard = device_collectives_of(s.shard);
      d.replicate = device_collectives_of(s.replicate);
    }
    return d;
  }

  model::Dims full_;
  int pp_;
  StepShape shape_;
  OptimizerConfig opt_;
  parallel::Groups<C> groups_;
  std::unique_ptr<DeviceTransformer> engine_;
  int steps_done_ = 0;
};

}  // namespace device

/// The benchmark on a GPU: model M under layout L with backend Backend's kernels, the whole step
/// (micro-batches, clipping, AdamW) in one DeviceTransformer, captured as a CUDA graph after its
/// first step unless DeviceOptions::graph is off (or the collectives cannot be captured).
/// The ranks of `world`, one GPU each, are split into TP x CP x DP x PP groups in Megatron's order
/// (parallel/groups.hpp): the DeviceTransformer shards the model over TP, runs its stage of the
/// pipeline under 1F1B, and reduces the gradients over DP (OptimizerConfig::
/// distributed_optimizer shards the optimizer too). Every rank passes its DP replica's share of
/// the global batch (the same on a replica's TP ranks and stages).
template <class Backend, model::ModelSpec M, parallel::LayoutSpec L, parallel::Communicator C>
  requires backend::DeviceBackend<Backend>
class TrainingStep<Backend, M, L, C> : public device::Step<Backend, C> {
  static_assert(parallel::LayoutFits<M, L>::value);

 public:
  /// What the step runs on, whatever M and L (see the host TrainingStep's Base).
  using Base = device::Step<Backend, C>;

  TrainingStep(StepShape shape, OptimizerConfig opt, std::uint64_t seed = 42, C world = {},
               DeviceOptions device = {})
      : TrainingStep(std::in_place, check_step_shape<M, L>(shape), opt, seed, std::move(world),
                     device) {}

 private:
  /// The shape checked first, then the world split into groups (its size checked), as the
  /// messages of a bad shape and a bad world come in that order.
  TrainingStep(std::in_place_t, StepShape checked, OptimizerConfig opt, std::uint64_t seed,
               C world, DeviceOptions device)
      : Base(model::dims<M>().with_layers(checked.layers), L::pp, checked, opt, seed,
             parallel::make_groups(std::move(world), L::tp, L::pp, checked.context_parallel),
             device) {}
};

}  // namespace tprimat::train
