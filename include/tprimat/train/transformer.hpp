// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The decoder-only transformer (forward, backward, parameters) at run-time dims.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/model/spec.hpp"

namespace tprimat::train {

/// How a parameter tensor starts: matrices normal(0, init_std), norm gains 1, biases 0.
enum class Init { normal, ones, zeros };

/// One parameter tensor inside the flat parameter buffer (row-major [rows, cols]).
struct ParamTensor {
  std::string name;         ///< e.g. "layers.0.attn.wq"
  std::int64_t offset = 0;  ///< first element in the flat buffer
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  bool decay = true;  ///< AdamW weight decay applies (matrices yes; norm gains, biases no)
  Init init = Init::normal;
  std::int64_t size() const { return rows * cols; }
};

/// Llama-style decoder: embedding -> L x [RMSNorm, QKV (+bias), RoPE, GQA causal attention, O,
/// residual, RMSNorm, gate/up, SwiGLU, down, residual] -> RMSNorm -> LM head -> cross-entropy.
/// All sizes are run-time (model::Dims), so the class is compiled once per (Backend, T) — see
/// src/ — and TrainingStep<Backend, Model, Layout> stays a thin typed wrapper.
/// Parameters and gradients live in one flat buffer each (one all-reduce, one optimizer loop);
/// activations are sized for one micro-batch of `mbs` sequences of `seq` tokens.
/// Buffers start on Eigen's vector alignment: Eigen peels unaligned heads off its vectorised
/// reductions, so a base address that varied from run to run would vary the summation order and
/// break bit-for-bit reproducibility between two identical runs.
template <class T>
using AlignedVector = std::vector<T, Eigen::aligned_allocator<T>>;

template <class Backend, class T>
class Transformer {
 public:
  Transformer(const model::Dims& d, int mbs, int seq, double init_std = 0.02,
              std::uint64_t seed = 42);

  const model::Dims& dims() const { return dims_; }
  int mbs() const { return mbs_; }
  int seq() const { return seq_; }
  std::span<T> params() { return params_; }
  std::span<const T> params() const { return params_; }
  std::span<T> grads() { return grads_; }
  std::span<const T> grads() const { return grads_; }
  const std::vector<ParamTensor>& tensors() const { return tensors_; }
  std::int64_t parameter_count() const { return static_cast<std::int64_t>(params_.size()); }

  void zero_grads();
  /// Forward over one micro-batch: `tokens` holds mbs sequences of seq + 1 ids (inputs
  /// [0, seq), targets [1, seq + 1)). Returns the SUM of the mbs * seq token losses.
  double forward(std::span<const std::int32_t> tokens);
  /// Forward and backward: returns the loss sum as forward() does and ADDS grad_scale times the
  /// gradient of that sum to grads() (so micro-batches accumulate).
  double forward_backward(std::span<const std::int32_t> tokens, double grad_scale);
  /// Bytes held by parameters, gradients and activation/workspace buffers.
  std::size_t bytes() const;

 private:
  struct LayerParams {  // offsets into the flat buffers; bias offsets -1 without qkv_bias
    std::int64_t attn_norm, wq, wk, wv, bq = -1, bk = -1, bv = -1, wo;
    std::int64_t mlp_norm, w_gate, w_up, w_down;
  };
  struct LayerActs {         // what backward needs of one layer, for one micro-batch of n tokens
    AlignedVector<T> x;      // [n, hidden]  layer input (residual stream)
    AlignedVector<T> xn1;    // [n, hidden]  attention RMSNorm output
    AlignedVector<T> rstd1;  // [n]
    AlignedVector<T> q;      // [n, q_dim]   after RoPE
    AlignedVector<T> k;      // [n, kv_dim]  after RoPE
    AlignedVector<T> v;      // [n, kv_dim]
    AlignedVector<T> attn;   // [n, q_dim]   attention output before O
    AlignedVector<T> lse;    // [mbs, heads, seq] softmax log-sum-exp per query row
    AlignedVector<T> x_mid;  // [n, hidden]  after the attention residual
    AlignedVector<T> xn2;    // [n, hidden]  MLP RMSNorm output
    AlignedVector<T> rstd2;  // [n]
    AlignedVector<T> gate;   // [n, ffn]
    AlignedVector<T> up;     // [n, ffn]
  };

  std::int64_t add_tensor(std::string name, std::int64_t rows, std::int64_t cols, Init init);
  void init_params(double init_std, std::uint64_t seed);
  void load_tokens(std::span<const std::int32_t> tokens);
  double run_forward(bool with_grad, double grad_scale);
  void run_backward();
  T* p(std::int64_t offset) { return params_.data() + offset; }
  T* g(std::int64_t offset) { return grads_.data() + offset; }

  model::Dims dims_;
  int mbs_, seq_;
  std::int64_t n_;  // tokens per micro-batch
  std::vector<ParamTensor> tensors_;
  std::vector<LayerParams> layer_params_;
  std::int64_t embedding_ = 0, final_norm_ = 0, head_ = 0;
  AlignedVector<T> params_, grads_;
  std::vector<LayerActs> acts_;
  AlignedVector<T> x_final_, xn_final_, rstd_final_, logits_;  // [n,h] [n,h] [n] [n,vocab]
  AlignedVector<T> rope_cos_, rope_sin_;                       // [seq, head_dim/2]
  AlignedVector<T> attn_workspace_;
  // Backward scratch, shared by all layers.
  AlignedVector<T> dx_, dxn_, dq_, dk_, dv_, dattn_, h_, dh_, dgate_, dup_;
  std::vector<std::int32_t> inputs_, targets_;  // [n]
};

// ---- definitions (compiled once per (Backend, T) in src/ when extern templates are on) ------

template <class Backend, class T>
Transformer<Backend, T>::Transformer(const model::Dims& d, int mbs, int seq, double init_std,
                                     std::uint64_t seed)
    : dims_(d), mbs_(mbs), seq_(seq), n_(std::int64_t{mbs} * seq) {
  if (mbs < 1 || seq < 1)
    throw core::InputError("micro-batch size and sequence length must be at least 1 (got mbs " +
                           std::to_string(mbs) + ", seq " + std::to_string(seq) + ")");
  if (d.layers < 0 || d.hidden < 1 || d.vocab < 1 || d.heads < 1 || d.kv_heads < 1 ||
      d.head_dim < 2 || d.head_dim % 2 != 0 || d.heads % d.kv_heads != 0 || d.ffn < 1)
    throw core::InputError("model " + std::string(d.name) +
                           " has inconsistent dimensions (heads must be a multiple of KV heads, "
                           "head_dim even, all sizes positive)");
  const std::int64_t h = d.hidden, qd = d.q_dim(), kvd = d.kv_dim(), f = d.ffn, v = d.vocab;
  embedding_ = add_tensor("embedding", v, h, Init::normal);
  for (int l = 0; l < d.layers; ++l) {
    const std::string pre = "layers." + std::to_string(l) + ".";
    LayerParams lp{};
    lp.attn_norm = add_tensor(pre + "attn_norm", 1, h, Init::ones);
    lp.wq = add_tensor(pre + "attn.wq", h, qd, Init::normal);
    lp.wk = add_tensor(pre + "attn.wk", h, kvd, Init::normal);
    lp.wv = add_tensor(pre + "attn.wv", h, kvd, Init::normal);
    if (d.qkv_bias) {
      lp.bq = add_tensor(pre + "attn.bq", 1, qd, Init::zeros);
      lp.bk = add_tensor(pre + "attn.bk", 1, kvd, Init::zeros);
      lp.bv = add_tensor(pre + "attn.bv", 1, kvd, Init::zeros);
    }
    lp.wo = add_tensor(pre + "attn.wo", qd, h, Init::normal);
    lp.mlp_norm = add_tensor(pre + "mlp_norm", 1, h, Init::ones);
    lp.w_gate = add_tensor(pre + "mlp.w_gate", h, f, Init::normal);
    lp.w_up = add_tensor(pre + "mlp.w_up", h, f, Init::normal);
    lp.w_down = add_tensor(pre + "mlp.w_down", f, h, Init::normal);
    layer_params_.push_back(lp);
  }
  final_norm_ = add_tensor("final_norm", 1, h, Init::ones);
  // A tied head reads the embedding matrix transposed; otherwise it is its own [hidden, vocab].
  head_ = d.tied_embeddings ? embedding_ : add_tensor("head", h, v, Init::normal);

  const std::int64_t total = tensors_.back().offset + tensors_.back().size();
  try {
    params_.assign(total, T(0));
    grads_.assign(total, T(0));
    acts_.resize(d.layers);
    for (auto& a : acts_) {
      a.x.resize(n_ * h);
      a.xn1.resize(n_ * h);
      a.rstd1.resize(n_);
      a.q.resize(n_ * qd);
      a.k.resize(n_ * kvd);
      a.v.resize(n_ * kvd);
      a.attn.resize(n_ * qd);
      a.lse.resize(std::int64_t{mbs} * d.heads * seq);
      a.x_mid.resize(n_ * h);
      a.xn2.resize(n_ * h);
      a.rstd2.resize(n_);
      a.gate.resize(n_ * f);
      a.up.resize(n_ * f);
    }
    x_final_.resize(n_ * h);
    xn_final_.resize(n_ * h);
    rstd_final_.resize(n_);
    logits_.resize(n_ * v);
    rope_cos_.resize(std::int64_t{seq} * (d.head_dim / 2));
    rope_sin_.resize(rope_cos_.size());
    attn_workspace_.resize(Backend::attention_workspace(seq));
    for (auto* buf : {&dx_, &dxn_}) buf->resize(n_ * h);
    for (auto* buf : {&dq_, &dattn_}) buf->resize(n_ * qd);
    for (auto* buf : {&dk_, &dv_}) buf->resize(n_ * kvd);
    for (auto* buf : {&h_, &dh_, &dgate_, &dup_}) buf->resize(n_ * f);
    inputs_.resize(n_);
    targets_.resize(n_);
  } catch (const std::bad_alloc&) {
    throw core::InputError(std::string(d.name) + " with " + std::to_string(d.layers) +
                               " layers at mbs " + std::to_string(mbs) + ", seq " +
                               std::to_string(seq) + " does not fit in host memory",
                           "run fewer layers (--layers), a shorter sequence or a smaller model");
  }
  Backend::rope_tables(d, seq, rope_cos_.data(), rope_sin_.data());
  init_params(init_std, seed);
}

template <class Backend, class T>
std::int64_t Transformer<Backend, T>::add_tensor(std::string name, std::int64_t rows,
                                                 std::int64_t cols, Init init) {
  const std::int64_t offset =
      tensors_.empty() ? 0 : tensors_.back().offset + tensors_.back().size();
  // Only matrices decay: norm gains and biases are excluded, as Megatron and the seeds do.
  tensors_.push_back(ParamTensor{std::move(name), offset, rows, cols, init == Init::normal, init});
  return offset;
}

template <class Backend, class T>
void Transformer<Backend, T>::init_params(double init_std, std::uint64_t seed) {
  // Draws in double, in tensor order, so float and double models start from the same weights.
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, init_std);
  for (const auto& t : tensors_) {
    T* w = params_.data() + t.offset;
    for (std::int64_t i = 0; i < t.size(); ++i)
      w[i] = t.init == Init::normal ? static_cast<T>(normal(rng))
                                    : (t.init == Init::ones ? T(1) : T(0));
  }
}

template <class Backend, class T>
void Transformer<Backend, T>::zero_grads() {
  std::fill(grads_.begin(), grads_.end(), T(0));
}

template <class Backend, class T>
std::size_t Transformer<Backend, T>::bytes() const {
  std::size_t elems = params_.size() + grads_.size() + x_final_.size() + xn_final_.size() +
                      rstd_final_.size() + logits_.size() + rope_cos_.size() + rope_sin_.size() +
                      attn_workspace_.size();
  for (const auto& a : acts_)
    elems += a.x.size() + a.xn1.size() + a.rstd1.size() + a.q.size() + a.k.size() + a.v.size() +
             a.attn.size() + a.lse.size() + a.x_mid.size() + a.xn2.size() + a.rstd2.size() +
             a.gate.size() + a.up.size();
  for (const auto* buf : {&dx_, &dxn_, &dq_, &dk_, &dv_, &dattn_, &h_, &dh_, &dgate_, &dup_})
    elems += buf->size();
  return elems * sizeof(T) + (inputs_.size() + targets_.size()) * sizeof(std::int32_t);
}

template <class Backend, class T>
void Transformer<Backend, T>::load_tokens(std::span<const std::int32_t> tokens) {
  const std::int64_t expected = std::int64_t{mbs_} * (seq_ + 1);
  if (static_cast<std::int64_t>(tokens.size()) != expected)
    throw core::InputError("a micro-batch needs mbs x (seq + 1) = " + std::to_string(expected) +
                           " token ids, got " + std::to_string(tokens.size()));
  for (int b = 0; b < mbs_; ++b)
    for (int t = 0; t < seq_; ++t) {
      const std::int32_t in = tokens[std::int64_t{b} * (seq_ + 1) + t];
      const std::int32_t out = tokens[std::int64_t{b} * (seq_ + 1) + t + 1];
      for (std::int32_t id : {in, out})
        if (id < 0 || id >= dims_.vocab)
          throw core::InputError("token id " + std::to_string(id) +
                                 " is outside the vocabulary [0, " + std::to_string(dims_.vocab) +
                                 ") of " + std::string(dims_.name));
      inputs_[std::int64_t{b} * seq_ + t] = in;
      targets_[std::int64_t{b} * seq_ + t] = out;
    }
}

template <class Backend, class T>
double Transformer<Backend, T>::forward(std::span<const std::int32_t> tokens) {
  load_tokens(tokens);
  return run_forward(false, 0.0);
}

template <class Backend, class T>
double Transformer<Backend, T>::forward_backward(std::span<const std::int32_t> tokens,
                                                 double grad_scale) {
  load_tokens(tokens);
  const double loss = run_forward(true, grad_scale);
  run_backward();
  return loss;
}

template <class Backend, class T>
double Transformer<Backend, T>::run_forward(bool with_grad, double grad_scale) {
  using B = Backend;
  const auto& d = dims_;
  const std::int64_t n = n_, h = d.hidden, qd = d.q_dim(), kvd = d.kv_dim(), f = d.ffn;
  T* x = d.layers > 0 ? acts_[0].x.data() : x_final_.data();
  B::embedding_forward(inputs_.data(), n, p(embedding_), d.hidden, x);
  for (int l = 0; l < d.layers; ++l) {
    const LayerParams& lp = layer_params_[l];
    LayerActs& a = acts_[l];
    B::rmsnorm_forward(a.x.data(), p(lp.attn_norm), n, d.hidden, d.norm_eps, a.xn1.data(),
                       a.rstd1.data());
    B::gemm(false, false, n, qd, h, T(1), a.xn1.data(), h, p(lp.wq), qd, T(0), a.q.data(), qd);
    B::gemm(false, false, n, kvd, h, T(1), a.xn1.data(), h, p(lp.wk), kvd, T(0), a.k.data(), kvd);
    B::gemm(false, false, n, kvd, h, T(1), a.xn1.data(), h, p(lp.wv), kvd, T(0), a.v.data(), kvd);
    if (d.qkv_bias) {
      B::add_bias(a.q.data(), p(lp.bq), n, qd);
      B::add_bias(a.k.data(), p(lp.bk), n, kvd);
      B::add_bias(a.v.data(), p(lp.bv), n, kvd);
    }
    B::rope_forward(a.q.data(), n, seq_, d.heads, d.head_dim, rope_cos_.data(), rope_sin_.data());
    B::rope_forward(a.k.data(), n, seq_, d.kv_heads, d.head_dim, rope_cos_.data(),
                    rope_sin_.data());
    B::attention_forward(a.q.data(), a.k.data(), a.v.data(), a.attn.data(), a.lse.data(), mbs_,
                         seq_, d.heads, d.kv_heads, d.head_dim, attn_workspace_.data());
    std::copy(a.x.begin(), a.x.end(), a.x_mid.begin());  // residual
    B::gemm(false, false, n, h, qd, T(1), a.attn.data(), qd, p(lp.wo), h, T(1), a.x_mid.data(), h);
    B::rmsnorm_forward(a.x_mid.data(), p(lp.mlp_norm), n, d.hidden, d.norm_eps, a.xn2.data(),
                       a.rstd2.data());
    B::gemm(false, false, n, f, h, T(1), a.xn2.data(), h, p(lp.w_gate), f, T(0), a.gate.data(), f);
    B::gemm(false, false, n, f, h, T(1), a.xn2.data(), h, p(lp.w_up), f, T(0), a.up.data(), f);
    B::swiglu_forward(a.gate.data(), a.up.data(), h_.data(), n * f);
    T* next = l + 1 < d.layers ? acts_[l + 1].x.data() : x_final_.data();
    std::copy(a.x_mid.begin(), a.x_mid.end(), next);  // residual
    B::gemm(false, false, n, h, f, T(1), h_.data(), f, p(lp.w_down), h, T(1), next, h);
  }
  B::rmsnorm_forward(x_final_.data(), p(final_norm_), n, d.hidden, d.norm_eps, xn_final_.data(),
                     rstd_final_.data());
  const std::int64_t v = d.vocab;
  if (d.tied_embeddings)  // logits = xn E^T, E [vocab, hidden]
    B::gemm(false, true, n, v, h, T(1), xn_final_.data(), h, p(embedding_), h, T(0), logits_.data(),
            v);
  else
    B::gemm(false, false, n, v, h, T(1), xn_final_.data(), h, p(head_), v, T(0), logits_.data(), v);
  return B::cross_entropy(logits_.data(), targets_.data(), n, d.vocab, static_cast<T>(grad_scale),
                          with_grad);
}

template <class Backend, class T>
void Transformer<Backend, T>::run_backward() {
  using B = Backend;
  const auto& d = dims_;
  const std::int64_t n = n_, h = d.hidden, qd = d.q_dim(), kvd = d.kv_dim(), f = d.ffn, v = d.vocab;
  const T* dlogits = logits_.data();  // cross_entropy left grad_scale * dloss/dlogits here
  if (d.tied_embeddings) {
    B::gemm(true, false, v, h, n, T(1), dlogits, v, xn_final_.data(), h, T(1), g(embedding_), h);
    B::gemm(false, false, n, h, v, T(1), dlogits, v, p(embedding_), h, T(0), dxn_.data(), h);
  } else {
    B::gemm(true, false, h, v, n, T(1), xn_final_.data(), h, dlogits, v, T(1), g(head_), v);
    B::gemm(false, true, n, h, v, T(1), dlogits, v, p(head_), v, T(0), dxn_.data(), h);
  }
  std::fill(dx_.begin(), dx_.end(), T(0));
  B::rmsnorm_backward(x_final_.data(), p(final_norm_), rstd_final_.data(), dxn_.data(), n, d.hidden,
                      dx_.data(), g(final_norm_));
  for (int l = d.layers - 1; l >= 0; --l) {
    const LayerParams& lp = layer_params_[l];
    LayerActs& a = acts_[l];
    // MLP half: x_next = x_mid + swiglu(xn2 Wg, xn2 Wu) Wd; dx_ holds d x_next.
    B::swiglu_forward(a.gate.data(), a.up.data(), h_.data(), n * f);  // recompute, not stored
    B::gemm(true, false, f, h, n, T(1), h_.data(), f, dx_.data(), h, T(1), g(lp.w_down), h);
    B::gemm(false, true, n, f, h, T(1), dx_.data(), h, p(lp.w_down), h, T(0), dh_.data(), f);
    B::swiglu_backward(a.gate.data(), a.up.data(), dh_.data(), dgate_.data(), dup_.data(), n * f);
    B::gemm(true, false, h, f, n, T(1), a.xn2.data(), h, dgate_.data(), f, T(1), g(lp.w_gate), f);
    B::gemm(true, false, h, f, n, T(1), a.xn2.data(), h, dup_.data(), f, T(1), g(lp.w_up), f);
    B::gemm(false, true, n, h, f, T(1), dgate_.data(), f, p(lp.w_gate), f, T(0), dxn_.data(), h);
    B::gemm(false, true, n, h, f, T(1), dup_.data(), f, p(lp.w_up), f, T(1), dxn_.data(), h);
    B::rmsnorm_backward(a.x_mid.data(), p(lp.mlp_norm), a.rstd2.data(), dxn_.data(), n, d.hidden,
                        dx_.data(), g(lp.mlp_norm));
    // Attention half: x_mid = x + attention(rope(xn1 Wq + bq), rope(xn1 Wk + bk), xn1 Wv + bv) Wo.
    B::gemm(true, false, qd, h, n, T(1), a.attn.data(), qd, dx_.data(), h, T(1), g(lp.wo), h);
    B::gemm(false, true, n, qd, h, T(1), dx_.data(), h, p(lp.wo), h, T(0), dattn_.data(), qd);
    B::attention_backward(a.q.data(), a.k.data(), a.v.data(), a.attn.data(), a.lse.data(),
                          dattn_.data(), dq_.data(), dk_.data(), dv_.data(), mbs_, seq_, d.heads,
                          d.kv_heads, d.head_dim, attn_workspace_.data());
    B::rope_backward(dq_.data(), n, seq_, d.heads, d.head_dim, rope_cos_.data(), rope_sin_.data());
    B::rope_backward(dk_.data(), n, seq_, d.kv_heads, d.head_dim, rope_cos_.data(),
                     rope_sin_.data());
    if (d.qkv_bias) {
      B::bias_backward(dq_.data(), n, qd, g(lp.bq));
      B::bias_backward(dk_.data(), n, kvd, g(lp.bk));
      B::bias_backward(dv_.data(), n, kvd, g(lp.bv));
    }
    B::gemm(true, false, h, qd, n, T(1), a.xn1.data(), h, dq_.data(), qd, T(1), g(lp.wq), qd);
    B::gemm(true, false, h, kvd, n, T(1), a.xn1.data(), h, dk_.data(), kvd, T(1), g(lp.wk), kvd);
    B::gemm(true, false, h, kvd, n, T(1), a.xn1.data(), h, dv_.data(), kvd, T(1), g(lp.wv), kvd);
    B::gemm(false, true, n, h, qd, T(1), dq_.data(), qd, p(lp.wq), qd, T(0), dxn_.data(), h);
    B::gemm(false, true, n, h, kvd, T(1), dk_.data(), kvd, p(lp.wk), kvd, T(1), dxn_.data(), h);
    B::gemm(false, true, n, h, kvd, T(1), dv_.data(), kvd, p(lp.wv), kvd, T(1), dxn_.data(), h);
    B::rmsnorm_backward(a.x.data(), p(lp.attn_norm), a.rstd1.data(), dxn_.data(), n, d.hidden,
                        dx_.data(), g(lp.attn_norm));
  }
  B::embedding_backward(inputs_.data(), n, dx_.data(), d.hidden, g(embedding_));
}

}  // namespace tprimat::train

#if defined(TPRIMAT_CPU_EXTERN_TEMPLATES)
#include "tprimat/backend/cpu.hpp"
namespace tprimat::train {
// Compiled once in src/ (target tprimat_cpu); consumers link it instead of re-instantiating.
extern template class Transformer<backend::Cpu, float>;
extern template class Transformer<backend::Cpu, double>;
}  // namespace tprimat::train
#endif
