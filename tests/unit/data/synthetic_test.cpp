// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The synthetic corpus: a function of (seed, index), a bigram chain, split over DP ranks in blocks.
#include "tprimat/data/synthetic.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tprimat/core/error.hpp"

namespace {

using tprimat::data::SyntheticTokens;

std::vector<std::int32_t> sample(const SyntheticTokens& d, std::int64_t i, int n) {
  std::vector<std::int32_t> out(n);
  d.sample(i, out);
  return out;
}

TEST(Synthetic, SameSeedAndIndexSameTokens) {
  SyntheticTokens a(256, 42), b(256, 42), c(256, 43);
  EXPECT_EQ(sample(a, 7, 100), sample(b, 7, 100));
  EXPECT_EQ(sample(a, -3, 10), sample(b, -3, 10));  // any int64 index
  EXPECT_EQ(sample(a, 1LL << 40, 10), sample(b, 1LL << 40, 10));
  EXPECT_NE(sample(a, 7, 100), sample(a, 8, 100));  // another sample
  EXPECT_NE(sample(a, 7, 100), sample(c, 7, 100));  // another seed
  // A prefix is the start of the longer sample: the sequence length does not change the data.
  const auto long_one = sample(a, 5, 50), short_one = sample(a, 5, 20);
  EXPECT_TRUE(std::equal(short_one.begin(), short_one.end(), long_one.begin()));
}

TEST(Synthetic, PermutationChainInVocabulary) {
  SyntheticTokens d(97, 1);
  const auto perm = d.permutation();
  std::vector<std::int32_t> sorted(perm.begin(), perm.end());
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 97; ++i) EXPECT_EQ(sorted[i], i);    // a permutation of the vocabulary
  EXPECT_FALSE(std::is_sorted(perm.begin(), perm.end()));  // and not the identity
  for (int i = 0; i < 20; ++i) {
    const auto s = sample(d, i, 64);
    for (std::size_t k = 0; k < s.size(); ++k) {
      ASSERT_GE(s[k], 0);
      ASSERT_LT(s[k], 97);
      if (k > 0) EXPECT_EQ(s[k], perm[s[k - 1]]);
    }
  }
  // Start tokens spread over the vocabulary (not a constant).
  std::vector<int> starts;
  for (int i = 0; i < 200; ++i) starts.push_back(sample(d, i, 1)[0]);
  std::sort(starts.begin(), starts.end());
  EXPECT_GT(std::unique(starts.begin(), starts.end()) - starts.begin(), 50);
}

// The chain runs through every token before it repeats: no short cycle that many samples share.
TEST(Synthetic, PermutationIsOneCycleThroughTheVocabulary) {
  for (const auto& [vocab, seed] : {std::pair{2, 1}, {97, 1}, {256, 42}, {128256, 42}}) {
    const SyntheticTokens d(vocab, static_cast<std::uint64_t>(seed));
    const auto perm = d.permutation();
    std::int32_t t = 0;
    int length = 0;
    do {
      t = perm[t];
      ++length;
    } while (t != 0 && length <= vocab);
    EXPECT_EQ(length, vocab) << "vocab " << vocab << ", seed " << seed;
  }
}

// Step s, rank r of dp takes samples [s*gbs + r*gbs/dp, s*gbs + (r+1)*gbs/dp); the ranks'
// blocks concatenated are exactly the dp = 1 batch.
TEST(Synthetic, DataParallelSplitIsContiguousBlocks) {
  SyntheticTokens d(256, 9);
  const int gbs = 8, seq = 5, width = seq + 1;
  for (std::int64_t step : {0, 3}) {
    std::vector<std::int32_t> whole(gbs * width);
    tprimat::data::fill_rank_batch(d, step, gbs, 0, 1, seq, whole);
    for (int s = 0; s < gbs; ++s)
      EXPECT_EQ(
          std::vector<std::int32_t>(whole.begin() + s * width, whole.begin() + (s + 1) * width),
          sample(d, step * gbs + s, width));
    for (int dp : {2, 4, 8}) {
      std::vector<std::int32_t> joined;
      for (int r = 0; r < dp; ++r) {
        std::vector<std::int32_t> part(gbs / dp * width);
        tprimat::data::fill_rank_batch(d, step, gbs, r, dp, seq, part);
        joined.insert(joined.end(), part.begin(), part.end());
      }
      EXPECT_EQ(joined, whole) << "dp " << dp;
    }
  }
}

TEST(Synthetic, BadSplitsAreInputErrors) {
  SyntheticTokens d(16);
  std::vector<std::int32_t> out(3 * 5);
  EXPECT_THROW(tprimat::data::fill_rank_batch(d, 0, 8, 0, 3, 4, out), tprimat::core::InputError);
  EXPECT_THROW(tprimat::data::fill_rank_batch(d, 0, 8, 2, 2, 4, out), tprimat::core::InputError);
  EXPECT_THROW(tprimat::data::fill_rank_batch(d, 0, 8, 0, 2, 4, out), tprimat::core::InputError);
  EXPECT_THROW(SyntheticTokens(0), tprimat::core::InputError);
  try {
    tprimat::data::fill_rank_batch(d, 0, 8, 0, 3, 4, out);
    FAIL() << "gbs 8 over DP 3";
  } catch (const tprimat::core::SettingError& e) {
    EXPECT_EQ(e.setting(), "global_batch_size") << "told as the run's setting, never a CLI flag";
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
  }
}

}  // namespace
