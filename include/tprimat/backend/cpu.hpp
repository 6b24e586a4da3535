// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Cpu: the Eigen numerical reference, one static function per op, forward and backward.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <numbers>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tprimat/backend/concept.hpp"
#include "tprimat/backend/device_info.hpp"
#include "tprimat/model/spec.hpp"

#if defined(_OPENMP)
#include <omp.h>
// OpenMP pragmas only where OpenMP is on, so -Wall builds without it see no unknown pragmas.
#define TPRIMAT_OMP(directive) _Pragma(directive)
#else
#define TPRIMAT_OMP(directive)
#endif

namespace tprimat::backend {

/// The CPU backend. Every op works on raw row-major buffers with run-time sizes and is templated
/// on the element type only: float for timed runs, double for gradient checks. Matrix work goes
/// through Eigen products so a Tiny step at seq 2048 stays interactive on a laptop.
struct Cpu {
  static constexpr std::string_view name = "cpu";

  template <class T>
  using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  template <class T>
  using Map = Eigen::Map<RowMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;
  template <class T>
  using ConstMap = Eigen::Map<const RowMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;

  /// A [rows, cols] view of a row-major buffer whose rows are `ld` elements apart.
  template <class T>
  static Map<T> view(T* p, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
    return Map<T>(p, rows, cols, Eigen::OuterStride<>(ld));
  }
  template <class T>
  static ConstMap<T> view(const T* p, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
    return ConstMap<T>(p, rows, cols, Eigen::OuterStride<>(ld));
  }

  // ---- GEMM ------------------------------------------------------------------------------

  /// C[m, n] = alpha * op(A) * op(B) + beta * C, row-major; op(A) is [m, k] (A stored [k, m]
  /// when `trans_a`), op(B) is [k, n] (B stored [n, k] when `trans_b`). beta 0 ignores C.
  template <class T>
  static void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                   T alpha, const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta,
                   T* c, std::int64_t ldc) {
    auto cm = view(c, m, n, ldc);
    if (beta == T(0))
      cm.setZero();
    else if (beta != T(1))
      cm *= beta;
    auto product = [&](const auto& am, const auto& bm) { cm.noalias() += alpha * am * bm; };
    if (!trans_a && !trans_b) product(view(a, m, k, lda), view(b, k, n, ldb));
    if (!trans_a && trans_b) product(view(a, m, k, lda), view(b, n, k, ldb).transpose());
    if (trans_a && !trans_b) product(view(a, k, m, lda).transpose(), view(b, k, n, ldb));
    if (trans_a && trans_b) product(view(a, k, m, lda).transpose(), view(b, n, k, ldb).transpose());
  }

  // ---- element-wise helpers --------------------------------------------------------------

  template <class T>
  static void add(T* y, const T* x, std::int64_t n) {  // y += x
    for (std::int64_t i = 0; i < n; ++i) y[i] += x[i];
  }
  template <class T>
  static void scale(T* x, std::int64_t n, T s) {
    for (std::int64_t i = 0; i < n; ++i) x[i] *= s;
  }
  /// y[r, :] += bias for each of `rows` rows of width `cols`.
  template <class T>
  static void add_bias(T* y, const T* bias, std::int64_t rows, std::int64_t cols) {
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) y[r * cols + c] += bias[c];
  }
  /// dbias += column sums of dy[rows, cols].
  template <class T>
  static void bias_backward(const T* dy, std::int64_t rows, std::int64_t cols, T* dbias) {
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) dbias[c] += dy[r * cols + c];
  }
  /// Sum of squares in double, so a global gradient norm does not lose the small entries.
  template <class T>
  static double sum_squares(const T* x, std::int64_t n) {
    double s = 0;
    for (std::int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
    return s;
  }

  // ---- embedding -------------------------------------------------------------------------

  /// out[t, :] = table[ids[t], :]; table [vocab, hidden], out [n, hidden].
  template <class T>
  static void embedding_forward(const std::int32_t* ids, std::int64_t n, const T* table, int hidden,
                                T* out) {
    for (std::int64_t t = 0; t < n; ++t)
      std::copy_n(table + std::int64_t{ids[t]} * hidden, hidden, out + t * hidden);
  }
  /// dtable[ids[t], :] += dout[t, :] (accumulates).
  template <class T>
  static void embedding_backward(const std::int32_t* ids, std::int64_t n, const T* dout, int hidden,
                                 T* dtable) {
    for (std::int64_t t = 0; t < n; ++t)
      add(dtable + std::int64_t{ids[t]} * hidden, dout + t * hidden, hidden);
  }

  // ---- RMSNorm ---------------------------------------------------------------------------

  /// y = x * rstd * g with rstd = 1 / sqrt(mean(x^2) + eps); x, y [n, h], g [h], rstd [n].
  template <class T>
  static void rmsnorm_forward(const T* x, const T* g, std::int64_t n, int h, double eps, T* y,
                              T* rstd) {
    for (std::int64_t t = 0; t < n; ++t) {
      const T* xr = x + t * h;
      double ss = 0;
      for (int i = 0; i < h; ++i) ss += static_cast<double>(xr[i]) * xr[i];
      const T r = static_cast<T>(1.0 / std::sqrt(ss / h + eps));
      rstd[t] = r;
      for (int i = 0; i < h; ++i) y[t * h + i] = xr[i] * r * g[i];
    }
  }
  /// dx += rstd * u - x * rstd^3 * (u . x) / h with u = dy * g; dg += sum_t dy * x * rstd.
  /// dx accumulates because it is the residual stream's gradient.
  template <class T>
  static void rmsnorm_backward(const T* x, const T* g, const T* rstd, const T* dy, std::int64_t n,
                               int h, T* dx, T* dg) {
    for (std::int64_t t = 0; t < n; ++t) {
      const T* xr = x + t * h;
      const T* dyr = dy + t * h;
      const T r = rstd[t];
      double dot = 0;
      for (int i = 0; i < h; ++i) dot += static_cast<double>(dyr[i]) * g[i] * xr[i];
      const T c = static_cast<T>(dot / h) * r * r * r;
      for (int i = 0; i < h; ++i) {
        dx[t * h + i] += r * dyr[i] * g[i] - xr[i] * c;
        dg[i] += dyr[i] * xr[i] * r;
      }
    }
  }

  // ---- RoPE ------------------------------------------------------------------------------

  /// Inverse frequencies theta^(-2i/head_dim), i < head_dim/2, with the "llama3" rule when
  /// d.rope_scaling is enabled (HF transformers `_compute_llama3_parameters`).
  static std::vector<double> rope_inv_freq(const model::Dims& d) {
    const int half = d.head_dim / 2;
    std::vector<double> inv(half);
    for (int i = 0; i < half; ++i) inv[i] = 1.0 / std::pow(d.rope_theta, 2.0 * i / d.head_dim);
    const auto& s = d.rope_scaling;
    if (!s.enabled()) return inv;
    const double low_wavelen = s.original_context / s.low_freq_factor;
    const double high_wavelen = s.original_context / s.high_freq_factor;
    for (auto& f : inv) {
      const double wavelen = 2 * std::numbers::pi / f;
      if (wavelen < high_wavelen) continue;  // high frequency: kept
      if (wavelen > low_wavelen) {
        f /= s.factor;  // low frequency: fully scaled
      } else {
        const double smooth = (s.original_context / wavelen - s.low_freq_factor) /
                              (s.high_freq_factor - s.low_freq_factor);
        f = (1 - smooth) * f / s.factor + smooth * f;
      }
    }
    return inv;
  }

  /// cos and sin tables [positions, head_dim/2], row t at position positions[t] (a context-
  /// parallel rank's tokens: parallel::ContextSplit::positions), angle = position * inv_freq[i],
  /// computed in double.
  template <class T>
  static void rope_tables_at(const model::Dims& d, std::span<const int> positions, T* cos_table,
                             T* sin_table) {
    const auto inv = rope_inv_freq(d);
    const int half = d.head_dim / 2;
    for (std::size_t t = 0; t < positions.size(); ++t)
      for (int i = 0; i < half; ++i) {
        const double angle = positions[t] * inv[i];
        cos_table[t * half + i] = static_cast<T>(std::cos(angle));
        sin_table[t * half + i] = static_cast<T>(std::sin(angle));
      }
  }

  /// rope_tables_at positions 0 .. seq - 1.
  template <class T>
  static void rope_tables(const model::Dims& d, int seq, T* cos_table, T* sin_table) {
    std::vector<int> positions(static_cast<std::size_t>(seq));
    std::iota(positions.begin(), positions.end(), 0);
    rope_tables_at(d, std::span<const int>(positions), cos_table, sin_table);
  }

  /// Rotates x [batch * seq, heads * head_dim] in place, HF "rotate_half" pairing (i, i + half):
  /// y1 = x1 cos - x2 sin, y2 = x2 cos + x1 sin. Row t sits at position t % seq. With
  /// `inverse` it applies the transpose rotation, which is the backward of the forward.
  template <class T>
  static void rope_apply(T* x, std::int64_t rows, int seq, int heads, int head_dim,
                         const T* cos_table, const T* sin_table, bool inverse) {
    const int half = head_dim / 2;
    const T sign = inverse ? T(-1) : T(1);
    for (std::int64_t t = 0; t < rows; ++t) {
      const T* c = cos_table + (t % seq) * half;
      const T* s = sin_table + (t % seq) * half;
      for (int h = 0; h < heads; ++h) {
        T* v = x + (t * heads + h) * head_dim;
        for (int i = 0; i < half; ++i) {
          const T x1 = v[i], x2 = v[i + half], sn = sign * s[i];
          v[i] = x1 * c[i] - x2 * sn;
          v[i + half] = x2 * c[i] + x1 * sn;
        }
      }
    }
  }
  template <class T>
  static void rope_forward(T* x, std::int64_t rows, int seq, int heads, int head_dim,
                           const T* cos_table, const T* sin_table) {
    rope_apply(x, rows, seq, heads, head_dim, cos_table, sin_table, false);
  }
  template <class T>
  static void rope_backward(T* dx, std::int64_t rows, int seq, int heads, int head_dim,
                            const T* cos_table, const T* sin_table) {
    rope_apply(dx, rows, seq, heads, head_dim, cos_table, sin_table, true);
  }

  // ---- grouped-query causal attention ----------------------------------------------------

  /// Query rows handled together; the score tile is [attention_block, seq], so the causal
  /// upper triangle beyond each tile's last row is never computed.
  static constexpr int attention_block = 128;
  /// Workspace elements attention_forward/backward need for one sequence length.
  static std::int64_t attention_workspace(int seq) {
    return 2 * std::int64_t{std::min(seq, attention_block)} * seq;
  }

  /// The caller's workspace for the first thread of a parallel region; every other OpenMP thread
  /// allocates its own tile (2 MB at seq 2048: negligible next to the step, and no size contract
  /// between the caller's allocation and the thread count at call time).
  template <class T>
  class ThreadWorkspace {
   public:
    ThreadWorkspace(T* shared, int seq) : ptr_(shared) {
#if defined(_OPENMP)
      if (omp_get_thread_num() != 0) {
        own_.resize(attention_workspace(seq));
        ptr_ = own_.data();
      }
#else
      (void)seq;
#endif
    }
    T* data() { return ptr_; }

   private:
    T* ptr_;
    std::vector<T, Eigen::aligned_allocator<T>> own_;
  };

  /// Scores of query rows [i0, i0 + rows) against keys [0, i0 + rows) into s [rows, n], turned
  /// into probabilities: from the row max when `lse_out` is set (forward, which writes each row's
  /// log-sum-exp there), else from the stored `lse_in` (backward recompute). Masked entries are 0.
  template <class T>
  static void attention_probs(Map<T>& s, std::int64_t i0, const T* lse_in, T* lse_out) {
    const std::int64_t rows = s.rows(), n = s.cols();
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t valid = i0 + r + 1;  // causal: keys 0..i
      auto row = s.row(r).head(valid);
      if (lse_out) {
        const T m = row.maxCoeff();
        row = (row.array() - m).exp();
        const T sum = row.sum();
        row /= sum;
        lse_out[r] = m + std::log(sum);
      } else {
        row = (row.array() - lse_in[r]).exp();
      }
      if (valid < n) s.row(r).tail(n - valid).setZero();
    }
  }

  /// o = softmax(q k^T / sqrt(head_dim), causal) v per (sequence, head); KV head g serves query
  /// heads [g * heads/kv_heads, (g + 1) * heads/kv_heads). q, o [batch * seq, heads * head_dim];
  /// k, v [batch * seq, kv_heads * head_dim]; lse [batch, heads, seq] (kept for backward).
  /// `workspace` holds attention_workspace(seq) elements. With OpenMP, (sequence, KV head) pairs
  /// run in parallel; each pair is computed serially, so results do not depend on thread count.
  template <class T>
  static void attention_forward(const T* q, const T* k, const T* v, T* o, T* lse, int batch,
                                int seq, int heads, int kv_heads, int head_dim, T* workspace) {
    const std::int64_t qw = std::int64_t{heads} * head_dim, kw = std::int64_t{kv_heads} * head_dim;
    const int group = heads / kv_heads, pairs = batch * kv_heads;
    const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(head_dim)));
    TPRIMAT_OMP("omp parallel if (pairs > 1)") {
      ThreadWorkspace<T> ws(workspace, seq);
      TPRIMAT_OMP("omp for schedule(dynamic, 1)")
      for (int pair = 0; pair < pairs; ++pair) {
        const int b = pair / kv_heads, g = pair % kv_heads;
        const std::int64_t base = std::int64_t{b} * seq;
        const T* kg = k + base * kw + std::int64_t{g} * head_dim;
        const T* vg = v + base * kw + std::int64_t{g} * head_dim;
        for (int h = g * group; h < (g + 1) * group; ++h) {
          const T* qh = q + base * qw + std::int64_t{h} * head_dim;
          T* oh = o + base * qw + std::int64_t{h} * head_dim;
          T* lse_h = lse + (std::int64_t{b} * heads + h) * seq;
          for (std::int64_t i0 = 0; i0 < seq; i0 += attention_block) {
            const std::int64_t rows = std::min<std::int64_t>(attention_block, seq - i0);
            const std::int64_t n = i0 + rows;
            auto s = view(ws.data(), rows, n, n);
            s.noalias() = scale * view(qh + i0 * qw, rows, head_dim, qw) *
                          view(kg, n, head_dim, kw).transpose();
            attention_probs<T>(s, i0, nullptr, lse_h + i0);
            view(oh + i0 * qw, rows, head_dim, qw).noalias() = s * view(vg, n, head_dim, kw);
          }
        }
      }
    }
  }

  /// Backward of attention_forward; recomputes the probabilities from lse (flash-style) so no
  /// [seq, seq] matrix is stored. dq, dk and dv are overwritten (each KV head sums over its
  /// query heads inside this call, in one thread, so the sum order is fixed).
  template <class T>
  static void attention_backward(const T* q, const T* k, const T* v, const T* o, const T* lse,
                                 const T* dout, T* dq, T* dk, T* dv, int batch, int seq, int heads,
                                 int kv_heads, int head_dim, T* workspace) {
    const std::int64_t qw = std::int64_t{heads} * head_dim, kw = std::int64_t{kv_heads} * head_dim;
    const int group = heads / kv_heads, pairs = batch * kv_heads;
    const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(head_dim)));
    std::fill_n(dk, std::int64_t{batch} * seq * kw, T(0));
    std::fill_n(dv, std::int64_t{batch} * seq * kw, T(0));
    const std::int64_t tile = std::int64_t{std::min(seq, attention_block)} * seq;
    TPRIMAT_OMP("omp parallel if (pairs > 1)") {
      ThreadWorkspace<T> ws(workspace, seq);
      T row_dot[attention_block];
      TPRIMAT_OMP("omp for schedule(dynamic, 1)")
      for (int pair = 0; pair < pairs; ++pair) {
        const int b = pair / kv_heads, g = pair % kv_heads;
        const std::int64_t base = std::int64_t{b} * seq;
        const std::int64_t ko = base * kw + std::int64_t{g} * head_dim;
        for (int h = g * group; h < (g + 1) * group; ++h) {
          const std::int64_t qo = base * qw + std::int64_t{h} * head_dim;
          const T* lse_h = lse + (std::int64_t{b} * heads + h) * seq;
          for (std::int64_t i0 = 0; i0 < seq; i0 += attention_block) {
            const std::int64_t rows = std::min<std::int64_t>(attention_block, seq - i0);
            const std::int64_t n = i0 + rows;
            const auto qb = view(q + qo + i0 * qw, rows, head_dim, qw);
            const auto dob = view(dout + qo + i0 * qw, rows, head_dim, qw);
            const auto ob = view(o + qo + i0 * qw, rows, head_dim, qw);
            const auto kn = view(k + ko, n, head_dim, kw);
            const auto vn = view(v + ko, n, head_dim, kw);
            auto p = view(ws.data(), rows, n, n);
            auto ds = view(ws.data() + tile, rows, n, n);
            p.noalias() = scale * qb * kn.transpose();
            attention_probs<T>(p, i0, lse_h + i0, nullptr);
            view(dv + ko, n, head_dim, kw).noalias() += p.transpose() * dob;
            ds.noalias() = dob * vn.transpose();  // dP
            for (std::int64_t r = 0; r < rows; ++r) row_dot[r] = dob.row(r).dot(ob.row(r));
            for (std::int64_t r = 0; r < rows; ++r)
              ds.row(r) = p.row(r).array() * (ds.row(r).array() - row_dot[r]);
            view(dq + qo + i0 * qw, rows, head_dim, qw).noalias() = scale * ds * kn;
            view(dk + ko, n, head_dim, kw).noalias() += scale * ds.transpose() * qb;
          }
        }
      }
    }
  }

  // ---- attention of one block of keys, by position (context parallelism) ------------------

  /// The causal mask of a block: key j serves query i when k_pos[j] <= q_pos[i] (positions in
  /// the whole sequence, so query and key rows may be any of its tokens, in any order).
  /// Scores of one (sequence, head) into s [lq, lk], masked entries -inf.
  template <class T>
  static void block_scores(Map<T>& s, ConstMap<T> qh, ConstMap<T> kg, const int* q_pos,
                           const int* k_pos, T scale) {
    s.noalias() = scale * qh * kg.transpose();
    for (std::int64_t i = 0; i < s.rows(); ++i)
      for (std::int64_t j = 0; j < s.cols(); ++j)
        if (k_pos[j] > q_pos[i]) s(i, j) = -std::numeric_limits<T>::infinity();
  }

  /// Partial causal attention of lq query rows against lk key rows of `batch` sequences (q, o
  /// [batch * lq, heads * head_dim]; k, v [batch * lk, kv_heads * head_dim]; lse [batch, heads,
  /// lq]), masked by position (block_scores): o is softmax-weighted over this block's keys only
  /// and lse their log-sum-exp, to be merged with other blocks' by merge_attention. A row with
  /// no key in the block gets o 0 and lse -inf. Serial, so results do not depend on threads.
  /// Elements of the workspace attention_block_forward and _backward take for lq x lk blocks
  /// (the backward's two score tiles; the forward uses the first).
  static std::int64_t attention_block_workspace(int lq, int lk) {
    return 2 * std::int64_t{lq} * lk;
  }

  template <class T>
  static void attention_block_forward(const T* q, const T* k, const T* v, T* o, T* lse, int batch,
                                      int lq, const int* q_pos, int lk, const int* k_pos,
                                      int heads, int kv_heads, int head_dim, T* workspace) {
    const std::int64_t qw = std::int64_t{heads} * head_dim, kw = std::int64_t{kv_heads} * head_dim;
    const int group = heads / kv_heads;
    const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(head_dim)));
    auto s = view(workspace, lq, lk, lk);
    for (int b = 0; b < batch; ++b)
      for (int h = 0; h < heads; ++h) {
        const std::int64_t qo = std::int64_t{b} * lq * qw + std::int64_t{h} * head_dim;
        const std::int64_t ko = std::int64_t{b} * lk * kw + std::int64_t{h / group} * head_dim;
        block_scores<T>(s, view(q + qo, lq, head_dim, qw), view(k + ko, lk, head_dim, kw), q_pos,
                        k_pos, scale);
        T* lse_h = lse + (std::int64_t{b} * heads + h) * lq;
        for (std::int64_t i = 0; i < lq; ++i) {
          const T m = s.row(i).maxCoeff();
          if (m == -std::numeric_limits<T>::infinity()) {  // no key of this block serves row i
            s.row(i).setZero();
            lse_h[i] = m;
            continue;
          }
          s.row(i) = (s.row(i).array() - m).exp();  // exp(-inf) = 0 for the masked keys
          const T sum = s.row(i).sum();
          s.row(i) /= sum;
          lse_h[i] = m + std::log(sum);
        }
        view(o + qo, lq, head_dim, qw).noalias() = s * view(v + ko, lk, head_dim, kw);
      }
  }

  /// Merges a block's partial attention (o_part, lse_part) into the running one (o, lse), both
  /// laid out as attention_block_forward's: o = o exp(lse - lse') + o_part exp(lse_part - lse'),
  /// lse' = log(exp(lse) + exp(lse_part)). lse -inf (no key yet) takes the block's as it is.
  template <class T>
  static void merge_attention(T* o, T* lse, const T* o_part, const T* lse_part, int batch, int lq,
                              int heads, int head_dim) {
    constexpr T none = -std::numeric_limits<T>::infinity();
    const std::int64_t qw = std::int64_t{heads} * head_dim;
    for (int b = 0; b < batch; ++b)
      for (int h = 0; h < heads; ++h)
        for (std::int64_t i = 0; i < lq; ++i) {
          const std::int64_t at = (std::int64_t{b} * heads + h) * lq + i;
          const T l1 = lse[at], l2 = lse_part[at];
          if (l2 == none) continue;
          T* row = o + (std::int64_t{b} * lq + i) * qw + std::int64_t{h} * head_dim;
          const T* part = o_part + (std::int64_t{b} * lq + i) * qw + std::int64_t{h} * head_dim;
          if (l1 == none) {
            std::copy_n(part, head_dim, row);
            lse[at] = l2;
            continue;
          }
          const T m = std::max(l1, l2);
          const T merged = m + std::log(std::exp(l1 - m) + std::exp(l2 - m));
          const T w1 = std::exp(l1 - merged), w2 = std::exp(l2 - merged);
          for (int e = 0; e < head_dim; ++e) row[e] = row[e] * w1 + part[e] * w2;
          lse[at] = merged;
        }
  }

  /// Backward of one block of attention_block_forward, given the MERGED o and lse of the query
  /// rows (so the block's probabilities are the whole softmax's): ADDS to dq [batch * lq, ...]
  /// and to the block's dk, dv [batch * lk, ...].
  template <class T>
  static void attention_block_backward(const T* q, const T* k, const T* v, const T* o,
                                       const T* lse, const T* dout, T* dq, T* dk, T* dv, int batch,
                                       int lq, const int* q_pos, int lk, const int* k_pos,
                                       int heads, int kv_heads, int head_dim, T* workspace) {
    const std::int64_t qw = std::int64_t{heads} * head_dim, kw = std::int64_t{kv_heads} * head_dim;
    const int group = heads / kv_heads;
    const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(head_dim)));
    auto p = view(workspace, lq, lk, lk);
    auto ds = view(workspace + std::int64_t{lq} * lk, lq, lk, lk);
    for (int b = 0; b < batch; ++b)
      for (int h = 0; h < heads; ++h) {
        const std::int64_t qo = std::int64_t{b} * lq * qw + std::int64_t{h} * head_dim;
        const std::int64_t ko = std::int64_t{b} * lk * kw + std::int64_t{h / group} * head_dim;
        const auto qb = view(q + qo, lq, head_dim, qw);
        const auto kb = view(k + ko, lk, head_dim, kw);
        const auto dob = view(dout + qo, lq, head_dim, qw);
        const auto ob = view(o + qo, lq, head_dim, qw);
        const T* lse_h = lse + (std::int64_t{b} * heads + h) * lq;
        block_scores<T>(p, qb, kb, q_pos, k_pos, scale);
        for (std::int64_t i = 0; i < lq; ++i) p.row(i) = (p.row(i).array() - lse_h[i]).exp();
        view(dv + ko, lk, head_dim, kw).noalias() += p.transpose() * dob;
        ds.noalias() = dob * view(v + ko, lk, head_dim, kw).transpose();  // dP
        for (std::int64_t i = 0; i < lq; ++i) {
          const T row_dot = dob.row(i).dot(ob.row(i));
          ds.row(i) = p.row(i).array() * (ds.row(i).array() - row_dot);
        }
        view(dq + qo, lq, head_dim, qw).noalias() += scale * ds * kb;
        view(dk + ko, lk, head_dim, kw).noalias() += scale * ds.transpose() * qb;
      }
  }

  // ---- SwiGLU ----------------------------------------------------------------------------

  /// h = silu(gate) * up, silu(x) = x * sigmoid(x); all [n] element-wise.
  template <class T>
  static void swiglu_forward(const T* gate, const T* up, T* h, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
      const T s = T(1) / (T(1) + std::exp(-gate[i]));
      h[i] = gate[i] * s * up[i];
    }
  }
  /// dgate = dh * up * s * (1 + gate * (1 - s)); dup = dh * silu(gate). Overwrites both.
  template <class T>
  static void swiglu_backward(const T* gate, const T* up, const T* dh, T* dgate, T* dup,
                              std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
      const T s = T(1) / (T(1) + std::exp(-gate[i]));
      dgate[i] = dh[i] * up[i] * s * (T(1) + gate[i] * (T(1) - s));
      dup[i] = dh[i] * gate[i] * s;
    }
  }

  // ---- cross-entropy ---------------------------------------------------------------------

  /// Softmax cross-entropy of logits [n, vocab] against targets [n], fused with its gradient:
  /// returns the SUM of the n losses (double) and, when `with_grad`, overwrites the logits with
  /// grad_scale * (softmax - onehot(target)).
  template <class T>
  static double cross_entropy(T* logits, const std::int32_t* targets, std::int64_t n, int vocab,
                              T grad_scale, bool with_grad) {
    double total = 0;
    for (std::int64_t t = 0; t < n; ++t) {
      Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> row(logits + t * vocab, vocab);
      const T m = row.maxCoeff();
      const T target_logit = row[targets[t]];
      if (with_grad) {
        row = (row - m).exp();
        const T sum = row.sum();
        total += static_cast<double>(m) + std::log(static_cast<double>(sum)) - target_logit;
        row *= grad_scale / sum;
        row[targets[t]] -= grad_scale;
      } else {
        const T sum = (row - m).exp().sum();
        total += static_cast<double>(m) + std::log(static_cast<double>(sum)) - target_logit;
      }
    }
    return total;
  }

  // ---- optimizer -------------------------------------------------------------------------

  /// AdamW (PyTorch order): p *= 1 - lr * wd; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
  /// p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
  template <class T>
  static void adamw(T* p, const T* g, T* m, T* v, std::int64_t n, const AdamWArgs& a) {
    const double c1 = 1.0 - std::pow(a.beta1, a.step), c2 = 1.0 - std::pow(a.beta2, a.step);
    const T decay = static_cast<T>(1.0 - a.lr * a.weight_decay);
    const T b1 = static_cast<T>(a.beta1), b2 = static_cast<T>(a.beta2);
    const T step_size = static_cast<T>(a.lr / c1),
            inv_sqrt_c2 = static_cast<T>(1.0 / std::sqrt(c2));
    const T eps = static_cast<T>(a.eps);
    for (std::int64_t i = 0; i < n; ++i) {
      m[i] = b1 * m[i] + (T(1) - b1) * g[i];
      v[i] = b2 * v[i] + (T(1) - b2) * g[i] * g[i];
      p[i] = p[i] * decay - step_size * m[i] / (std::sqrt(v[i]) * inv_sqrt_c2 + eps);
    }
  }

  // ---- device ----------------------------------------------------------------------------

  /// The host CPU as the result JSON's gpu_info: name from /proc/cpuinfo, memory from
  /// /proc/meminfo. No driver or runtime (the compiler is the result's reproduce.compiler), and no
  /// dense peak is claimed (MFU stays null).
  static DeviceInfo device_info() {
    DeviceInfo info;
    info.platform = "cpu";
    info.software_stack = "cpu";
    info.device_count = 1;
    info.cores = static_cast<int>(std::thread::hardware_concurrency());
    info.device_name = "unknown CPU";
    auto value_of = [](const std::string& line) {
      const auto colon = line.find(':');
      std::string v = colon == std::string::npos ? "" : line.substr(colon + 1);
      const auto first = v.find_first_not_of(" \t");
      return first == std::string::npos ? std::string{} : v.substr(first);
    };
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
      if (line.rfind("model name", 0) == 0) {
        info.device_name = value_of(line);
        break;
      }
    std::ifstream meminfo("/proc/meminfo");
    for (std::string line; std::getline(meminfo, line);)
      if (line.rfind("MemTotal:", 0) == 0) {
        info.total_memory_gb = std::stod(value_of(line)) / (1024.0 * 1024.0);  // kB -> GiB
        break;
      }
    info.peak_tflops_dense = 0;
    return info;
  }
};
static_assert(Backend<Cpu>);

}  // namespace tprimat::backend
