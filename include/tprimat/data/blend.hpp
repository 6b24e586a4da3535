// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The data a run reads: synthetic, one indexed data set, or a weighted blend of several, as one
// sample stream.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/core/number.hpp"
#include "tprimat/data/gpt_samples.hpp"
#include "tprimat/data/megatron_indexed.hpp"

namespace tprimat::data {

/// The data asked for: "synthetic", "PREFIX", or Megatron's blend list "W1 PREFIX1 W2 ...".
struct DataSpec {
  struct Part {
    double weight = 1;  ///< normalised: the weights of a spec sum to 1
    std::string prefix;
  };
  std::vector<Part> parts;         ///< empty for synthetic data
  std::string text = "synthetic";  ///< as recorded in the result (training_config.data)

  bool synthetic() const { return parts.empty(); }
};

/// How the data checks' messages name the settings they refuse. The library's names by default:
/// the data asked for (training_config.data), Megatron's global_batch_size and StepShape's seq; a
/// program that sets them by flags passes its flags (the tprimat CLI: --data, --gbs, --seq).
struct SettingNames {
  std::string_view data = "data";
  std::string_view global_batch_size = "global_batch_size";
  std::string_view seq = "seq";
};

namespace detail {

/// Whether `word` reads as a number (a blend weight's shape, whatever its range).
inline bool reads_as_number(std::string_view word) {
  if (word.empty()) return false;
  const std::string w(word);
  char* end = nullptr;
  (void)std::strtod(w.c_str(), &end);
  return end == w.c_str() + w.size();
}

inline std::vector<std::string> split_words(std::string_view s) {
  // A list of one word per line (as CLI11 joins the values of a flag `0.7 A 0.3 B`) splits at
  // newlines; one string splits at spaces, and is a blend only where a weight stands in a
  // weight's place (words 1, 3, ...): "sp ace/ds" is one prefix, a path with a space, as is any
  // string naming an existing .bin/.idx pair whole.
  const bool lines = s.find('\n') != std::string_view::npos;
  if (!lines && !s.empty()) {
    const std::string whole(s);
    std::error_code ec;
    bool weighted = false;
    std::size_t at = 0;
    for (std::size_t k = 0; at < s.size(); ++k) {
      const auto start = s.find_first_not_of(" \t", at);
      if (start == std::string_view::npos) break;
      const auto end = std::min(s.find_first_of(" \t", start), s.size());
      if (k % 2 == 0 && reads_as_number(s.substr(start, end - start))) weighted = true;
      at = end;
    }
    if (!weighted || std::filesystem::exists(whole + ".bin", ec) ||
        std::filesystem::exists(whole + ".idx", ec))
      return {whole};
  }
  std::vector<std::string> out;
  std::string cur;
  for (char ch : s) {
    const bool sep = lines ? ch == '\n' : (ch == ' ' || ch == '\t');
    if (sep) {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

/// A blend weight is relative: above 0, and at most 1e12 so that any blend's sum stays finite.
inline constexpr auto weight_range = core::above(0.0, 1e12);

}  // namespace detail

/// Parses the data asked for. Checks the shape of the list only; the files are checked when
/// opened. Messages name the list `names.data`.
inline DataSpec parse_data_spec(std::string_view text, const SettingNames& names = {}) {
  const auto words = detail::split_words(text);
  DataSpec spec;
  if (words.empty() || (words.size() == 1 && words[0] == "synthetic")) return spec;
  if (words.size() == 1) {
    spec.parts.push_back({1.0, resolve_prefix(words[0])});
    spec.text = spec.parts[0].prefix;
    return spec;
  }
  const std::string data(names.data);
  if (words.size() % 2 != 0)
    throw core::InputError(
        data + " blend needs weight and prefix pairs, got " + std::to_string(words.size()) +
            " values",
        "pass " + data + " PREFIX, or a blend " + data + " W1 PREFIX1 W2 PREFIX2 ...");
  double total = 0;
  spec.text.clear();
  for (std::size_t i = 0; i < words.size(); i += 2) {
    const double w = core::parse_number(data + " weight", words[i], detail::weight_range);
    total += w;
    spec.parts.push_back({w, resolve_prefix(words[i + 1])});
    spec.text += (i ? " " : "") + words[i] + " " + spec.parts.back().prefix;
  }
  for (auto& p : spec.parts) p.weight /= total;
  return spec;
}

/// The sample stream of a spec over indexed data: sample i of the blend comes from the data set
/// whose drawn count lags its weight most (weight * (i + 1) - drawn, ties to the first listed),
/// Megatron's deterministic blending rule; within a data set, its own GptSamples stream in turn.
/// One data set is the blend of one.
class BlendedSamples {
 public:
  BlendedSamples(const DataSpec& spec, int seq, std::uint64_t seed) {
    if (spec.synthetic())
      throw core::InputError("BlendedSamples needs indexed data, got a synthetic DataSpec");
    for (std::size_t d = 0; d < spec.parts.size(); ++d) {
      auto ds = std::make_shared<const IndexedDataset>(spec.parts[d].prefix);
      // Each data set gets its own shuffle, so a blend of one set with itself is not lockstep.
      parts_.emplace_back(std::move(ds), seq, seed + d);
      weights_.push_back(spec.parts[d].weight);
    }
    drawn_.assign(parts_.size(), 0);
  }

  std::size_t size() const { return parts_.size(); }
  const GptSamples& part(std::size_t d) const { return parts_[d]; }

  /// (data set, sample of that data set) that blend sample i reads.
  std::pair<std::size_t, std::int64_t> source_of(std::int64_t i) const {
    while (static_cast<std::int64_t>(assigned_.size()) <= i) {
      const double n = double(assigned_.size()) + 1;
      std::size_t best = 0;
      double lag = -1e300;
      for (std::size_t d = 0; d < parts_.size(); ++d) {
        const double l = weights_[d] * n - double(drawn_[d]);
        if (l > lag) {
          lag = l;
          best = d;
        }
      }
      assigned_.emplace_back(best, drawn_[best]++);
    }
    return assigned_[static_cast<std::size_t>(i)];
  }

  /// Fills `out` (seq + 1 ids) with blend sample i.
  void sample(std::int64_t i, std::span<std::int32_t> out) const {
    const auto [d, k] = source_of(i);
    parts_[d].sample(k, out);
  }

  /// Samples each data set gives to blend samples [0, n).
  std::vector<std::int64_t> draws(std::int64_t n) const {
    std::vector<std::int64_t> c(parts_.size(), 0);
    for (std::int64_t i = 0; i < n; ++i) ++c[source_of(i).first];
    return c;
  }

 private:
  std::vector<GptSamples> parts_;
  std::vector<double> weights_;
  // The blend order, computed as far as it was asked for (it depends on all earlier draws).
  mutable std::vector<std::pair<std::size_t, std::int64_t>> assigned_;
  mutable std::vector<std::int64_t> drawn_;
};

/// Checks a blend against a run before anything runs: every token id below the model's vocab,
/// and each data set holding the samples it gives to the first global batch. Token ranges are
/// scanned once (a full pass over each .bin) and kept, since several jobs ask.
class DataCheck {
 public:
  DataCheck(const DataSpec& spec, int seq, std::uint64_t seed) : spec_(spec) {
    if (spec.synthetic()) return;
    blend_ = std::make_unique<BlendedSamples>(spec, seq, seed);
    for (std::size_t d = 0; d < blend_->size(); ++d)
      ranges_.push_back(blend_->part(d).dataset().token_range());
  }

  /// Refusals name the run's settings `names`.
  void check(int vocab, std::string_view model_name, int gbs,
             const SettingNames& names = {}) const {
    if (!blend_) return;
    for (std::size_t d = 0; d < blend_->size(); ++d) {
      const auto& ds = blend_->part(d).dataset();
      if (ranges_[d].min < 0)
        throw core::InputError("data set " + ds.prefix() + " holds a negative token id (" +
                                   std::to_string(ranges_[d].min) + ")",
                               "token ids must be 0 or more; rebuild the data set");
      if (ranges_[d].max >= vocab)
        throw core::InputError(
            "data set " + ds.prefix() + " holds token id " + std::to_string(ranges_[d].max) +
                ", but " + std::string(model_name) + " has a vocabulary of " +
                std::to_string(vocab) + " (ids 0 to " + std::to_string(vocab - 1) + ")",
            "tokenize the data with the model's tokenizer, or pick the model "
            "it was tokenized for");
    }
    const auto need = blend_->draws(gbs);
    for (std::size_t d = 0; d < blend_->size(); ++d) {
      const auto& part = blend_->part(d);
      if (part.windows() < std::max<std::int64_t>(need[d], 1))
        throw core::InputError(
            "data set " + part.dataset().prefix() +
                " is too small for one global batch: " + std::to_string(part.dataset().tokens()) +
                " tokens make " + std::to_string(part.windows()) +
                " samples of seq + 1 = " + std::to_string(part.seq() + 1) +
                " tokens, the first global batch of " + std::to_string(gbs) + " needs " +
                std::to_string(std::max<std::int64_t>(need[d], 1)) + " from it",
            "pass a smaller " + std::string(names.global_batch_size) + " or " +
                std::string(names.seq) + ", or a larger data set");
    }
  }

 private:
  DataSpec spec_;
  std::unique_ptr<BlendedSamples> blend_;
  std::vector<TokenRange> ranges_;
};

}  // namespace tprimat::data
