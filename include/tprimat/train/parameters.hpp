// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The parameter table of a model shard (names, shapes, TP blocks, flat offsets) and its init.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tprimat/model/projection.hpp"
#include "tprimat/model/spec.hpp"

namespace tprimat::train {

using model::Projection;

/// How a parameter tensor starts: matrices normal(0, init_std), norm gains 1, biases 0.
enum class Init { normal, ones, zeros };

/// How tensor parallelism cuts a parameter: not at all (replicated on every TP rank: norm
/// gains), by rows (row-parallel O and down, vocab-parallel embedding) or by columns
/// (column-parallel QKV, gate/up, their biases, the untied LM head).
enum class Split { none, rows, cols };

/// One parameter tensor inside the flat parameter buffer (row-major [rows, cols]). Under tensor
/// parallelism it is this rank's block [row_begin, +rows) x [col_begin, +cols) of the full
/// [full_rows, full_cols] tensor.
struct ParamTensor {
  std::string name;         ///< e.g. "layers.0.attn.wq"
  std::int64_t offset = 0;  ///< first element in the flat buffer
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  bool decay = true;  ///< AdamW weight decay applies (matrices yes; norm gains, biases no)
  Init init = Init::normal;
  Split split = Split::none;
  std::int64_t full_rows = 0;
  std::int64_t full_cols = 0;
  std::int64_t row_begin = 0;
  std::int64_t col_begin = 0;
  std::int64_t size() const { return rows * cols; }
  /// True when every TP rank holds the same copy (its gradient must be counted once).
  bool replicated() const { return rows == full_rows && cols == full_cols; }
};

/// The part of the model this rank holds: TP rank tp_rank of tp_size (Megatron TP), and the
/// pipeline stage's layers [layer_begin, layer_begin + layer_count) (-1: all) of `stages` with
/// the embedding on the first stage and final norm + head + loss on the last. `slots`
/// micro-batches can be in flight at once (1F1B keeps up to PP - stage of them), each with its
/// activations (split by sequence_parallel).
struct Shard {
  int tp_rank = 0;
  int tp_size = 1;
  int layer_begin = 0;
  int layer_count = -1;
  bool first_stage = true;
  bool last_stage = true;
  int slots = 1;
  int stages = 1;
  int stage = 0;  ///< this stage's index in [0, stages)
  /// Megatron's sequence parallelism (TP > 1 only): the residual stream, the norms and the
  /// stage's input and output hold token rows [tp_rank n / TP, +n / TP) of the micro-batch's n.
  bool sequence_parallel = false;
  /// Context parallelism: this rank holds the tokens parallel::ContextSplit gives CP rank
  /// cp_rank of cp_size, and holds the whole layer (CP splits tokens, not weights).
  int cp_rank = 0;
  int cp_size = 1;
};

/// Offsets of one layer's tensors in the flat buffers; bias offsets -1 without qkv_bias.
struct LayerParams {
  std::int64_t attn_norm = -1, bq = -1, bk = -1, bv = -1, mlp_norm = -1;
  std::array<std::int64_t, model::projection_count> projections{};  ///< model::projections' order

  /// The offset of projection weight `w` (`lp[wq]` after `using enum Projection`).
  std::int64_t operator[](Projection w) const { return projections[model::index_of(w)]; }
};

/// Where every parameter of one shard lives in the flat parameter (and gradient) buffer, in the
/// order every backend uses: embedding, per layer [attn_norm, wq, wk, wv, (bq, bk, bv), wo,
/// mlp_norm, w_gate, w_up, w_down], final_norm, head (absent when tied). Shared by the CPU and
/// device engines, so a CPU model's buffer can be copied straight into a GPU one.
struct ParameterTable {
  std::vector<ParamTensor> tensors;  ///< this shard's tensors, in buffer order
  /// Every tensor of the whole model in creation order, for initialisation: index into
  /// `tensors` where this shard holds it, -1 where another stage does (its draws are skipped).
  std::vector<ParamTensor> all_tensors;
  std::vector<int> local_index;
  std::vector<LayerParams> layers;  ///< this stage's layers
  std::int64_t embedding = -1, final_norm = -1, head = -1;  ///< -1 where another stage holds it

  /// Elements of the flat buffer.
  std::int64_t total() const {
    return tensors.empty() ? 0 : tensors.back().offset + tensors.back().size();
  }
};

namespace detail {

inline std::int64_t add_tensor(ParameterTable& t, const Shard& shard, std::string name,
                               std::int64_t rows, std::int64_t cols, Init init, Split split,
                               bool owned) {
  const int tp = shard.tp_size, r = shard.tp_rank;
  ParamTensor p;
  p.name = std::move(name);
  p.offset = t.total();
  p.full_rows = rows;
  p.full_cols = cols;
  p.rows = split == Split::rows ? rows / tp : rows;
  p.cols = split == Split::cols ? cols / tp : cols;
  p.row_begin = split == Split::rows ? p.rows * r : 0;
  p.col_begin = split == Split::cols ? p.cols * r : 0;
  p.split = tp > 1 ? split : Split::none;
  // Only matrices decay: norm gains and biases are excluded, as Megatron and the seeds do.
  p.decay = init == Init::normal;
  p.init = init;
  t.all_tensors.push_back(p);
  t.local_index.push_back(owned ? static_cast<int>(t.tensors.size()) : -1);
  if (!owned) return -1;
  t.tensors.push_back(std::move(p));
  return t.tensors.back().offset;
}

}  // namespace detail

/// The table of the part `shard` of a model with dims `d` (dims and shard already validated).
inline ParameterTable make_parameter_table(const model::Dims& d, const Shard& shard) {
  ParameterTable t;
  const int local_layers = shard.layer_count < 0 ? d.layers : shard.layer_count;
  const std::int64_t h = d.hidden, qd = d.q_dim(), kvd = d.kv_dim(), v = d.vocab;
  t.embedding = detail::add_tensor(t, shard, "embedding", v, h, Init::normal, Split::rows,
                                   shard.first_stage);
  for (int l = 0; l < d.layers; ++l) {
    const std::string pre = "layers." + std::to_string(l) + ".";
    const bool mine = l >= shard.layer_begin && l < shard.layer_begin + local_layers;
    LayerParams lp;
    auto add = [&](std::string name, std::int64_t rows, std::int64_t cols, Init init,
                   Split split = Split::none) {
      return detail::add_tensor(t, shard, pre + name, rows, cols, init, split, mine);
    };
    auto add_projection = [&](Projection w) {
      const model::WeightShape shape = model::projection_shape(d, w);
      const Split split = model::tp_split(w) == model::TpSplit::outputs ? Split::cols : Split::rows;
      lp.projections[model::index_of(w)] =
          add(std::string(model::projection_name(w)), shape.in, shape.out, Init::normal, split);
    };
    using enum Projection;
    lp.attn_norm = add("attn_norm", 1, h, Init::ones);
    for (Projection w : {wq, wk, wv}) add_projection(w);
    if (d.qkv_bias) {
      lp.bq = add("attn.bq", 1, qd, Init::zeros, Split::cols);
      lp.bk = add("attn.bk", 1, kvd, Init::zeros, Split::cols);
      lp.bv = add("attn.bv", 1, kvd, Init::zeros, Split::cols);
    }
    add_projection(wo);
    lp.mlp_norm = add("mlp_norm", 1, h, Init::ones);
    for (Projection w : {w_gate, w_up, w_down}) add_projection(w);
    if (mine) t.layers.push_back(lp);
  }
  t.final_norm = detail::add_tensor(t, shard, "final_norm", 1, h, Init::ones, Split::none,
                                    shard.last_stage);
  // A tied head reads the embedding matrix transposed; otherwise it is its own [hidden, vocab].
  t.head = d.tied_embeddings ? t.embedding
                             : detail::add_tensor(t, shard, "head", h, v, Init::normal,
                                                  Split::cols, shard.last_stage);
  return t;
}

/// Writes the initial weights of the table's tensors into `params` (table.total() elements):
/// matrices normal(0, init_std), norm gains 1, biases 0. Draws in double, in tensor order, so
/// float and double models start from the same weights; a TP shard draws every value of the
/// full tensor and keeps its block, and a pipeline stage draws (and drops) the other stages'
/// values, so every layout starts from the single-process model's weights for the same seed.
template <class T>
void init_parameters(const ParameterTable& table, double init_std, std::uint64_t seed,
                     T* params) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, init_std);
  for (std::size_t k = 0; k < table.all_tensors.size(); ++k) {
    const auto& t = table.all_tensors[k];
    const bool mine = table.local_index[k] >= 0;
    T* w = mine ? params + table.tensors[table.local_index[k]].offset : nullptr;
    for (std::int64_t i = 0; i < t.full_rows; ++i)
      for (std::int64_t j = 0; j < t.full_cols; ++j) {
        const T value = t.init == Init::normal ? static_cast<T>(normal(rng))
                                               : (t.init == Init::ones ? T(1) : T(0));
        const std::int64_t r = i - t.row_begin, c = j - t.col_begin;
        if (mine && r >= 0 && r < t.rows && c >= 0 && c < t.cols) w[r * t.cols + c] = value;
      }
  }
}

}  // namespace tprimat::train
