// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The tensors the GPU engine casts to FP8 in a decoder layer (docs/fp8.md) and how their scales
// are laid out: host code, shared by the engine (train/device/fp8_linears.hpp) and the buffer
// table that sizes their buffers (train/buffer_table.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "tprimat/model/projection.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/train/precision.hpp"

namespace tprimat::train {

/// A layer's FP8 weights: its seven projections (model/projection.hpp), one scale each.
inline constexpr int fp8_weights = model::projection_count;
/// The activations the forward casts (E4M3), each read again by its weight gradient: the
/// transposes of x_qkv and x_mlp are kept; those of x_o and x_down too, unless the copies are
/// recast (then the backward casts the kept attention output and the recomputed SwiGLU again).
enum Fp8Input : int { x_qkv, x_o, x_mlp, x_down, fp8_inputs };
/// The gradients the backward casts (E5M2).
enum Fp8Grad : int { g_q, g_k, g_v, g_o, g_gate, g_up, g_down, fp8_grads };

/// The inputs whose transposes recast copies cast again in the backward (the widest two).
constexpr bool recast_input(Fp8Input i) { return i == x_o || i == x_down; }

/// Each input's width for a TP rank's share `d` of the model: [h] [q_dim] [h] [ffn].
constexpr std::array<std::int64_t, fp8_inputs> fp8_input_widths(const model::Dims& d) {
  return {d.hidden, d.q_dim(), d.hidden, d.ffn};
}

/// The widest [tokens, width] tensor a cast's scratch must hold: an input, or a gradient (K and
/// V's side by side).
constexpr std::int64_t fp8_widest(const model::Dims& d) {
  return std::max({std::int64_t{d.hidden}, std::int64_t{d.q_dim()}, std::int64_t{d.ffn},
                   2 * std::int64_t{d.kv_dim()}});
}

/// A tensor's scale_inv sits at this stride (in floats): cuBLASLt reads a scale pointer only on
/// a 16-byte boundary.
inline constexpr int fp8_scale_inv_stride = 4;

/// One FP8 format's scales: tensors [0, base) keep a history of `history` amaxes (delayed
/// scaling's), [base, count) are extra copies scaled from their own amax.
struct Fp8ScaleLayout {
  int base = 0, count = 0, history = 1;
};

/// E4M3 (the forward's): each local layer's weights and slot 0's inputs with histories, then the
/// other slots' inputs ([slot - 1][layer][input], current scaling's own scales).
constexpr Fp8ScaleLayout fp8_forward_scales(int layers, int slots, const PrecisionConfig& p) {
  const int history = p.fp8.recipe == Fp8Recipe::delayed ? p.fp8.amax_history : 1;
  const int base = layers * (fp8_weights + fp8_inputs);
  return {base, base + (slots - 1) * layers * fp8_inputs, history};
}

/// E5M2 (the backward's): each local layer's gradients, with histories.
constexpr Fp8ScaleLayout fp8_backward_scales(int layers, const PrecisionConfig& p) {
  const int history = p.fp8.recipe == Fp8Recipe::delayed ? p.fp8.amax_history : 1;
  return {layers * fp8_grads, layers * fp8_grads, history};
}

}  // namespace tprimat::train
