// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Samples of indexed data: seq + 1 windows overlapping by one, seeded epochs, weighted blends,
// the --data grammar, and the checks a bench runs before it starts.
#include "tprimat/data/blend.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/data/gpt_samples.hpp"
#include "tprimat/data/indexed_writer.hpp"
#include "tprimat/data/synthetic.hpp"

namespace fs = std::filesystem;
using namespace tprimat;

namespace {

class Blend : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tprimat_blend_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Documents of 7 tokens each holding first, first + 1, ... so every token says where it is.
  std::string counting(const std::string& name, std::int64_t tokens, std::int64_t first = 0) {
    const std::string prefix = (dir_ / name).string();
    data::IndexedWriter w(prefix, data::TokenType::int32);
    std::vector<std::int64_t> doc;
    for (std::int64_t t = 0; t < tokens; ++t) {
      doc.push_back(first + t);
      if (doc.size() == 7) {
        w.add_document(doc);
        doc.clear();
      }
    }
    if (!doc.empty()) w.add_document(doc);
    w.finish();
    return prefix;
  }

  fs::path dir_;
};

TEST_F(Blend, WindowsAreSeqPlusOneAndOverlapByOne) {
  const auto p = counting("c", 101);
  const data::GptSamples s(std::make_shared<const data::IndexedDataset>(p), 10, 42);
  EXPECT_EQ(s.windows(), 10);  // (101 - 1) / 10
  std::set<std::int64_t> seen;
  std::vector<std::int32_t> out(11);
  for (std::int64_t k = 0; k < 10; ++k) {
    s.sample(k, out);
    EXPECT_EQ(out[0] % 10, 0);
    for (std::size_t i = 1; i < out.size(); ++i) EXPECT_EQ(out[i], out[i - 1] + 1);
    seen.insert(out[0] / 10);
  }
  EXPECT_EQ(seen.size(), 10u) << "one epoch reads every window once";
  // Window w ends where window w + 1 starts: the shared token is target then input.
  EXPECT_EQ(s.window_of(0) * 10 + 10, (s.window_of(0) + 1) * 10);
}

// A sequence the data set cannot fill is refused as the run's `seq` setting, in the library's
// words (a program tells its own flag), naming the longest that fits.
TEST_F(Blend, SequenceLongerThanTheDataIsTheSeqSetting) {
  auto ds = std::make_shared<const data::IndexedDataset>(counting("c", 11));
  try {
    (void)data::GptSamples(ds, 11, 42).window_of(0);
    FAIL() << "11 tokens hold no window of 12";
  } catch (const core::SettingError& e) {
    EXPECT_EQ(e.setting(), "seq");
    EXPECT_EQ(e.suggestion(), "10 or less, or a larger data set");
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
  }
  try {
    (void)data::GptSamples(ds, 0, 42);
    FAIL() << "seq 0";
  } catch (const core::SettingError& e) {
    EXPECT_EQ(e.setting(), "seq");
    EXPECT_EQ(std::string(e.what()),
              "tprimat: sequence length must be at least 1; set seq to 1 or more");
  }
}

TEST_F(Blend, ShuffleIsSeededAndRedrawnEachEpoch) {
  const auto p = counting("c", 1001);
  auto ds = std::make_shared<const data::IndexedDataset>(p);
  const data::GptSamples a(ds, 10, 42), b(ds, 10, 42), c(ds, 10, 7);
  std::vector<std::int64_t> wa, wb, wc, next;
  for (std::int64_t k = 0; k < 100; ++k) {
    wa.push_back(a.window_of(k));
    wb.push_back(b.window_of(k));
    wc.push_back(c.window_of(k));
    next.push_back(a.window_of(k + 100));
  }
  EXPECT_EQ(wa, wb);
  EXPECT_NE(wa, wc);
  EXPECT_NE(wa, next) << "epoch 2 reshuffles";
  std::vector<std::int64_t> sorted = next;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int64_t> all(100);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(sorted, all);
  std::vector<std::int64_t> first(wa);
  std::sort(first.begin(), first.end());
  EXPECT_NE(first, wa) << "the sample order is shuffled";
}

TEST_F(Blend, WeightsDrawDeterministically) {
  const auto a = counting("a", 5000), b = counting("b", 5000, 100000);
  const auto spec = data::parse_data_spec("0.7 " + a + " 0.3 " + b);
  ASSERT_EQ(spec.parts.size(), 2u);
  EXPECT_DOUBLE_EQ(spec.parts[0].weight, 0.7);
  EXPECT_EQ(spec.text, "0.7 " + a + " 0.3 " + b);
  const data::BlendedSamples s(spec, 16, 42);
  for (std::int64_t n : {10, 100, 1000}) {
    const auto c = s.draws(n);
    EXPECT_NEAR(double(c[0]), 0.7 * n, 1.0) << n;
    EXPECT_EQ(c[0] + c[1], n);
  }
  // Sample i comes from the data set the draw names (b's ids start at 100000).
  std::vector<std::int32_t> out(17);
  for (std::int64_t i = 0; i < 20; ++i) {
    s.sample(i, out);
    EXPECT_EQ(out[0] >= 100000, s.source_of(i).first == 1) << i;
  }
  const data::BlendedSamples again(spec, 16, 42);
  std::vector<std::int32_t> o2(17);
  for (std::int64_t i = 0; i < 20; ++i) {
    s.sample(i, out);
    again.sample(i, o2);
    EXPECT_EQ(out, o2);
  }
}

TEST_F(Blend, DpRanksTakeContiguousBlocksOfTheGlobalBatch) {
  const auto p = counting("c", 2000);
  const data::BlendedSamples s(data::parse_data_spec(p), 8, 42);
  const int gbs = 8, seq = 8;
  for (std::int64_t step = 0; step < 3; ++step) {
    std::vector<std::int32_t> whole(gbs * (seq + 1));
    data::fill_rank_batch(s, step, gbs, 0, 1, seq, whole);
    for (int dp : {2, 4}) {
      for (int r = 0; r < dp; ++r) {
        std::vector<std::int32_t> part(gbs / dp * (seq + 1));
        data::fill_rank_batch(s, step, gbs, r, dp, seq, part);
        EXPECT_TRUE(std::equal(part.begin(), part.end(), whole.begin() + r * part.size()));
      }
    }
  }
}

TEST_F(Blend, DataSpecGrammar) {
  EXPECT_TRUE(data::parse_data_spec("synthetic").synthetic());
  EXPECT_EQ(data::parse_data_spec("synthetic").text, "synthetic");
  EXPECT_EQ(data::parse_data_spec("some/prefix").parts.at(0).prefix, "some/prefix");
  // A prefix with a space is a path, not a blend whose weight is "sp" (refused before).
  EXPECT_EQ(data::parse_data_spec("sp ace/ds").parts.at(0).prefix, "sp ace/ds");
  EXPECT_EQ(data::parse_data_spec("my data set").parts.size(), 1u);
  EXPECT_EQ(data::parse_data_spec("0.7 A 0.3 B").parts.size(), 2u);
  // CLI11 joins `--data 1 A 3 B` with newlines.
  const auto s = data::parse_data_spec("1\nA\n3\nB");
  ASSERT_EQ(s.parts.size(), 2u);
  EXPECT_DOUBLE_EQ(s.parts[1].weight, 0.75);
  EXPECT_EQ(s.parts[1].prefix, "B");
  // A file of the pair names its prefix.
  const auto p = counting("pair", 50);
  EXPECT_EQ(data::parse_data_spec(p + ".bin").parts.at(0).prefix, p);
  EXPECT_EQ(data::parse_data_spec(p + ".idx").text, p);
  auto message = [](const std::string& text) {
    try {
      data::parse_data_spec(text);
    } catch (const core::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // The library names its own setting, data; a program passes its flag's name.
  EXPECT_EQ(message("0.5 A 0.5"),
            "tprimat: data blend needs weight and prefix pairs, got 3 values; pass data PREFIX, or "
            "a blend data W1 PREFIX1 W2 PREFIX2 ...");
  EXPECT_NE(message("half A 0.5 B")
                .find("data weight takes a finite decimal number (above 0 "
                      "and at most 1e+12), got 'half'"),
            std::string::npos);
  EXPECT_NE(message("0 A 1 B").find("data weight 0 is out of range (above 0"), std::string::npos);
  for (const char* text : {"0.5 A 0.5", "half A 0.5 B", "0 A 1 B"})
    EXPECT_EQ(message(text).find("--"), std::string::npos) << message(text);
  try {
    data::parse_data_spec("0.5 A 0.5", {.data = "--data"});
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_STREQ(e.what(),
                 "tprimat: --data blend needs weight and prefix pairs, got 3 values; pass --data "
                 "PREFIX, or a blend --data W1 PREFIX1 W2 PREFIX2 ...");
  }
  // Weights read as every number tprimat is given: no NaN, no hex, nothing that sums to inf.
  for (const char* w : {"nan", "inf", "0x1p-1"})
    EXPECT_NE(message(std::string(w) + " A 1 B").find("got '" + std::string(w) + "'"),
              std::string::npos)
        << w;
  EXPECT_NE(message("1e308 A 1e308 B").find("data weight 1e308 is out of range"),
            std::string::npos);
}

TEST_F(Blend, ChecksNameVocabAndSize) {
  const auto p = counting("v", 300);  // ids 0..299
  const auto spec = data::parse_data_spec(p);
  const data::DataCheck check(spec, 16, 42);
  try {
    check.check(256, "Tiny", 1);
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("holds token id 299, but Tiny has a vocabulary of 256"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(check.check(300, "Wide", 18));  // (300 - 1) / 16 = 18 samples
  try {
    check.check(300, "Wide", 19);
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is too small for one global batch: 300 tokens make 18 "
                                         "samples of seq + 1 = 17 tokens, the first global batch "
                                         "of 19 needs 19 from it; pass a smaller "
                                         "global_batch_size or seq, or a larger data set"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
  }
  try {
    check.check(300, "Wide", 19, {.global_batch_size = "GBS", .seq = "SEQ"});
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("; pass a smaller GBS or SEQ, or a larger data set"),
              std::string::npos)
        << e.what();
  }
  const data::DataCheck synthetic(data::parse_data_spec("synthetic"), 16, 42);
  EXPECT_NO_THROW(synthetic.check(2, "Any", 1000));
}

}  // namespace
