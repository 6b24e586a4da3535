// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Parameter and FLOP counts against the published totals and the PaLM formula worked by hand.
#include <gtest/gtest.h>

#include <cstdint>

#include "tprimat/model/all.hpp"
#include "tprimat/model/counts.hpp"

namespace tprimat::model {
namespace {

constexpr Dims llama = dims<Llama31_8B>();
constexpr Dims qwen = dims<Qwen25_7B>();
constexpr Dims mistral = dims<Mistral7B>();
constexpr Dims tiny = dims<Tiny>();

// The published totals (safetensors parameter counts on the model cards), checked at compile
// time too: a wrong constant in a model struct fails the build of this test.
static_assert(total_params(llama) == 8'030'261'248);
static_assert(total_params(qwen) == 7'615'616'512);
static_assert(total_params(mistral) == 7'248'023'552);

TEST(ModelCounts, PublishedTotals) {
  EXPECT_EQ(total_params(llama), 8'030'261'248);
  EXPECT_EQ(total_params(qwen), 7'615'616'512);
  EXPECT_EQ(total_params(mistral), 7'248'023'552);
}

TEST(ModelCounts, LlamaLayerByHand) {
  // q 4096x4096, k and v 4096x1024 each, o 4096x4096, gate/up/down 3 x 4096x14336, 2 norms.
  const std::int64_t attn = 4096LL * 4096 + 2LL * 4096 * 1024 + 4096LL * 4096;  // 41'943'040
  const std::int64_t mlp = 3LL * 4096 * 14336;                                  // 176'160'768
  EXPECT_EQ(layer_params(llama), attn + mlp + 2 * 4096);
  EXPECT_EQ(layer_params(llama), 218'112'000);
  EXPECT_EQ(layer_params(mistral), 218'112'000);  // same block as Llama
}

TEST(ModelCounts, QwenLayerHasQkvBias) {
  // 3584 hidden, 28 heads x 128, 4 KV heads x 128 = 512, FFN 18944; bias on q, k, v.
  const std::int64_t weights = 3584LL * 3584 + 2LL * 3584 * 512 + 3584LL * 3584 + 3LL * 3584 * 18944;
  const std::int64_t bias = 3584 + 2 * 512;
  EXPECT_EQ(layer_params(qwen), weights + bias + 2 * 3584);
  EXPECT_EQ(layer_params(qwen), 233'057'792);
}

TEST(ModelCounts, EmbeddingAndHead) {
  EXPECT_EQ(embedding_params(llama), 128256LL * 4096);
  EXPECT_EQ(head_params(llama), 128256LL * 4096);  // untied
  EXPECT_EQ(embedding_params(qwen), 152064LL * 3584);
  EXPECT_EQ(embedding_params(mistral), 32768LL * 4096);
  Dims tied = tiny;
  tied.tied_embeddings = true;
  EXPECT_EQ(head_params(tied), 0);
  EXPECT_EQ(total_params(tied), total_params(tiny) - embedding_params(tiny));
}

TEST(ModelCounts, MatmulParamsDropOnlyTheInputEmbedding) {
  EXPECT_EQ(matmul_params(llama), 8'030'261'248 - 128256LL * 4096);
  EXPECT_EQ(matmul_params(llama), 7'504'924'672);
  EXPECT_EQ(matmul_params(qwen), 7'070'619'136);
  EXPECT_EQ(matmul_params(mistral), 7'113'805'824);
  // Tied: the one matrix is also the LM head, so it stays.
  Dims tied = tiny;
  tied.tied_embeddings = true;
  EXPECT_EQ(matmul_params(tied), total_params(tied));
}

TEST(ModelCounts, PalmFlopsPerTokenLlamaSeq2048) {
  // 6 x P_matmul + 12 x L x H x Dh x S = 6 x 7'504'924'672 + 12 x 32 x 32 x 128 x 2048.
  const double by_hand = 6.0 * 7'504'924'672.0 + 12.0 * 32 * 32 * 128 * 2048;
  EXPECT_DOUBLE_EQ(by_hand, 48'250'773'504.0);
  EXPECT_DOUBLE_EQ(flops_per_token(llama, 2048), by_hand);
  // The attention term grows linearly with the sequence.
  EXPECT_DOUBLE_EQ(flops_per_token(llama, 4096) - flops_per_token(llama, 2048),
                   12.0 * 32 * 32 * 128 * 2048);
  EXPECT_DOUBLE_EQ(flops_per_token(qwen, 2048), 44'889'965'568.0);
}

TEST(ModelCounts, CausalCountHalvesTheAttentionTermByHand) {
  // Llama 3.1 8B: P_matmul = 8,030,261,248 - 128256 x 4096 = 7,504,924,672, so 6P =
  // 45,029,548,032; attention 12 x 32 layers x 32 heads x 128 x S.
  const double six_p = 6.0 * 7'504'924'672;
  EXPECT_DOUBLE_EQ(full_attention_flops_per_token(llama, 8192), 12'884'901'888.0);
  EXPECT_DOUBLE_EQ(flops_per_token(llama, 8192), six_p + 12'884'901'888.0);  // 57,914,449,920
  EXPECT_DOUBLE_EQ(flops_per_token_causal(llama, 8192), six_p + 6'442'450'944.0);
  // At seq 8192 attention is about 22% of the PaLM count: causal is about 0.89 of it.
  EXPECT_NEAR(full_attention_flops_per_token(llama, 8192) / flops_per_token(llama, 8192), 0.2225,
              5e-4);
  EXPECT_NEAR(flops_per_token_causal(llama, 8192) / flops_per_token(llama, 8192), 0.8888, 5e-4);
  // At 131072 tokens attention is most of the step: causal is 0.59 of PaLM's count.
  EXPECT_DOUBLE_EQ(flops_per_token_causal(llama, 131072), six_p + 103'079'215'104.0);
  EXPECT_NEAR(flops_per_token_causal(llama, 131072) / flops_per_token(llama, 131072), 0.5896,
              5e-4);
  static_assert(flops_per_token_causal(tiny, 256) < flops_per_token(tiny, 256));
}

TEST(ModelCounts, SixNIsReportedBesidePalm) {
  EXPECT_DOUBLE_EQ(flops_per_token_6n(llama), 6.0 * 8'030'261'248);
  EXPECT_DOUBLE_EQ(flops_per_token_6n(qwen), 6.0 * 7'615'616'512);
  // For Llama at 2048 the two differ: 6N counts the embedding lookup, PaLM counts attention.
  EXPECT_NE(flops_per_token_6n(llama), flops_per_token(llama, 2048));
}

TEST(ModelCounts, WithLayersScalesOnlyTheBlocks) {
  const Dims two = llama.with_layers(2);
  EXPECT_EQ(two.layers, 2);
  EXPECT_EQ(total_params(two), 2 * embedding_params(llama) + 2 * layer_params(llama) + 4096);
  EXPECT_EQ(tiny.with_layers(4).layers, Tiny::layers);
}

TEST(ModelCounts, TinyIsSmall) {
  EXPECT_EQ(layer_params(tiny), 184'576);
  EXPECT_EQ(total_params(tiny), 803'968);
}

}  // namespace
}  // namespace tprimat::model
