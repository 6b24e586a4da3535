// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// HF checkpoints into parameter tables: names, [out, in] layout, TP/PP slicing on load, checks.
#include "tprimat/data/hf_weights.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../../support/test_models.hpp"
#include "tprimat/backend/cpu.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/model/tiny.hpp"
#include "tprimat/train/parameters.hpp"
#include "tprimat/train/cpu/transformer.hpp"

namespace fs = std::filesystem;
using namespace tprimat;
using data::WeightType;
using train::ParameterTable;
using train::Shard;
using tprimat::testing::TinyBias;
using tprimat::testing::TinyTied;

namespace {



/// Tiny with a wider FFN: the same names, other shapes.
struct TinyWide : model::Tiny {
  static constexpr std::string_view name = "TinyWide";
  static constexpr std::string_view cli_name = "tiny-wide";
  static constexpr int ffn = 384;
};
static_assert(model::ModelSpec<TinyWide>);

/// Small enough to spell out: hidden 4, 2 query heads of dim 2 on 1 KV head, FFN 6, vocab 8.
struct Micro : model::Tiny {
  static constexpr std::string_view name = "Micro";
  static constexpr std::string_view cli_name = "micro";
  static constexpr int hidden = 4;
  static constexpr int layers = 2;
  static constexpr int heads = 2;
  static constexpr int kv_heads = 1;
  static constexpr int head_dim = 2;
  static constexpr int ffn = 6;
  static constexpr int vocab = 8;
  static constexpr bool qkv_bias = true;
};
static_assert(model::ModelSpec<Micro>);

class HfWeights : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tprimat_hf_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  /// Saves the seed's random init of the whole model `d` and returns its flat buffer.
  std::vector<float> save_init(const model::Dims& d, const std::string& file, WeightType t,
                               std::uint64_t seed = 42) {
    const auto table = train::make_parameter_table(d, Shard{});
    std::vector<float> params(static_cast<std::size_t>(table.total()));
    train::init_parameters(table, 0.02, seed, params.data());
    // Norm gains and biases start at 1 and 0: perturb them so a mix-up would show.
    for (const auto& p : table.tensors)
      if (p.init != train::Init::normal)
        for (std::int64_t i = 0; i < p.size(); ++i)
          params[p.offset + i] += 0.001f * static_cast<float>((i * 7 + p.offset) % 13);
    data::save_hf_weights<float>(file, table, params, t);
    return params;
  }

  static std::vector<float> load(const model::Dims& d, Shard shard, const std::string& file,
                                 data::WeightsReport* report = nullptr) {
    const auto table = train::make_parameter_table(d, shard);
    std::vector<float> params(static_cast<std::size_t>(table.total()), -99.0f);
    const data::SafetensorsCheckpoint ck(file);
    const auto r = data::load_hf_weights<float>(ck, table, d.name, params);
    if (report != nullptr) *report = r;
    return params;
  }

  static std::string load_error(const model::Dims& d, const std::string& file) {
    try {
      (void)load(d, Shard{}, file);
    } catch (const core::InputError& e) {
      return e.what();
    }
    return "no error";
  }

  fs::path dir_;
};

// ---- naming -------------------------------------------------------------------------------

TEST(HfNames, EveryTensorOfAQwenShapedModelHasItsHfName) {
  const auto table = train::make_parameter_table(model::dims<Micro>(), Shard{});
  std::vector<std::string> names;
  for (const auto& t : table.tensors) names.push_back(data::hf_name(t.name).name);
  const std::vector<std::string> layer0 = {"model.layers.0.input_layernorm.weight",
                                           "model.layers.0.self_attn.q_proj.weight",
                                           "model.layers.0.self_attn.k_proj.weight",
                                           "model.layers.0.self_attn.v_proj.weight",
                                           "model.layers.0.self_attn.q_proj.bias",
                                           "model.layers.0.self_attn.k_proj.bias",
                                           "model.layers.0.self_attn.v_proj.bias",
                                           "model.layers.0.self_attn.o_proj.weight",
                                           "model.layers.0.post_attention_layernorm.weight",
                                           "model.layers.0.mlp.gate_proj.weight",
                                           "model.layers.0.mlp.up_proj.weight",
                                           "model.layers.0.mlp.down_proj.weight"};
  ASSERT_EQ(names.size(), 1 + 2 * layer0.size() + 2);
  EXPECT_EQ(names.front(), "model.embed_tokens.weight");
  for (std::size_t i = 0; i < layer0.size(); ++i) EXPECT_EQ(names[1 + i], layer0[i]);
  EXPECT_EQ(names[1 + layer0.size()], "model.layers.1.input_layernorm.weight");
  EXPECT_EQ(names[names.size() - 2], "model.norm.weight");
  EXPECT_EQ(names.back(), "lm_head.weight");
  // HF shapes: nn.Linear [out, in], the embedding [vocab, hidden], vectors 1-D.
  auto shape_of = [&](std::string_view ours) {
    for (const auto& t : table.tensors)
      if (t.name == ours) return data::hf_shape(t, data::hf_name(t.name));
    return std::vector<std::int64_t>{};
  };
  using S = std::vector<std::int64_t>;
  EXPECT_EQ(shape_of("embedding"), (S{8, 4}));
  EXPECT_EQ(shape_of("layers.0.attn.wq"), (S{4, 4}));
  EXPECT_EQ(shape_of("layers.0.attn.wk"), (S{2, 4}));
  EXPECT_EQ(shape_of("layers.0.attn.bk"), (S{2}));
  EXPECT_EQ(shape_of("layers.0.attn.wo"), (S{4, 4}));
  EXPECT_EQ(shape_of("layers.0.mlp.w_gate"), (S{6, 4}));
  EXPECT_EQ(shape_of("layers.0.mlp.w_down"), (S{4, 6}));
  EXPECT_EQ(shape_of("layers.0.attn_norm"), (S{4}));
  EXPECT_EQ(shape_of("head"), (S{8, 4}));
}

// ---- an HF checkpoint made tensor by tensor (not by save_hf_weights) ---------------------

/// Value of element [i, j] of the HF tensor numbered k: distinct everywhere and exact in F32.
float code(int k, std::int64_t i, std::int64_t j) { return float(k * 256 + i * 16 + j) / 8.0f; }

TEST_F(HfWeights, HandMadeHfCheckpointLoadsTransposedWhereHfIsOutIn) {
  const model::Dims d = model::dims<Micro>();
  const int h = 4, qd = 4, kvd = 2, f = 6, v = 8;
  struct T {
    std::string name;
    std::int64_t rows, cols;  // HF shape (cols 0: 1-D)
  };
  std::vector<T> hf = {
      {"model.embed_tokens.weight", v, h}, {"model.norm.weight", h, 0}, {"lm_head.weight", v, h}};
  for (int l = 0; l < 2; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    for (T t : std::vector<T>{{"input_layernorm.weight", h, 0},
                              {"self_attn.q_proj.weight", qd, h},
                              {"self_attn.k_proj.weight", kvd, h},
                              {"self_attn.v_proj.weight", kvd, h},
                              {"self_attn.q_proj.bias", qd, 0},
                              {"self_attn.k_proj.bias", kvd, 0},
                              {"self_attn.v_proj.bias", kvd, 0},
                              {"self_attn.o_proj.weight", h, qd},
                              {"post_attention_layernorm.weight", h, 0},
                              {"mlp.gate_proj.weight", f, h},
                              {"mlp.up_proj.weight", f, h},
                              {"mlp.down_proj.weight", h, f}}) {
      t.name = p + t.name;
      hf.push_back(t);
    }
  }
  hf.push_back({"model.layers.0.self_attn.rotary_emb.inv_freq", 1, 0});  // older HF files
  std::vector<std::vector<float>> values(hf.size());
  {
    data::SafetensorsWriter w(path("hand.safetensors"), WeightType::f32);
    for (std::size_t k = 0; k < hf.size(); ++k) {
      const auto& t = hf[k];
      const std::int64_t cols = t.cols == 0 ? 1 : t.cols;
      for (std::int64_t i = 0; i < t.rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) values[k].push_back(code(int(k), i, j));
      w.add(t.name, t.cols == 0 ? std::vector<std::int64_t>{t.rows} : std::vector{t.rows, t.cols},
            values[k]);
    }
    w.finish();
  }
  data::WeightsReport report;
  const auto got = load(d, Shard{}, path("hand.safetensors"), &report);
  EXPECT_EQ(report.tensors, 1 + 2 * 12 + 2);
  EXPECT_EQ(report.unexpected,
            std::vector<std::string>{"model.layers.0.self_attn.rotary_emb.inv_freq"});
  EXPECT_TRUE(report.deeper.empty());
  EXPECT_NE(report.notice("hand.safetensors")
                .find("27 tensors; ignored 1 unexpected tensor(s) "
                      "(model.layers.0.self_attn.rotary_emb.inv_freq)"),
            std::string::npos)
      << report.notice("hand.safetensors");

  const auto table = train::make_parameter_table(d, Shard{});
  for (const auto& t : table.tensors) {
    SCOPED_TRACE(t.name);
    const auto n = data::hf_name(t.name);
    int k = -1;
    for (std::size_t i = 0; i < hf.size(); ++i)
      if (hf[i].name == n.name) k = int(i);
    ASSERT_GE(k, 0);
    for (std::int64_t r = 0; r < t.rows; ++r)
      for (std::int64_t c = 0; c < t.cols; ++c) {
        // Ours [r, c] is HF [c, r] for nn.Linear weights; a [1, n] vector is HF's [n].
        const float want = n.transposed ? code(k, c, r) : n.vector ? code(k, c, 0) : code(k, r, c);
        ASSERT_EQ(got[t.offset + r * t.cols + c], want) << r << ", " << c;
      }
  }
}

// ---- save -> load -------------------------------------------------------------------------

TEST_F(HfWeights, SaveThenLoadIsExactInF32AndRoundedInBf16) {
  for (const model::Dims& d :
       {model::dims<model::Tiny>(), model::dims<TinyBias>(), model::dims<TinyTied>()}) {
    SCOPED_TRACE(std::string(d.name));
    const auto want = save_init(d, path("f32.safetensors"), WeightType::f32);
    EXPECT_EQ(load(d, Shard{}, path("f32.safetensors")), want);
    (void)save_init(d, path("bf16.safetensors"), WeightType::bf16);
    const auto got = load(d, Shard{}, path("bf16.safetensors"));
    for (std::size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(got[i], data::round_to(WeightType::bf16, want[i])) << i;
    const data::SafetensorsCheckpoint ck(path("f32.safetensors"));
    EXPECT_EQ(ck.find("lm_head.weight") != nullptr, !d.tied_embeddings)
        << "a tied model saves no lm_head.weight, as HF does";
    EXPECT_EQ(ck.find("model.layers.0.self_attn.q_proj.bias") != nullptr, d.qkv_bias);
    EXPECT_EQ(ck.files().front().metadata().at("format"), "pt");
  }
}

TEST_F(HfWeights, TpAndPpSlicingOnLoadEqualsSlicingAfterLoad) {
  for (const model::Dims& d :
       {model::dims<model::Tiny>(), model::dims<TinyBias>(), model::dims<TinyTied>()}) {
    SCOPED_TRACE(std::string(d.name));
    (void)save_init(d, path("w.safetensors"), WeightType::bf16);
    const auto whole = load(d, Shard{}, path("w.safetensors"));
    const auto full_table = train::make_parameter_table(d, Shard{});
    std::vector<Shard> shards;
    for (int tp : {2, 4})
      for (int r = 0; r < tp; ++r) shards.push_back({r, tp, 0, -1, true, true, 1});
    if (!d.tied_embeddings)  // PP stages (the CPU engine runs tied models at PP=1 only)
      for (int r = 0; r < 2; ++r) {
        shards.push_back({r, 2, 0, 2, true, false, 1});
        shards.push_back({r, 2, 2, 2, false, true, 1});
      }
    for (const Shard& s : shards) {
      SCOPED_TRACE("TP rank " + std::to_string(s.tp_rank) + " of " + std::to_string(s.tp_size) +
                   ", layers from " + std::to_string(s.layer_begin));
      const auto table = train::make_parameter_table(d, s);
      const auto part = load(d, s, path("w.safetensors"));
      ASSERT_EQ(static_cast<std::int64_t>(part.size()), table.total());
      for (const auto& t : table.tensors) {
        SCOPED_TRACE(t.name);
        const train::ParamTensor* full = nullptr;
        for (const auto& f : full_table.tensors)
          if (f.name == t.name) full = &f;
        ASSERT_NE(full, nullptr);
        for (std::int64_t r = 0; r < t.rows; ++r)
          for (std::int64_t c = 0; c < t.cols; ++c)
            ASSERT_EQ(part[t.offset + r * t.cols + c],
                      whole[full->offset + (t.row_begin + r) * full->cols + t.col_begin + c])
                << r << ", " << c;
      }
    }
  }
}

TEST_F(HfWeights, ShardLoadedFromTheSavedInitEqualsTheShardsOwnSeededInit) {
  // init_parameters promises every layout the single-process weights; a checkpoint of those
  // weights must give each TP rank the same block.
  const model::Dims d = model::dims<TinyBias>();
  const auto table1 = train::make_parameter_table(d, Shard{});
  std::vector<float> whole(static_cast<std::size_t>(table1.total()));
  train::init_parameters(table1, 0.02, 42, whole.data());
  data::save_hf_weights<float>(path("init.safetensors"), table1, whole, WeightType::f32);
  for (int r = 0; r < 2; ++r) {
    const Shard s{r, 2, 0, -1, true, true, 1};
    const auto table = train::make_parameter_table(d, s);
    std::vector<float> seeded(static_cast<std::size_t>(table.total()));
    train::init_parameters(table, 0.02, 42, seeded.data());
    EXPECT_EQ(load(d, s, path("init.safetensors")), seeded) << "rank " << r;
  }
}

TEST_F(HfWeights, ShardedCheckpointLoadsLikeOneFile) {
  const model::Dims d = model::dims<TinyBias>();
  const auto want = save_init(d, path("one.safetensors"), WeightType::f32);
  // Split the file in two shards by tensor, with the index HF writes.
  const data::SafetensorsFile one(path("one.safetensors"));
  fs::create_directories(dir_ / "sharded");
  std::vector<std::vector<float>> keep;
  keep.reserve(one.tensors().size());
  std::string map;
  {
    data::SafetensorsWriter a(path("sharded/model-00001-of-00002.safetensors"), WeightType::f32);
    data::SafetensorsWriter b(path("sharded/model-00002-of-00002.safetensors"), WeightType::f32);
    for (std::size_t i = 0; i < one.tensors().size(); ++i) {
      const auto& t = one.tensors()[i];
      keep.push_back(t.values());
      const bool first = i % 2 == 0;
      (first ? a : b).add(t.name, t.shape, keep.back());
      map += std::string(map.empty() ? "" : ", ") + "\"" + t.name + "\": \"model-0000" +
             (first ? "1" : "2") + "-of-00002.safetensors\"";
    }
    a.finish();
    b.finish();
  }
  std::ofstream(path("sharded/model.safetensors.index.json"))
      << "{\"metadata\": {}, \"weight_map\": {" << map << "}}";
  EXPECT_EQ(load(d, Shard{}, path("sharded")), want);
  const Shard s{1, 2, 0, -1, true, true, 1};
  EXPECT_EQ(load(d, s, path("sharded")), load(d, s, path("one.safetensors")));
}

TEST_F(HfWeights, LoadedWeightsGiveTheSameLossAsTheModelTheyCameFrom) {
  const model::Dims d = model::dims<TinyBias>().with_layers(2);
  const int mbs = 2, seq = 16;
  std::vector<std::int32_t> tokens(mbs * (seq + 1));
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = std::int32_t((i * 37 + 11) % 256);
  train::Transformer<backend::Cpu, float> source(d, mbs, seq, 0.02, 42);
  const auto table = train::make_parameter_table(d, Shard{});
  data::save_hf_weights<float>(path("m.safetensors"), table, source.params(), WeightType::f32);
  train::Transformer<backend::Cpu, float> target(d, mbs, seq, 0.02, 7);
  const double before = target.forward(tokens);
  const data::SafetensorsCheckpoint ck(path("m.safetensors"));
  (void)data::load_hf_weights<float>(ck, table, d.name, target.params());
  EXPECT_NE(before, source.forward(tokens));
  EXPECT_EQ(target.forward(tokens), source.forward(tokens));
}

// ---- checks against the model -------------------------------------------------------------

TEST_F(HfWeights, ShapeMismatchNamesTheTensorAndBothShapes) {
  (void)save_init(model::dims<model::Tiny>(), path("tiny.safetensors"), WeightType::bf16);
  const std::string e = load_error(model::dims<TinyWide>(), path("tiny.safetensors"));
  EXPECT_NE(e.find(path("tiny.safetensors") + ": tensor model.layers.0.mlp.gate_proj.weight has "
                                              "shape [352, 128], TinyWide needs [384, 128]"),
            std::string::npos)
      << e;
}

TEST_F(HfWeights, MissingTensorsAreNamed) {
  // Tied weights into an untied model: lm_head.weight is missing.
  (void)save_init(model::dims<TinyTied>(), path("tied.safetensors"), WeightType::f32);
  std::string e = load_error(model::dims<model::Tiny>(), path("tied.safetensors"));
  EXPECT_NE(e.find("checkpoint " + path("tied.safetensors") +
                   " has no tensor lm_head.weight, which Tiny needs (its LM head is not tied "
                   "to the embedding)"),
            std::string::npos)
      << e;
  // No biases for a Qwen-shaped model.
  (void)save_init(model::dims<model::Tiny>(), path("tiny.safetensors"), WeightType::f32);
  e = load_error(model::dims<TinyBias>(), path("tiny.safetensors"));
  EXPECT_NE(e.find("has no tensor model.layers.0.self_attn.q_proj.bias, which TinyBias needs"),
            std::string::npos)
      << e;
}

TEST_F(HfWeights, BiasesForAModelWithoutThemAreRefused) {
  (void)save_init(model::dims<TinyBias>(), path("bias.safetensors"), WeightType::f32);
  const std::string e = load_error(model::dims<model::Tiny>(), path("bias.safetensors"));
  EXPECT_NE(e.find(": tensor model.layers.0.self_attn.k_proj.bias is a projection bias, but "
                   "Tiny has none"),
            std::string::npos)
      << e;
}

TEST_F(HfWeights, DeeperCheckpointFeedsAProxyRunAndTiedHeadCopiesAreIgnored) {
  // A 4-layer checkpoint into the 2 layers a proxy run holds: layers 2, 3 are skipped, counted.
  (void)save_init(model::dims<model::Tiny>(), path("tiny.safetensors"), WeightType::f32);
  data::WeightsReport r;
  (void)load(model::dims<model::Tiny>().with_layers(2), Shard{}, path("tiny.safetensors"), &r);
  EXPECT_EQ(r.deeper.size(), 2u * 9);
  EXPECT_TRUE(r.unexpected.empty());
  EXPECT_NE(r.notice("x").find("skipped 18 tensors of layers beyond those run"), std::string::npos);
  // An untied checkpoint into a tied model: lm_head.weight is not used.
  (void)load(model::dims<TinyTied>(), Shard{}, path("tiny.safetensors"), &r);
  EXPECT_EQ(r.unexpected, std::vector<std::string>{"lm_head.weight"});
}

TEST_F(HfWeights, SavingNeedsTheWholeModel) {
  const model::Dims d = model::dims<model::Tiny>();
  const auto table = train::make_parameter_table(d, Shard{0, 2, 0, -1, true, true, 1});
  std::vector<float> p(static_cast<std::size_t>(table.total()));
  try {
    data::save_hf_weights<float>(path("x.safetensors"), table, p, WeightType::f32);
    FAIL() << "a TP block must not save as the model";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is one TP block"), std::string::npos) << e.what();
  }
}

}  // namespace
