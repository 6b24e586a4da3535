// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// A learnable synthetic corpus (seeded bigram chains) and the DP split of a global batch.
#pragma once

#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "tprimat/core/error.hpp"

namespace tprimat::data {

namespace detail {
/// SplitMix64 (Steele et al.): a fixed, platform-independent mix, unlike std::shuffle or the
/// std distributions whose algorithms are implementation-defined.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace detail

/// Sample i (any int64 index) is a deterministic function of (seed, i): a seeded start token,
/// then next = perm[previous] for one fixed seeded permutation of the vocabulary. Every target
/// token is a function of the input token before it, so the loss of a model that learns the
/// bigram table falls from ln(vocab) towards 0 within a few dozen steps. The permutation is one
/// cycle through the whole vocabulary: a random permutation's short cycles (seed 42's had one of
/// 5,131 tokens at Llama's vocabulary) would be revisited by many samples, and a small batch's
/// loss dropped whenever it met one it had already learnt.
class SyntheticTokens {
 public:
  explicit SyntheticTokens(int vocab, std::uint64_t seed = 42) : vocab_(vocab), seed_(seed) {
    if (vocab < 1)
      throw core::InputError("synthetic data needs a vocabulary of at least 1 token, got " +
                             std::to_string(vocab));
    perm_.resize(vocab);
    std::iota(perm_.begin(), perm_.end(), 0);
    // Sattolo's variant of Fisher-Yates (j < i: a uniformly drawn single cycle) with SplitMix64
    // draws: the same permutation on every platform and compiler.
    std::uint64_t state = detail::splitmix64(seed ^ 0x7065726d75746174ULL);  // "permutat"
    for (int i = vocab - 1; i > 0; --i) {
      state = detail::splitmix64(state);
      const int j = static_cast<int>(state % static_cast<std::uint64_t>(i));
      std::swap(perm_[i], perm_[j]);
    }
  }

  int vocab() const { return vocab_; }
  std::span<const std::int32_t> permutation() const { return perm_; }

  /// Fills `out` with sample `index`.
  void sample(std::int64_t index, std::span<std::int32_t> out) const {
    if (out.empty()) return;
    const std::uint64_t h =
        detail::splitmix64(seed_ ^ detail::splitmix64(static_cast<std::uint64_t>(index)));
    out[0] = static_cast<std::int32_t>(h % static_cast<std::uint64_t>(vocab_));
    for (std::size_t k = 1; k < out.size(); ++k) out[k] = perm_[out[k - 1]];
  }

 private:
  int vocab_;
  std::uint64_t seed_;
  std::vector<std::int32_t> perm_;
};

/// The global batch of optimizer step `step` is samples [step * gbs, (step + 1) * gbs); DP rank r
/// takes the contiguous block [step * gbs + r * gbs/dp, step * gbs + (r + 1) * gbs/dp), written
/// sample after sample (so micro-batch after micro-batch). out.size() == gbs/dp * (seq + 1).
/// `Source` is any corpus with `sample(int64 index, span<int32> out)` (SyntheticTokens,
/// data::BlendedSamples), so every data source obeys this one split rule.
template <class Source>
void fill_rank_batch(const Source& tokens, std::int64_t step, int gbs, int dp_rank,
                            int dp, int seq, std::span<std::int32_t> out) {
  if (dp < 1 || gbs < 1 || gbs % dp != 0 || dp_rank < 0 || dp_rank >= dp)
    throw core::SettingError("global_batch_size",
                             "global batch " + std::to_string(gbs) + " cannot be split over DP=" +
                                 std::to_string(dp) + " (rank " + std::to_string(dp_rank) + ")",
                             "a multiple of the data-parallel size");
  const std::int64_t per_rank = gbs / dp, width = std::int64_t{seq} + 1;
  if (static_cast<std::int64_t>(out.size()) != per_rank * width)
    throw core::InputError(
        "rank batch buffer holds " + std::to_string(out.size()) +
        " ids, expected gbs/dp x (seq + 1) = " + std::to_string(per_rank * width));
  const std::int64_t first = step * gbs + dp_rank * per_rank;
  for (std::int64_t s = 0; s < per_rank; ++s)
    tokens.sample(first + s, out.subspan(s * width, width));
}

}  // namespace tprimat::data
