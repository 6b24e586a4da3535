// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Training samples of one indexed data set, cut and shuffled as Megatron's GPTDataset does.
#pragma once

#include <cstdint>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/data/megatron_indexed.hpp"
#include "tprimat/data/synthetic.hpp"

namespace tprimat::data {

/// The documents, concatenated in index order, cut into windows of seq + 1 tokens: window w is
/// tokens [w * seq, w * seq + seq + 1), so consecutive windows share one token (the last target
/// of one is the first input of the next), and there are (tokens - 1) / seq of them. Sample k
/// of the stream is window perm_e[k mod n] of epoch e = k / n, perm_e a seeded shuffle drawn
/// anew each epoch: a run longer than the data set sees every window once per epoch.
/// Unlike Megatron, document order is not shuffled before cutting: the windows are, which is
/// what decorrelates consecutive batches.
class GptSamples {
 public:
  GptSamples(std::shared_ptr<const IndexedDataset> ds, int seq, std::uint64_t seed)
      : ds_(std::move(ds)), seq_(seq), seed_(seed) {
    if (seq < 1) throw core::SettingError("seq", "sequence length must be at least 1", "1 or more");
    windows_ = ds_->tokens() > seq ? (ds_->tokens() - 1) / seq : 0;
  }

  const IndexedDataset& dataset() const { return *ds_; }
  int seq() const { return seq_; }
  /// Windows per epoch.
  std::int64_t windows() const { return windows_; }

  /// Window that sample k of the stream reads.
  std::int64_t window_of(std::int64_t k) const {
    if (windows_ == 0)
      throw core::SettingError(
          "seq",
          "data set " + ds_->prefix() + " holds " + std::to_string(ds_->tokens()) +
              " tokens, fewer than one sample of seq + 1 = " + std::to_string(seq_ + 1),
          ds_->tokens() > 1 ? std::to_string(ds_->tokens() - 1) + " or less, or a larger data set"
                            : "a larger data set");
    const std::int64_t epoch = k / windows_;
    if (epoch != epoch_) shuffle(epoch);
    return perm_[static_cast<std::size_t>(k % windows_)];
  }

  /// Fills `out` (seq + 1 ids) with sample k.
  void sample(std::int64_t k, std::span<std::int32_t> out) const {
    if (static_cast<std::int64_t>(out.size()) != std::int64_t{seq_} + 1)
      throw core::RunError("sample buffer holds " + std::to_string(out.size()) +
                           " ids, expected seq + 1 = " + std::to_string(seq_ + 1));
    buf_.resize(out.size());
    ds_->read(window_of(k) * seq_, buf_);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::int32_t>(buf_[i]);
  }

 private:
  void shuffle(std::int64_t epoch) const {
    perm_.resize(static_cast<std::size_t>(windows_));
    std::iota(perm_.begin(), perm_.end(), std::int64_t{0});
    // Fisher-Yates with SplitMix64, as the synthetic corpus: the same order on every platform.
    std::uint64_t state = detail::splitmix64(
        seed_ ^ detail::splitmix64(0x67707473616d706cULL + std::uint64_t(epoch)));
    for (std::int64_t i = windows_ - 1; i > 0; --i) {
      state = detail::splitmix64(state);
      const auto j = static_cast<std::int64_t>(state % static_cast<std::uint64_t>(i + 1));
      std::swap(perm_[static_cast<std::size_t>(i)], perm_[static_cast<std::size_t>(j)]);
    }
    epoch_ = epoch;
  }

  std::shared_ptr<const IndexedDataset> ds_;
  int seq_;
  std::uint64_t seed_;
  std::int64_t windows_ = 0;
  // Caches: the shuffle of the epoch last read, and a decode buffer (one source per rank).
  mutable std::int64_t epoch_ = -1;
  mutable std::vector<std::int64_t> perm_;
  mutable std::vector<std::int64_t> buf_;
};

}  // namespace tprimat::data
