// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// DeviceTransformer: the whole training step (micro-batches + AdamW) on one GPU of a
// TP x PP x DP x CP layout, as the code that needs no vendor header sees it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/device_collectives.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/parameters.hpp"

namespace tprimat::train {

/// The device collectives of the groups a DeviceTransformer runs in (parallel/groups.hpp).
/// null: alone in that dimension. `dp` is every replica of this rank's weights, DP x CP under
/// context parallelism (gradients, ZeRO-1 and the loss go over it); `cp` the ranks sharing each
/// sequence (attention's keys and values, FP8's amaxes). Hybrid sharding
/// (OptimizerConfig::optimizer_instances) splits `dp` into `shard`, the instance this rank's
/// sharding runs over, and `replicate`, the ranks of every instance holding the same shard; both
/// null without it (the sharding runs over `dp`).
struct DeviceGroups {
  std::shared_ptr<parallel::DeviceCollectives> tp, pp, dp, cp;
  std::shared_ptr<parallel::DeviceCollectives> shard, replicate;
};

/// The decoder of Transformer<Cpu, T> (same parameter table, same math) on a device backend:
/// bf16 GEMM operands and activations, fp32 residual stream, gradients and AdamW state; fp32
/// master weights held split (the bf16 weights the GEMMs read are their high half, a 16-bit
/// remainder the rest: kernels/tprimat/kernels/split_float.hpp). All buffers are allocated up
/// front from the device's stream-ordered pool; a step allocates nothing, so after one eager step
/// it is captured as a graph and replayed.
/// Tensor parallelism over `tp` (Megatron's, as Transformer<Cpu> runs it): each rank holds its
/// share of the heads, the FFN and the vocabulary (make_parameter_table's Shard of tp's rank and
/// size); the row-parallel O and down projections and the vocab-parallel embedding all-reduce the
/// residual stream, the input gradients are all-reduced before each RMSNorm's backward, and the
/// cross-entropy exchanges three floats a row (Gpu::cross_entropy_stats / _combine). The
/// forward's TP collectives run on the main stream (everything after them depends on them); the
/// backward's input-gradient all-reduces run beside the layer's weight-gradient GEMMs.
/// Data parallelism over `dp` (the DP group's DeviceCollectives; null: one GPU): gradients are
/// reduced bucket by bucket while the backward pass goes on (train/gradient_buckets.hpp); with
/// OptimizerConfig::distributed_optimizer (ZeRO-1) they are reduce-scattered, each rank keeps
/// the remainders and moments of its slices only, updates them and all-gathers the bf16 weights.
/// Pipeline parallelism over `pp`: stage r of PP holds layers [r L/PP, (r + 1) L/PP), the first
/// also the embedding, the last the final norm, head and loss; the micro-batches run in
/// Megatron's 1F1B order with the stage's output and its gradient sent point-to-point, and each
/// stage keeps the activations of the micro-batches it has in flight (train::pipeline_slots).
/// This header needs no vendor header: DeviceTransformer is what a step may ask of the engine, and
/// make_device_transformer builds one (train/device/engine.hpp's device::Engine, by concern in
/// train/device/, in a TU that compiles the GPU backend: backend::Gpu, CUDA or HIP), so CPU-only
/// code may see it.
class DeviceTransformer {
 public:
  DeviceTransformer() = default;
  DeviceTransformer(const DeviceTransformer&) = delete;
  DeviceTransformer& operator=(const DeviceTransformer&) = delete;
  virtual ~DeviceTransformer() = default;

  /// One optimizer step over shape.grad_accum micro-batches of mbs x (seq + 1) ids (already
  /// validated by the caller): loss and gradients are means over the step's target tokens,
  /// the update uses learning rate `lr` and AdamW step number `step` (from 1). Synchronises once
  /// at the end to return the loss and the gradient norm.
  virtual StepStats step(std::span<const std::int32_t> tokens, double lr, int step) = 0;

  /// This rank's shard of the parameters (the whole model without TP).
  virtual const ParameterTable& table() const = 0;
  virtual std::int64_t parameter_count() const = 0;
  /// The fp32 master weights / the gradients of the last step (before clipping) of this rank's
  /// shard, to the host. Under ZeRO-1 parameters() gathers the remainders (collective over DP)
  /// and the gradients are reduced in this rank's slices only.
  virtual std::vector<float> parameters() const = 0;
  virtual std::vector<float> gradients() const = 0;
  /// Replaces the fp32 master weights (both halves) with `host` (parameter_count()
  /// values in table() order: a CPU Transformer's params() for the same dims and shard).
  virtual void load_parameters(std::span<const float> host) = 0;

  /// Bytes this engine holds on the device (weights, gradients, AdamW state, activations,
  /// workspaces); the pool's high-water marks since construction.
  virtual std::size_t held_bytes() const = 0;
  virtual std::size_t peak_allocated_bytes() const = 0;
  virtual std::size_t peak_reserved_bytes() const = 0;
  /// FP8 runs: the scales the next casts use (docs/fp8.md), E4M3 then E5M2. E4M3: [local layer]
  /// [w_q w_k w_v w_o w_gate w_up w_down], then slot 0's [local layer][x_qkv x_o x_mlp x_down],
  /// then the other pipeline slots'; E5M2: [local layer][g_q g_k g_v g_o g_gate g_up g_down].
  /// Empty without FP8.
  virtual std::pair<std::vector<float>, std::vector<float>> fp8_scales() const = 0;
  /// "flash" or "cudnn" (with ", context-parallel N" under CP): the attention kernels in use.
  virtual std::string attention_name() const = 0;
  virtual bool graph_captured() const = 0;
  /// Host seconds the last step spent issuing its work (uploads, launches or the graph launch),
  /// up to the wait for the result: the CPU overhead of the step.
  virtual double issue_seconds() const = 0;
  /// With DeviceOptions::phase_timing, GPU seconds of the last eager step per category (gemm,
  /// attention, elementwise, loss, zero_grads, grad_norm, optimizer), from events between ops.
  virtual std::vector<std::pair<std::string, double>> phase_seconds() const = 0;
};

/// The engine of backend `Backend` (backend::Gpu), weights drawn on the device
/// (Backend::init_normal_block, seed `seed`: every layout starts from one GPU's weights);
/// load_parameters() replaces them. Throws core::InputError when TP does not divide the heads,
/// KV heads, FFN or vocabulary, PP the layers, or PP > 1 meets tied embeddings; core::RunError
/// when the buffers do not fit in device memory. Collective over the groups' ranks.
template <class Backend>
std::unique_ptr<DeviceTransformer> make_device_transformer(const model::Dims& d, StepShape shape,
                                                           const OptimizerConfig& opt,
                                                           std::uint64_t seed,
                                                           DeviceOptions options,
                                                           DeviceGroups groups = {});

}  // namespace tprimat::train

#if defined(TPRIMAT_GPU_EXTERN_TEMPLATES)
// The in-tree binaries link the engine compiled once (src/, see src/README.md); a header-only
// consumer leaves this off and instantiates it where it includes train/device/engine.hpp.
namespace tprimat::backend {
struct Gpu;
}
namespace tprimat::train {
extern template std::unique_ptr<DeviceTransformer> make_device_transformer<backend::Gpu>(
    const model::Dims&, StepShape, const OptimizerConfig&, std::uint64_t, DeviceOptions,
    DeviceGroups);
}
#endif
