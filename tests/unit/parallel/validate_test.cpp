// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The layout rules: valid TP/PP as types and values, and the CLI's one-line messages.
#include "tprimat/parallel/validate.hpp"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#include "tprimat/model/all.hpp"

namespace tprimat::parallel {
namespace {

using model::Llama31_8B;
using model::Mistral7B;
using model::Qwen25_7B;
using model::Tiny;

// Valid TP divides heads, KV heads and the FFN: gcd(28, 4, 18944) = 4 for Qwen, not the
// seeds' "1, 2, 4, 7, 14, 28" (7 splits no KV head evenly), and gcd(32, 8, 14336) = 8 for Llama.
static_assert(std::is_same_v<ValidTp<Qwen25_7B>, Values<1, 2, 4>>);
static_assert(std::is_same_v<ValidTp<Llama31_8B>, Values<1, 2, 4, 8>>);
static_assert(std::is_same_v<ValidTp<Mistral7B>, Values<1, 2, 4, 8>>);
static_assert(std::is_same_v<ValidTp<Tiny>, Values<1, 2, 4>>);
static_assert(std::is_same_v<ValidPp<Qwen25_7B>, Values<1, 2, 4, 7, 14, 28>>);
static_assert(std::is_same_v<ValidPp<Llama31_8B>, Values<1, 2, 4, 8, 16, 32>>);

// The traits carry the numbers (so diagnostics print them) and agree with the run-time rules.
static_assert(!TpDividesKvHeads<Qwen25_7B, 8>::value);
static_assert(TpDividesHeads<Qwen25_7B, 7>::value && !TpDividesKvHeads<Qwen25_7B, 7>::value);
static_assert(TpDividesKvHeads<Llama31_8B, 8>::value);
static_assert(!PpDividesLayers<Qwen25_7B, 3>::value && PpDividesLayers<Qwen25_7B, 7>::value);
static_assert(!TpDividesHeads<Llama31_8B, 3>::value);

TEST(ParallelValidate, Divides) {
  EXPECT_TRUE(divides(1, 28));
  EXPECT_TRUE(divides(7, 28));
  EXPECT_FALSE(divides(8, 28));
  EXPECT_FALSE(divides(0, 28));
  EXPECT_FALSE(divides(-2, 28));
}

TEST(ParallelValidate, TpLimitIsTheGcd) {
  EXPECT_EQ(tp_limit(model::dims<Qwen25_7B>()), 4);
  EXPECT_EQ(tp_limit(model::dims<Llama31_8B>()), 8);
  EXPECT_EQ(tp_limit(model::dims<Mistral7B>()), 8);
  EXPECT_EQ(tp_limit(model::dims<Tiny>()), 4);
}

TEST(ParallelValidate, DivisorList) {
  EXPECT_EQ(divisor_list(4), "1, 2, 4");
  EXPECT_EQ(divisor_list(28), "1, 2, 4, 7, 14, 28");
  EXPECT_EQ(divisor_list(1), "1");
}

TEST(ParallelValidate, QwenTp8NamesKvHeadsAndTheValidValues) {
  const auto err = layout_error(model::dims<Qwen25_7B>(), 8, 1);
  ASSERT_TRUE(err.has_value());
  // 8 breaks two rules (28 heads and 4 KV heads); the message names the first broken rule, and
  // either way the fix: the valid TP values, which come from the KV heads.
  EXPECT_EQ(err->rfind("tprimat: TP must divide the ", 0), 0u) << *err;
  EXPECT_NE(err->find("TP=8 does not divide them"), std::string::npos) << *err;
  EXPECT_NE(err->find("valid TP for Qwen 2.5 7B: 1, 2, 4)"), std::string::npos) << *err;
}

TEST(ParallelValidate, QwenKvHeadRule) {
  // TP 7 divides the 28 attention heads but not the 4 KV heads.
  const auto err = layout_error(model::dims<Qwen25_7B>(), 7, 1);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(*err,
            "tprimat: TP must divide the KV heads: Qwen 2.5 7B has 4 KV heads, TP=7 does not "
            "divide them (valid TP for Qwen 2.5 7B: 1, 2, 4)");
}

TEST(ParallelValidate, SeedsWrongQwenTpValuesAreRejected) {
  // The seeds list 7, 14 and 28 as valid for Qwen; none splits its 4 KV heads.
  for (int tp : {7, 14, 28}) {
    const auto err = layout_error(model::dims<Qwen25_7B>(), tp, 1);
    ASSERT_TRUE(err.has_value()) << tp;
    EXPECT_NE(err->find("KV heads"), std::string::npos) << *err;
  }
  for (int tp : {1, 2, 4}) EXPECT_FALSE(layout_error(model::dims<Qwen25_7B>(), tp, 1)) << tp;
}

TEST(ParallelValidate, LlamaTp8IsValid) {
  EXPECT_FALSE(layout_error(model::dims<Llama31_8B>(), 8, 1).has_value());
  EXPECT_FALSE(layout_error(model::dims<Llama31_8B>(), 8, 4).has_value());
  EXPECT_FALSE(layout_error(model::dims<Mistral7B>(), 8, 1).has_value());
  EXPECT_TRUE(layout_error(model::dims<Llama31_8B>(), 16, 1).has_value());  // 8 KV heads
}

TEST(ParallelValidate, LlamaTp3NamesTheHeads) {
  const auto err = layout_error(model::dims<Llama31_8B>(), 3, 1);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(*err,
            "tprimat: TP must divide the attention heads: Llama 3.1 8B has 32 attention heads, "
            "TP=3 does not divide them (valid TP for Llama 3.1 8B: 1, 2, 4, 8)");
}

TEST(ParallelValidate, PpMustDivideTheLayersRun) {
  const auto err = layout_error(model::dims<Qwen25_7B>(), 1, 3);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(*err,
            "tprimat: PP must divide the layers: Qwen 2.5 7B runs 28 layers, PP=3 does not "
            "divide them (valid PP for 28 layers: 1, 2, 4, 7, 14, 28)");
  // A proxy depth changes what PP may be.
  EXPECT_FALSE(layout_error(model::dims<Qwen25_7B>().with_layers(6), 1, 3).has_value());
  EXPECT_TRUE(layout_error(model::dims<Qwen25_7B>().with_layers(2), 1, 4).has_value());
}

TEST(ParallelValidate, NonPositiveSizes) {
  const auto d = model::dims<Tiny>();
  EXPECT_EQ(layout_error(d, 0, 1).value(),
            "tprimat: tensor-parallel size (TP) must be at least 1; got TP=0");
  EXPECT_EQ(layout_error(d, 1, -1).value(),
            "tprimat: pipeline-parallel size (PP) must be at least 1; got PP=-1");
}

TEST(ParallelValidate, TpMustDivideTheVocabulary) {
  model::Dims d = model::dims<Tiny>();  // 8 heads, 4 KV heads, FFN 352
  d.vocab = 250;                        // 250 = 2 x 5^3: TP 4 splits the rest, not this
  const auto err = layout_error(d, 4, 1);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(*err,
            "tprimat: TP must divide the vocabulary: Tiny has a vocabulary of 250, TP=4 does not "
            "divide it (valid TP for Tiny: 1, 2)");
  EXPECT_FALSE(layout_error(d, 2, 1).has_value());
}

TEST(ParallelValidate, PpRefusesTiedEmbeddings) {
  model::Dims d = model::dims<Tiny>();
  d.tied_embeddings = true;
  EXPECT_FALSE(layout_error(d, 2, 1).has_value());
  const auto err = layout_error(d, 1, 2);
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("PP must be 1 for a model with tied embeddings"), std::string::npos) << *err;
  EXPECT_THROW(check_layout(d, 1, 2), core::InputError);
  EXPECT_NO_THROW(check_layout(d, 2, 1));
}

TEST(ParallelValidate, RuntimeRulesMatchTheTraitsEverywhere) {
  // Sweep: the run-time validator and tp_valid/pp_valid agree for every model and size.
  std::vector<model::Dims> models(std::begin(model::Models::all), std::end(model::Models::all));
  model::Dims tied = model::dims<Tiny>();
  tied.tied_embeddings = true;
  models.push_back(tied);
  for (const auto& d : models) {
    for (int tp = 1; tp <= 64; ++tp)
      for (int pp = 1; pp <= 64; ++pp) {
        const bool ok = tp_valid(d, tp) && pp_valid(d, pp);
        EXPECT_EQ(!layout_error(d, tp, pp).has_value(), ok) << d.name << " " << tp << " " << pp;
      }
  }
}

}  // namespace
}  // namespace tprimat::parallel
