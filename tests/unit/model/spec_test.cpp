// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Architecture constants of each ModelSpec against the models' config.json, through dims<M>().
#include <gtest/gtest.h>

#include "tprimat/model/all.hpp"
#include "tprimat/model/spec.hpp"

namespace tprimat::model {
namespace {

struct NotAModel {
  static constexpr int hidden = 1;
};
static_assert(ModelSpec<Llama31_8B> && ModelSpec<Qwen25_7B> && ModelSpec<Mistral7B> &&
              ModelSpec<Tiny>);
static_assert(!ModelSpec<NotAModel>);
static_assert(!ModelSpec<int>);

TEST(ModelSpec, Llama31_8B) {
  constexpr Dims d = dims<Llama31_8B>();
  EXPECT_EQ(d.name, "Llama 3.1 8B");
  EXPECT_EQ(d.cli_name, "llama");
  EXPECT_EQ(d.hidden, 4096);
  EXPECT_EQ(d.layers, 32);
  EXPECT_EQ(d.heads, 32);
  EXPECT_EQ(d.kv_heads, 8);
  EXPECT_EQ(d.head_dim, 128);
  EXPECT_EQ(d.ffn, 14336);
  EXPECT_EQ(d.vocab, 128256);
  EXPECT_DOUBLE_EQ(d.rope_theta, 500000.0);
  EXPECT_DOUBLE_EQ(d.norm_eps, 1e-5);
  EXPECT_FALSE(d.qkv_bias);
  EXPECT_FALSE(d.tied_embeddings);
  // rope_scaling {"rope_type": "llama3", factor 8, low 1, high 4, original 8192}
  EXPECT_TRUE(d.rope_scaling.enabled());
  EXPECT_DOUBLE_EQ(d.rope_scaling.factor, 8.0);
  EXPECT_DOUBLE_EQ(d.rope_scaling.low_freq_factor, 1.0);
  EXPECT_DOUBLE_EQ(d.rope_scaling.high_freq_factor, 4.0);
  EXPECT_EQ(d.rope_scaling.original_context, 8192);
  EXPECT_EQ(d.q_dim(), 4096);
  EXPECT_EQ(d.kv_dim(), 1024);
}

TEST(ModelSpec, Qwen25_7B) {
  constexpr Dims d = dims<Qwen25_7B>();
  EXPECT_EQ(d.name, "Qwen 2.5 7B");
  EXPECT_EQ(d.cli_name, "qwen");
  EXPECT_EQ(d.hidden, 3584);
  EXPECT_EQ(d.layers, 28);
  EXPECT_EQ(d.heads, 28);
  EXPECT_EQ(d.kv_heads, 4);
  EXPECT_EQ(d.head_dim, 128);
  EXPECT_EQ(d.ffn, 18944);
  EXPECT_EQ(d.vocab, 152064);
  EXPECT_DOUBLE_EQ(d.rope_theta, 1e6);
  EXPECT_DOUBLE_EQ(d.norm_eps, 1e-6);
  EXPECT_TRUE(d.qkv_bias);
  EXPECT_FALSE(d.tied_embeddings);
  EXPECT_FALSE(d.rope_scaling.enabled());
  EXPECT_EQ(d.kv_dim(), 512);
}

TEST(ModelSpec, Mistral7B) {
  constexpr Dims d = dims<Mistral7B>();
  EXPECT_EQ(d.cli_name, "mistral");
  EXPECT_EQ(d.hidden, 4096);
  EXPECT_EQ(d.layers, 32);
  EXPECT_EQ(d.heads, 32);
  EXPECT_EQ(d.kv_heads, 8);
  EXPECT_EQ(d.ffn, 14336);
  EXPECT_EQ(d.vocab, 32768);
  EXPECT_DOUBLE_EQ(d.rope_theta, 1e6);
  EXPECT_DOUBLE_EQ(d.norm_eps, 1e-5);
  EXPECT_FALSE(d.qkv_bias);
  EXPECT_FALSE(d.rope_scaling.enabled());
}

TEST(ModelSpec, TinySplitsLikeTheBigOnes) {
  constexpr Dims d = dims<Tiny>();
  EXPECT_EQ(d.cli_name, "tiny");
  EXPECT_EQ(d.hidden, d.heads * d.head_dim);
  EXPECT_LT(d.kv_heads, d.heads);  // GQA, like every real model here
  for (int tp : {1, 2, 4}) {
    EXPECT_EQ(d.heads % tp, 0) << tp;
    EXPECT_EQ(d.kv_heads % tp, 0) << tp;
    EXPECT_EQ(d.ffn % tp, 0) << tp;
    EXPECT_EQ(d.layers % tp, 0) << tp;  // PP of the same sizes
  }
}

TEST(ModelSpec, WithLayersKeepsTheRest) {
  constexpr Dims d = dims<Qwen25_7B>().with_layers(2);
  EXPECT_EQ(d.layers, 2);
  EXPECT_EQ(d.hidden, 3584);
  EXPECT_TRUE(d.qkv_bias);
}

}  // namespace
}  // namespace tprimat::model
