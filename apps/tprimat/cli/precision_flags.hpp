// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// From `--precision`/`--fp8-recipe` (or a config file's NeMo keys) to a train::PrecisionConfig,
// and the rules an FP8 job must keep: a backend that runs it, GEMM shapes cuBLASLt's FP8 takes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "tprimat/core/error.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/parallel/validate.hpp"
#include "tprimat/train/precision.hpp"

namespace tprimat::cli {

/// Whether the CPU backend runs FP8 (an emulation of the device's casts, docs/fp8.md). The one
/// place to change when `Transformer<Cpu>` gains it: the CLI then stops refusing.
inline constexpr bool cpu_backend_runs_fp8 = false;

/// Each flag's value is one it knows: `--precision` bf16 or fp8, `--fp8-recipe` delayed or
/// current ("" for a flag not given).
inline void check_precision_flag_values(std::string_view precision, std::string_view recipe) {
  if (!precision.empty() && precision != "bf16" && precision != "fp8")
    throw core::InputError("unknown --precision '" + core::shown(precision) + "'",
                           "pick bf16 or fp8");
  if (!recipe.empty() && recipe != "delayed" && recipe != "current")
    throw core::InputError("unknown --fp8-recipe '" + core::shown(recipe) + "'",
                           "pick delayed or current");
}

/// `--precision` with Megatron's `--fp8-format` folded in: `hybrid` (E4M3 forward, E5M2
/// gradients, what tprimat's FP8 is) asks for fp8, as it turns FP8 on in Megatron; `e4m3` (E4M3
/// gradients too) is a recipe tprimat does not run, and a `--precision bf16` beside either
/// contradicts it. "" where neither was given.
inline std::string with_fp8_format(std::string_view precision, std::string_view fp8_format) {
  if (fp8_format.empty()) return std::string(precision);
  if (fp8_format == "e4m3")
    throw core::InputError("--fp8-format e4m3 (E4M3 for the gradients too) is not a recipe tprimat "
                           "runs: its FP8 is the hybrid one (E4M3 forward, E5M2 gradients)",
                           "use --fp8-format hybrid (or --precision fp8)");
  if (fp8_format != "hybrid")
    throw core::InputError("unknown --fp8-format '" + core::shown(fp8_format) + "'",
                           "pick hybrid (Megatron's other format, e4m3, is not run)");
  if (precision == "bf16")
    throw core::InputError("--fp8-format hybrid asks for FP8, and --precision bf16 for none",
                           "drop one of the two");
  return "fp8";
}

/// The layers an FP8 run keeps in bf16 at each end (`--fp8-bf16-layers-at-start/-end`); unset
/// where the flag is not given (the recipe's, or a config file's).
struct Fp8BoundaryLayers {
  std::optional<int> at_start, at_end;
  bool given() const { return at_start || at_end; }
};

/// The precision `--precision` (bf16, fp8; "" not given), `--fp8-recipe` (delayed, current; ""
/// not given) and the bf16 boundary layers ask for, over `base` (a config file's, else bf16): a
/// flag given wins, as flags do over config files. A recipe or boundary layers for a run that is
/// not FP8, or an unknown value, is an InputError.
inline train::PrecisionConfig precision_from_flags(std::string_view precision,
                                                   std::string_view recipe,
                                                   train::PrecisionConfig base = {},
                                                   Fp8BoundaryLayers bf16_layers = {}) {
  check_precision_flag_values(precision, recipe);
  if (!precision.empty())
    base.precision = precision == "fp8" ? train::Precision::fp8 : train::Precision::bf16;
  if (!recipe.empty()) {
    base.fp8.recipe = recipe == "delayed" ? train::Fp8Recipe::delayed : train::Fp8Recipe::current;
    if (!base.is_fp8())
      throw core::InputError("--fp8-recipe " + std::string(recipe) + " was given for a " +
                                 base.name() + " run (no --precision fp8)",
                             "add --precision fp8, or drop --fp8-recipe");
  }
  if (!bf16_layers.given()) return base;
  if (!base.is_fp8())
    throw core::InputError(std::string(bf16_layers.at_start ? "--fp8-bf16-layers-at-start"
                                                            : "--fp8-bf16-layers-at-end") +
                               " was given for a " + base.name() +
                               " run (no --precision fp8), whose layers are all bf16",
                           "add --precision fp8, or drop it");
  if (bf16_layers.at_start) base.fp8.bf16_layers_at_start = bf16_layers.at_start;
  if (bf16_layers.at_end) base.fp8.bf16_layers_at_end = bf16_layers.at_end;
  return base;
}

/// The backend `platform` ("cpu", "nvd", "amd") must run `p`.
inline void check_precision_backend(const train::PrecisionConfig& p, std::string_view platform) {
  if (p.is_fp8() && platform == "cpu" && !cpu_backend_runs_fp8)
    throw core::InputError(
        "--precision fp8 on the CPU backend: the CPU backend runs fp32 and has no FP8 emulation "
        "yet",
        "run FP8 on a GPU (--backend cuda), or drop --precision fp8");
}

/// A job's precision, checked: the backend runs it, and its GEMM shapes suit FP8.
inline void check_precision(const train::PrecisionConfig& p, std::string_view platform,
                            const model::Dims& dims, int tp, int mbs, int seq) {
  check_precision_backend(p, platform);
  if (!p.is_fp8()) return;
  // The FP8 GEMM rule (parallel/validate.hpp), told in this job's flags.
  const long long tokens = static_cast<long long>(mbs) * seq;
  if (const std::string bad = parallel::fp8_gemm_misfits(dims, tp, tokens); !bad.empty())
    throw core::InputError(
        "--precision fp8: cuBLASLt's FP8 GEMM takes dimensions in multiples of " +
            std::to_string(parallel::fp8_gemm_multiple) + ", and " + std::string(dims.name) +
            " at TP " + std::to_string(tp) + ", mbs " + std::to_string(mbs) + ", seq " +
            std::to_string(seq) + " has " + bad,
        tokens % parallel::fp8_gemm_multiple != 0
            ? "pass a --seq (or --mbs) that makes mbs x seq a multiple of 16, or run bf16"
            : "pick a TP that leaves these multiples of 16, or run bf16");
  // The layers kept in bf16 at the ends (the current recipe's first and last, or the flags'):
  // a run that leaves none in FP8 would still be labelled FP8.
  const int start = p.fp8.bf16_at_start(), end = p.fp8.bf16_at_end();
  if (dims.layers > start + end) return;
  const std::string none = ", so " + std::to_string(dims.layers) + " layer(s) run none in FP8";
  if (!p.fp8.bf16_layers_at_start && !p.fp8.bf16_layers_at_end)
    throw core::InputError(
        "--fp8-recipe " + std::string(train::recipe_name(p.fp8.recipe)) +
            " keeps the first and last decoder layers in bf16" + none,
        "pass --layers " + std::to_string(start + end + 1) + " or more, or --fp8-recipe delayed");
  throw core::InputError(
      std::to_string(start) + " decoder layer(s) kept in bf16 at the start and " +
          std::to_string(end) +
          " at the end (--fp8-bf16-layers-at-start/-end, or a config's "
          "num_layers_at_start/end_in_bf16)" +
          none,
      "pass --layers " + std::to_string(start + end + 1) + " or more, or keep fewer in bf16");
}

}  // namespace tprimat::cli
