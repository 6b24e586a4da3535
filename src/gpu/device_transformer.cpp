// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// DeviceTransformer<Gpu>: buffers, forward, backward, AdamW and the graph of one step (CUDA, HIP).
#include "tprimat/train/device_transformer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tprimat/backend/cpu.hpp"  // rope tables, computed on the host in double
#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu_attention.hpp"
#include "tprimat/backend/gpu_buffer.hpp"
#include "tprimat/backend/embedding_groups.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/kernels/split_float.hpp"
#include "tprimat/profile/nvtx.hpp"
#include "tprimat/train/gradient_buckets.hpp"
#include "tprimat/train/pipeline_schedule.hpp"

namespace tprimat::train {

using backend::Gpu;
using backend::DeviceBuffer;
using bf16 = Gpu::bf16;

namespace {

/// Page-locked host memory: asynchronous copies from it overlap and never stage through pageable
/// buffers. Freed after the stream has finished with it (the engine synchronises every step).
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t n) : size_(n) {
    backend::gpu_check(gpuMallocHost(reinterpret_cast<void**>(&data_), n * sizeof(T)),
                        "gpuMallocHost");
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }
  ~PinnedBuffer() {
    if (data_) (void)gpuFreeHost(data_);
  }
  T* data() { return data_; }
  T& operator[](std::size_t i) { return data_[i]; }
  std::size_t size() const { return size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// The engine's stream. Declared before every buffer of the engine, so it is destroyed after
/// them: their destructors free on it. Created by create(), after the device checks.
class OwnedStream {
 public:
  OwnedStream() = default;
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  ~OwnedStream() {
    if (!stream_) return;
    (void)gpuStreamSynchronize(stream_);
    (void)gpuStreamDestroy(stream_);
  }
  void create() {
    backend::gpu_check(gpuStreamCreateWithFlags(&stream_, gpuStreamNonBlocking),
                        "gpuStreamCreate");
  }
  operator gpuStream_t() const { return stream_; }

 private:
  gpuStream_t stream_ = nullptr;
};

/// The engine of DeviceTransformer<Gpu> (its Impl): a plain class, since hip-clang 15 mistakes a
/// member template's parameter for the backend inside a member class of the explicit
/// specialisation.
class Engine {
 public:
  struct LayerActs {  // what backward needs of one layer (one micro-batch of n tokens)
    DeviceBuffer<float> x, x_mid;             // [n, h] residual stream in, after attention
    DeviceBuffer<bf16> xn1, xn2;              // [n, h] norm outputs
    DeviceBuffer<float> rstd1, rstd2;         // [n]
    DeviceBuffer<bf16> q, k, v, attn;         // [n, qd] [n, kvd] [n, kvd] [n, qd]; q, k roped
    DeviceBuffer<float> lse;                  // [mbs, heads, seq]
    DeviceBuffer<bf16> gate, up;              // [n, ffn]
  };

  /// The whole model's dims, and this TP rank's share of them (heads, KV heads, FFN and
  /// vocabulary / TP): the forward and backward passes read `d` alone.
  model::Dims full, d;
  StepShape shape;
  OptimizerConfig opt;
  DeviceOptions options;
  ParameterTable table;
  std::int64_t n = 0, params = 0;
  backend::AttentionShape attn_shape;
  bool use_cudnn = false;
  /// Tensor parallelism: the TP group's collectives (null alone), its size, this rank, and the
  /// first id of this rank's vocabulary slice.
  std::shared_ptr<parallel::DeviceCollectives> tp_comm;
  int tp = 1, tp_rank = 0;
  std::int64_t vocab_begin = 0;
  /// Pipeline parallelism: the stages' collectives (null alone), their count, this stage, its
  /// end flags, and the micro-batches it keeps in flight under 1F1B (activation slots).
  std::shared_ptr<parallel::DeviceCollectives> pp_comm;
  int stages = 1, stage = 0, slots = 1;
  bool first_stage = true, last_stage = true;
  /// Data parallelism: the DP group's collectives (null alone), its size and this rank, and
  /// whether the optimizer is distributed (ZeRO-1: each rank updates its slices of the buckets).
  std::shared_ptr<parallel::DeviceCollectives> dp_comm;
  int dp = 1, dp_rank = 0;
  bool zero = false;
  /// An untied embedding's gradient is cleared row by row (the rows the step's tokens touched)
  /// on one GPU; under DP other ranks' rows arrive by the reduction, so the whole tensor is.
  bool sparse_embedding_zeroing = false;

  OwnedStream stream;  // before the buffers: destroyed after them
  /// The gradient norm's stream: each segment of the gradient (embedding, each layer, final norm
  /// and head) is reduced there as soon as the backward pass has finished it, alongside the rest
  /// of the backward pass; the main stream joins it before the optimizer.
  OwnedStream norm_stream;
  /// The TP stream: the backward pass's input-gradient all-reduces beside the weight-gradient
  /// GEMMs (tp_all_reduce_begin / _end).
  OwnedStream tp_stream;
  gpuEvent_t tp_ready = nullptr, tp_done = nullptr;
  bool tp_pending = false;
  std::vector<std::pair<std::int64_t, std::int64_t>> norm_segments;  // (offset, count)
  std::vector<gpuEvent_t> segment_done;  // one per segment, then the join
  /// The DP buckets (one per segment alone, or without ZeRO-1 and DP, as they are the norm's
  /// units too); `updated` marks each ZeRO-1 bucket's AdamW done, for its all-gather.
  BucketPlan buckets;
  std::vector<gpuEvent_t> updated;
  /// The parts of each bucket's slice whose squares this rank adds to the gradient norm, each
  /// with its own Gpu::reduce_partials slots: the whole slice, except on TP ranks other than 0,
  /// which skip the tensors every TP rank holds whole (norm gains), so each element counts once.
  struct NormRange {
    std::size_t bucket;
    std::int64_t offset, count;
  };
  std::vector<NormRange> norm_ranges;
  gpuEvent_t start = nullptr, stop = nullptr;
  gpuGraphExec_t graph = nullptr;
  int eager_steps = 0;
  std::size_t held = 0;
  /// Gradient ranges zeroed before each step: every tensor whose first write is not a beta-0
  /// weight-gradient GEMM (norm gains and biases accumulate; an untied embedding's rows are
  /// added per token). Skipping the rest saves a write of the whole gradient buffer per step.
  std::vector<std::pair<std::int64_t, std::int64_t>> zero_ranges;

  /// The fp32 master weights, split (Gpu::split_master): `weights` are the bf16 the step reads
  /// (GEMMs, embedding, norm gains: nullptr for the remainders), `master_lo` the remainders, read
  /// by AdamW only, so ZeRO-1 shards them with the moments. Gradients and moments are fp32.
  DeviceBuffer<bf16> weights;
  DeviceBuffer<std::uint16_t> master_lo;
  DeviceBuffer<float> grads, m, v;
  DeviceBuffer<std::int64_t> tensor_ends;
  DeviceBuffer<std::uint8_t> decay;
  std::vector<LayerActs> layers;  // [slot][local layer]
  int local_layers = 0;
  DeviceBuffer<float> x_final;  // [slot][n, h]: the stage's output (last stage: the final norm's input)
  DeviceBuffer<float> rstd_final, row_loss;
  DeviceBuffer<bf16> xn_final, logits;
  DeviceBuffer<bf16> hidden, dhidden, dgate, dup, dres_bf, dattn, dq, dk, dv;
  DeviceBuffer<float> dres, dxn, norm_partials, bias_partials, rope_cos, rope_sin;
  DeviceBuffer<std::uint8_t> attn_workspace;
  DeviceBuffer<std::int32_t> inputs, targets, group_ids, offsets, positions, group_count;
  DeviceBuffer<std::int32_t> touched_rows, touched_count;  // embedding rows of the last step
  DeviceBuffer<backend::OptimizerScalars> scalars;
  DeviceBuffer<double> results, reduce_partials;  // results: [loss sum, gradient sum of squares]
  DeviceBuffer<double> norm_partials_of_ranges;  // Gpu::reduce_partials per NormRange
  DeviceBuffer<float> ce_stats;  // TP: every rank's cross-entropy statistics [tp][n][3]
  DeviceBuffer<std::int64_t> bucket_tensor_ends;     // BucketPlan::tensor_ends (ZeRO-1 AdamW)
  DeviceBuffer<std::uint8_t> bucket_decay;

  PinnedBuffer<std::int32_t> h_inputs, h_targets, h_group_ids, h_offsets, h_positions,
      h_group_count;
  PinnedBuffer<backend::OptimizerScalars> h_scalars;
  PinnedBuffer<double> h_results;

  template <class T>
  DeviceBuffer<T> alloc(std::int64_t count) {
    DeviceBuffer<T> b(static_cast<std::size_t>(count), stream);
    held += b.bytes();
    return b;
  }

  float* g(std::int64_t off) { return grads.data() + off; }
  const bf16* w(std::int64_t off) { return weights.data() + off; }

  Engine(const model::Dims& dims, StepShape s, const OptimizerConfig& o, std::uint64_t seed,
       DeviceOptions opts, DeviceGroups groups)
      : full(dims),
        d(dims),
        shape(s),
        opt(o),
        options(opts),
        tp_comm(std::move(groups.tp)),
        pp_comm(std::move(groups.pp)),
        dp_comm(std::move(groups.dp)) {
    join_group(tp_comm, tp, tp_rank);
    join_group(pp_comm, stages, stage);
    join_group(dp_comm, dp, dp_rank);
    zero = dp_comm && opt.distributed_optimizer;
    if (d.heads % tp != 0 || d.kv_heads % tp != 0 || d.ffn % tp != 0 || d.vocab % tp != 0)
      throw core::InputError(
          "tensor parallelism TP=" + std::to_string(tp) + " must divide the heads (" +
              std::to_string(d.heads) + "), KV heads (" + std::to_string(d.kv_heads) +
              "), FFN width (" + std::to_string(d.ffn) + ") and vocabulary (" +
              std::to_string(d.vocab) + ") of " + std::string(d.name),
          "pick a TP that divides all four");
    first_stage = stage == 0;
    last_stage = stage == stages - 1;
    if (d.layers % stages != 0)
      throw core::InputError("PP=" + std::to_string(stages) + " stages cannot split " +
                                 std::to_string(d.layers) + " layers evenly",
                             "run a multiple of " + std::to_string(stages) + " layers");
    if (d.tied_embeddings && stages > 1)
      throw core::InputError("pipeline parallelism with tied embeddings (" + std::string(d.name) +
                                 ") is not implemented: the first and last stages would share "
                                 "the embedding",
                             "use PP=1 for this model");
    local_layers = d.layers / stages;
    slots = train::pipeline_slots(stages, stage, shape.grad_accum);
    d.heads /= tp;
    d.kv_heads /= tp;
    d.ffn /= tp;
    d.vocab /= tp;
    vocab_begin = std::int64_t{d.vocab} * tp_rank;
    sparse_embedding_zeroing = !d.tied_embeddings && dp == 1 && first_stage;
    if (Gpu::device_count() == 0)
      throw core::RunError(
          TPRIMAT_GPU_HIP ? "no HIP device: the HIP backend needs an AMD GPU and ROCm"
                          : "no CUDA device: the CUDA backend needs an NVIDIA GPU and its driver");
    Shard shard;
    shard.tp_rank = tp_rank;
    shard.tp_size = tp;
    shard.layer_begin = stage * local_layers;
    shard.layer_count = local_layers;
    shard.first_stage = first_stage;
    shard.last_stage = last_stage;
    shard.slots = slots;
    table = make_parameter_table(full, shard);
    n = std::int64_t{shape.mbs} * shape.seq;
    params = table.total();
    attn_shape = {shape.mbs, shape.seq, d.heads, d.kv_heads, d.head_dim};
#if TPRIMAT_GPU_HIP
    if (options.attention == AttentionChoice::cudnn)
      throw core::InputError("cuDNN's fused attention exists on NVIDIA GPUs only",
                             "use --attention flash (or auto) with the HIP backend");
#else
    use_cudnn = options.attention == AttentionChoice::cudnn ||
                (options.attention == AttentionChoice::automatic &&
                 backend::CudnnAttention::supports(attn_shape));
    if (options.attention == AttentionChoice::cudnn &&
        !backend::CudnnAttention::supports(attn_shape))
      throw core::InputError("cuDNN's fused attention does not support head_dim " +
                                 std::to_string(d.head_dim) + " at seq " +
                                 std::to_string(shape.seq) + " on this device/cuDNN",
                             "use --attention flash (or auto)");
#endif
    if (!use_cudnn && !backend::FlashAttention::supports(attn_shape))
      throw core::InputError("no attention kernel supports head_dim " +
                             std::to_string(d.head_dim) + " (flash: 16, 32, 64, 128)");
    stream.create();
    norm_stream.create();
    tp_stream.create();
    for (gpuEvent_t* e : {&tp_ready, &tp_done})
      backend::gpu_check(gpuEventCreateWithFlags(e, gpuEventDisableTiming), "gpuEventCreate");
    plan_norm_segments();
    backend::gpu_check(gpuEventCreate(&start), "gpuEventCreate");
    backend::gpu_check(gpuEventCreate(&stop), "gpuEventCreate");
    Gpu::reset_peaks();
    plan_zero_ranges();
    allocate_buffers();
    init_weights(seed);
    Gpu::gemm_prepare(stream);
#if !TPRIMAT_GPU_HIP
    if (use_cudnn) backend::CudnnAttention::prepare(attn_shape, stream);
#endif
    backend::gpu_check(gpuStreamSynchronize(stream), "engine set-up");
  }

  /// One parallel group: its size and this rank in it; alone, the collectives are dropped (size
  /// 1, rank 0 stay). Host-staged collectives wait on the host: then nothing is captured.
  void join_group(std::shared_ptr<parallel::DeviceCollectives>& comm, int& size, int& rank) {
    if (!comm || comm->size() <= 1) {
      comm.reset();
      return;
    }
    size = comm->size();
    rank = comm->rank();
    if (!comm->capturable()) options.graph = false;
  }

  ~Engine() {
    // Nothing of the last step may still read the pinned buffers when they are freed.
    if (stream) (void)gpuStreamSynchronize(stream);
    if (graph) (void)gpuGraphExecDestroy(graph);
    if (norm_stream) (void)gpuStreamSynchronize(norm_stream);
    if (tp_stream) (void)gpuStreamSynchronize(tp_stream);
    for (gpuEvent_t e : {tp_ready, tp_done})
      if (e) (void)gpuEventDestroy(e);
    for (gpuEvent_t e : events) (void)gpuEventDestroy(e);
    for (gpuEvent_t e : segment_done) (void)gpuEventDestroy(e);
    for (gpuEvent_t e : updated) (void)gpuEventDestroy(e);
    if (start) (void)gpuEventDestroy(start);
    if (stop) (void)gpuEventDestroy(stop);
    // The buffers free on `stream` as members are destroyed; `stream` itself goes last.
  }

  /// The gradient's segments in buffer order, each final at one point of the last micro-batch's
  /// backward pass: [embedding], [layer 0], ..., [layer L-1], [final norm, head] (a pipeline
  /// stage: the embedding on the first only, final norm and head on the last only).
  void plan_norm_segments() {
    std::vector<std::int64_t> starts;
    if (first_stage) starts.push_back(0);
    for (const auto& lp : table.layers) starts.push_back(lp.attn_norm);
    if (last_stage) starts.push_back(table.final_norm);
    for (std::size_t s = 0; s < starts.size(); ++s) {
      const std::int64_t end = s + 1 < starts.size() ? starts[s + 1] : params;
      norm_segments.emplace_back(starts[s], end - starts[s]);
    }
    segment_done.resize(norm_segments.size() + 1);
    for (gpuEvent_t& e : segment_done)
      backend::gpu_check(gpuEventCreateWithFlags(&e, gpuEventDisableTiming), "gpuEventCreate");
    buckets = plan_gradient_buckets(norm_segments, table, dp, dp_rank);
    plan_norm_ranges();
    updated.resize(zero ? buckets.buckets.size() : 0);
    for (gpuEvent_t& e : updated)
      backend::gpu_check(gpuEventCreateWithFlags(&e, gpuEventDisableTiming), "gpuEventCreate");
  }

  std::size_t layer_segment(int l) const { return (first_stage ? 1 : 0) + l; }

  void plan_norm_ranges() {
    for (std::size_t i = 0; i < buckets.buckets.size(); ++i) {
      const GradientBucket& b = buckets.buckets[i];
      const std::int64_t begin = b.slice_begin, end = b.slice_begin + b.slice_count;
      if (tp_rank == 0) {
        norm_ranges.push_back({i, begin, b.slice_count});
        continue;
      }
      for (const ParamTensor& t : table.tensors) {
        if (t.split == Split::none) continue;  // held whole by every TP rank
        const std::int64_t lo = std::max(begin, t.offset);
        const std::int64_t hi = std::min(end, t.offset + t.size());
        if (lo >= hi) continue;
        NormRange* last = norm_ranges.empty() ? nullptr : &norm_ranges.back();
        if (last && last->bucket == i && last->offset + last->count == lo)
          last->count += hi - lo;  // adjacent: one reduction
        else
          norm_ranges.push_back({i, lo, hi - lo});
      }
    }
    if (norm_ranges.empty()) norm_ranges.push_back({0, 0, 0});  // its slots hold zeros
  }

  /// The stream of the gradient work beside the backward pass: the norm stream, or the main
  /// stream itself without overlap (DeviceOptions::overlap).
  gpuStream_t side_stream() const { return options.overlap ? norm_stream : stream; }
  /// The main stream waits for the side stream's work (none without overlap: a graph capture
  /// refuses a wait on a stream it never forked to).
  void join_side_stream() {
    if (!options.overlap) return;
    backend::gpu_check(gpuEventRecord(segment_done.back(), norm_stream), "gpuEventRecord");
    backend::gpu_check(gpuStreamWaitEvent(stream, segment_done.back(), 0), "gpuStreamWaitEvent");
  }

  /// Segment `s` of the gradient is final on the main stream. On the norm stream, alongside the
  /// rest of the backward pass: the buckets it completes are reduced over DP (all-reduce, or
  /// reduce-scatter under ZeRO-1), then the squares of this rank's slice of each (its
  /// NormRanges) are summed into their own Gpu::reduce_partials slots.
  void reduce_norm_segment(std::size_t s) {
    const gpuStream_t side = side_stream();
    if (options.overlap) {
      backend::gpu_check(gpuEventRecord(segment_done[s], stream), "gpuEventRecord");
      backend::gpu_check(gpuStreamWaitEvent(norm_stream, segment_done[s], 0),
                         "gpuStreamWaitEvent");
    }
    for (std::size_t i = 0; i < buckets.buckets.size(); ++i) {
      const GradientBucket& b = buckets.buckets[i];
      if (b.trigger != static_cast<int>(s)) continue;
      if (dp_comm) {
        const profile::Range range("dp gradient reduction");
        if (zero)
          dp_comm->reduce_scatter_sum(g(b.offset), static_cast<std::size_t>(b.chunk), side);
        else
          dp_comm->all_reduce_sum(g(b.offset), static_cast<std::size_t>(b.count), side);
      }
      for (std::size_t r = 0; r < norm_ranges.size(); ++r)
        if (norm_ranges[r].bucket == i)
          Gpu::reduce_sum_partials(g(norm_ranges[r].offset), norm_ranges[r].count, true,
                                   norm_partials_of_ranges.data() + r * Gpu::reduce_partials,
                                   side);
    }
  }

  void plan_zero_ranges() {
    std::vector<std::int64_t> gemm_written;
    for (const auto& lp : table.layers)
      for (std::int64_t o : {lp.wq, lp.wk, lp.wv, lp.wo, lp.w_gate, lp.w_up, lp.w_down})
        gemm_written.push_back(o);
    gemm_written.push_back(d.tied_embeddings ? table.embedding : table.head);
    // An untied embedding's gradient is zero except the rows the last step's tokens touched,
    // which enqueue_step clears (zero_rows) instead of the whole [vocab, hidden] tensor.
    if (sparse_embedding_zeroing) gemm_written.push_back(table.embedding);
    for (const auto& t : table.tensors) {
      if (std::find(gemm_written.begin(), gemm_written.end(), t.offset) != gemm_written.end())
        continue;
      if (!zero_ranges.empty() &&
          zero_ranges.back().first + zero_ranges.back().second == t.offset)
        zero_ranges.back().second += t.size();  // adjacent: one memset
      else
        zero_ranges.emplace_back(t.offset, t.size());
    }
  }

  void allocate_buffers() {
    const std::int64_t h = d.hidden, qd = d.q_dim(), kvd = d.kv_dim(), f = d.ffn, V = d.vocab;
    const int ga = shape.grad_accum;
    // Under ZeRO-1 the remainders and moments are this rank's slices only; the collectives may
    // run past the last parameter by buckets.padding (zeroed once, never updated).
    const std::int64_t state = zero ? buckets.owned : params;
    weights = alloc<bf16>(params + buckets.padding);
    master_lo = alloc<std::uint16_t>(state);
    grads = alloc<float>(params + buckets.padding);
    m = alloc<float>(state);
    v = alloc<float>(state);
    backend::gpu_check(gpuMemsetAsync(weights.data(), 0, weights.bytes(), stream), "memset");
    layers.resize(static_cast<std::size_t>(slots) * local_layers);
    for (auto& a : layers) {
      a.x = alloc<float>(n * h);
      a.x_mid = alloc<float>(n * h);
      a.xn1 = alloc<bf16>(n * h);
      a.xn2 = alloc<bf16>(n * h);
      a.rstd1 = alloc<float>(n);
      a.rstd2 = alloc<float>(n);
      a.q = alloc<bf16>(n * qd);
      a.k = alloc<bf16>(n * kvd);
      a.v = alloc<bf16>(n * kvd);
      a.attn = alloc<bf16>(n * qd);
      a.lse = alloc<float>(std::int64_t{shape.mbs} * d.heads * shape.seq);
      a.gate = alloc<bf16>(n * f);
      a.up = alloc<bf16>(n * f);
    }
    x_final = alloc<float>(slots * n * h);
    if (last_stage) {
      xn_final = alloc<bf16>(n * h);
      rstd_final = alloc<float>(n);
      logits = alloc<bf16>(n * V);
      row_loss = alloc<float>(n);
    }
    for (auto* b : {&hidden, &dhidden, &dgate, &dup}) *b = alloc<bf16>(n * f);
    dres = alloc<float>(n * h);
    dxn = alloc<float>(n * h);
    dres_bf = alloc<bf16>(n * h);
    dattn = alloc<bf16>(n * qd);
    dq = alloc<bf16>(n * qd);
    dk = alloc<bf16>(n * kvd);
    dv = alloc<bf16>(n * kvd);
    norm_partials = alloc<float>(Gpu::rmsnorm_partials(n, d.hidden));
    bias_partials = alloc<float>(d.qkv_bias ? Gpu::bias_partials(n, qd) : 1);
    const std::size_t ws = attention_workspace_bytes();
    attn_workspace = alloc<std::uint8_t>(static_cast<std::int64_t>(std::max<std::size_t>(ws, 1)));
    const std::int64_t half = d.head_dim / 2;
    rope_cos = alloc<float>(shape.seq * half);
    rope_sin = alloc<float>(shape.seq * half);
    inputs = alloc<std::int32_t>(ga * n);
    targets = alloc<std::int32_t>(ga * n);
    group_ids = alloc<std::int32_t>(ga * n);
    offsets = alloc<std::int32_t>(ga * (n + 1));
    positions = alloc<std::int32_t>(ga * n);
    group_count = alloc<std::int32_t>(ga);
    touched_rows = alloc<std::int32_t>(ga * n);
    touched_count = alloc<std::int32_t>(ga);
    backend::gpu_check(gpuMemsetAsync(touched_count.data(), 0, touched_count.bytes(), stream),
                        "memset");
    scalars = alloc<backend::OptimizerScalars>(1);
    results = alloc<double>(2);
    reduce_partials = alloc<double>(Gpu::reduce_partials);
    norm_partials_of_ranges =
        alloc<double>(static_cast<std::int64_t>(norm_ranges.size()) * Gpu::reduce_partials);
    if (tp_comm && last_stage) ce_stats = alloc<float>(tp * n * Gpu::cross_entropy_stats_per_row);
    if (zero) {
      bucket_tensor_ends = alloc<std::int64_t>(std::max<std::int64_t>(
          1, static_cast<std::int64_t>(buckets.tensor_ends.size())));
      bucket_decay = alloc<std::uint8_t>(bucket_tensor_ends.size());
      if (!buckets.tensor_ends.empty()) {
        bucket_tensor_ends.upload(buckets.tensor_ends);
        bucket_decay.upload(buckets.decay);
      }
    }
    const int t = static_cast<int>(table.tensors.size());
    tensor_ends = alloc<std::int64_t>(t);
    decay = alloc<std::uint8_t>(t);

    h_inputs = PinnedBuffer<std::int32_t>(ga * n);
    h_targets = PinnedBuffer<std::int32_t>(ga * n);
    h_group_ids = PinnedBuffer<std::int32_t>(ga * n);
    h_offsets = PinnedBuffer<std::int32_t>(ga * (n + 1));
    h_positions = PinnedBuffer<std::int32_t>(ga * n);
    h_group_count = PinnedBuffer<std::int32_t>(ga);
    h_scalars = PinnedBuffer<backend::OptimizerScalars>(1);
    h_results = PinnedBuffer<double>(2);

    std::vector<std::int64_t> ends(t);
    std::vector<std::uint8_t> flags(t);
    for (int i = 0; i < t; ++i) {
      ends[i] = table.tensors[i].offset + table.tensors[i].size();
      flags[i] = table.tensors[i].decay ? 1 : 0;
    }
    tensor_ends.upload(ends);
    decay.upload(flags);
    std::vector<float> cos_t(shape.seq * half), sin_t(shape.seq * half);
    backend::Cpu::rope_tables(d, shape.seq, cos_t.data(), sin_t.data());
    rope_cos.upload(cos_t);
    rope_sin.upload(sin_t);
  }

  /// The fp32 weights are drawn into the gradient buffer, which stands in for an fp32 master
  /// until set_master_from_grads() has split them. Each element's draw is keyed by its place in
  /// the whole model's buffer, so a TP shard holds one GPU's weights.
  void init_weights(std::uint64_t seed) {
    const ParameterTable whole = make_parameter_table(full, Shard{});
    for (std::size_t k = 0; k < table.all_tensors.size(); ++k) {
      if (table.local_index[k] < 0) continue;
      const ParamTensor& t = table.tensors[table.local_index[k]];
      const std::int64_t first =
          whole.tensors[k].offset + t.row_begin * t.full_cols + t.col_begin;
      if (t.init == Init::normal)
        Gpu::init_normal_block(g(t.offset), t.rows, t.cols, t.full_cols,
                               static_cast<float>(opt.init_std), seed,
                               static_cast<std::uint64_t>(first), stream);
      else
        Gpu::fill(g(t.offset), t.size(), t.init == Init::ones ? 1.0f : 0.0f, stream);
    }
    set_master_from_grads();
  }

  /// The master from the fp32 weights in `grads` (init or load); then gradients and AdamW
  /// moments zeroed.
  void set_master_from_grads() {
    if (!zero) {
      Gpu::split_master(grads.data(), weights.data(), master_lo.data(), params, stream);
    } else {
      // Every weight's bf16 half, the remainders dropped into m (scratch, zeroed below); then
      // this rank's slices again, keeping their remainders.
      auto* scratch = reinterpret_cast<std::uint16_t*>(m.data());
      const std::int64_t room = 2 * static_cast<std::int64_t>(m.size());
      for (std::int64_t off = 0; off < params; off += room)
        Gpu::split_master(g(off), weights.data() + off, scratch, std::min(room, params - off),
                          stream);
      for (const GradientBucket& b : buckets.buckets)
        Gpu::split_master(g(b.slice_begin), weights.data() + b.slice_begin,
                          master_lo.data() + b.owned_base, b.slice_count, stream);
    }
    for (auto* b : {&grads, &m, &v})
      backend::gpu_check(gpuMemsetAsync(b->data(), 0, b->bytes(), stream), "memset");
  }

  template <class Out>
  void gemm(bool ta, bool tb, std::int64_t M, std::int64_t N, std::int64_t K, const bf16* a,
            std::int64_t lda, const bf16* b, std::int64_t ldb, float beta, Out* c,
            std::int64_t ldc, const bf16* bias = nullptr) {
    const profile::Range range("gemm", profile::Flops{2.0 * double(M) * double(N) * double(K)});
    mark("gemm");
    Gpu::gemm<Out>(ta, tb, M, N, K, a, lda, b, ldb, beta, c, ldc, bias, stream);
    mark("elementwise");
  }

  // ---- phase timing (DeviceOptions::phase_timing, eager steps only) ----------------------------
  // mark(c) records an event: the GPU time until the next mark is charged to category c.
  std::vector<gpuEvent_t> events;
  std::vector<const char*> event_category;
  std::size_t events_used = 0;
  bool timing = false;
  std::vector<std::pair<std::string, double>> phase_totals;
  double issue_seconds = 0;

  void mark(const char* category) {
    if (!timing) return;
    if (events_used == events.size()) {
      gpuEvent_t e = nullptr;
      backend::gpu_check(gpuEventCreate(&e), "gpuEventCreate");
      events.push_back(e);
      event_category.push_back(category);
    }
    event_category[events_used] = category;
    backend::gpu_check(gpuEventRecord(events[events_used++], stream), "gpuEventRecord");
  }

  void collect_phases() {
    phase_totals.clear();
    for (std::size_t i = 0; i + 1 < events_used; ++i) {
      float ms = 0;
      backend::gpu_check(gpuEventElapsedTime(&ms, events[i], events[i + 1]), "phase timing");
      const std::string name = event_category[i];
      auto it = std::find_if(phase_totals.begin(), phase_totals.end(),
                             [&](const auto& p) { return p.first == name; });
      if (it == phase_totals.end())
        phase_totals.emplace_back(name, ms * 1e-3);
      else
        it->second += ms * 1e-3;
    }
  }

  /// out[M, N] = residual + a[M, K] w[K, N] (row-major, fp32 residual stream): the residual
  /// add rides in the GEMM, which reads `residual` and writes `out`, with no copy.
  void gemm_add(std::int64_t M, std::int64_t N, std::int64_t K, const bf16* a, const bf16* w,
                const float* residual, float* out) {
    const profile::Range range("gemm", profile::Flops{2.0 * double(M) * double(N) * double(K)});
    mark("gemm");
    Gpu::gemm_add<float>(false, false, M, N, K, a, K, w, N, residual, out, N, stream);
    mark("elementwise");
  }

  // ---- tensor parallelism: the forward's collectives on the main stream (what follows needs
  // them), the backward's input-gradient all-reduces beside the weight-gradient GEMMs --------

  /// x summed over the TP ranks: the partial products of a row-parallel GEMM, or the partial
  /// input gradients of column-parallel ones.
  void tp_all_reduce(float* x, std::int64_t count) {
    if (!tp_comm) return;
    const profile::Range range("tp all-reduce");
    mark("tp_comm");
    tp_comm->all_reduce_sum(x, static_cast<std::size_t>(count), static_cast<gpuStream_t>(stream));
    mark("elementwise");
  }

  /// The backward pass's TP all-reduce of an input gradient, started where the gradient is
  /// complete: on the TP stream beside the weight-gradient GEMMs that follow (DeviceOptions::
  /// overlap), else in line; tp_all_reduce_end() makes the main stream wait for it before the
  /// RMSNorm backward reads it.
  void tp_all_reduce_begin(float* x, std::int64_t count) {
    if (!tp_comm) return;
    if (!options.overlap) return tp_all_reduce(x, count);
    const profile::Range range("tp all-reduce");
    backend::gpu_check(gpuEventRecord(tp_ready, stream), "gpuEventRecord");
    backend::gpu_check(gpuStreamWaitEvent(tp_stream, tp_ready, 0), "gpuStreamWaitEvent");
    tp_comm->all_reduce_sum(x, static_cast<std::size_t>(count),
                            static_cast<gpuStream_t>(tp_stream));
    backend::gpu_check(gpuEventRecord(tp_done, tp_stream), "gpuEventRecord");
    tp_pending = true;
  }
  void tp_all_reduce_end() {
    if (!tp_pending) return;
    backend::gpu_check(gpuStreamWaitEvent(stream, tp_done, 0), "gpuStreamWaitEvent");
    tp_pending = false;
  }

  /// out[M, N] = residual + a[M, K] w[K, N] with w this rank's rows of a row-parallel weight (O,
  /// down): the partial products summed over TP, the residual added by TP rank 0 alone.
  void row_parallel_add(std::int64_t M, std::int64_t N, std::int64_t K, const bf16* a,
                        const bf16* w, const float* residual, float* out) {
    if (tp_rank == 0)
      gemm_add(M, N, K, a, w, residual, out);
    else
      gemm(false, false, M, N, K, a, K, w, N, 0.f, out, N);
    tp_all_reduce(out, M * N);
  }

  /// Row losses and (in place) grad_scale * dloss/dlogits of this rank's logits [n, d.vocab]:
  /// the fused kernel alone, or under TP each rank's per-row statistics all-gathered and
  /// combined in rank order (the same losses on every rank).
  void cross_entropy(int micro, float grad_scale) {
    const std::int32_t* tg = targets.data() + micro * n;
    if (!tp_comm) {
      Gpu::cross_entropy(logits.data(), tg, n, d.vocab, grad_scale, true, row_loss.data(),
                         stream);
      return;
    }
    const std::int64_t per_rank = n * Gpu::cross_entropy_stats_per_row;
    Gpu::cross_entropy_stats(logits.data(), tg, n, d.vocab, static_cast<int>(vocab_begin),
                             ce_stats.data() + tp_rank * per_rank, stream);
    {
      const profile::Range range("tp cross-entropy exchange");
      mark("tp_comm");
      tp_comm->all_gather_bytes(ce_stats.data(), per_rank * sizeof(float),
                                static_cast<gpuStream_t>(stream));
      mark("loss");
    }
    Gpu::cross_entropy_combine(logits.data(), tg, n, d.vocab, static_cast<int>(vocab_begin),
                               ce_stats.data(), tp, grad_scale, true, row_loss.data(), stream);
  }

  // ---- attention: cuDNN's SDPA (CUDA, when chosen) or the project's flash kernels ------------
  std::size_t attention_workspace_bytes() const {
#if !TPRIMAT_GPU_HIP
    if (use_cudnn) return backend::CudnnAttention::backward_workspace_bytes(attn_shape);
#endif
    return backend::FlashAttention::backward_workspace_bytes(attn_shape);
  }

  void attention_forward(LayerActs& a) {
#if !TPRIMAT_GPU_HIP
    if (use_cudnn)
      return backend::CudnnAttention::forward(a.q.data(), a.k.data(), a.v.data(), a.attn.data(),
                                              a.lse.data(), attn_shape, stream);
#endif
    backend::FlashAttention::forward(a.q.data(), a.k.data(), a.v.data(), a.attn.data(),
                                     a.lse.data(), attn_shape, stream);
  }

  /// dq, dk, dv from dattn.
  void attention_backward(LayerActs& a) {
#if !TPRIMAT_GPU_HIP
    if (use_cudnn)
      return backend::CudnnAttention::backward(a.q.data(), a.k.data(), a.v.data(), a.attn.data(),
                                               a.lse.data(), dattn.data(), dq.data(), dk.data(),
                                               dv.data(), attn_shape, attn_workspace.data(),
                                               stream);
#endif
    backend::FlashAttention::backward(a.q.data(), a.k.data(), a.v.data(), a.attn.data(),
                                      a.lse.data(), dattn.data(), dq.data(), dk.data(), dv.data(),
                                      attn_shape, attn_workspace.data(), stream);
  }

  LayerActs& acts(int slot, int l) { return layers[std::size_t(slot) * local_layers + l]; }
  /// The stage's input (received from the previous stage, or the embedding's output) and its
  /// output (sent on, or the final norm's input) in slot `slot`.
  float* stage_input(int slot) {
    return local_layers == 0 ? stage_output(slot) : acts(slot, 0).x.data();
  }
  float* stage_output(int slot) { return x_final.data() + std::int64_t{slot} * n * d.hidden; }

  /// Micro-batch `micro` forward in activation slot `slot`: from the embedding on the first stage
  /// (else from the input the previous stage sent), to the loss on the last.
  void forward(int micro, int slot, float grad_scale) {
    const profile::Range range("forward");
    const std::int64_t h = d.hidden, qd = d.q_dim(), kvd = d.kv_dim(), f = d.ffn, V = d.vocab;
    const float eps = static_cast<float>(d.norm_eps);
    if (first_stage) {
      const std::int32_t* ids = inputs.data() + micro * n;
      float* x0 = stage_input(slot);
      // Under TP the ids are this rank's vocabulary slice's (-1 elsewhere: zero rows).
      Gpu::embedding_forward(ids, n, w(table.embedding), nullptr, d.hidden, x0, stream);
      tp_all_reduce(x0, n * h);
    }
    for (int l = 0; l < local_layers; ++l) {
      const profile::Range layer_range("forward layer", l);
      const LayerParams& lp = table.layers[l];
      LayerActs& a = acts(slot, l);
      Gpu::rmsnorm_forward(a.x.data(), w(lp.attn_norm), nullptr, n, d.hidden, eps,
                           a.xn1.data(), a.rstd1.data(), stream);
      const bool bias = d.qkv_bias;
      gemm(false, false, n, qd, h, a.xn1.data(), h, w(lp.wq), qd, 0.f, a.q.data(), qd,
           bias ? w(lp.bq) : nullptr);
      gemm(false, false, n, kvd, h, a.xn1.data(), h, w(lp.wk), kvd, 0.f, a.k.data(), kvd,
           bias ? w(lp.bk) : nullptr);
      gemm(false, false, n, kvd, h, a.xn1.data(), h, w(lp.wv), kvd, 0.f, a.v.data(), kvd,
           bias ? w(lp.bv) : nullptr);
      Gpu::rope_forward(a.q.data(), n, shape.seq, d.heads, d.head_dim, rope_cos.data(),
                         rope_sin.data(), stream);
      Gpu::rope_forward(a.k.data(), n, shape.seq, d.kv_heads, d.head_dim, rope_cos.data(),
                         rope_sin.data(), stream);
      mark("attention");
      attention_forward(a);
      mark("elementwise");
      row_parallel_add(n, h, qd, a.attn.data(), w(lp.wo), a.x.data(), a.x_mid.data());
      Gpu::rmsnorm_forward(a.x_mid.data(), w(lp.mlp_norm), nullptr, n, d.hidden, eps,
                           a.xn2.data(), a.rstd2.data(), stream);
      gemm(false, false, n, f, h, a.xn2.data(), h, w(lp.w_gate), f, 0.f, a.gate.data(), f);
      gemm(false, false, n, f, h, a.xn2.data(), h, w(lp.w_up), f, 0.f, a.up.data(), f);
      Gpu::swiglu_forward(a.gate.data(), a.up.data(), hidden.data(), n * f, stream);
      float* next = l + 1 < local_layers ? acts(slot, l + 1).x.data() : stage_output(slot);
      row_parallel_add(n, h, f, hidden.data(), w(lp.w_down), a.x_mid.data(), next);
    }
    if (!last_stage) return;  // the caller sends stage_output(slot) on
    Gpu::rmsnorm_forward(stage_output(slot), w(table.final_norm), nullptr, n, d.hidden,
                         eps, xn_final.data(), rstd_final.data(), stream);
    if (d.tied_embeddings)  // logits = xn E^T, E [vocab, hidden]
      gemm(false, true, n, V, h, xn_final.data(), h, w(table.embedding), h, 0.f, logits.data(),
           V);
    else
      gemm(false, false, n, V, h, xn_final.data(), h, w(table.head), V, 0.f, logits.data(), V);
    mark("loss");
    cross_entropy(micro, grad_scale);
    Gpu::reduce_sum(row_loss.data(), n, false, micro > 0, results.data(),
                     reduce_partials.data(), stream);
    mark("elementwise");
  }

  /// Micro-batch `micro` backward from slot `slot`: from the loss on the last stage (else from the
  /// output gradient the next stage sent into `dres`), to the embedding on the first (else `dres`
  /// holds the input gradient the caller sends back).
  void backward(int micro, int slot) {
    const profile::Range range("backward");
    const std::int64_t h = d.hidden, qd = d.q_dim(), kvd = d.kv_dim(), f = d.ffn;
    // Weight gradients: the first micro-batch's GEMM writes them (beta 0), later ones add; the
    // tensors no GEMM writes first were zeroed by enqueue_step (zero_ranges).
    const float acc = micro == 0 ? 0.f : 1.f;
    const bool last = micro == shape.grad_accum - 1;  // the gradients become final in it
    if (last_stage) head_backward(slot, acc, last);
    else  // dres holds the received gradient of the stage's output
      Gpu::to_bf16(dres.data(), dres_bf.data(), n * h, stream);
    for (int l = local_layers - 1; l >= 0; --l) {
      const profile::Range layer_range("backward layer", l);
      const LayerParams& lp = table.layers[l];
      LayerActs& a = acts(slot, l);
      // MLP half: x_next = x_mid + swiglu(xn2 Wg, xn2 Wu) Wd; dres holds d x_next.
      // The input gradient first: the SwiGLU backward then recomputes the forward's h (not kept)
      // in the same pass over gate and up, for the down projection's weight gradient.
      gemm(false, true, n, f, h, dres_bf.data(), h, w(lp.w_down), h, 0.f, dhidden.data(), f);
      Gpu::swiglu_backward(a.gate.data(), a.up.data(), dhidden.data(), dgate.data(), dup.data(),
                           hidden.data(), n * f, stream);
      // The input gradient before the weight gradients: its TP all-reduce runs beside them.
      gemm(false, true, n, h, f, dgate.data(), f, w(lp.w_gate), f, 0.f, dxn.data(), h);
      gemm(false, true, n, h, f, dup.data(), f, w(lp.w_up), f, 1.f, dxn.data(), h);
      tp_all_reduce_begin(dxn.data(), n * h);
      gemm(true, false, f, h, n, hidden.data(), f, dres_bf.data(), h, acc, g(lp.w_down), h);
      gemm(true, false, h, f, n, a.xn2.data(), h, dgate.data(), f, acc, g(lp.w_gate), f);
      gemm(true, false, h, f, n, a.xn2.data(), h, dup.data(), f, acc, g(lp.w_up), f);
      tp_all_reduce_end();
      Gpu::rmsnorm_backward(a.x_mid.data(), w(lp.mlp_norm), nullptr, a.rstd2.data(),
                            dxn.data(), n, d.hidden, dres.data(), dres_bf.data(), g(lp.mlp_norm),
                            norm_partials.data(), stream);
      // Attention half: x_mid = x + attention(rope(xn1 Wq + bq), rope(xn1 Wk + bk), xn1 Wv + bv)Wo.
      gemm(true, false, qd, h, n, a.attn.data(), qd, dres_bf.data(), h, acc, g(lp.wo), h);
      gemm(false, true, n, qd, h, dres_bf.data(), h, w(lp.wo), h, 0.f, dattn.data(), qd);
      mark("attention");
      attention_backward(a);
      mark("elementwise");
      Gpu::rope_backward(dq.data(), n, shape.seq, d.heads, d.head_dim, rope_cos.data(),
                          rope_sin.data(), stream);
      Gpu::rope_backward(dk.data(), n, shape.seq, d.kv_heads, d.head_dim, rope_cos.data(),
                          rope_sin.data(), stream);
      if (d.qkv_bias) {
        Gpu::bias_backward(dq.data(), n, qd, g(lp.bq), bias_partials.data(), stream);
        Gpu::bias_backward(dk.data(), n, kvd, g(lp.bk), bias_partials.data(), stream);
        Gpu::bias_backward(dv.data(), n, kvd, g(lp.bv), bias_partials.data(), stream);
      }
      gemm(false, true, n, h, qd, dq.data(), qd, w(lp.wq), qd, 0.f, dxn.data(), h);
      gemm(false, true, n, h, kvd, dk.data(), kvd, w(lp.wk), kvd, 1.f, dxn.data(), h);
      gemm(false, true, n, h, kvd, dv.data(), kvd, w(lp.wv), kvd, 1.f, dxn.data(), h);
      tp_all_reduce_begin(dxn.data(), n * h);
      gemm(true, false, h, qd, n, a.xn1.data(), h, dq.data(), qd, acc, g(lp.wq), qd);
      gemm(true, false, h, kvd, n, a.xn1.data(), h, dk.data(), kvd, acc, g(lp.wk), kvd);
      gemm(true, false, h, kvd, n, a.xn1.data(), h, dv.data(), kvd, acc, g(lp.wv), kvd);
      tp_all_reduce_end();
      Gpu::rmsnorm_backward(a.x.data(), w(lp.attn_norm), nullptr, a.rstd1.data(),
                            dxn.data(), n, d.hidden, dres.data(), dres_bf.data(), g(lp.attn_norm),
                            norm_partials.data(), stream);
      if (last) reduce_norm_segment(layer_segment(l));
    }
    if (!first_stage) return;  // the caller sends dres, the gradient of the stage's input, back
    Gpu::embedding_backward(group_ids.data() + micro * n, offsets.data() + micro * (n + 1),
                            positions.data() + micro * n, group_count.data() + micro, n,
                            dres.data(), d.hidden, g(table.embedding), stream);
    if (last) reduce_norm_segment(0);  // a tied head's gradient is in it too
  }

  /// The last stage's head and final norm backward: dres = d loss / d stage output.
  void head_backward(int slot, float acc, bool last) {
    const std::int64_t h = d.hidden, V = d.vocab;
    const bf16* dlogits = logits.data();  // cross_entropy left grad_scale * dloss/dlogits here
    if (d.tied_embeddings) {
      gemm(false, false, n, h, V, dlogits, V, w(table.embedding), h, 0.f, dxn.data(), h);
      tp_all_reduce_begin(dxn.data(), n * h);
      gemm(true, false, V, h, n, dlogits, V, xn_final.data(), h, acc, g(table.embedding), h);
    } else {
      gemm(false, true, n, h, V, dlogits, V, w(table.head), V, 0.f, dxn.data(), h);
      tp_all_reduce_begin(dxn.data(), n * h);
      gemm(true, false, h, V, n, xn_final.data(), h, dlogits, V, acc, g(table.head), V);
    }
    tp_all_reduce_end();
    backend::gpu_check(gpuMemsetAsync(dres.data(), 0, dres.bytes(), stream), "memset");
    Gpu::rmsnorm_backward(stage_output(slot), w(table.final_norm), nullptr, rstd_final.data(),
                          dxn.data(), n, d.hidden, dres.data(), dres_bf.data(),
                          g(table.final_norm), norm_partials.data(), stream);
    if (last) reduce_norm_segment(norm_segments.size() - 1);  // final norm, head
  }

  /// Megatron's non-interleaved 1F1B over the micro-batches (train::one_f_one_b, the schedule
  /// the CPU engine runs too): the stage's output goes to the next stage and its gradient comes
  /// back point-to-point on the main stream, each exchange with one neighbour both ways in one
  /// grouped send_recv. Transfers are synchronous with the stream: the op after a receive needs
  /// what it receives, and steady-state sends ride with a receive, so a side stream could hide the
  /// sends' wire time, 4 n h bytes each (32 MiB for Llama at seq 2048, ~0.1 ms on NVLink) beside
  /// a stage's forward or backward of tens of ms.
  void run_1f1b(float grad_scale) {
    using K = PipelineOp::Kind;
    const int prev = stage - 1, next = stage + 1;
    auto p2p = [&](const float* out, int dest, float* in, int source) {
      const profile::Range range("pp transfer");
      mark("pp_comm");
      pp_comm->send_recv(out, dest, in, source, static_cast<std::size_t>(n) * d.hidden,
                         static_cast<gpuStream_t>(stream));
      mark("elementwise");
    };
    for (const PipelineOp& op : one_f_one_b(stages, stage, shape.grad_accum)) {
      switch (op.kind) {
        case K::forward: forward(op.micro, op.slot, grad_scale); break;
        case K::backward: backward(op.micro, op.slot); break;
        case K::recv_input: p2p(nullptr, -1, stage_input(op.slot), prev); break;
        case K::send_output: p2p(stage_output(op.slot), next, nullptr, -1); break;
        case K::send_output_recv_grad: p2p(stage_output(op.slot), next, dres.data(), next); break;
        case K::recv_grad: p2p(nullptr, -1, dres.data(), next); break;
        case K::send_grad: p2p(dres.data(), prev, nullptr, -1); break;
        case K::send_grad_recv_input: p2p(dres.data(), prev, stage_input(op.slot), prev); break;
      }
    }
  }

  /// Everything one step enqueues after its uploads: the part a CUDA graph captures.
  void enqueue_step() {
    // Each rank pre-scales by 1 / (target tokens of the global batch): the sum over DP is the mean.
    const float grad_scale =
        static_cast<float>(1.0 / (double(shape.grad_accum) * double(n) * double(dp)));
    mark("zero_grads");
    for (const auto& [offset, count] : zero_ranges)
      backend::gpu_check(gpuMemsetAsync(g(offset), 0, count * sizeof(float), stream), "memset");
    if (sparse_embedding_zeroing)
      for (int micro = 0; micro < shape.grad_accum; ++micro)
        Gpu::zero_rows(touched_rows.data() + micro * n, touched_count.data() + micro, n,
                        d.hidden, g(table.embedding), stream);
    if (pp_comm)
      run_1f1b(grad_scale);
    else
      for (int micro = 0; micro < shape.grad_accum; ++micro) {
        forward(micro, 0, grad_scale);
        backward(micro, 0);
      }
    const profile::Range optimizer_range("optimizer");  // grad norm, AdamW, to the step's end
    mark("grad_norm");  // what is left of it: the join and the sum of the segments' partials
    join_side_stream();
    Gpu::sum_partials(norm_partials_of_ranges.data(),
                      static_cast<int>(norm_ranges.size()) * Gpu::reduce_partials,
                      results.data() + 1, stream);
    if (!last_stage)  // the loss is the last stage's: the others add nothing to it
      backend::gpu_check(gpuMemsetAsync(results.data(), 0, sizeof(double), stream), "memset");
    if (pp_comm) {  // each stage's squares of its own parameters
      const profile::Range range("pp loss and norm");
      pp_comm->all_reduce_sum(results.data(), 2, static_cast<gpuStream_t>(stream));
    }
    if (tp_comm) {  // the loss once (TP rank 0's; every TP rank has it), each rank's squares
      const profile::Range range("tp loss and norm");
      if (tp_rank != 0)
        backend::gpu_check(gpuMemsetAsync(results.data(), 0, sizeof(double), stream), "memset");
      tp_comm->all_reduce_sum(results.data(), 2, static_cast<gpuStream_t>(stream));
    }
    if (dp_comm) {  // loss and squares summed over DP: each rank summed its own slices
      const profile::Range range("dp loss and norm");
      dp_comm->all_reduce_sum(results.data(), 2, static_cast<gpuStream_t>(stream));
    }
    mark("optimizer");
    if (zero)
      update_owned_slices();
    else
      Gpu::adamw(weights.data(), master_lo.data(), grads.data(), m.data(), v.data(), params,
                 tensor_ends.data(), decay.data(), static_cast<int>(table.tensors.size()),
                 scalars.data(), results.data() + 1, stream);
    mark("zero_grads");
    if (sparse_embedding_zeroing) {  // the rows this step touched, cleared at the start of the next
      backend::gpu_check(gpuMemcpyAsync(touched_rows.data(), group_ids.data(), group_ids.bytes(),
                                          gpuMemcpyDeviceToDevice, stream),
                          "copy of the touched rows");
      backend::gpu_check(gpuMemcpyAsync(touched_count.data(), group_count.data(),
                                          group_count.bytes(), gpuMemcpyDeviceToDevice, stream),
                          "copy of the touched rows");
    }
    mark("end");
  }

  /// ZeRO-1: AdamW on this rank's slice of each bucket, then the bucket's updated bf16 weights
  /// all-gathered over DP on the norm stream while the next bucket is updated; the main stream
  /// joins at the end.
  void update_owned_slices() {
    for (std::size_t i = 0; i < buckets.buckets.size(); ++i) {
      const GradientBucket& b = buckets.buckets[i];
      Gpu::adamw(weights.data() + b.slice_begin, master_lo.data() + b.owned_base,
                 g(b.slice_begin), m.data() + b.owned_base, v.data() + b.owned_base,
                 b.slice_count, bucket_tensor_ends.data() + b.tensors_begin,
                 bucket_decay.data() + b.tensors_begin, b.tensors, scalars.data(),
                 results.data() + 1, stream);
      if (options.overlap) {
        backend::gpu_check(gpuEventRecord(updated[i], stream), "gpuEventRecord");
        backend::gpu_check(gpuStreamWaitEvent(norm_stream, updated[i], 0), "gpuStreamWaitEvent");
      }
      const profile::Range range("dp weight all-gather");
      dp_comm->all_gather_bytes(weights.data() + b.offset,
                                static_cast<std::size_t>(b.chunk) * sizeof(bf16), side_stream());
    }
    join_side_stream();
  }

  /// ZeRO-1: every rank's remainders in table order (collective over DP), for parameters().
  std::vector<std::uint16_t> gathered_remainders() {
    std::vector<std::uint16_t> out(static_cast<std::size_t>(params));
    for (const GradientBucket& b : buckets.buckets) {
      DeviceBuffer<std::uint16_t> all(static_cast<std::size_t>(b.chunk * dp), stream);
      backend::gpu_check(gpuMemcpyAsync(all.data() + dp_rank * b.chunk,
                                        master_lo.data() + b.owned_base,
                                        b.slice_count * sizeof(std::uint16_t),
                                        gpuMemcpyDeviceToDevice, stream),
                         "copy of the remainders");
      dp_comm->all_gather_bytes(all.data(), b.chunk * sizeof(std::uint16_t),
                                static_cast<gpuStream_t>(stream));
      const std::vector<std::uint16_t> host = all.download();
      std::copy_n(host.begin(), b.count, out.begin() + b.offset);
    }
    return out;
  }

  template <class T>
  void upload(DeviceBuffer<T>& dst, PinnedBuffer<T>& src) {
    backend::gpu_check(gpuMemcpyAsync(dst.data(), src.data(), dst.bytes(),
                                        gpuMemcpyHostToDevice, stream),
                        "upload");
  }

  StepStats step(std::span<const std::int32_t> tokens, double lr, int step_number) {
    const int ga = shape.grad_accum, seq = shape.seq;
    // Inputs [0, seq) and targets [1, seq + 1) of each sequence, and the embedding backward's
    // deterministic grouping of positions by token id, per micro-batch.
    for (int micro = 0; micro < ga; ++micro) {
      const std::int32_t* src = tokens.data() + micro * std::int64_t{shape.mbs} * (seq + 1);
      std::int32_t* in = h_inputs.data() + micro * n;
      std::int32_t* out = h_targets.data() + micro * n;
      for (int b = 0; b < shape.mbs; ++b) {
        std::memcpy(in + std::int64_t{b} * seq, src + std::int64_t{b} * (seq + 1),
                    seq * sizeof(std::int32_t));
        std::memcpy(out + std::int64_t{b} * seq, src + std::int64_t{b} * (seq + 1) + 1,
                    seq * sizeof(std::int32_t));
      }
      if (tp_comm)  // this rank's vocabulary slice: its rows of the embedding, -1 elsewhere
        for (std::int64_t t = 0; t < n; ++t) {
          const std::int64_t local = in[t] - vocab_begin;
          in[t] = local >= 0 && local < d.vocab ? static_cast<std::int32_t>(local) : -1;
        }
      h_group_count[micro] = backend::embedding_groups_into(
          std::span<const std::int32_t>(in, n),
          std::span<std::int32_t>(h_group_ids.data() + micro * n, n),
          std::span<std::int32_t>(h_offsets.data() + micro * (n + 1), n + 1),
          std::span<std::int32_t>(h_positions.data() + micro * n, n));
    }
    backend::OptimizerScalars& sc = h_scalars[0];
    sc.lr = static_cast<float>(lr);
    sc.beta1 = static_cast<float>(opt.beta1);
    sc.beta2 = static_cast<float>(opt.beta2);
    sc.eps = static_cast<float>(opt.eps);
    sc.weight_decay = static_cast<float>(opt.weight_decay);
    sc.bias_correction1 = static_cast<float>(1.0 - std::pow(opt.beta1, step_number));
    sc.bias_correction2 = static_cast<float>(1.0 - std::pow(opt.beta2, step_number));
    sc.clip_norm = static_cast<float>(opt.clip_norm);

    const auto issue_start = std::chrono::steady_clock::now();
    backend::gpu_check(gpuEventRecord(start, stream), "gpuEventRecord");
    upload(inputs, h_inputs);
    upload(targets, h_targets);
    upload(group_ids, h_group_ids);
    upload(offsets, h_offsets);
    upload(positions, h_positions);
    upload(group_count, h_group_count);
    upload(scalars, h_scalars);
    if (graph) {
      // A replay runs no host code: its kernels fall under this range, not forward/backward.
      const profile::Range range("graph launch");
      backend::gpu_check(gpuGraphLaunch(graph, stream), "gpuGraphLaunch");
    } else if (options.graph && eager_steps >= 1) {
      const profile::Range range("graph capture");
      // Captured after one eager step: cuBLASLt's algorithms and cuDNN's plans are chosen and
      // every kernel is loaded by then, so capture sees only launches on fixed buffers.
      gpuGraph_t captured = nullptr;
      backend::gpu_check(gpuStreamBeginCapture(stream, gpuStreamCaptureModeThreadLocal),
                          "gpuStreamBeginCapture");
      try {
        enqueue_step();
      } catch (...) {
        (void)gpuStreamEndCapture(stream, &captured);
        if (captured) (void)gpuGraphDestroy(captured);
        throw;
      }
      backend::gpu_check(gpuStreamEndCapture(stream, &captured), "gpuStreamEndCapture");
      const gpuError_t inst = gpuGraphInstantiateWithFlags(&graph, captured, 0);
      (void)gpuGraphDestroy(captured);
      backend::gpu_check(inst, "gpuGraphInstantiate");
      backend::gpu_check(gpuGraphLaunch(graph, stream), "gpuGraphLaunch");
    } else {
      // Phase timing only where nothing is captured (a graph replays without host marks).
      timing = options.phase_timing;
      events_used = 0;
      enqueue_step();
      timing = false;
      ++eager_steps;
    }
    backend::gpu_check(gpuMemcpyAsync(h_results.data(), results.data(), results.bytes(),
                                        gpuMemcpyDeviceToHost, stream),
                        "download of the loss");
    backend::gpu_check(gpuEventRecord(stop, stream), "gpuEventRecord");
    issue_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - issue_start).count();
    backend::gpu_check(gpuEventSynchronize(stop), "training step");
    if (events_used > 0) collect_phases();
    float ms = 0;
    backend::gpu_check(gpuEventElapsedTime(&ms, start, stop), "gpuEventElapsedTime");
    StepStats st;
    st.loss = h_results[0] / (double(ga) * double(n) * double(dp));
    st.grad_norm = std::sqrt(h_results[1]);
    st.lr = lr;
    st.device_seconds = ms * 1e-3;
    return st;
  }
};

}  // namespace

template <>
struct DeviceTransformer<Gpu>::Impl : Engine {
  using Engine::Engine;
};

template <>
DeviceTransformer<Gpu>::DeviceTransformer(const model::Dims& d, StepShape shape,
                                           const OptimizerConfig& opt, std::uint64_t seed,
                                           DeviceOptions options, DeviceGroups groups)
    : impl_(std::make_unique<Impl>(d, shape, opt, seed, options, std::move(groups))) {}

template <>
DeviceTransformer<Gpu>::~DeviceTransformer() = default;

template <>
StepStats DeviceTransformer<Gpu>::step(std::span<const std::int32_t> tokens, double lr,
                                        int step) {
  return impl_->step(tokens, lr, step);
}

template <>
const ParameterTable& DeviceTransformer<Gpu>::table() const {
  return impl_->table;
}
template <>
std::int64_t DeviceTransformer<Gpu>::parameter_count() const {
  return impl_->params;
}
template <>
std::vector<float> DeviceTransformer<Gpu>::parameters() const {
  std::vector<bf16> hi = impl_->weights.download();
  hi.resize(static_cast<std::size_t>(impl_->params));
  const std::vector<std::uint16_t> lo =
      impl_->zero ? impl_->gathered_remainders() : impl_->master_lo.download();
  return kernels::join_floats(std::span<const bf16>(hi), std::span<const std::uint16_t>(lo));
}
template <>
std::vector<float> DeviceTransformer<Gpu>::gradients() const {
  std::vector<float> out = impl_->grads.download();
  out.resize(static_cast<std::size_t>(impl_->params));
  return out;
}
template <>
void DeviceTransformer<Gpu>::load_parameters(std::span<const float> host) {
  if (static_cast<std::int64_t>(host.size()) != impl_->params)
    throw core::InputError("loading " + std::to_string(host.size()) + " weights into a model of " +
                           std::to_string(impl_->params) + " parameters");
  impl_->grads.upload(host);  // the fp32 weights, split by set_master_from_grads
  impl_->set_master_from_grads();
  backend::gpu_check(gpuStreamSynchronize(impl_->stream), "load_parameters");
}
template <>
std::size_t DeviceTransformer<Gpu>::held_bytes() const {
  return impl_->held;
}
template <>
std::size_t DeviceTransformer<Gpu>::peak_allocated_bytes() const {
  return Gpu::peak_allocated_bytes();
}
template <>
std::size_t DeviceTransformer<Gpu>::peak_reserved_bytes() const {
  return Gpu::peak_reserved_bytes();
}
template <>
std::string DeviceTransformer<Gpu>::attention_name() const {
  return impl_->use_cudnn ? "cudnn" : "flash";
}
template <>
double DeviceTransformer<Gpu>::issue_seconds() const {
  return impl_->issue_seconds;
}
template <>
std::vector<std::pair<std::string, double>> DeviceTransformer<Gpu>::phase_seconds() const {
  return impl_->phase_totals;
}
template <>
bool DeviceTransformer<Gpu>::graph_captured() const {
  return impl_->graph != nullptr;
}

template class DeviceTransformer<Gpu>;

}  // namespace tprimat::train
