// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Engine: the device training step composed of its concerns (parameters, activations, layers,
// head, TP, pipeline, gradient sync, optimizer, captured step), the DeviceTransformer that
// make_device_transformer builds.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tprimat/backend/gpu.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/kernels/split_float.hpp"
#include "tprimat/parallel/device_collectives.hpp"
#include "tprimat/profile/nvtx.hpp"
#include "tprimat/train/device/activations.hpp"
#include "tprimat/train/device/attention.hpp"
#include "tprimat/train/device/captured_step.hpp"
#include "tprimat/train/device/context_parallel_attention.hpp"
#include "tprimat/train/device/fp8_linears.hpp"
#include "tprimat/train/device/gemms.hpp"
#include "tprimat/train/device/gradient_sync.hpp"
#include "tprimat/train/device/head.hpp"
#include "tprimat/train/device/layer.hpp"
#include "tprimat/train/device/optimizer.hpp"
#include "tprimat/train/device/parameters.hpp"
#include "tprimat/train/device/phase_timer.hpp"
#include "tprimat/train/device/pipeline.hpp"
#include "tprimat/train/rank_plan.hpp"
#include "tprimat/train/device/resources.hpp"
#include "tprimat/train/device/step_io.hpp"
#include "tprimat/train/device/tensor_parallel.hpp"
#include "tprimat/train/device/transformer.hpp"
#include "tprimat/train/device/weight_gather.hpp"

namespace tprimat::train::device {

/// Size and rank of one group's device collectives, or (1, 0) without one.
inline GroupPlace place_in(const std::shared_ptr<parallel::DeviceCollectives>& group) {
  return group ? GroupPlace{group->size(), group->rank()} : GroupPlace{};
}

/// Collectives that wait on the host (host-staged) cannot be captured in a graph.
inline bool capturable(const DeviceGroups& g) {
  for (const auto& c : {g.tp, g.pp, g.dp, g.cp})
    if (c && c->size() > 1 && !c->capturable()) return false;
  return true;
}

/// A group of one is no group: its collectives are dropped.
inline std::shared_ptr<parallel::DeviceCollectives> group_or_none(
    std::shared_ptr<parallel::DeviceCollectives> g) {
  return g && g->size() > 1 ? std::move(g) : nullptr;
}

/// The ranks the gradients are reduced over and the sharding runs over: one hybrid sharding
/// instance where plan shards over one, else every replica.
inline std::shared_ptr<parallel::DeviceCollectives> sharding_group(const RankPlan& plan,
                                                                   const DeviceGroups& g) {
  return group_or_none(plan.instances > 1 ? g.shard : g.dp);
}

/// Hybrid sharding: the ranks of every instance holding this rank's shards (null without it).
inline std::shared_ptr<parallel::DeviceCollectives> replicas_of_shards(const RankPlan& plan,
                                                                       const DeviceGroups& g) {
  return plan.instances > 1 ? group_or_none(g.replicate) : nullptr;
}

/// DeviceTransformer on backend::Gpu. Members in the order they must be torn down in reverse: the
/// stream first (every buffer frees on it), the captured graph last.
class Engine final : public DeviceTransformer {
 public:
  Engine(const model::Dims& dims, StepShape shape, const OptimizerConfig& opt, std::uint64_t seed,
         DeviceOptions options, DeviceGroups groups)
      : plan(plan_rank(dims, shape, opt, place_in(group_or_none(groups.tp)),
                       place_in(group_or_none(groups.pp)), place_in(group_or_none(groups.dp)),
                       place_in(group_or_none(groups.cp)))),
        options_(options),
        tp_(group_or_none(groups.tp), plan, options.overlap),
        pipeline_(group_or_none(groups.pp)),
        sync_(plan_gradient_sync(plan), sharding_group(plan, groups),
              replicas_of_shards(plan, groups), plan.zero, options.overlap,
              plan_gradient_zeroing(plan)),
        optimizer_(opt, sharding_group(plan, groups), options.overlap),
        gather_(plan, sharding_group(plan, groups), options.overlap),
        dp_(group_or_none(groups.dp)),
        zero_ranges_(plan_gradient_zeroing(plan)),
        captured_(options.graph && capturable(groups)) {
    check_sharding_built(opt, options.precision);
    if (backend::Gpu::device_count() == 0)
      throw core::RunError(
          TPRIMAT_GPU_HIP ? "no HIP device: the HIP backend needs an AMD GPU and ROCm"
                          : "no CUDA device: the CUDA backend needs an NVIDIA GPU and its driver");
    const backend::AttentionShape whole{shape.mbs, shape.seq, plan.d.heads, plan.d.kv_heads,
                                        plan.d.head_dim};
    if (plan.cp > 1)
      cp_attention_ = std::make_unique<ContextParallelAttention>(
          group_or_none(groups.cp), parallel::ContextSplit{shape.seq, plan.cp, plan.cp_rank},
          options.attention, whole);
    else
      attention_ = std::make_unique<DeviceAttention>(options.attention, whole);
    stream_.create();
    timer_.bind(stream_);
    tp_.create();
    sync_.create();
    gather_.create(sync_.plan.buckets);
    optimizer_.create(sync_.plan, plan.zero);
    captured_.create();
    backend::Gpu::reset_peaks();
    BufferAllocator a{stream_};
    // Every device buffer from the one table the memory plan sums too.
    const BufferTable table = engine_buffers(
        plan, options.precision, sync_.plan,
        static_cast<std::int64_t>(attention_ ? attention_->backward_workspace_bytes()
                                             : cp_attention_->backward_workspace_bytes()));
    params_.allocate(a, table, sync_.plan.buckets);
    fp8_.allocate(a, plan, options.precision, tp_, group_or_none(groups.cp),
                  plan.sharded_weights ? sharding_group(plan, groups) : nullptr, table);
    acts_.allocate(a, plan, table);
    scratch_.allocate(a, table);
    if (cp_attention_) cp_attention_->allocate(a, table);
    rope_.allocate(a, table);
    io_.allocate(a, plan, table);
    sync_.allocate(a, table);
    tp_.allocate(a, table);
    optimizer_.allocate(a, plan, sync_.plan.buckets, table);
    check_allocated(table, a);
    rope_.upload(plan);
    held_ = a.held;
    params_.init(plan, sync_.plan.buckets, opt.init_std, seed, stream_);
    backend::Gpu::gemm_prepare(stream_);
    if (attention_) attention_->prepare(stream_);
    if (cp_attention_) cp_attention_->prepare(stream_);
    backend::gpu_check(gpuStreamSynchronize(stream_), "engine set-up");
  }

  ~Engine() override {
    // Nothing of the last step may still run when the graph, the buffers and the pinned host
    // memory they read are freed.
    if (stream_) (void)gpuStreamSynchronize(stream_);
    captured_.release();
    sync_.synchronize();
    gather_.synchronize();
    tp_.synchronize();
  }

  StepStats step(std::span<const std::int32_t> tokens, double lr, int step_number) override {
    io_.prepare(tokens, plan);
    const auto issue_start = std::chrono::steady_clock::now();
    captured_.begin(stream_);
    io_.upload(stream_);
    optimizer_.set_step(lr, step_number, stream_);
    captured_.issue(stream_, timer_, options_.phase_timing, [this] { enqueue_step(); });
    io_.download_results(stream_);
    captured_.end(stream_);
    issue_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - issue_start).count();
    StepStats st;
    st.device_seconds = captured_.finish();
    if (timer_.recorded()) timer_.collect();
    const double tokens_of_step = double(plan.shape.grad_accum) * double(plan.n) * double(plan.dp);
    st.loss = io_.loss_sum() / tokens_of_step;
    st.grad_norm = std::sqrt(io_.sum_of_squares());
    st.lr = lr;
    return st;
  }

  // ---- what DeviceTransformer reports ---------------------------------------------------------
  const RankPlan plan;
  const ParameterTable& table() const override { return plan.table; }
  std::int64_t parameter_count() const override { return plan.params; }
  std::vector<float> parameters() const override {
    std::vector<bf16> hi(static_cast<std::size_t>(plan.params));
    if (plan.sharded_weights) {  // FSDP: every rank's slices
      const std::vector<std::uint16_t> bits = optimizer_.gathered_slices(
          plan, reinterpret_cast<const std::uint16_t*>(params_.weights.data()),
          sync_.plan.buckets, stream_);
      // bf16 is a class with a protected member; its bytes are the bits, copied as bytes.
      std::memcpy(static_cast<void*>(hi.data()), bits.data(), bits.size() * sizeof(std::uint16_t));
    } else {
      hi = params_.weights.download();
      hi.resize(static_cast<std::size_t>(plan.params));
    }
    const std::vector<std::uint16_t> lo =
        plan.zero
            ? optimizer_.gathered_slices(plan, params_.master_lo.data(), sync_.plan.buckets, stream_)
            : params_.master_lo.download();
    return kernels::join_floats(std::span<const bf16>(hi), std::span<const std::uint16_t>(lo));
  }
  std::vector<float> gradients() const override {
    if (plan.sharded_grads)
      throw core::InputError(
          "gradients(): under ZeRO-2 and FSDP (sharding strategies optim_grads and "
          "optim_grads_params) no rank holds the whole gradient, only the sums of its slices",
          "read the gradients of a step that shards no more than the optimizer");
    std::vector<float> out = params_.grads.download();
    out.resize(static_cast<std::size_t>(plan.params));
    return out;
  }
  void load_parameters(std::span<const float> host) override {
    if (static_cast<std::int64_t>(host.size()) != plan.params)
      throw core::InputError("loading " + std::to_string(host.size()) +
                             " weights into a model of " + std::to_string(plan.params) +
                             " parameters");
    params_.load(plan, sync_.plan.buckets, host, stream_);
    backend::gpu_check(gpuStreamSynchronize(stream_), "load_parameters");
  }
  std::size_t held_bytes() const override { return held_; }
  std::size_t peak_allocated_bytes() const override {
    return backend::Gpu::peak_allocated_bytes();
  }
  std::size_t peak_reserved_bytes() const override { return backend::Gpu::peak_reserved_bytes(); }
  std::string attention_name() const override {
    return attention_ ? attention_->name() : cp_attention_->name();
  }
  std::pair<std::vector<float>, std::vector<float>> fp8_scales() const override {
    if (!fp8_.enabled()) return {};
    return {fp8_.forward_scales(), fp8_.backward_scales()};
  }
  bool graph_captured() const override { return captured_.captured(); }
  double issue_seconds() const override { return issue_seconds_; }
  std::vector<std::pair<std::string, double>> phase_seconds() const override {
    return timer_.totals();
  }

 private:
  Gemms gemms() { return Gemms{stream_, &timer_}; }
  DecoderLayer layer() {
    return DecoderLayer{plan,   params_, scratch_, rope_,  LayerAttention{attention_.get(), cp_attention_.get()},
                        tp_,    timer_,  fp8_,     gemms()};
  }
  Head head() { return Head{plan, params_, acts_, scratch_, tp_, timer_, gemms()}; }

  /// Everything one step enqueues after its uploads: the part a graph captures.
  void enqueue_step() {
    // Each rank pre-scales by 1 / (target tokens of the global batch): the sum over DP is the mean.
    const float grad_scale = static_cast<float>(
        1.0 / (double(plan.shape.grad_accum) * double(plan.n) * double(plan.dp)));
    timer_.mark("zero_grads");
    sync_.begin_step();
    gather_.begin_step();
    if (!sync_.per_micro_batch()) zero_gradients();  // ZeRO-2: each micro-batch's, as it goes
    timer_.mark("fp8_cast");
    fp8_.cast_weights(plan, params_, sync_.plan.buckets, stream_);
    timer_.mark("elementwise");
    if (pipeline_.active())
      pipeline_.run(
          plan, acts_, scratch_.dres.data(), stream_, timer_,
          [&](int micro, int slot) { forward(micro, slot, grad_scale); },
          [&](int micro, int slot) { backward(micro, slot); });
    else
      for (int micro = 0; micro < plan.shape.grad_accum; ++micro) {
        forward(micro, 0, grad_scale);
        backward(micro, 0);
      }
    gather_.join(stream_);  // FSDP: no gather reads a slice the optimizer is about to move
    timer_.mark("fp8_cast");
    fp8_.end_step(stream_);
    const profile::Range optimizer_range("optimizer");  // grad norm, AdamW, to the step's end
    timer_.mark("grad_norm");  // what is left of it: the join and the sum of the segments' partials
    sync_.join(stream_);
    double* results = io_.results.data();  // [loss sum, squares]
    sync_.sum_squares(results + 1, stream_);
    if (!plan.last_stage)  // the loss is the last stage's: the others add nothing to it
      backend::gpu_check(gpuMemsetAsync(results, 0, sizeof(double), stream_), "memset");
    pipeline_.sum_loss_and_squares(results, stream_);
    tp_.sum_loss_and_squares(results, stream_);
    if (dp_) {  // each rank summed its own slices
      const profile::Range range("dp loss and norm");
      dp_->all_reduce_sum(results, 2, stream_);
    }
    timer_.mark("optimizer");
    optimizer_.update(plan, params_, sync_, results + 1, stream_);
    timer_.mark("zero_grads");
    if (plan.sparse_embedding_zeroing) io_.keep_touched_rows(stream_);
    timer_.mark("end");
  }

  /// Clears the gradients no beta-0 GEMM overwrites (plan_gradient_zeroing), and the embedding
  /// rows the last step touched.
  void zero_gradients() {
    for (const auto& [offset, count] : zero_ranges_)
      backend::gpu_check(gpuMemsetAsync(params_.g(offset), 0, count * sizeof(float), stream_),
                         "memset");
    if (plan.sparse_embedding_zeroing)
      for (int micro = 0; micro < plan.shape.grad_accum; ++micro)
        backend::Gpu::zero_rows(io_.touched_rows.data() + micro * plan.n,
                                io_.touched_count.data() + micro, plan.n, plan.d.hidden,
                                params_.g(plan.table.embedding), stream_);
  }

  /// Micro-batch `micro` forward in activation slot `slot`: from the embedding on the first stage
  /// (else from the input the previous stage sent), to the loss on the last.
  void forward(int micro, int slot, float grad_scale) {
    const profile::Range range("forward");
    if (plan.first_stage) {
      float* x0 = acts_.stage_input(slot);
      // Under TP the ids are this rank's vocabulary slice's (-1 elsewhere: zero rows). Under
      // sequence parallelism x0 holds this rank's rows: every row goes through the scratch dxn
      // (free in the forward) to be reduce-scattered.
      float* rows = plan.sequence_parallel ? scratch_.dxn.data() : x0;
      gather_.ensure(0, params_, stream_);
      backend::Gpu::embedding_forward(io_.inputs.data() + micro * plan.n, plan.n,
                                      params_.w(plan.table.embedding), nullptr, plan.d.hidden, rows,
                                      stream_);
      tp_.sum_rows(rows, x0, stream_, timer_);
    }
    DecoderLayer layers = layer();
    const Recompute& recompute = plan.shape.recompute;
    for (int l = 0; l < plan.local_layers; ++l) {
      const profile::Range layer_range("forward layer", l);
      if (recompute.recomputed(l, plan.local_layers) && recompute.group_begin(l) == l)
        copy_input(acts_.kept(slot, l), acts_.at(slot, l));
      gather_.ensure(plan.layer_segment(l), params_, stream_);
      // FSDP: the next segment's weights gathered while this layer runs.
      if (l + 1 < plan.local_layers || plan.last_stage)
        gather_.prefetch(plan.layer_segment(l) + 1, params_, stream_);
      layers.forward(plan.table.layers[l], acts_.at(slot, l), acts_.layer_output(slot, l), l, slot);
    }
    if (!plan.last_stage) return;  // the pipeline sends stage_output(slot) on
    // The head's gradients come with its loss (head.hpp): written by micro-batch 0, as below.
    const std::size_t head_segment = sync_.plan.segments.size() - 1;
    sync_.acquire(head_segment, params_, stream_);
    gather_.ensure(head_segment, params_, stream_);
    if (plan.d.tied_embeddings) {  // the head's gradient and weights are the embedding's
      sync_.acquire(0, params_, stream_);
      gather_.ensure(0, params_, stream_);
    }
    head().forward(micro, slot, io_.targets.data() + micro * plan.n, grad_scale,
                   first_write(micro), io_.results.data(), io_.loss_partials.data());
  }

  /// The beta of micro-batch `micro`'s weight-gradient GEMMs: the first writes them (0), later
  /// ones add (1); under ZeRO-2 each micro-batch writes its own (its staging buffer).
  float first_write(int micro) const {
    return micro == 0 || sync_.per_micro_batch() ? 0.f : 1.f;
  }

  /// A recomputed group's kept input into the recomputation buffers.
  void copy_input(LayerActivations& kept, LayerActivations& into) {
    backend::gpu_check(gpuMemcpyAsync(into.x.data(), kept.x.data(), kept.x.bytes(),
                                      gpuMemcpyDeviceToDevice, stream_),
                       "recomputation input");
  }

  /// The forward of recomputed layer l's group again, from its kept input, just before the
  /// group's backward: the same kernels on the same inputs (FP8: the same scales), so the
  /// gradients equal those of the step that kept everything.
  void recompute_group(DecoderLayer& layers, int l, int slot) {
    const profile::Range range("recompute", l);
    const int begin = plan.shape.recompute.group_begin(l);
    copy_input(acts_.kept(slot, begin), acts_.at(slot, begin));
    for (int j = begin; j <= l; ++j) {
      gather_.ensure(plan.layer_segment(j), params_, stream_);
      layers.forward(plan.table.layers[j], acts_.at(slot, j),
                     j < l ? acts_.at(slot, j + 1).x.data() : acts_.recomputed_output.data(), j,
                     slot);
    }
  }

  /// Micro-batch `micro` backward from slot `slot`: from the loss on the last stage (else from the
  /// output gradient the next stage sent into scratch dres), to the embedding on the first (else
  /// dres holds the input gradient the pipeline sends back). In the step's last micro-batch each
  /// gradient segment becomes final, and goes to the gradient sync (ZeRO-2: in every one).
  void backward(int micro, int slot) {
    const profile::Range range("backward");
    // Weight gradients: the first micro-batch's GEMM writes them (beta 0), later ones add; the
    // tensors no GEMM writes first were cleared by zero_gradients() (ZeRO-2: by acquire).
    const float acc = first_write(micro);
    const int micros = plan.shape.grad_accum;
    const bool reduce = micro == micros - 1 || sync_.per_micro_batch();
    const std::int64_t h = plan.d.hidden;
    if (plan.last_stage) {
      gather_.ensure(sync_.plan.segments.size() - 1, params_, stream_);  // the final norm's gain
      head().backward(slot);
      if (reduce) {
        tp_.sum_norm_grad(params_.g(plan.table.final_norm), h, stream_, timer_);
        sync_.reduce_segment(sync_.plan.segments.size() - 1, params_, micro, micros, stream_);
      }
    } else {  // dres holds the received gradient of the stage's output (this rank's rows)
      backend::Gpu::to_bf16(scratch_.dres.data(), plan.own_rows(scratch_.dres_bf.data()),
                            plan.rows * h, stream_);
    }
    DecoderLayer layers = layer();
    for (int l = plan.local_layers - 1; l >= 0; --l) {
      const profile::Range layer_range("backward layer", l);
      const LayerParams& lp = plan.table.layers[l];
      if (plan.shape.recompute.group_end(l, plan.local_layers)) recompute_group(layers, l, slot);
      gather_.ensure(plan.layer_segment(l), params_, stream_);
      if (l > 0) gather_.prefetch(plan.layer_segment(l - 1), params_, stream_);
      sync_.acquire(plan.layer_segment(l), params_, stream_);
      layers.backward(lp, acts_.at(slot, l), acc, l, slot);
      if (reduce) {
        tp_.sum_norm_grad(params_.g(lp.attn_norm), h, stream_, timer_);
        tp_.sum_norm_grad(params_.g(lp.mlp_norm), h, stream_, timer_);
        sync_.reduce_segment(plan.layer_segment(l), params_, micro, micros, stream_);
      }
    }
    if (!plan.first_stage) return;  // the pipeline sends dres, the stage input's gradient, back
    // Every token's row of the gradient (gathered over TP under sequence parallelism, through
    // the scratch dxn, free again).
    const float* dx0 =
        tp_.gather_residual_grad(scratch_.dres.data(), scratch_.dxn.data(), stream_, timer_);
    if (!plan.d.tied_embeddings) sync_.acquire(0, params_, stream_);  // tied: the head's did
    backend::Gpu::embedding_backward(
        io_.group_ids.data() + micro * plan.n, io_.offsets.data() + micro * (plan.n + 1),
        io_.positions.data() + micro * plan.n, io_.group_count.data() + micro, plan.n, dx0,
        plan.d.hidden, params_.g(plan.table.embedding), stream_);
    // A tied head's gradient is in it too.
    if (reduce) sync_.reduce_segment(0, params_, micro, micros, stream_);
  }

  DeviceOptions options_;
  OwnedStream stream_;  // before every buffer: destroyed after them
  PhaseTimer timer_;
  TensorParallel tp_;
  PipelineStage pipeline_;
  GradientSync sync_;
  DeviceOptimizer optimizer_;
  WeightGather gather_;  // FSDP
  std::shared_ptr<parallel::DeviceCollectives> dp_;  // the loss and norm summed over DP
  std::unique_ptr<DeviceAttention> attention_;                 // CP = 1
  std::unique_ptr<ContextParallelAttention> cp_attention_;  // CP > 1
  DeviceParameters params_;
  Activations acts_;
  Scratch scratch_;
  RopeTables rope_;
  Fp8Linears fp8_;
  StepIO io_;
  std::vector<std::pair<std::int64_t, std::int64_t>> zero_ranges_;
  std::size_t held_ = 0;
  double issue_seconds_ = 0;
  CapturedStep captured_;  // last: its graph goes first
};

}  // namespace tprimat::train::device

namespace tprimat::train {

template <class Backend>
std::unique_ptr<DeviceTransformer> make_device_transformer(const model::Dims& d, StepShape shape,
                                                           const OptimizerConfig& opt,
                                                           std::uint64_t seed,
                                                           DeviceOptions options,
                                                           DeviceGroups groups) {
  static_assert(std::is_same_v<Backend, backend::Gpu>, "the device engine runs on backend::Gpu");
  return std::make_unique<device::Engine>(d, std::move(shape), opt, seed, options,
                                          std::move(groups));
}

}  // namespace tprimat::train
