// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::CudnnAttention: cuDNN 9's fused flash attention, built through the backend graph API of
// cudnn.h.
//
// Why a graph of primitive operations. cuDNN has no "attention" call that both 9.14 (what the
// H100 runs) and the 9.19 headers here share with a causal mask: the composite
// CUDNN_BACKEND_OPERATION_SDPA_FWD/BWD descriptors take a mask only through a score subgraph that
// needs cuDNN 9.21. Instead cuDNN's fused flash-attention engines match an operation graph of
// matmul, pointwise, reduction and reshape nodes, the one cudnn-frontend's SDPA node lowers to for
// backends before 9.21. The matcher is strict about that shape, so the graphs below keep the
// frontend's node order, data types and virtual/non-virtual choices. Notation: b batch, h query
// heads, g kv heads, s sequence, d head_dim; every tensor is 4-d [b, head, row, col].
//
// Layout. Our q/o [b*s, h*d] token-major is the cuDNN tensor [b, h, s, d] with strides
// [s*h*d, d, h*d, 1] and k/v [b, g, s, d] with strides [s*g*d, d, g*d, 1]: no copies. The first
// matmul wants K^T, which is the same memory described as [b, g, d, s] with strides
// [s*g*d, d, 1, g*d]. Grouped-query attention needs nothing extra: a matmul broadcasts the g kv
// heads over the h query heads (query head i reads kv head i / (h/g), as our contract says), and in
// backward an ADD reduction over [b, h, s, d] -> [b, g, s, d] sums each group's gradients.
//
// Forward (io bf16, everything virtual is fp32 unless noted):
//   S  = matmul(Q, K^T)                         [b,h,s,s]
//   S1 = S * scale                              pointwise MUL, scale a by-value fp32 scalar
//   row = gen_index(S1, axis 2), col = gen_index(S1, axis 3)   int32
//   keep = row >= col                           pointwise CMP_GE, boolean
//   S2 = keep ? S1 : -inf                       pointwise BINARY_SELECT, -inf a by-value scalar
//   M = max_row(S2)  [b,h,s,1];  E = exp(S2 - M);  Z = sum_row(E)  [b,h,s,1]
//   Stats = M + log(Z)                          the non-virtual fp32 output [b,h,s,1]
//   P = E / Z                                   virtual but bf16: the engine's second GEMM operand
//   O = matmul(P, V)
// Stats = log(sum_{j<=i} exp(scale * q_i.k_j)) in natural log, with masked entries exp(-inf) = 0:
// exactly our lse [batch, heads, seq] (strides [h*s, s, 1, 1]), so the backward of either
// attention policy accepts the other's lse.
//
// Backward (recomputes P from Stats, never stores [s, s]):
//   dOO = dO * O  [b,h,s,d];  rowsum = sum_row(dOO);  softmax_sum = rowsum * 1
//       (non-virtual fp32 [b,h,s,1] scratch in our workspace: cuDNN's engine wants the dO.O row
//       sums materialised, the frontend places them in its own workspace the same way)
//   S = matmul(Q, K^T) * scale - Stats;  causal select as in forward;  P = exp(S)
//   P^T = reshape(P) (bf16, [b,h,s,s] with transposed strides)
//   dV = matmul(P^T, dO)          (GQA: into a bf16 [b,h,s,d] virtual, then ADD-reduced to g heads)
//   dP = matmul(dO, V^T);  dS = (dP - softmax_sum) * P * scale
//   dK = matmul(reshape(dS)^T, Q) (GQA: reduced like dV)
//   dQacc = matmul(dS, K)  non-virtual fp32 [b,h,s,d] packed scratch (cuDNN accumulates dQ across
//       kv tiles in fp32 there; from 9.6 the engine zeroes it itself), dQ = identity(dQacc) -> bf16
//   cuDNN up to 9.15 also needs, when s % 128 != 0, a padding mask (row < seq_len_q and
//   col < seq_len_kv, with int32 [b,1,1,1] length tensors that also override the GEMMs' m/n/k)
//   right after the Stats subtraction; the frontend inserts the same workaround.
//
// Blocks of context parallelism: the same graphs with t key rows beside the s query rows
// (scores [b,h,s,t]): a query chunk over the keys up to its own, causal with the diagonal at the
// keys' end (the row index shifted by t - s, as the frontend's bottom-right band), or over the
// keys before it without the causal select. An unmasked block's backward takes the merged Stats
// and O of the whole row, so its dQ, dK and dV are its exact share of the gradient.
//
// Engine selection: heuristics mode A, then FALLBACK; the first engine config whose execution
// plan finalizes wins. Plans, handles (one per device) and workspaces are built once per shape and
// device and cached; forward/backward then only create a variant pack and enqueue, so they can be
// captured in a CUDA graph. Set TPRIMAT_CUDNN_DEBUG=1 to print the chosen engine per plan.
// Checked on an H100 against a double-precision reference (MHA, GQA, MQA; seq 77..4096; head_dim
// 32..128) with cuDNN 9.14.0 and 9.19.0, eager and replayed from a captured CUDA graph.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tprimat/backend/environment.hpp"
#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/attention.hpp"
#include "tprimat/core/error.hpp"

#if defined(TPRIMAT_HAVE_CUDNN)
#include <cudnn.h>
#endif

namespace tprimat::backend {

namespace detail::cudnn {

/// Empty when cuDNN's flash engines can take the shape at all; otherwise why not.
[[maybe_unused]] inline std::string shape_problem(const AttentionShape& s) {
  if (s.batch <= 0 || s.seq <= 0 || s.heads <= 0 || s.kv_heads <= 0 || s.head_dim <= 0 ||
      s.kv_seq < 0)
    return "empty shape";
  // A causal mask aligns the first query with the first key: only square blocks are meant.
  if (s.mask == AttentionShape::Mask::causal && s.keys() != s.seq)
    return "a causal mask over " + std::to_string(s.seq) + " queries and " +
           std::to_string(s.keys()) + " keys";
  if (s.mask == AttentionShape::Mask::causal_end && s.keys() < s.seq)
    return "a causal mask at the keys' end over fewer keys than queries";
  if (s.heads % s.kv_heads != 0) return "heads is not a multiple of kv_heads";
  if (s.head_dim % 8 != 0 || s.head_dim > 128)
    return "head_dim " + std::to_string(s.head_dim) + " is not a multiple of 8 up to 128";
  return {};
}

[[maybe_unused]] inline std::string describe(const AttentionShape& s) {
  return "batch " + std::to_string(s.batch) + ", seq " + std::to_string(s.seq) +
         (s.keys() != s.seq ? ", kv_seq " + std::to_string(s.keys()) : std::string()) +
         ", heads " + std::to_string(s.heads) + ", kv_heads " + std::to_string(s.kv_heads) +
         ", head_dim " + std::to_string(s.head_dim) +
         (s.mask == AttentionShape::Mask::none         ? ", no mask"
          : s.mask == AttentionShape::Mask::causal_end ? ", causal at the keys' end"
                                                       : "");
}

}  // namespace detail::cudnn

#if defined(TPRIMAT_HAVE_CUDNN)

namespace detail::cudnn {

// ---- errors and descriptors -------------------------------------------------------------------

inline std::string status_text(cudnnStatus_t status) {
  std::string text = cudnnGetErrorString(status);
  char detail[1024] = {};
  cudnnGetLastErrorString(detail, sizeof detail);
  if (detail[0] != '\0') text += std::string(" (") + detail + ")";
  return text;
}

inline void cudnn_check(cudnnStatus_t status, const std::string& step) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw core::RunError("cuDNN attention: " + step + ": " + status_text(status));
}

/// Owns one cudnnBackendDescriptor_t.
class Descriptor {
 public:
  Descriptor() = default;
  Descriptor(cudnnBackendDescriptorType_t type, const std::string& what) {
    cudnn_check(cudnnBackendCreateDescriptor(type, &d_), "create " + what);
  }
  Descriptor(Descriptor&& other) noexcept : d_(std::exchange(other.d_, nullptr)) {}
  Descriptor& operator=(Descriptor&& other) noexcept {
    if (this != &other) {
      reset();
      d_ = std::exchange(other.d_, nullptr);
    }
    return *this;
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() { reset(); }

  cudnnBackendDescriptor_t get() const { return d_; }

  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count,
           const void* values, const std::string& what) {
    cudnn_check(cudnnBackendSetAttribute(d_, name, type, count, values), what);
  }
  void set_desc(cudnnBackendAttributeName_t name, cudnnBackendDescriptor_t value,
                const std::string& what) {
    set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &value, what);
  }
  void finalize(const std::string& what) {
    cudnn_check(cudnnBackendFinalize(d_), "finalize " + what);
  }

 private:
  void reset() {
    if (d_ != nullptr) cudnnBackendDestroyDescriptor(d_);
    d_ = nullptr;
  }
  cudnnBackendDescriptor_t d_ = nullptr;
};

// ---- the operation graph ----------------------------------------------------------------------

using Dims = std::array<std::int64_t, 4>;

// Unique ids of the non-virtual tensors (the variant pack's keys); virtual ones count from 1000.
constexpr std::int64_t uid_q = 1, uid_k = 2, uid_v = 3, uid_o = 4, uid_stats = 5, uid_do = 6,
                       uid_dq = 7, uid_dk = 8, uid_dv = 9, uid_scale = 10, uid_mask_value = 11,
                       uid_one = 12, uid_softmax_sum = 13, uid_dq_accum = 14, uid_seq_len_q = 15,
                       uid_seq_len_kv = 16, uid_rows = 17, uid_keys = 18;

/// Collects tensors and operations, keeps their descriptors alive, finalizes the graph.
class GraphBuilder {
 public:
  cudnnBackendDescriptor_t tensor(std::int64_t uid, cudnnDataType_t type, const Dims& dims,
                                  const Dims& strides, bool is_virtual = false,
                                  bool by_value = false) {
    const std::string what = "tensor " + std::to_string(uid);
    Descriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR, what);
    const std::int64_t alignment = 16;  // what the tensor-core engines require of every operand
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, what + " data type");
    t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data(), what + " dims");
    t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data(), what + " strides");
    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, what + " uid");
    t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, what + " alignment");
    t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, what + " virtual");
    if (by_value)
      t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, what + " by value");
    t.finalize(what);
    return keep(std::move(t));
  }
  /// A scalar passed by value in the variant pack (a host pointer at execute time).
  cudnnBackendDescriptor_t scalar(std::int64_t uid, cudnnDataType_t type = CUDNN_DATA_FLOAT) {
    return tensor(uid, type, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
  }
  cudnnBackendDescriptor_t virt(cudnnDataType_t type, const Dims& dims, const Dims& strides) {
    return tensor(next_virtual_++, type, dims, strides, true);
  }

  /// y = mode(x[, b[, t]]); axis only for GEN_INDEX.
  void pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t precision, cudnnBackendDescriptor_t x,
                 cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t, cudnnBackendDescriptor_t y,
                 std::int64_t axis = -1) {
    const std::string what = "pointwise op " + std::to_string(ops_.size());
    Descriptor pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, what + " mode");
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, what + " mode");
    pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision, what + " prec");
    if (axis >= 0) pw.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, what + " axis");
    pw.finalize(what + " mode");
    Descriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, what);
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw.get(), what + " descriptor");
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x, what + " x");
    if (b != nullptr) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b, what + " b");
    if (t != nullptr) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t, what + " t");
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y, what + " y");
    op.finalize(what);
    keep(std::move(pw));
    ops_.push_back(keep(std::move(op)));
  }
  void unary(cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y) {
    pointwise(mode, CUDNN_DATA_FLOAT, x, nullptr, nullptr, y);
  }
  void binary(cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b,
              cudnnBackendDescriptor_t y) {
    pointwise(mode, CUDNN_DATA_FLOAT, x, b, nullptr, y);
  }

  /// c = a b over the last two dims, batch dims broadcast (the GQA head grouping); fp32 math.
  /// The overrides are int32 [b,1,1,1] device tensors bounding the GEMM extents per batch.
  void matmul(cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c,
              cudnnBackendDescriptor_t m_override = nullptr,
              cudnnBackendDescriptor_t n_override = nullptr,
              cudnnBackendDescriptor_t k_override = nullptr) {
    const std::string what = "matmul op " + std::to_string(ops_.size());
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    Descriptor mm(CUDNN_BACKEND_MATMUL_DESCRIPTOR, what + " descriptor");
    mm.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, what + " compute");
    mm.finalize(what + " descriptor");
    Descriptor op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, what);
    op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a, what + " a");
    op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b, what + " b");
    op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c, what + " c");
    op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm.get(), what + " descriptor");
    if (m_override != nullptr)
      op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, m_override, what + " m");
    if (n_override != nullptr)
      op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, n_override, what + " n");
    if (k_override != nullptr)
      op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, k_override, what + " k");
    op.finalize(what);
    keep(std::move(mm));
    ops_.push_back(keep(std::move(op)));
  }

  /// y = reduce(x) over the dims where y is 1 (or grouped, h -> g heads); fp32 math.
  void reduction(cudnnReduceTensorOp_t reduce, cudnnBackendDescriptor_t x,
                 cudnnBackendDescriptor_t y) {
    const std::string what = "reduction op " + std::to_string(ops_.size());
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    Descriptor rd(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, what + " descriptor");
    rd.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &reduce,
           what + " operator");
    rd.set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, what + " compute");
    rd.finalize(what + " descriptor");
    Descriptor op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, what);
    op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x, what + " x");
    op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y, what + " y");
    op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_DESC, rd.get(), what + " descriptor");
    op.finalize(what);
    keep(std::move(rd));
    ops_.push_back(keep(std::move(op)));
  }

  /// y views x with other dims/strides (how the graph spells a transpose).
  void reshape(cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y) {
    const std::string what = "reshape op " + std::to_string(ops_.size());
    Descriptor op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, what);
    op.set_desc(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x, what + " x");
    op.set_desc(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y, what + " y");
    op.finalize(what);
    ops_.push_back(keep(std::move(op)));
  }

  Descriptor finalize(cudnnHandle_t handle, const std::string& what) {
    Descriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, what + " operation graph");
    // The handle attribute is deprecated in the 9.19 headers but still required by 9.14.
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle,
              what + " operation graph handle");
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
              static_cast<std::int64_t>(ops_.size()), ops_.data(), what + " operation graph ops");
    graph.finalize(what + " operation graph (" + std::to_string(ops_.size()) + " ops)");
    return graph;
  }

 private:
  cudnnBackendDescriptor_t keep(Descriptor d) {
    owned_.push_back(std::move(d));
    return owned_.back().get();
  }
  std::vector<Descriptor> owned_;
  std::vector<cudnnBackendDescriptor_t> ops_;
  std::int64_t next_virtual_ = 1000;
};

/// The tensor shapes of one call, in cuDNN's [b, head, row, col] terms: s query rows, t key rows.
struct Geometry {
  std::int64_t b, h, g, s, t, d;
  AttentionShape::Mask mask;
  explicit Geometry(const AttentionShape& a)
      : b(a.batch), h(a.heads), g(a.kv_heads), s(a.seq), t(a.keys()), d(a.head_dim),
        mask(a.mask) {}
  bool masked() const { return mask != AttentionShape::Mask::none; }
  Dims q_dims() const { return {b, h, s, d}; }
  Dims q_strides() const { return {s * h * d, d, h * d, 1}; }  // token-major [b*s, h*d]
  Dims kv_dims() const { return {b, g, t, d}; }
  Dims kv_strides() const { return {t * g * d, d, g * d, 1}; }  // token-major [b*t, g*d]
  Dims kv_t_dims() const { return {b, g, d, t}; }               // the same memory, transposed
  Dims kv_t_strides() const { return {t * g * d, d, 1, g * d}; }
  Dims stats_dims() const { return {b, h, s, 1}; }
  Dims stats_strides() const { return {h * s, s, 1, 1}; }
  Dims scores_dims() const { return {b, h, s, t}; }
  Dims scores_strides() const { return {h * s * t, s * t, t, 1}; }
  Dims scores_t_dims() const { return {b, h, t, s}; }  // the scores' memory, transposed
  Dims scores_t_strides() const { return {h * s * t, s * t, 1, t}; }
  Dims packed_strides() const { return {h * s * d, s * d, d, 1}; }  // [b, h, s, d] packed
  Dims packed_kv_strides() const { return {h * t * d, t * d, d, 1}; }  // [b, h, t, d] packed
  Dims seq_len_dims() const { return {b, 1, 1, 1}; }
};

/// The causal mask on scores x [b,h,s,t]: keep row >= col, else mask_value (the frontend's
/// top-left diagonal band with right bound 0). At the keys' end (Mask::causal_end) the row index
/// is shifted by t - s first, as the frontend's composite bottom-right band spells it: + the key
/// count, - the query count (int32 by-value scalars uid_keys and uid_rows).
inline cudnnBackendDescriptor_t causal_mask(GraphBuilder& gb, const Geometry& geo,
                                            cudnnBackendDescriptor_t x,
                                            cudnnBackendDescriptor_t mask_value) {
  const Dims dims = geo.scores_dims(), strides = geo.scores_strides();
  auto row = gb.virt(CUDNN_DATA_INT32, dims, strides);
  auto col = gb.virt(CUDNN_DATA_INT32, dims, strides);
  auto keep = gb.virt(CUDNN_DATA_BOOLEAN, dims, strides);
  auto y = gb.virt(CUDNN_DATA_FLOAT, dims, strides);
  gb.pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, x, nullptr, nullptr, row, 2);
  gb.pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, x, nullptr, nullptr, col, 3);
  if (geo.mask == AttentionShape::Mask::causal_end) {
    auto plus_keys = gb.virt(CUDNN_DATA_INT32, dims, strides);
    auto shifted = gb.virt(CUDNN_DATA_INT32, dims, strides);
    gb.pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_INT32, row, gb.scalar(uid_keys, CUDNN_DATA_INT32),
                 nullptr, plus_keys, 3);
    gb.pointwise(CUDNN_POINTWISE_SUB, CUDNN_DATA_INT32, plus_keys,
                 gb.scalar(uid_rows, CUDNN_DATA_INT32), nullptr, shifted, 3);
    row = shifted;
  }
  gb.pointwise(CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, row, col, nullptr, keep);
  gb.pointwise(CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, x, mask_value, keep, y);
  return y;
}

/// The padding mask on scores x: keep row < seq_len_q and col < seq_len_kv. Lengths equal seq, so
/// it masks nothing; cuDNN <= 9.15's backward needs it when seq % 128 != 0.
inline cudnnBackendDescriptor_t padding_mask(GraphBuilder& gb, const Geometry& geo,
                                             cudnnBackendDescriptor_t x,
                                             cudnnBackendDescriptor_t mask_value,
                                             cudnnBackendDescriptor_t seq_len_q,
                                             cudnnBackendDescriptor_t seq_len_kv) {
  const Dims dims = geo.scores_dims(), strides = geo.scores_strides();
  auto row = gb.virt(CUDNN_DATA_INT32, dims, strides);
  auto col = gb.virt(CUDNN_DATA_INT32, dims, strides);
  auto row_in = gb.virt(CUDNN_DATA_BOOLEAN, dims, strides);
  auto col_in = gb.virt(CUDNN_DATA_BOOLEAN, dims, strides);
  auto keep = gb.virt(CUDNN_DATA_BOOLEAN, dims, strides);
  auto y = gb.virt(CUDNN_DATA_FLOAT, dims, strides);
  gb.pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, x, nullptr, nullptr, row, 2);
  gb.pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, x, nullptr, nullptr, col, 3);
  gb.pointwise(CUDNN_POINTWISE_CMP_LT, CUDNN_DATA_BOOLEAN, row, seq_len_q, nullptr, row_in);
  gb.pointwise(CUDNN_POINTWISE_CMP_LT, CUDNN_DATA_BOOLEAN, col, seq_len_kv, nullptr, col_in);
  gb.pointwise(CUDNN_POINTWISE_LOGICAL_AND, CUDNN_DATA_BOOLEAN, row_in, col_in, nullptr, keep);
  gb.pointwise(CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, x, mask_value, keep, y);
  return y;
}

inline std::unique_ptr<GraphBuilder> forward_graph(const Geometry& geo) {
  auto gb = std::make_unique<GraphBuilder>();
  const Dims sd = geo.scores_dims(), ss = geo.scores_strides();
  const Dims td = geo.stats_dims(), ts = geo.stats_strides();
  auto q = gb->tensor(uid_q, CUDNN_DATA_BFLOAT16, geo.q_dims(), geo.q_strides());
  auto k_t = gb->tensor(uid_k, CUDNN_DATA_BFLOAT16, geo.kv_t_dims(), geo.kv_t_strides());
  auto v = gb->tensor(uid_v, CUDNN_DATA_BFLOAT16, geo.kv_dims(), geo.kv_strides());
  auto o = gb->tensor(uid_o, CUDNN_DATA_BFLOAT16, geo.q_dims(), geo.q_strides());
  auto stats = gb->tensor(uid_stats, CUDNN_DATA_FLOAT, td, ts);
  auto scale = gb->scalar(uid_scale);
  auto mask_value = gb->scalar(uid_mask_value);

  auto scores = gb->virt(CUDNN_DATA_FLOAT, sd, ss);
  gb->matmul(q, k_t, scores);
  auto scaled = gb->virt(CUDNN_DATA_FLOAT, sd, ss);
  gb->binary(CUDNN_POINTWISE_MUL, scores, scale, scaled);
  auto masked = geo.masked() ? causal_mask(*gb, geo, scaled, mask_value) : scaled;

  // Softmax as the frontend spells it for engines before the unified softmax op (9.21).
  auto row_max = gb->virt(CUDNN_DATA_FLOAT, td, ts);
  gb->reduction(CUDNN_REDUCE_TENSOR_MAX, masked, row_max);
  auto shifted = gb->virt(CUDNN_DATA_FLOAT, sd, ss);
  gb->binary(CUDNN_POINTWISE_SUB, masked, row_max, shifted);
  auto exps = gb->virt(CUDNN_DATA_FLOAT, sd, ss);
  gb->unary(CUDNN_POINTWISE_EXP, shifted, exps);
  auto row_sum = gb->virt(CUDNN_DATA_FLOAT, td, ts);
  gb->reduction(CUDNN_REDUCE_TENSOR_ADD, exps, row_sum);
  auto log_sum = gb->virt(CUDNN_DATA_FLOAT, td, ts);
  gb->unary(CUDNN_POINTWISE_LOG, row_sum, log_sum);
  gb->binary(CUDNN_POINTWISE_ADD, row_max, log_sum, stats);
  // P feeds the second GEMM, whose A operand the engine takes in the io type.
  auto probs = gb->virt(CUDNN_DATA_BFLOAT16, sd, ss);
  gb->binary(CUDNN_POINTWISE_DIV, exps, row_sum, probs);

  gb->matmul(probs, v, o);
  return gb;
}

inline std::unique_ptr<GraphBuilder> backward_graph(const Geometry& geo, bool padding_workaround) {
  auto gb = std::make_unique<GraphBuilder>();
  const Dims sd = geo.scores_dims(), ss = geo.scores_strides();
  const Dims tdims = geo.scores_t_dims(), sts = geo.scores_t_strides();
  const Dims td = geo.stats_dims(), ts = geo.stats_strides();
  const bool grouped = geo.g != geo.h;
  auto q = gb->tensor(uid_q, CUDNN_DATA_BFLOAT16, geo.q_dims(), geo.q_strides());
  auto k_t = gb->tensor(uid_k, CUDNN_DATA_BFLOAT16, geo.kv_t_dims(), geo.kv_t_strides());
  auto v_t = gb->tensor(uid_v, CUDNN_DATA_BFLOAT16, geo.kv_t_dims(), geo.kv_t_strides());
  auto o = gb->tensor(uid_o, CUDNN_DATA_BFLOAT16, geo.q_dims(), geo.q_strides());
  auto d_o = gb->tensor(uid_do, CUDNN_DATA_BFLOAT16, geo.q_dims(), geo.q_strides());
  auto stats = gb->tensor(uid_stats, CUDNN_DATA_FLOAT, td, ts);
  auto d_q = gb->tensor(uid_dq, CUDNN_DATA_BFLOAT16, geo.q_dims(), geo.q_strides());
  auto d_k = gb->tensor(uid_dk, CUDNN_DATA_BFLOAT16, geo.kv_dims(), geo.kv_strides());
  auto d_v = gb->tensor(uid_dv, CUDNN_DATA_BFLOAT16, geo.kv_dims(), geo.kv_strides());
  auto scale = gb->scalar(uid_scale);
  auto mask_value = gb->scalar(uid_mask_value);
  auto one = gb->scalar(uid_one);
  cudnnBackendDescriptor_t seq_q = nullptr, seq_kv = nullptr;
  if (padding_workaround) {
    seq_q = gb->tensor(uid_seq_len_q, CUDNN_DATA_INT32, geo.seq_len_dims(), {1, 1, 1, 1});
    seq_kv = gb->tensor(uid_seq_len_kv, CUDNN_DATA_INT32, geo.seq_len_dims(), {1, 1, 1, 1});
  }

  // softmax_sum = rowsum(dO * O): the softmax backward's correction term.
  auto d_o_o = gb->virt(CUDNN_DATA_FLOAT, geo.q_dims(), geo.q_strides());
  gb->binary(CUDNN_POINTWISE_MUL, d_o, o, d_o_o);
  auto row_dot = gb->virt(CUDNN_DATA_FLOAT, td, ts);
  gb->reduction(CUDNN_REDUCE_TENSOR_ADD, d_o_o, row_dot);
  auto softmax_sum = gb->tensor(uid_softmax_sum, CUDNN_DATA_FLOAT, td, ts);
  gb->binary(CUDNN_POINTWISE_MUL, row_dot, one, softmax_sum);

  // P = exp(scale * Q K^T - Stats), masked.
  auto scores = gb->virt(CUDNN_DATA_FLOAT, sd, ss);
  gb->matmul(q, k_t, scores, seq_q, seq_kv);
  auto scaled = gb->virt(CUDNN_DATA_FLOAT, sd, ss);
  gb->binary(CUDNN_POINTWISE_MUL, scores, scale, scaled);
  auto centred = gb->virt(CUDNN_DATA_FLOAT, sd, ss);
  gb->binary(CUDNN_POINTWISE_SUB, scaled, stats, centred);
  if (padding_workaround) centred = padding_mask(*gb, geo, centred, mask_value, seq_q, seq_kv);
  auto masked = geo.masked() ? causal_mask(*gb, geo, centred, mask_value) : centred;
  auto probs = gb->virt(CUDNN_DATA_FLOAT, sd, ss);
  gb->unary(CUDNN_POINTWISE_EXP, masked, probs);

  // dV = P^T dO (summed over each kv head's query group).
  auto probs_t = gb->virt(CUDNN_DATA_BFLOAT16, tdims, sts);
  gb->reshape(probs, probs_t);
  if (grouped) {
    auto d_v_heads =
        gb->virt(CUDNN_DATA_BFLOAT16, Dims{geo.b, geo.h, geo.t, geo.d}, geo.packed_kv_strides());
    gb->matmul(probs_t, d_o, d_v_heads, seq_kv, nullptr, seq_q);
    gb->reduction(CUDNN_REDUCE_TENSOR_ADD, d_v_heads, d_v);
  } else {
    gb->matmul(probs_t, d_o, d_v, seq_kv, nullptr, seq_q);
  }

  // dS = P * (dO V^T - softmax_sum) * scale.
  auto d_p = gb->virt(CUDNN_DATA_FLOAT, sd, ss);
  gb->matmul(d_o, v_t, d_p, seq_q, seq_kv);
  auto d_p_centred = gb->virt(CUDNN_DATA_FLOAT, sd, ss);
  gb->binary(CUDNN_POINTWISE_SUB, d_p, softmax_sum, d_p_centred);
  auto d_s_unscaled = gb->virt(CUDNN_DATA_FLOAT, sd, ss);
  gb->binary(CUDNN_POINTWISE_MUL, d_p_centred, probs, d_s_unscaled);
  auto d_s = gb->virt(CUDNN_DATA_FLOAT, sd, ss);
  gb->binary(CUDNN_POINTWISE_MUL, d_s_unscaled, scale, d_s);

  // dK = dS^T Q (summed over the query group).
  auto d_s_t = gb->virt(CUDNN_DATA_BFLOAT16, tdims, sts);
  gb->reshape(d_s, d_s_t);
  if (grouped) {
    auto d_k_heads =
        gb->virt(CUDNN_DATA_BFLOAT16, Dims{geo.b, geo.h, geo.t, geo.d}, geo.packed_kv_strides());
    gb->matmul(d_s_t, q, d_k_heads, seq_kv, nullptr, seq_q);
    gb->reduction(CUDNN_REDUCE_TENSOR_ADD, d_k_heads, d_k);
  } else {
    gb->matmul(d_s_t, q, d_k, seq_kv, nullptr, seq_q);
  }

  // dQ = dS K through the fp32 accumulator, then rounded to bf16.
  auto k = gb->virt(CUDNN_DATA_FLOAT, geo.kv_dims(), geo.kv_strides());
  gb->reshape(k_t, k);
  auto d_q_accum = gb->tensor(uid_dq_accum, CUDNN_DATA_FLOAT, geo.q_dims(), geo.packed_strides());
  gb->matmul(d_s, k, d_q_accum, seq_q, nullptr, seq_kv);
  gb->unary(CUDNN_POINTWISE_IDENTITY, d_q_accum, d_q);
  return gb;
}

// ---- engine selection -------------------------------------------------------------------------

/// A finalized execution plan and everything it was built from (kept alive with it).
struct Plan {
  std::unique_ptr<GraphBuilder> graph;
  Descriptor op_graph;
  Descriptor config;
  Descriptor plan;
  std::size_t workspace = 0;
  std::int64_t engine = -1;  // cuDNN's global engine index, for logs
};

inline std::int64_t engine_index(cudnnBackendDescriptor_t config) {
  try {
    Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine");
    cudnnBackendDescriptor_t e = engine.get();
    std::int64_t n = 0, index = -1;
    if (cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                 1, &n, &e) != CUDNN_STATUS_SUCCESS)
      return -1;
    if (cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                                 &index) != CUDNN_STATUS_SUCCESS)
      return -1;
    return index;
  } catch (const core::RunError&) {
    return -1;
  }
}

/// Heuristics mode A, then FALLBACK; the first engine config whose plan finalizes.
inline std::unique_ptr<Plan> select_plan(std::unique_ptr<GraphBuilder> graph, cudnnHandle_t handle,
                                         const std::string& name) {
  auto p = std::make_unique<Plan>();
  p->graph = std::move(graph);
  p->op_graph = p->graph->finalize(handle, name);
  std::string tried;
  const std::pair<cudnnBackendHeurMode_t, const char*> modes[] = {
      {CUDNN_HEUR_MODE_A, "heuristics A"}, {CUDNN_HEUR_MODE_FALLBACK, "fallback"}};
  for (const auto& [mode, mode_name] : modes) {
    Descriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, name + " " + mode_name);
    heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, p->op_graph.get(),
                  name + " " + mode_name + " graph");
    heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode,
             name + " " + mode_name + " mode");
    if (const cudnnStatus_t st = cudnnBackendFinalize(heur.get()); st != CUDNN_STATUS_SUCCESS) {
      tried += std::string("; ") + mode_name + ": " + status_text(st);
      continue;
    }
    std::int64_t count = 0;
    cudnn_check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
                name + " " + mode_name + " result count");
    std::vector<Descriptor> configs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (std::int64_t i = 0; i < count; ++i) {
      configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, name + " engine config");
      raw.push_back(configs.back().get());
    }
    std::int64_t got = 0;
    if (count > 0)
      cudnn_check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                           CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, raw.data()),
                  name + " " + mode_name + " results");
    tried += std::string("; ") + mode_name + ": " + std::to_string(got) + " configs";
    for (std::int64_t i = 0; i < got; ++i) {
      Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, name + " execution plan");
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle,
               name + " plan handle");
      plan.set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, raw[i], name + " plan config");
      if (const cudnnStatus_t st = cudnnBackendFinalize(plan.get()); st != CUDNN_STATUS_SUCCESS) {
        tried += ", engine " + std::to_string(engine_index(raw[i])) + ": " + status_text(st);
        continue;
      }
      std::int64_t workspace = 0, n = 0;
      cudnn_check(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                           CUDNN_TYPE_INT64, 1, &n, &workspace),
                  name + " plan workspace size");
      p->workspace = static_cast<std::size_t>(std::max<std::int64_t>(workspace, 0));
      p->engine = engine_index(raw[i]);
      p->config = std::move(configs[i]);
      p->plan = std::move(plan);
      if (cudnn_debug_enabled())
        std::fprintf(stderr,
                     "tprimat: cuDNN attention %s: engine %lld (%s config %lld of %lld), "
                     "workspace %zu bytes\n",
                     name.c_str(), static_cast<long long>(p->engine), mode_name,
                     static_cast<long long>(i), static_cast<long long>(got), p->workspace);
      return p;
    }
  }
  throw core::RunError("cuDNN attention: no engine supports the " + name + " graph (cuDNN " +
                       std::to_string(cudnnGetVersion()) + tried + ")");
}

// ---- the per-shape cache ----------------------------------------------------------------------

constexpr std::size_t round_up(std::size_t n) { return (n + 255) / 256 * 256; }

/// Everything one (shape, device) needs: built once, used by every call.
struct Entry {
  bool ok = false;
  std::string reason;  // why not, when !ok
  cudnnHandle_t handle = nullptr;
  std::unique_ptr<Plan> forward, backward;
  bool padding_workaround = false;
  // By-value scalars: the variant pack takes host pointers, so they live here.
  float scale = 0, mask_value = 0, one = 1;
  std::int32_t rows = 0, keys = 0;  // Mask::causal_end's shift, t - s = keys - rows
  // Backward workspace: [plan workspace | softmax_sum fp32 b*h*s | dQ accumulator fp32 b*h*s*d].
  std::size_t softmax_sum_offset = 0, dq_accum_offset = 0, dq_accum_bytes = 0, backward_bytes = 0;
  bool prepared = false;
  void* forward_workspace = nullptr;  // forward has no workspace argument: allocated at prepare
  std::int32_t* seq_lens = nullptr;   // [seq_len_q b | seq_len_kv b] for the padding workaround
};

using Key = std::array<int, 8>;  // device, batch, seq, heads, kv_heads, head_dim, keys, mask

struct Cache {
  std::mutex mutex;
  std::map<int, cudnnHandle_t> handles;  // one per device
  std::map<Key, std::unique_ptr<Entry>> entries;
};

/// Never destroyed: handles and device memory outlive static destruction order safely this way.
inline Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

inline cudnnHandle_t handle_for(Cache& c, int device) {
  auto it = c.handles.find(device);
  if (it != c.handles.end()) return it->second;
  cudnnHandle_t h = nullptr;
  cudnn_check(cudnnCreate(&h), "cudnnCreate on device " + std::to_string(device));
  c.handles.emplace(device, h);
  return h;
}

inline void build(Cache& c, Entry& e, const AttentionShape& s, int device) {
  const std::size_t version = cudnnGetVersion();
  if (version < 90000) {
    e.reason = "cuDNN " + std::to_string(version) + " is older than 9.0";
    return;
  }
  if (std::string problem = shape_problem(s); !problem.empty()) {
    e.reason = problem;
    return;
  }
  try {
    e.handle = handle_for(c, device);
    const Geometry geo(s);
    e.scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
    e.rows = s.seq;
    e.keys = s.keys();
    // cuDNN before 9.10 expects the lowest finite float for masked scores, later -inf.
    e.mask_value = version >= 91000 ? -std::numeric_limits<float>::infinity()
                                    : std::numeric_limits<float>::lowest();
    e.padding_workaround = version <= 91500 && (s.seq % 128 != 0 || s.keys() % 128 != 0);
    e.forward = select_plan(forward_graph(geo), e.handle, "forward");
    e.backward = select_plan(backward_graph(geo, e.padding_workaround), e.handle, "backward");
    const std::size_t rows = static_cast<std::size_t>(geo.b * geo.h * geo.s);
    e.softmax_sum_offset = round_up(e.backward->workspace);
    e.dq_accum_offset = e.softmax_sum_offset + round_up(rows * sizeof(float));
    e.dq_accum_bytes = rows * static_cast<std::size_t>(geo.d) * sizeof(float);
    e.backward_bytes = e.dq_accum_offset + e.dq_accum_bytes;
    e.ok = true;
  } catch (const std::exception& err) {
    e.reason = err.what();
    e.forward.reset();
    e.backward.reset();
  }
}

inline int current_device() {
  int device = 0;
  gpu_check(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

/// The entry of shape s on the current device, built on first use. Caller holds c.mutex.
inline Entry& lookup(Cache& c, const AttentionShape& s) {
  const int device = current_device();
  const Key key{device,     s.batch,  s.seq, s.heads, s.kv_heads,
                s.head_dim, s.keys(), static_cast<int>(s.mask)};
  auto it = c.entries.find(key);
  if (it != c.entries.end()) return *it->second;
  auto e = std::make_unique<Entry>();
  build(c, *e, s, device);
  if (!e->ok)
    std::fprintf(stderr, "tprimat: cuDNN attention unavailable for %s: %s\n", describe(s).c_str(),
                 e->reason.c_str());
  return *c.entries.emplace(key, std::move(e)).first->second;
}

inline Entry& supported_entry(Cache& c, const AttentionShape& s) {
  Entry& e = lookup(c, s);
  if (!e.ok)
    throw core::RunError("cuDNN attention does not support " + describe(s) + ": " + e.reason +
                         "; use the flash attention policy");
  return e;
}

inline bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) return true;  // be conservative
  return status != cudaStreamCaptureStatusNone;
}

inline void prepare_entry(Entry& e, const AttentionShape& s, cudaStream_t stream) {
  if (e.prepared) return;
  if (capturing(stream))
    throw core::RunError("cuDNN attention: call CudnnAttention::prepare() for " + describe(s) +
                         " before capturing a CUDA graph (it allocates)");
  if (e.forward->workspace > 0) e.forward_workspace = Gpu::allocate(e.forward->workspace, stream);
  if (e.padding_workaround) {
    std::vector<std::int32_t> lens(2 * static_cast<std::size_t>(s.batch), s.seq);
    std::fill(lens.begin() + s.batch, lens.end(), s.keys());
    e.seq_lens =
        static_cast<std::int32_t*>(Gpu::allocate(lens.size() * sizeof(std::int32_t), stream));
    gpu_check(cudaMemcpyAsync(e.seq_lens, lens.data(), lens.size() * sizeof(std::int32_t),
                              cudaMemcpyHostToDevice, stream),
              "cuDNN attention: upload sequence lengths");
  }
  // The pool allocations are stream-ordered: make them valid on every stream (and the pageable
  // upload complete) before any call uses them.
  gpu_check(cudaStreamSynchronize(stream), "cuDNN attention: prepare");
  e.prepared = true;
}

inline void execute(const Entry& e, const Plan& plan, const std::vector<std::int64_t>& uids,
                    const std::vector<void*>& pointers, void* workspace, cudaStream_t stream,
                    const char* what) {
  cudnn_check(cudnnSetStream(e.handle, stream), std::string(what) + " cudnnSetStream");
  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, std::string(what) + " variant pack");
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
           static_cast<std::int64_t>(uids.size()), uids.data(), std::string(what) + " uids");
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
           static_cast<std::int64_t>(pointers.size()), pointers.data(),
           std::string(what) + " pointers");
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace,
           std::string(what) + " workspace");
  pack.finalize(std::string(what) + " variant pack");
  cudnn_check(cudnnBackendExecute(e.handle, plan.plan.get(), pack.get()),
              std::string(what) + " execute (engine " + std::to_string(plan.engine) + ")");
}

inline void* mut(const void* p) { return const_cast<void*>(p); }

/// The mask's scalars, where the graph has them (a plan checks that the pack names exactly its
/// graph's tensors): the mask value for a mask (or the padding workaround's), the shift of a
/// mask at the keys' end.
inline void add_mask_scalars(Entry& e, const AttentionShape& s, bool padding,
                             std::vector<std::int64_t>& uids, std::vector<void*>& pointers) {
  if (s.mask != AttentionShape::Mask::none || padding) {
    uids.push_back(uid_mask_value);
    pointers.push_back(&e.mask_value);
  }
  if (s.mask == AttentionShape::Mask::causal_end) {
    uids.insert(uids.end(), {uid_rows, uid_keys});
    pointers.insert(pointers.end(), {&e.rows, &e.keys});
  }
}

}  // namespace detail::cudnn

TPRIMAT_GPU_INLINE bool CudnnAttention::supports(const AttentionShape& s) {
  using namespace detail::cudnn;
  try {
    if (!shape_problem(s).empty() || cudnnGetVersion() < 90000 || Gpu::device_count() == 0)
      return false;
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    return lookup(c, s).ok;
  } catch (...) {
    return false;
  }
}

TPRIMAT_GPU_INLINE void CudnnAttention::prepare(const AttentionShape& s, Gpu::Stream stream) {
  using namespace detail::cudnn;
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  prepare_entry(supported_entry(c, s), s, stream);
}

TPRIMAT_GPU_INLINE void CudnnAttention::forward(const Gpu::bf16* q, const Gpu::bf16* k,
                                                const Gpu::bf16* v, Gpu::bf16* o, float* lse,
                                                const AttentionShape& s, Gpu::Stream stream) {
  using namespace detail::cudnn;
  Cache& c = cache();
  // Held across cudnnSetStream + execute: the handle is shared by all streams of the device.
  std::lock_guard<std::mutex> lock(c.mutex);
  Entry& e = supported_entry(c, s);
  prepare_entry(e, s, stream);
  std::vector<std::int64_t> uids{uid_q, uid_k, uid_v, uid_o, uid_stats, uid_scale};
  std::vector<void*> pointers{mut(q), mut(k), mut(v), o, lse, &e.scale};
  add_mask_scalars(e, s, false, uids, pointers);
  execute(e, *e.forward, uids, pointers, e.forward_workspace, stream, "forward");
}

TPRIMAT_GPU_INLINE std::size_t CudnnAttention::backward_workspace_bytes(const AttentionShape& s) {
  using namespace detail::cudnn;
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return supported_entry(c, s).backward_bytes;
}

TPRIMAT_GPU_INLINE void CudnnAttention::backward(const Gpu::bf16* q, const Gpu::bf16* k,
                                                 const Gpu::bf16* v, const Gpu::bf16* o,
                                                 const float* lse, const Gpu::bf16* dout,
                                                 Gpu::bf16* dq, Gpu::bf16* dk, Gpu::bf16* dv,
                                                 const AttentionShape& s, void* workspace,
                                                 Gpu::Stream stream) {
  using namespace detail::cudnn;
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  Entry& e = supported_entry(c, s);
  prepare_entry(e, s, stream);
  if (workspace == nullptr)
    throw core::RunError("cuDNN attention backward: no workspace given (needs " +
                         std::to_string(e.backward_bytes) + " bytes, backward_workspace_bytes)");
  auto* base = static_cast<std::byte*>(workspace);
  void* softmax_sum = base + e.softmax_sum_offset;
  void* dq_accum = base + e.dq_accum_offset;
  // Before 9.6 the engine accumulates into dQ_accum without clearing it first.
  if (cudnnGetVersion() < 90600)
    gpu_check(cudaMemsetAsync(dq_accum, 0, e.dq_accum_bytes, stream),
              "cuDNN attention backward: clear dQ accumulator");
  std::vector<std::int64_t> uids{uid_q,  uid_k,  uid_v,     uid_o,   uid_do,          uid_stats,
                                 uid_dq, uid_dk, uid_dv,    uid_one, uid_softmax_sum, uid_dq_accum,
                                 uid_scale};
  std::vector<void*> pointers{mut(q), mut(k), mut(v),   mut(o), mut(dout),   mut(lse),
                              dq,     dk,     dv,       &e.one, softmax_sum, dq_accum,
                              &e.scale};
  add_mask_scalars(e, s, e.padding_workaround, uids, pointers);
  if (e.padding_workaround) {
    uids.insert(uids.end(), {uid_seq_len_q, uid_seq_len_kv});
    pointers.insert(pointers.end(), {e.seq_lens, e.seq_lens + s.batch});
  }
  execute(e, *e.backward, uids, pointers, base, stream, "backward");
}

#else  // !TPRIMAT_HAVE_CUDNN

namespace detail::cudnn {
[[noreturn]] inline void no_cudnn() {
  throw core::RunError(
      "cuDNN attention: this build has no cuDNN (cudnn.h and libcudnn were not found when CMake "
      "configured); install cuDNN 9 and reconfigure, or use the flash attention policy");
}
}  // namespace detail::cudnn

TPRIMAT_GPU_INLINE bool CudnnAttention::supports(const AttentionShape&) { return false; }
TPRIMAT_GPU_INLINE void CudnnAttention::prepare(const AttentionShape&, Gpu::Stream) {
  detail::cudnn::no_cudnn();
}
TPRIMAT_GPU_INLINE void CudnnAttention::forward(const Gpu::bf16*, const Gpu::bf16*,
                                                const Gpu::bf16*, Gpu::bf16*, float*,
                                                const AttentionShape&, Gpu::Stream) {
  detail::cudnn::no_cudnn();
}
TPRIMAT_GPU_INLINE std::size_t CudnnAttention::backward_workspace_bytes(const AttentionShape&) {
  detail::cudnn::no_cudnn();
}
TPRIMAT_GPU_INLINE void CudnnAttention::backward(const Gpu::bf16*, const Gpu::bf16*,
                                                 const Gpu::bf16*, const Gpu::bf16*, const float*,
                                                 const Gpu::bf16*, Gpu::bf16*, Gpu::bf16*,
                                                 Gpu::bf16*, const AttentionShape&, void*,
                                                 Gpu::Stream) {
  detail::cudnn::no_cudnn();
}

#endif  // TPRIMAT_HAVE_CUDNN

}  // namespace tprimat::backend
