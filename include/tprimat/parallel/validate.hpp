// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Each rule a layout must satisfy for a model, written once: for static_asserts, the CLI and tests.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "tprimat/core/error.hpp"
#include "tprimat/model/spec.hpp"

// Rule texts, shared by the static_asserts (which need literals) and the run-time messages.
#define TPRIMAT_RULE_TP_POSITIVE "tensor-parallel size (TP) must be at least 1"
#define TPRIMAT_RULE_PP_POSITIVE "pipeline-parallel size (PP) must be at least 1"
#define TPRIMAT_RULE_TP_HEADS "TP must divide the attention heads"
#define TPRIMAT_RULE_TP_KV_HEADS "TP must divide the KV heads"
#define TPRIMAT_RULE_TP_FFN "TP must divide the FFN width"
#define TPRIMAT_RULE_TP_VOCAB "TP must divide the vocabulary"
#define TPRIMAT_RULE_PP_LAYERS "PP must divide the layers"
#define TPRIMAT_RULE_PP_TIED "PP must be 1 for a model with tied embeddings"
#define TPRIMAT_RULE_SPLIT_STAGES "an uneven pipeline split gives every stage its layer count"
#define TPRIMAT_RULE_SPLIT_LAYER "every pipeline stage runs at least one layer"
#define TPRIMAT_RULE_SPLIT_SUM "a pipeline split's layer counts sum to the layers run"

namespace tprimat::parallel {

/// A list of valid values, carried in a type so that compilers print it in diagnostics.
template <int... V>
struct Values {};

constexpr bool divides(int part, int whole) { return part >= 1 && whole % part == 0; }

/// TP must split heads, KV heads, the FFN and the vocabulary (vocab-parallel embedding and head)
/// evenly: its valid values divide their gcd.
constexpr int tp_limit(const model::Dims& d) {
  return std::gcd(std::gcd(std::gcd(d.heads, d.kv_heads), d.ffn), d.vocab);
}

/// Tied embeddings are one matrix that the first stage (embedding) and the last (head) would both
/// need: a pipeline cannot split them.
constexpr bool pp_keeps_tied_whole(bool tied_embeddings, int pp) {
  return !tied_embeddings || pp == 1;
}

constexpr bool tp_valid(const model::Dims& d, int tp) {
  return tp >= 1 && divides(tp, d.heads) && divides(tp, d.kv_heads) && divides(tp, d.ffn) &&
         divides(tp, d.vocab);
}
constexpr bool pp_valid(const model::Dims& d, int pp) {
  return divides(pp, d.layers) && pp_keeps_tied_whole(d.tied_embeddings, pp);
}

namespace detail {
template <int N>
constexpr int count_divisors() {
  int c = 0;
  for (int i = 1; i <= N; ++i) c += N % i == 0;
  return c;
}
template <int N>
constexpr auto divisors() {
  std::array<int, count_divisors<N>()> out{};
  std::size_t k = 0;
  for (int i = 1; i <= N; ++i)
    if (N % i == 0) out[k++] = i;
  return out;
}
template <int N, std::size_t... I>
constexpr auto divisor_values(std::index_sequence<I...>) -> Values<divisors<N>()[I]...>;
template <int N>
using DivisorValues = decltype(divisor_values<N>(std::make_index_sequence<count_divisors<N>()>{}));
}  // namespace detail

/// Valid TP and PP values of a model, as types: `ValidTp<Qwen25_7B>` is `Values<1, 2, 4>`.
template <class M>
using ValidTp = detail::DivisorValues<tp_limit(model::dims<M>())>;
template <class M>
using ValidPp = detail::DivisorValues<M::layers>;

// One trait per rule. The numbers sit in the template arguments, so a failed static_assert prints
// them: g++/clang show `TpDividesKvHeads<Qwen25_7B, 8, 4, Values<1, 2, 4>>::value` is false.
template <class M, int Tp, int Heads = M::heads, class Valid = ValidTp<M>>
struct TpDividesHeads {
  static constexpr bool value = divides(Tp, Heads);
};
template <class M, int Tp, int KvHeads = M::kv_heads, class Valid = ValidTp<M>>
struct TpDividesKvHeads {
  static constexpr bool value = divides(Tp, KvHeads);
};
template <class M, int Tp, int Ffn = M::ffn, class Valid = ValidTp<M>>
struct TpDividesFfn {
  static constexpr bool value = divides(Tp, Ffn);
};
template <class M, int Tp, int Vocab = M::vocab, class Valid = ValidTp<M>>
struct TpDividesVocab {
  static constexpr bool value = divides(Tp, Vocab);
};
template <class M, int Pp, int Layers = M::layers, class Valid = ValidPp<M>>
struct PpDividesLayers {
  static constexpr bool value = divides(Pp, Layers);
};
template <class M, int Pp, bool TiedEmbeddings = M::tied_embeddings>
struct PpKeepsTiedEmbeddingsWhole {
  static constexpr bool value = pp_keeps_tied_whole(TiedEmbeddings, Pp);
};

/// "1, 2, 4": the valid values of `limit` (its divisors) for messages.
inline std::string divisor_list(int limit) {
  std::string out;
  for (int i = 1; i <= limit; ++i)
    if (limit % i == 0) out += (out.empty() ? "" : ", ") + std::to_string(i);
  return out;
}

/// How a layout's pipeline splits its layers: `even` gives each stage layers / PP (the rule that
/// PP divides the layers holds); `given` takes per-stage counts that stage_layers_error checks.
enum class PipelineSplit { even, given };

/// The first rule that (model, TP, PP) breaks, as the one-line message the CLI prints;
/// nullopt when the layout fits. `d.layers` is the number of layers that will run. With
/// `PipelineSplit::given` the layers need not divide by PP (the split's own rules are
/// stage_layers_error's).
inline std::optional<std::string> layout_error(const model::Dims& d, int tp, int pp,
                                               PipelineSplit split = PipelineSplit::even) {
  const std::string model(d.name);
  const std::string valid_tp = " (valid TP for " + model + ": " + divisor_list(tp_limit(d)) + ")";
  const std::string valid_pp =
      " (valid PP for " + std::to_string(d.layers) + " layers: " + divisor_list(d.layers) + ")";
  if (tp < 1) return "tprimat: " TPRIMAT_RULE_TP_POSITIVE "; got TP=" + std::to_string(tp);
  if (pp < 1) return "tprimat: " TPRIMAT_RULE_PP_POSITIVE "; got PP=" + std::to_string(pp);
  if (!divides(tp, d.heads))
    return "tprimat: " TPRIMAT_RULE_TP_HEADS ": " + model + " has " + std::to_string(d.heads) +
           " attention heads, TP=" + std::to_string(tp) + " does not divide them" + valid_tp;
  if (!divides(tp, d.kv_heads))
    return "tprimat: " TPRIMAT_RULE_TP_KV_HEADS ": " + model + " has " +
           std::to_string(d.kv_heads) + " KV heads, TP=" + std::to_string(tp) +
           " does not divide them" + valid_tp;
  if (!divides(tp, d.ffn))
    return "tprimat: " TPRIMAT_RULE_TP_FFN ": " + model + " has FFN width " +
           std::to_string(d.ffn) + ", TP=" + std::to_string(tp) + " does not divide it" + valid_tp;
  if (!divides(tp, d.vocab))
    return "tprimat: " TPRIMAT_RULE_TP_VOCAB ": " + model + " has a vocabulary of " +
           std::to_string(d.vocab) + ", TP=" + std::to_string(tp) + " does not divide it" +
           valid_tp;
  if (split == PipelineSplit::even && !divides(pp, d.layers))
    return "tprimat: " TPRIMAT_RULE_PP_LAYERS ": " + model + " runs " + std::to_string(d.layers) +
           " layers, PP=" + std::to_string(pp) + " does not divide them" + valid_pp;
  if (!pp_keeps_tied_whole(d.tied_embeddings, pp))
    return "tprimat: " TPRIMAT_RULE_PP_TIED ": " + model +
           " ties its embedding to its LM head, which the first and last stages would share; "
           "PP=" +
           std::to_string(pp) + " is not supported, use PP=1";
  return std::nullopt;
}

/// "17+15": a split's per-stage layer counts, as messages and reports show it.
inline std::string stage_layers_text(std::span<const int> stage_layers) {
  std::string out;
  for (const int n : stage_layers) out += (out.empty() ? "" : "+") + std::to_string(n);
  return out;
}

/// The first rule that per-stage layer counts `stage_layers` break for `d.layers` layers over
/// `pp` stages, nullopt when they hold. Every stage runs at least one layer: both engines hand
/// each stage's output to the next through its last layer's buffers.
inline std::optional<std::string> stage_layers_error(const model::Dims& d, int pp,
                                                     std::span<const int> stage_layers) {
  const std::string split = "pipeline split " + stage_layers_text(stage_layers);
  if (static_cast<int>(stage_layers.size()) != pp)
    return "tprimat: " TPRIMAT_RULE_SPLIT_STAGES ": " + split + " has " +
           std::to_string(stage_layers.size()) + " stage(s), PP=" + std::to_string(pp);
  long long sum = 0;
  for (std::size_t s = 0; s < stage_layers.size(); ++s) {
    if (stage_layers[s] < 1)
      return "tprimat: " TPRIMAT_RULE_SPLIT_LAYER ": " + split + " gives stage " +
             std::to_string(s) + " " + std::to_string(stage_layers[s]) + " layers";
    sum += stage_layers[s];
  }
  if (sum != d.layers)
    return "tprimat: " TPRIMAT_RULE_SPLIT_SUM ": " + split + " = " + std::to_string(sum) +
           " layers, " + std::string(d.name) + " runs " + std::to_string(d.layers);
  return std::nullopt;
}

/// layout_error as the exception every engine and run-time path throws (core::InputError).
inline void check_layout(const model::Dims& d, int tp, int pp) {
  if (auto err = layout_error(d, tp, pp)) throw core::InputError(*err);
}

/// The same for a layout whose stages run `stage_layers` layers each (empty: the even split).
inline void check_layout(const model::Dims& d, int tp, int pp, std::span<const int> stage_layers) {
  if (stage_layers.empty()) return check_layout(d, tp, pp);
  if (auto err = layout_error(d, tp, pp, PipelineSplit::given)) throw core::InputError(*err);
  if (auto err = stage_layers_error(d, pp, stage_layers)) throw core::InputError(*err);
}

/// Context parallelism splits each sequence into 2 x CP chunks, CP rank r holding chunks r and
/// 2 x CP - 1 - r (Megatron's load-balanced causal split: every rank gets the same share of the
/// causal attention's work): 2 x CP must divide seq. nullopt when it does (or CP = 1).
inline std::optional<std::string> context_parallel_error(int seq, int cp) {
  if (cp < 1) return "context parallelism needs CP >= 1 (got " + std::to_string(cp) + ")";
  if (cp == 1 || seq % (2 * cp) == 0) return std::nullopt;
  return "context parallelism splits each sequence into 2 x CP = " + std::to_string(2 * cp) +
         " chunks (Megatron's load-balanced causal split), and seq " + std::to_string(seq) +
         " is not a multiple of " + std::to_string(2 * cp);
}

/// context_parallel_error as the InputError every engine throws, with its fix.
inline void check_context_parallel(int seq, int cp) {
  if (auto err = context_parallel_error(seq, cp))
    throw core::InputError(*err, "make seq a multiple of " + std::to_string(2 * std::max(cp, 1)) +
                                     ", or use a smaller CP");
}

/// Sequence parallelism splits a micro-batch's mbs x seq / CP token rows (this CP rank's) over
/// the TP ranks: TP must divide them. nullopt when it does (or TP = 1, where sequence
/// parallelism is off).
inline std::optional<std::string> sequence_parallel_error(int mbs, int seq, int tp, int cp = 1) {
  const long long rows = static_cast<long long>(mbs) * seq / std::max(cp, 1);
  if (tp <= 1 || rows % tp == 0) return std::nullopt;
  const std::string split = cp > 1 ? " / CP = " + std::to_string(mbs) + " x " +
                                         std::to_string(seq) + " / " + std::to_string(cp)
                                   : " = " + std::to_string(mbs) + " x " + std::to_string(seq);
  return "sequence parallelism splits a micro-batch's mbs x seq" + split + " = " +
         std::to_string(rows) + " token rows over the TP ranks, and TP=" + std::to_string(tp) +
         " does not divide them";
}

/// sequence_parallel_error as the InputError every engine throws, with its fix in the model's
/// terms (the program names its flags in its own message, before any engine sees the shape).
inline void check_sequence_parallel_rows(int mbs, int seq, int tp, int cp = 1) {
  if (auto err = sequence_parallel_error(mbs, seq, tp, cp))
    throw core::InputError(*err, "make mbs x seq" + std::string(cp > 1 ? " / CP" : "") +
                                     " a multiple of TP=" + std::to_string(tp) +
                                     ", or run without sequence parallelism");
}

/// cuBLASLt's and hipBLASLt's FP8 matmul take m, n and k in multiples of 16 only.
inline constexpr int fp8_gemm_multiple = 16;

/// The FP8 GEMMs of a decoder layer on one TP rank: `tokens` (mbs x seq) x hidden into Q
/// (q_dim / TP), K and V (kv_dim / TP), gate and up (ffn / TP); O and down back to hidden. Each
/// of these that is not a multiple of fp8_gemm_multiple, named with its value ("tokens per
/// micro-batch (mbs x seq) 100, ffn / TP 24"), or "" when FP8 can run them all.
inline std::string fp8_gemm_misfits(const model::Dims& d, int tp, long long tokens) {
  const std::pair<const char*, long long> checked[] = {
      {"tokens per micro-batch (mbs x seq)", tokens},
      {"hidden", d.hidden},
      {"q dim / TP", d.q_dim() / tp},
      {"kv dim / TP", d.kv_dim() / tp},
      {"ffn / TP", d.ffn / tp},
  };
  std::string bad;
  for (const auto& [what, value] : checked)
    if (value % fp8_gemm_multiple != 0)
      bad += (bad.empty() ? "" : ", ") + std::string(what) + " " + std::to_string(value);
  return bad;
}

/// fp8_gemm_misfits as the InputError every engine throws, with its fix in the model's terms.
inline void check_fp8_gemm_shapes(const model::Dims& d, int tp, long long tokens) {
  const std::string bad = fp8_gemm_misfits(d, tp, tokens);
  if (bad.empty()) return;
  throw core::InputError(
      "FP8 GEMMs take dimensions in multiples of " + std::to_string(fp8_gemm_multiple) +
          " (cuBLASLt's and hipBLASLt's rule), and " + std::string(d.name) + " at TP " +
          std::to_string(tp) + " has " + bad,
      tokens % fp8_gemm_multiple != 0 ? "make mbs x seq a multiple of 16, or run bf16"
                                      : "pick a TP that leaves these multiples of 16, or run bf16");
}

}  // namespace tprimat::parallel
