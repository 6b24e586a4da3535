// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Transformer shards (TP blocks, pipeline stages) start from blocks of the single-process weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <string>

#include "tprimat/backend/cpu.hpp"
#include "tprimat/model/tiny.hpp"
#include "tprimat/train/cpu/transformer.hpp"

namespace tprimat::train {
namespace {

using Model = Transformer<backend::Cpu, float>;

const ParamTensor& find(const Model& m, const std::string& name) {
  const auto& ts = m.tensors();
  const auto it =
      std::find_if(ts.begin(), ts.end(), [&](const ParamTensor& t) { return t.name == name; });
  if (it == ts.end()) throw std::runtime_error("no tensor " + name);
  return *it;
}

// Collectives of a one-rank "group": enough to construct a shard and inspect its weights.
TensorParallelOps<float> identity_ops() {
  return {[](std::span<float>) {}, [](std::span<float>) {}};
}

TEST(TransformerShard, TensorParallelBlocksMatchTheFullModel) {
  const auto d = model::dims<model::Tiny>().with_layers(2);
  Model full(d, 1, 8, 0.02, 42);
  Shard s;
  s.tp_rank = 1;
  s.tp_size = 2;
  Model half(d, 1, 8, 0.02, 42, s, identity_ops());
  for (const auto& t : half.tensors()) {
    const auto& f = find(full, t.name);
    EXPECT_EQ(t.full_rows, f.rows) << t.name;
    EXPECT_EQ(t.full_cols, f.cols) << t.name;
    for (std::int64_t r = 0; r < t.rows; ++r)
      for (std::int64_t c = 0; c < t.cols; ++c)
        ASSERT_EQ(half.params()[t.offset + r * t.cols + c],
                  full.params()[f.offset + (r + t.row_begin) * f.cols + c + t.col_begin])
            << t.name << " [" << r << ", " << c << "]";
  }
  // Megatron's cuts: column-parallel QKV / gate / up / head, row-parallel O / down / embedding.
  EXPECT_EQ(find(half, "layers.0.attn.wq").col_begin, d.q_dim() / 2);
  EXPECT_EQ(find(half, "layers.0.attn.wk").cols, d.kv_dim() / 2);
  EXPECT_EQ(find(half, "layers.1.attn.wo").row_begin, d.q_dim() / 2);
  EXPECT_EQ(find(half, "layers.1.mlp.w_down").rows, d.ffn / 2);
  EXPECT_EQ(find(half, "embedding").rows, d.vocab / 2);
  EXPECT_EQ(find(half, "head").cols, d.vocab / 2);
  EXPECT_TRUE(find(half, "final_norm").replicated());
  EXPECT_FALSE(find(half, "layers.0.mlp.w_gate").replicated());
}

TEST(TransformerShard, PipelineStagesSplitLayersAndEnds) {
  const auto d = model::dims<model::Tiny>().with_layers(4);
  Model full(d, 1, 8, 0.02, 42);
  Shard first, last;
  first.layer_count = last.layer_count = 2;
  first.last_stage = false;
  last.layer_begin = 2;
  last.first_stage = false;
  Model a(d, 1, 8, 0.02, 42, first, {});
  Model b(d, 1, 8, 0.02, 42, last, {});
  EXPECT_EQ(a.parameter_count() + b.parameter_count(), full.parameter_count());
  EXPECT_EQ(a.tensors().front().name, "embedding");
  EXPECT_EQ(a.tensors().back().name, "layers.1.mlp.w_down");
  EXPECT_EQ(b.tensors().front().name, "layers.2.attn_norm");
  EXPECT_EQ(b.tensors().back().name, "head");
  for (const Model* m : {&a, &b})
    for (const auto& t : m->tensors()) {
      const auto& f = find(full, t.name);
      EXPECT_TRUE(std::equal(m->params().begin() + t.offset,
                             m->params().begin() + t.offset + t.size(),
                             full.params().begin() + f.offset))
          << t.name;
    }
}

TEST(TransformerShard, PipelineRejectsTiedEmbeddingsAndEmptyStages) {
  auto d = model::dims<model::Tiny>().with_layers(2);
  Shard s;
  s.stages = 2;
  s.layer_count = 1;
  s.last_stage = false;
  d.tied_embeddings = true;
  EXPECT_THROW(Model(d, 1, 8, 0.02, 42, s, {}), core::InputError);
  d.tied_embeddings = false;
  s.layer_count = 0;
  EXPECT_THROW(Model(d, 1, 8, 0.02, 42, s, {}), core::InputError);
}

}  // namespace
}  // namespace tprimat::train
