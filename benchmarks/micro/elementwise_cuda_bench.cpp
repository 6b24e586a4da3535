// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Every element-wise kernel of backend::Gpu at the Llama 3.1 8B step's shapes (mbs 1, seq 2048),
// with the bytes each must move at least and its rate against the measured copy ceiling.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include "cuda_timing.hpp"
#include "tprimat/backend/gpu/embedding_groups.hpp"
#include "tprimat/data/synthetic.hpp"
#include "tprimat/model/counts.hpp"
#include "tprimat/model/llama31_8b.hpp"
#include "tprimat/model/qwen25_7b.hpp"

namespace tprimat::gpu_bench {
namespace {

using Llama = model::Llama31_8B;
constexpr int seq = 2048;
constexpr std::int64_t n = seq;               // tokens: mbs 1 x seq 2048
constexpr std::int64_t h = Llama::hidden;     // 4096
constexpr std::int64_t f = Llama::ffn;        // 14336
constexpr std::int64_t vocab = Llama::vocab;  // 128256
constexpr int head_dim = Llama::head_dim;     // 128
/// One Llama 3.1 8B layer's parameters: what the optimizer kernels sweep per layer.
constexpr std::int64_t layer_params = model::layer_params(model::dims<Llama>());  // 218,112,000
static_assert(layer_params == 218'112'000, "tprimat: the benchmark names below spell the count");
constexpr double f32 = 4, b16 = 2, i32 = 4;  // bytes per element

/// `sets` buffers of `count` elements each; filled with unit normals when `fill` (inputs).
template <class T>
std::vector<DeviceBuffer<T>> per_set(int sets, std::size_t count, cudaStream_t stream, bool fill,
                                     std::uint64_t seed = 1) {
  std::vector<DeviceBuffer<T>> v;
  for (int s = 0; s < sets; ++s) {
    v.emplace_back(count, stream);
    if (fill) fill_normal(v.back().data(), count, seed + s, stream);
  }
  return v;
}

/// Token ids of `sets` synthetic batches (the step's own corpus), and their embedding-backward
/// grouping by id, on the device.
struct TokenSets {
  std::vector<DeviceBuffer<std::int32_t>> ids, group_ids, offsets, positions, count;
  std::vector<int> groups;  // distinct ids per set
  TokenSets(int sets, cudaStream_t stream) {
    const data::SyntheticTokens corpus(static_cast<int>(vocab), 42);
    std::vector<std::int32_t> sample(n + 1);
    for (int s = 0; s < sets; ++s) {
      data::fill_rank_batch(corpus, s, 1, 0, 1, seq, sample);
      const std::span<const std::int32_t> in(sample.data(), n);
      const backend::EmbeddingGroups g = backend::embedding_groups(in);
      upload(ids, in, stream);
      upload(group_ids, g.group_ids, stream);
      upload(offsets, g.offsets, stream);
      upload(positions, g.positions, stream);
      upload(count, std::vector<std::int32_t>{g.count}, stream);
      groups.push_back(g.count);
    }
  }
  static void upload(std::vector<DeviceBuffer<std::int32_t>>& dst,
                     std::span<const std::int32_t> host, cudaStream_t stream) {
    dst.emplace_back(host.size(), stream);
    dst.back().upload(host);
  }
};

// Each kernel is an Op: built on a stream (its inputs in `sets` copies, rotation_sets of its
// bytes, shared tables once), called with a set index, and its least traffic as work(): each
// input read once, each output written once, read-modify-write counted twice; scratch the kernel
// chooses to use (deterministic partial sums) is not counted, so of_copy_ceiling shows it too.

/// Weights as the engine holds them (Gpu::split_master): bf16 halves and remainders, 4 bytes a
/// weight, from N(0, stddev) draws.
struct SplitWeights {
  DeviceBuffer<bf16> hi;
  DeviceBuffer<std::uint16_t> lo;
  SplitWeights(std::int64_t count, std::uint64_t seed, cudaStream_t s, float stddev = 1.0f)
      : hi(count, s), lo(count, s) {
    DeviceBuffer<float> w(count, s);
    fill_normal(w.data(), count, seed, s, stddev);
    Gpu::split_master(w.data(), hi.data(), lo.data(), count, s);
    gpu_check(cudaStreamSynchronize(s), "split weights");  // w is freed on return
  }
};

/// out[t, :] = table[ids[t], :]: ids read, n rows of the split table (4 bytes a weight) read,
/// out written.
struct EmbeddingForward {
  static constexpr const char* name = "Elementwise/embedding/fwd/tokens:2048";
  static Work work() { return {n * i32 + 2.0 * n * h * f32, 0}; }
  int sets = rotation_sets(work().bytes);
  SplitWeights table;
  TokenSets tokens;
  std::vector<DeviceBuffer<float>> out;
  explicit EmbeddingForward(cudaStream_t s)
      : table(vocab * h, 3, s, 0.02f),
        tokens(sets, s),
        out(per_set<float>(sets, n * h, s, false)) {}
  void operator()(int i, cudaStream_t s) {
    Gpu::embedding_forward(tokens.ids[i].data(), n, table.hi.data(), table.lo.data(), h,
                            out[i].data(), s);
  }
};

/// dtable[id, :] += sum of dout rows of that id: dout read, each touched row read and written,
/// the grouping (group ids, offsets, positions, count) read.
struct EmbeddingBackward {
  static constexpr const char* name = "Elementwise/embedding/bwd/tokens:2048";
  static Work work(double groups = n) {
    return {n * h * f32 + 2.0 * groups * h * f32 + (2.0 * groups + n + 2) * i32, 0};
  }
  int sets = rotation_sets(work().bytes);
  DeviceBuffer<float> dtable;
  TokenSets tokens;
  std::vector<DeviceBuffer<float>> dout;
  explicit EmbeddingBackward(cudaStream_t s)
      : dtable(vocab * h, s), tokens(sets, s), dout(per_set<float>(sets, n * h, s, true)) {
    fill_normal(dtable.data(), dtable.size(), 4, s);
  }
  Work measured_work() const { return work(tokens.groups[0]); }
  void operator()(int i, cudaStream_t s) {
    Gpu::embedding_backward(tokens.group_ids[i].data(), tokens.offsets[i].data(),
                             tokens.positions[i].data(), tokens.count[i].data(), n, dout[i].data(),
                             h, dtable.data(), s);
  }
};

/// Zeroes the embedding-gradient rows the last step touched: rows (ids) read, rows written.
struct ZeroRows {
  static constexpr const char* name = "Elementwise/zero_rows/embedding/tokens:2048";
  static Work work(double groups = n) { return {groups * h * f32 + (groups + 1) * i32, 0}; }
  int sets = rotation_sets(work().bytes);
  DeviceBuffer<float> table;
  TokenSets tokens;
  explicit ZeroRows(cudaStream_t s) : table(vocab * h, s), tokens(sets, s) {
    fill_normal(table.data(), table.size(), 5, s);
  }
  Work measured_work() const { return work(tokens.groups[0]); }
  void operator()(int i, cudaStream_t s) {
    Gpu::zero_rows(tokens.group_ids[i].data(), tokens.count[i].data(), n, h, table.data(), s);
  }
};

/// y = bf16(x * rstd * g): x fp32 read, y bf16 and rstd written, g read.
struct RmsnormForward {
  static constexpr const char* name = "Elementwise/rmsnorm/fwd/tokens:2048";
  static Work work() { return {n * h * (f32 + b16) + n * f32 + h * f32, 0}; }
  int sets = rotation_sets(work().bytes);
  SplitWeights g;
  std::vector<DeviceBuffer<float>> x, rstd;
  std::vector<DeviceBuffer<bf16>> y;
  explicit RmsnormForward(cudaStream_t s)
      : g(h, 6, s),
        x(per_set<float>(sets, n * h, s, true)),
        rstd(per_set<float>(sets, n, s, false)),
        y(per_set<bf16>(sets, n * h, s, false)) {}
  void operator()(int i, cudaStream_t s) {
    Gpu::rmsnorm_forward(x[i].data(), g.hi.data(), g.lo.data(), n, h, 1e-5f, y[i].data(),
                          rstd[i].data(), s);
  }
};

/// x, dy (fp32) read, dx (fp32) read and written, dx_bf16 written; g, rstd read; dg read and
/// written.
struct RmsnormBackward {
  static constexpr const char* name = "Elementwise/rmsnorm/bwd/tokens:2048";
  static Work work() { return {n * h * (4 * f32 + b16) + n * f32 + 3.0 * h * f32, 0}; }
  int sets = rotation_sets(work().bytes);
  SplitWeights g;
  DeviceBuffer<float> dg, partials;
  std::vector<DeviceBuffer<float>> x, dy, dx, rstd;
  std::vector<DeviceBuffer<bf16>> dx_bf16;
  explicit RmsnormBackward(cudaStream_t s)
      : g(h, 7, s),
        dg(h, s),
        partials(Gpu::rmsnorm_partials(n, h), s),
        x(per_set<float>(sets, n * h, s, true, 10)),
        dy(per_set<float>(sets, n * h, s, true, 20)),
        dx(per_set<float>(sets, n * h, s, true, 30)),
        rstd(per_set<float>(sets, n, s, true, 40)),
        dx_bf16(per_set<bf16>(sets, n * h, s, false)) {
    fill_normal(dg.data(), h, 8, s);
  }
  void operator()(int i, cudaStream_t s) {
    Gpu::rmsnorm_backward(x[i].data(), g.hi.data(), g.lo.data(), rstd[i].data(), dy[i].data(), n,
                           h, dx[i].data(), dx_bf16[i].data(), dg.data(), partials.data(), s);
  }
};

/// In-place rotation of Q (32 heads) or K (8 heads), bf16 [n, heads x 128]: read and written;
/// the fp32 cos and sin tables [seq, 64] read. Backward moves the same bytes.
template <int Heads, bool Backward>
struct Rope {
  static constexpr const char* name =
      Backward ? (Heads == Llama::heads ? "Elementwise/rope/bwd/q/tokens:2048"
                                        : "Elementwise/rope/bwd/k/tokens:2048")
               : (Heads == Llama::heads ? "Elementwise/rope/fwd/q/tokens:2048"
                                        : "Elementwise/rope/fwd/k/tokens:2048");
  static Work work() {
    return {2.0 * n * Heads * head_dim * b16 + 2.0 * seq * head_dim / 2 * f32, 0};
  }
  int sets = rotation_sets(work().bytes);
  DeviceBuffer<float> cos_table, sin_table;
  std::vector<DeviceBuffer<bf16>> x;
  explicit Rope(cudaStream_t s)
      : cos_table(seq * head_dim / 2, s),
        sin_table(seq * head_dim / 2, s),
        x(per_set<bf16>(sets, n * Heads * head_dim, s, true)) {
    // True angles (theta 5e5): unit rotations keep x bounded over thousands of in-place calls.
    std::vector<float> c(cos_table.size()), sn(sin_table.size());
    for (int p = 0; p < seq; ++p)
      for (int j = 0; j < head_dim / 2; ++j) {
        const double angle = p * std::pow(Llama::rope_theta, -2.0 * j / head_dim);
        c[p * head_dim / 2 + j] = static_cast<float>(std::cos(angle));
        sn[p * head_dim / 2 + j] = static_cast<float>(std::sin(angle));
      }
    cos_table.upload(c);
    sin_table.upload(sn);
  }
  void operator()(int i, cudaStream_t s) {
    if constexpr (Backward)
      Gpu::rope_backward(x[i].data(), n, seq, Heads, head_dim, cos_table.data(), sin_table.data(),
                          s);
    else
      Gpu::rope_forward(x[i].data(), n, seq, Heads, head_dim, cos_table.data(), sin_table.data(),
                         s);
  }
};

/// h = silu(gate) * up over [n, ffn] bf16: gate, up read, h written.
struct SwigluForward {
  static constexpr const char* name = "Elementwise/swiglu/fwd/tokens:2048";
  static Work work() { return {3.0 * n * f * b16, 0}; }
  int sets = rotation_sets(work().bytes);
  std::vector<DeviceBuffer<bf16>> gate, up, out;
  explicit SwigluForward(cudaStream_t s)
      : gate(per_set<bf16>(sets, n * f, s, true, 10)),
        up(per_set<bf16>(sets, n * f, s, true, 20)),
        out(per_set<bf16>(sets, n * f, s, false)) {}
  void operator()(int i, cudaStream_t s) {
    Gpu::swiglu_forward(gate[i].data(), up[i].data(), out[i].data(), n * f, s);
  }
};

/// gate, up, dh read; dgate, dup written (bf16 [n, ffn]); WithH: h (the recomputed forward
/// output) written too, as the engine's backward pass calls it.
template <bool WithH>
struct SwigluBackward {
  static constexpr const char* name = WithH ? "Elementwise/swiglu/bwd_with_h/tokens:2048"
                                            : "Elementwise/swiglu/bwd/tokens:2048";
  static Work work() { return {(WithH ? 6.0 : 5.0) * n * f * b16, 0}; }
  int sets = rotation_sets(work().bytes);
  std::vector<DeviceBuffer<bf16>> gate, up, dh, dgate, dup, h;
  explicit SwigluBackward(cudaStream_t s)
      : gate(per_set<bf16>(sets, n * f, s, true, 10)),
        up(per_set<bf16>(sets, n * f, s, true, 20)),
        dh(per_set<bf16>(sets, n * f, s, true, 30)),
        dgate(per_set<bf16>(sets, n * f, s, false)),
        dup(per_set<bf16>(sets, n * f, s, false)),
        h(per_set<bf16>(WithH ? sets : 0, n * f, s, false)) {}
  void operator()(int i, cudaStream_t s) {
    Gpu::swiglu_backward(gate[i].data(), up[i].data(), dh[i].data(), dgate[i].data(),
                          dup[i].data(), WithH ? h[i].data() : nullptr, n * f, s);
  }
};

/// dbias += column sums of dy [n, cols] bf16 (Qwen 2.5 7B's q bias, cols 3584, or k / v, 512:
/// Llama has no biases): dy read, dbias read and written.
template <std::int64_t Cols>
struct BiasBackward {
  static constexpr const char* name = Cols == model::Qwen25_7B::hidden
                                          ? "Elementwise/bias/bwd/qwen_q/tokens:2048"
                                          : "Elementwise/bias/bwd/qwen_kv/tokens:2048";
  static Work work() { return {n * Cols * b16 + 2.0 * Cols * f32, 0}; }
  int sets = rotation_sets(work().bytes);
  DeviceBuffer<float> dbias, partials;
  std::vector<DeviceBuffer<bf16>> dy;
  explicit BiasBackward(cudaStream_t s)
      : dbias(Cols, s),
        partials(Gpu::bias_partials(n, Cols), s),
        dy(per_set<bf16>(sets, n * Cols, s, true)) {
    fill_normal(dbias.data(), Cols, 9, s);
  }
  void operator()(int i, cudaStream_t s) {
    Gpu::bias_backward(dy[i].data(), n, Cols, dbias.data(), partials.data(), s);
  }
};

/// Fused softmax cross-entropy over logits [n, vocab] bf16: logits read (and, with the gradient,
/// overwritten in place), targets read, row losses written. After the first call with the
/// gradient the logits hold gradients (small, finite, not zero): the kernel's work does not
/// depend on the values.
template <bool WithGrad>
struct CrossEntropy {
  static constexpr const char* name = WithGrad ? "Elementwise/cross_entropy/loss_grad/tokens:2048"
                                               : "Elementwise/cross_entropy/loss/tokens:2048";
  static Work work() { return {n * vocab * b16 * (WithGrad ? 2 : 1) + n * (i32 + f32), 0}; }
  int sets = rotation_sets(work().bytes);
  TokenSets tokens;  // targets: the step's ids, shifted by one there; any valid ids here
  std::vector<DeviceBuffer<bf16>> logits;
  std::vector<DeviceBuffer<float>> row_loss;
  explicit CrossEntropy(cudaStream_t s)
      : tokens(sets, s),
        logits(per_set<bf16>(sets, n * vocab, s, true)),
        row_loss(per_set<float>(sets, n, s, false)) {}
  void operator()(int i, cudaStream_t s) {
    Gpu::cross_entropy(logits[i].data(), tokens.ids[i].data(), n, static_cast<int>(vocab),
                        1.0f / n, WithGrad, row_loss[i].data(), s);
  }
};

/// The gradient-norm pass: sum of squares of one layer's fp32 gradients, in double: x read.
struct GradNorm {
  static constexpr const char* name = "Elementwise/reduce_sum/squares/params:218112000";
  static Work work() { return {layer_params * f32, 0}; }
  int sets = rotation_sets(work().bytes);
  std::vector<DeviceBuffer<float>> x;
  DeviceBuffer<double> out, partials;
  explicit GradNorm(cudaStream_t s)
      : x(per_set<float>(sets, layer_params, s, true)),
        out(1, s),
        partials(Gpu::reduce_partials, s) {}
  void operator()(int i, cudaStream_t s) {
    Gpu::reduce_sum(x[i].data(), layer_params, true, false, out.data(), partials.data(), s);
  }
};

/// dst = bf16(src) over one layer: fp32 read, bf16 written.
struct ToBf16 {
  static constexpr const char* name = "Elementwise/to_bf16/params:218112000";
  static Work work() { return {layer_params * (f32 + b16), 0}; }
  int sets = rotation_sets(work().bytes);
  std::vector<DeviceBuffer<float>> src;
  std::vector<DeviceBuffer<bf16>> dst;
  explicit ToBf16(cudaStream_t s)
      : src(per_set<float>(sets, layer_params, s, true)),
        dst(per_set<bf16>(sets, layer_params, s, false)) {}
  void operator()(int i, cudaStream_t s) {
    Gpu::to_bf16(src[i].data(), dst[i].data(), layer_params, s);
  }
};

/// AdamW over one layer's 9 tensors (two norm gains without decay, seven matrices with): the
/// split master (bf16 weights + remainders, 4 bytes), m and v read and written, the fp32
/// gradient read: 28 bytes a parameter; the scalars and the tensor table are noise.
struct AdamW {
  static constexpr const char* name = "Elementwise/adamw/params:218112000";
  static Work work() { return {layer_params * (7 * f32), 0}; }
  int sets = rotation_sets(work().bytes);
  std::vector<DeviceBuffer<float>> grads, m, v;
  std::vector<DeviceBuffer<bf16>> weights;
  std::vector<DeviceBuffer<std::uint16_t>> master_lo;
  DeviceBuffer<std::int64_t> tensor_ends;
  DeviceBuffer<std::uint8_t> decay;
  DeviceBuffer<backend::OptimizerScalars> scalars;
  DeviceBuffer<double> grad_sum_squares;
  explicit AdamW(cudaStream_t s)
      : grads(per_set<float>(sets, layer_params, s, true, 20)),
        m(per_set<float>(sets, layer_params, s, true, 30)),
        v(per_set<float>(sets, layer_params, s, false)),
        tensor_ends(9, s),
        decay(9, s),
        scalars(1, s),
        grad_sum_squares(1, s) {
    const std::int64_t q = Llama::heads * head_dim, kv = Llama::kv_heads * head_dim;
    const std::int64_t sizes[9] = {h, h * q, h * kv, h * kv, q * h, h, h * f, h * f, f * h};
    std::vector<std::int64_t> ends;
    std::int64_t end = 0;
    for (std::int64_t size : sizes) ends.push_back(end += size);
    tensor_ends.upload(ends);
    decay.upload(std::vector<std::uint8_t>{0, 1, 1, 1, 1, 0, 1, 1, 1});
    backend::OptimizerScalars sc;
    sc.lr = 3e-4f;
    sc.weight_decay = 0.1f;
    sc.bias_correction1 = 1 - std::pow(0.9f, 10.0f);
    sc.bias_correction2 = 1 - std::pow(0.95f, 10.0f);
    sc.clip_norm = 1.0f;
    scalars.upload(std::vector<backend::OptimizerScalars>{sc});
    // Unit-normal gradients: a sum of squares near the count, so clipping scales them down.
    grad_sum_squares.upload(std::vector<double>{double(layer_params)});
    for (auto& b : v) Gpu::fill(b.data(), layer_params, 1e-4f, s);  // second moments positive
    for (int i = 0; i < sets; ++i) {
      SplitWeights w(layer_params, 10 + i, s, 0.02f);
      weights.push_back(std::move(w.hi));
      master_lo.push_back(std::move(w.lo));
    }
  }
  void operator()(int i, cudaStream_t s) {
    Gpu::adamw(weights[i].data(), master_lo[i].data(), grads[i].data(), m[i].data(), v[i].data(),
                layer_params, tensor_ends.data(), decay.data(), 9, scalars.data(),
                grad_sum_squares.data(), s);
  }
};

template <class Op>
void BM_Elementwise(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  try {
    Stream stream;
    Op op(stream);
    gpu_check(cudaStreamSynchronize(stream), "set-up");
    const Timing t = time_calls(state, stream, op.sets, [&](int i) { op(i % op.sets, stream); });
    if constexpr (requires { op.measured_work(); })
      report(state, t, op.measured_work());
    else
      report(state, t, Op::work());
    state.counters["sets"] = op.sets;
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

template <class... Ops>
void add() {
  (benchmark::RegisterBenchmark(Ops::name, BM_Elementwise<Ops>)
       ->UseManualTime()
       ->Iterations(20)
       ->Unit(benchmark::kMicrosecond),
   ...);
}

const bool registered =
    (add<EmbeddingForward, EmbeddingBackward, ZeroRows, RmsnormForward, RmsnormBackward,
         Rope<Llama::heads, false>, Rope<Llama::kv_heads, false>, Rope<Llama::heads, true>,
         Rope<Llama::kv_heads, true>, SwigluForward, SwigluBackward<false>,
         SwigluBackward<true>, BiasBackward<model::Qwen25_7B::hidden>,
         BiasBackward<model::Qwen25_7B::kv_heads * model::Qwen25_7B::head_dim>, CrossEntropy<false>,
         CrossEntropy<true>, GradNorm, ToBf16, AdamW>(),
     true);

}  // namespace
}  // namespace tprimat::gpu_bench
