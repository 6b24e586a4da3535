// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The seven linear projections of a decoder layer: the one list every other list of them (the
// parameter table, FP8's weights and scales, gradient zeroing, the memory plan, the counts) reads.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "tprimat/model/spec.hpp"

namespace tprimat::model {

/// In the order of the parameter buffer and of FP8's per-layer weight scales (docs/fp8.md).
/// The enumerators are the weights' names, so code reads `lp[wq]` after `using enum Projection`.
enum class Projection : std::uint8_t { wq, wk, wv, wo, w_gate, w_up, w_down };
inline constexpr int projection_count = 7;
inline constexpr std::array<Projection, projection_count> projections{
    Projection::wq,     Projection::wk,   Projection::wv,    Projection::wo,
    Projection::w_gate, Projection::w_up, Projection::w_down};

constexpr int index_of(Projection p) { return static_cast<int>(p); }

/// How Megatron's tensor parallelism splits a weight: column-parallel ones (q, k, v, gate, up)
/// split their outputs over TP, row-parallel ones (o, down) their inputs.
enum class TpSplit : std::uint8_t { outputs, inputs };

constexpr TpSplit tp_split(Projection p) {
  return p == Projection::wo || p == Projection::w_down ? TpSplit::inputs : TpSplit::outputs;
}

/// The weight's name in the parameter table and checkpoints.
constexpr std::string_view projection_name(Projection p) {
  constexpr std::array<std::string_view, projection_count> names{
      "attn.wq", "attn.wk", "attn.wv", "attn.wo", "mlp.w_gate", "mlp.w_up", "mlp.w_down"};
  return names[index_of(p)];
}

/// A weight's [in, out] (row-major [in][out], so y = x W).
struct WeightShape {
  std::int64_t in = 0;
  std::int64_t out = 0;
  constexpr std::int64_t size() const { return in * out; }
};

/// Projection p's weight for dims `d`: the whole model's, or one TP rank's share when `d` is
/// tp_share(...)'s.
constexpr WeightShape projection_shape(const Dims& d, Projection p) {
  const std::int64_t h = d.hidden, q = d.q_dim(), kv = d.kv_dim(), f = d.ffn;
  switch (p) {
    case Projection::wq:
      return {h, q};
    case Projection::wk:
    case Projection::wv:
      return {h, kv};
    case Projection::wo:
      return {q, h};
    case Projection::w_gate:
    case Projection::w_up:
      return {h, f};
    case Projection::w_down:
      return {f, h};
  }
  return {};
}

/// Elements of a layer's seven projection weights for dims `d`.
constexpr std::int64_t projection_params(const Dims& d) {
  std::int64_t n = 0;
  for (Projection p : projections) n += projection_shape(d, p).size();
  return n;
}

/// What one of `tp` tensor-parallel ranks holds of a model: heads, KV heads, FFN width and
/// vocabulary divided by TP (parallel/validate.hpp checks they divide); the hidden size whole.
constexpr Dims tp_share(const Dims& d, int tp) {
  Dims s = d;
  s.heads /= tp;
  s.kv_heads /= tp;
  s.ffn /= tp;
  s.vocab /= tp;
  return s;
}

}  // namespace tprimat::model
