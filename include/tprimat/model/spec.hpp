// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The ModelSpec concept and the runtime view of a model's architecture constants.
#pragma once

#include <concepts>
#include <cstdint>
#include <string_view>

namespace tprimat::model {

/// RoPE frequency scaling; `factor == 1` means none. Llama 3.1 uses the "llama3" rule.
struct RopeScaling {
  double factor = 1.0;             ///< wavelength stretch for low frequencies
  double low_freq_factor = 1.0;    ///< wavelengths above original/low are fully scaled
  double high_freq_factor = 1.0;   ///< wavelengths below original/high are kept
  int original_context = 0;        ///< context length the base model was trained at
  constexpr bool enabled() const { return factor != 1.0; }
};

/// A model's constants at run time: what the CLI, the memory plan and the CPU step read.
/// Built from a ModelSpec by `dims<M>()`, so compile-time and run-time paths share one source.
struct Dims {
  std::string_view name;      ///< human name, e.g. "Llama 3.1 8B"
  std::string_view cli_name;  ///< `--model` value and result-file key, e.g. "llama"
  int hidden = 0;
  int layers = 0;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  int ffn = 0;
  int vocab = 0;
  double rope_theta = 0;
  RopeScaling rope_scaling{};
  double norm_eps = 0;
  bool qkv_bias = false;
  bool tied_embeddings = false;

  constexpr int q_dim() const { return heads * head_dim; }
  constexpr int kv_dim() const { return kv_heads * head_dim; }
  /// The same model with `n` transformer layers (a proxy of the full depth).
  constexpr Dims with_layers(int n) const {
    Dims d = *this;
    d.layers = n;
    return d;
  }
};

/// One struct per model, of `static constexpr` facts (see model/llama31_8b.hpp).
template <class M>
concept ModelSpec = requires {
  { M::name } -> std::convertible_to<std::string_view>;
  { M::cli_name } -> std::convertible_to<std::string_view>;
  { M::hidden } -> std::convertible_to<int>;
  { M::layers } -> std::convertible_to<int>;
  { M::heads } -> std::convertible_to<int>;
  { M::kv_heads } -> std::convertible_to<int>;
  { M::head_dim } -> std::convertible_to<int>;
  { M::ffn } -> std::convertible_to<int>;
  { M::vocab } -> std::convertible_to<int>;
  { M::rope_theta } -> std::convertible_to<double>;
  { M::rope_scaling } -> std::convertible_to<RopeScaling>;
  { M::norm_eps } -> std::convertible_to<double>;
  { M::qkv_bias } -> std::convertible_to<bool>;
  { M::tied_embeddings } -> std::convertible_to<bool>;
};

template <ModelSpec M>
constexpr Dims dims() {
  return Dims{M::name,      M::cli_name,     M::hidden,   M::layers,   M::heads,
              M::kv_heads,  M::head_dim,     M::ffn,      M::vocab,    M::rope_theta,
              M::rope_scaling, M::norm_eps,  M::qkv_bias, M::tied_embeddings};
}

}  // namespace tprimat::model
