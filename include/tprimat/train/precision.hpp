// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Precision: bf16 or FP8's hybrid recipe (delayed or current scaling), as NeMo and Transformer
// Engine name them; which decoder layers run their linear projections in FP8. docs/fp8.md says
// exactly what is cast where, for the device engine and the CPU emulation alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tprimat/kernels/fp8_format.hpp"

namespace tprimat::train {

enum class Precision : std::uint8_t { bf16, fp8 };

/// The names a result records in training_config.precision, one list for the writers, the
/// result's checks (bench/result_check.hpp) and the readers: the CPU backend computes in fp32.
namespace precision_names {
inline constexpr std::string_view bf16 = "bf16";
inline constexpr std::string_view fp32 = "fp32";
inline constexpr std::string_view fp8_delayed = "fp8-hybrid-delayed";
inline constexpr std::string_view fp8_current = "fp8-hybrid-current";
inline constexpr std::string_view all[] = {bf16, fp32, fp8_delayed, fp8_current};
}  // namespace precision_names

/// How an FP8 tensor's per-tensor scale is chosen (Transformer Engine's recipes).
enum class Fp8Recipe : std::uint8_t {
  delayed,  ///< DelayedScaling: from the max over an amax history of past steps
  current,  ///< Float8CurrentScaling: from the amax of the tensor being cast
};

/// Where the FP8 copies a step reads a second time come from (docs/fp8.md, "Memory"): `kept`
/// casts each weight once a step and keeps every forward input's transpose for the weight
/// gradients; `recast` casts a layer's weights at each GEMM that reads them and casts the O and
/// down projections' inputs again in the backward pass (from the bf16 tensors the backward keeps
/// anyway). The bytes cast are the same either way; recast holds one weight's copy instead of
/// every layer's (2 bytes a projection weight), for models that do not fit otherwise.
enum class Fp8Copies : std::uint8_t { kept, recast };

/// The FP8 recipe's settings. Both recipes are "hybrid": E4M3 forward (activations, weights),
/// E5M2 backward (gradients). The defaults are NeMo's bf16_with_fp8_mixed (history 1024, max
/// over it, margin 0) and its current-scaling recipe (first and last decoder layers in bf16);
/// the layers kept in bf16 at each end may be set apart from the recipe (Megatron's
/// num_layers_at_start_in_bf16 / num_layers_at_end_in_bf16).
struct Fp8Settings {
  Fp8Recipe recipe = Fp8Recipe::delayed;
  int amax_history = 1024;  ///< delayed: optimizer steps of amax kept per tensor
  int margin = 0;           ///< scale = max_finite / amax / 2^margin
  /// Not a numerical setting: the memory plan picks `recast` when the kept copies do not fit.
  Fp8Copies copies = Fp8Copies::kept;
  /// The formats the CPU emulation casts to: OCP E4M3/E5M2, or gfx942's fnuz pair when it is
  /// the reference of an MI300X run. The device engine takes its device's formats
  /// (backend::fp8_gemm_formats()); a test compared with it sets these to the same.
  kernels::Fp8Format forward_format = kernels::Fp8Format::e4m3;
  kernels::Fp8Format gradient_format = kernels::Fp8Format::e5m2;
  /// Decoder layers kept in bf16 at the model's start and end; unset: the recipe's
  /// (recipe_bf16_layers_at_each_end).
  std::optional<int> bf16_layers_at_start, bf16_layers_at_end;

  /// The recipe's own: NeMo's current-scaling recipe keeps one at each end, delayed none.
  constexpr int recipe_bf16_layers_at_each_end() const {
    return recipe == Fp8Recipe::current ? 1 : 0;
  }
  constexpr int bf16_at_start() const {
    return bf16_layers_at_start.value_or(recipe_bf16_layers_at_each_end());
  }
  constexpr int bf16_at_end() const {
    return bf16_layers_at_end.value_or(recipe_bf16_layers_at_each_end());
  }
};

struct PrecisionConfig {
  Precision precision = Precision::bf16;
  Fp8Settings fp8;

  /// FP8's hybrid recipe with `recipe`'s scaling and the other settings at their defaults.
  static constexpr PrecisionConfig fp8_hybrid(Fp8Recipe recipe) {
    PrecisionConfig p;
    p.precision = Precision::fp8;
    p.fp8.recipe = recipe;
    return p;
  }

  constexpr bool is_fp8() const { return precision == Precision::fp8; }
  /// Whether decoder layer `layer` (0-based, of the model's `layers`) runs its linear
  /// projections in FP8.
  constexpr bool layer_in_fp8(int layer, int layers) const {
    if (!is_fp8()) return false;
    return layer >= fp8.bf16_at_start() && layer < layers - fp8.bf16_at_end();
  }
  /// The name a result records in training_config.precision (precision_names).
  std::string name() const {
    if (!is_fp8()) return std::string(precision_names::bf16);
    return std::string(fp8.recipe == Fp8Recipe::delayed ? precision_names::fp8_delayed
                                                        : precision_names::fp8_current);
  }
};

inline const char* recipe_name(Fp8Recipe r) {
  return r == Fp8Recipe::delayed ? "delayed" : "current";
}

inline const char* copies_name(Fp8Copies c) { return c == Fp8Copies::kept ? "kept" : "recast"; }

}  // namespace tprimat::train
