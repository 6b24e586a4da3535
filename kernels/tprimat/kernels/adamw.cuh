// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// AdamW over the flat parameter buffer (split fp32 master) in one launch, with global-norm
// clipping on the fly.
#pragma once

#include <cmath>
#include <cstdint>

#include "tprimat/kernels/convert.cuh"
#include "tprimat/kernels/gpu.cuh"
#include "tprimat/kernels/split_float.hpp"

namespace tprimat::kernels {

/// The step's constants in the exact roundings of backend::Cpu::adamw<float>: formed in double
/// from the fp32 scalars, rounded to fp32 once, so the element math below matches it op for op.
struct AdamWConstants {
  float clip, b1, b2, eps, step_size, inv_sqrt_c2, decay;
};

template <class Scalars>
__device__ __forceinline__ AdamWConstants adamw_constants(const Scalars& s,
                                                          double grad_sum_squares) {
  const double norm = sqrt(grad_sum_squares);
  AdamWConstants c;
  c.clip = s.clip_norm > 0 && norm > s.clip_norm ? static_cast<float>(s.clip_norm / norm) : 1.0f;
  c.b1 = s.beta1;
  c.b2 = s.beta2;
  c.eps = s.eps;
  c.step_size = static_cast<float>(double{s.lr} / double{s.bias_correction1});
  c.inv_sqrt_c2 = static_cast<float>(1.0 / sqrt(double{s.bias_correction2}));
  c.decay = static_cast<float>(1.0 - double{s.lr} * double{s.weight_decay});
  return c;
}

/// One element: the order of operations is Cpu::adamw's (PyTorch's), grad scaled first.
__device__ __forceinline__ void adamw_element(const AdamWConstants& c, float decay, float g,
                                              float& p, float& m, float& v) {
  g *= c.clip;
  m = c.b1 * m + (1.0f - c.b1) * g;
  v = c.b2 * v + (1.0f - c.b2) * g * g;
  p = p * decay - c.step_size * m / (sqrtf(v) * c.inv_sqrt_c2 + c.eps);
}

/// Each thread updates V consecutive elements. Its tensor comes from a binary search over
/// tensor_ends (all lanes of a warp walk nearly the same path, so the loads are broadcasts) and
/// a step forward when its V elements straddle a tensor boundary.
template <class Scalars, int V>
__global__ TPRIMAT_LAUNCH_BOUNDS(256) void adamw_kernel(
    std::uint16_t* __restrict__ hi, std::uint16_t* __restrict__ lo,
    const float* __restrict__ grads, float* __restrict__ m, float* __restrict__ v, std::int64_t n,
    const std::int64_t* __restrict__ tensor_ends, const std::uint8_t* __restrict__ decay,
    int tensors, const Scalars* __restrict__ scalars, const double* __restrict__ grad_sum_squares) {
  const std::int64_t i = global_thread() * V;
  if (i >= n) return;
  const AdamWConstants c = adamw_constants(*scalars, *grad_sum_squares);

  int k = 0;
  std::int64_t end = INT64_MAX;
  if (tensors > 0) {
    int first = 0, last = tensors - 1;  // first tensor whose end lies past i (the last one at most)
    while (first < last) {
      const int mid = (first + last) / 2;
      if (tensor_ends[mid] > i)
        last = mid;
      else
        first = mid + 1;
    }
    k = first;
    end = k < tensors - 1 ? tensor_ends[k] : INT64_MAX;
  }
  auto decay_of = [&](std::int64_t e) {
    while (e >= end) {
      ++k;
      end = k < tensors - 1 ? tensor_ends[k] : INT64_MAX;
    }
    return tensors > 0 && decay[k] ? c.decay : 1.0f;
  };

  if (i + V <= n) {
    Pack<std::uint16_t, V> hp = load_pack<V>(hi + i), lp = load_pack<V>(lo + i);
    Pack<float, V> mp = load_pack<V>(m + i), vp = load_pack<V>(v + i);
    const Pack<float, V> gp = load_pack<V>(grads + i);
#pragma unroll
    for (int j = 0; j < V; ++j) {
      float p = join_float(hp.v[j], lp.v[j]);
      adamw_element(c, decay_of(i + j), gp.v[j], p, mp.v[j], vp.v[j]);
      split_float(p, hp.v[j], lp.v[j]);
    }
    store_pack<V>(hi + i, hp);
    store_pack<V>(lo + i, lp);
    store_pack<V>(m + i, mp);
    store_pack<V>(v + i, vp);
  } else {
    for (std::int64_t e = i; e < n; ++e) {
      float p = join_float(hi[e], lo[e]), me = m[e], ve = v[e];
      adamw_element(c, decay_of(e), grads[e], p, me, ve);
      split_float(p, hi[e], lo[e]);
      m[e] = me;
      v[e] = ve;
    }
  }
}

}  // namespace tprimat::kernels
