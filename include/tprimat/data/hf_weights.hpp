// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Hugging Face checkpoints (Llama/Qwen2/Mistral naming) into and out of parameter buffers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/data/safetensors.hpp"
#include "tprimat/train/parameters.hpp"

namespace tprimat::data {

/// Where one of tprimat's tensors lives in a Hugging Face checkpoint. The engine multiplies
/// x[n, in] W[in, out], so its matrices are [in, out]; HF's nn.Linear weights are [out, in]
/// (`transposed`). The embedding is [vocab, hidden] in both. Norm gains and biases are [1, n]
/// here and [n] there (`vector`).
///
/// RoPE needs no permutation: HF's Llama/Qwen2/Mistral checkpoints order q_proj/k_proj rows for
/// HF's `rotate_half`, pairing dimension i of a head with i + head_dim/2, and tprimat's RoPE
/// (backend::Cpu::rope_apply, and the CUDA kernel that matches it) uses that same pairing. (Only
/// checkpoints converted from Meta's original interleaved layout need a permutation, and HF's
/// conversion script has already applied it.) Query head h is columns [h * head_dim, +head_dim)
/// of wq, HF's rows of q_proj; GQA maps query head h to KV head h / (heads / kv_heads) in both.
struct HfTensorName {
  std::string name;         ///< e.g. "model.layers.0.self_attn.q_proj.weight"
  bool transposed = false;  ///< HF stores our [rows, cols] as [cols, rows]
  bool vector = false;      ///< HF stores our [1, n] as [n]
};

/// The HF name of the tensor tprimat calls `ours` (a train::ParamTensor name).
inline HfTensorName hf_name(std::string_view ours) {
  if (ours == "embedding") return {"model.embed_tokens.weight", false, false};
  if (ours == "final_norm") return {"model.norm.weight", false, true};
  if (ours == "head") return {"lm_head.weight", true, false};
  constexpr std::string_view layers = "layers.";
  if (ours.starts_with(layers)) {
    const auto dot = ours.find('.', layers.size());
    if (dot != std::string_view::npos) {
      const std::string pre = "model." + std::string(ours.substr(0, dot + 1));
      const std::string_view s = ours.substr(dot + 1);
      struct Row {
        std::string_view ours, hf;
        bool transposed, vector;
      };
      static constexpr Row rows[] = {
          {"attn_norm", "input_layernorm.weight", false, true},
          {"attn.wq", "self_attn.q_proj.weight", true, false},
          {"attn.wk", "self_attn.k_proj.weight", true, false},
          {"attn.wv", "self_attn.v_proj.weight", true, false},
          {"attn.bq", "self_attn.q_proj.bias", false, true},
          {"attn.bk", "self_attn.k_proj.bias", false, true},
          {"attn.bv", "self_attn.v_proj.bias", false, true},
          {"attn.wo", "self_attn.o_proj.weight", true, false},
          {"mlp_norm", "post_attention_layernorm.weight", false, true},
          {"mlp.w_gate", "mlp.gate_proj.weight", true, false},
          {"mlp.w_up", "mlp.up_proj.weight", true, false},
          {"mlp.w_down", "mlp.down_proj.weight", true, false},
      };
      for (const auto& r : rows)
        if (s == r.ours) return {pre + std::string(r.hf), r.transposed, r.vector};
    }
  }
  throw core::InputError("tensor " + std::string(ours) + " has no Hugging Face name", "");
}

/// The shape HF gives the whole of tensor `t`.
inline std::vector<std::int64_t> hf_shape(const train::ParamTensor& t, const HfTensorName& n) {
  if (n.vector) return {t.full_rows * t.full_cols};
  if (n.transposed) return {t.full_cols, t.full_rows};
  return {t.full_rows, t.full_cols};
}

/// What loading a checkpoint read and what it passed over.
struct WeightsReport {
  std::int64_t tensors = 0;             ///< tensors of the model found (and, on load, read)
  std::vector<std::string> deeper;      ///< tensors of layers past the depth run (a proxy run)
  std::vector<std::string> unexpected;  ///< tensors tprimat has no use for (e.g. rotary
                                        ///< inv_freq buffers, a tied model's lm_head copy)

  /// One line for the console and the log.
  std::string notice(const std::string& path) const {
    std::string s = "tprimat: --init " + path + ": " + std::to_string(tensors) + " tensors";
    if (!deeper.empty())
      s += "; skipped " + std::to_string(deeper.size()) + " tensors of layers beyond those run";
    if (!unexpected.empty()) {
      s += "; ignored " + std::to_string(unexpected.size()) + " unexpected tensor(s) (";
      for (std::size_t i = 0; i < unexpected.size() && i < 3; ++i)
        s += (i ? ", " : "") + unexpected[i];
      s += unexpected.size() > 3 ? ", ...)" : ")";
    }
    return s;
  }
};

namespace detail {

/// "model.layers.7.mlp.up_proj.weight" -> 7, anything else -> -1.
inline int hf_layer_of(std::string_view name) {
  constexpr std::string_view pre = "model.layers.";
  if (!name.starts_with(pre)) return -1;
  int layer = 0;
  std::size_t i = pre.size();
  if (i >= name.size() || name[i] < '0' || name[i] > '9') return -1;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i)
    layer = layer * 10 + (name[i] - '0');
  return i < name.size() && name[i] == '.' ? layer : -1;
}

}  // namespace detail

/// Checks that `ckpt` holds every tensor of the model `table` describes (all of it: every
/// pipeline stage, whole tensors whatever the TP split) under its HF name and shape, before
/// anything is read, so every rank of a job fails alike. A shape mismatch names the tensor and
/// both shapes; a missing tensor is named; QKV biases in a checkpoint for a model without them
/// are refused (they would be dropped). Tensors of layers beyond the table's depth and names
/// tprimat does not use are listed in the report, not refused.
inline WeightsReport check_hf_weights(const SafetensorsCheckpoint& ckpt,
                                      const train::ParameterTable& table,
                                      std::string_view model_name) {
  WeightsReport report;
  std::set<std::string> expected;
  int depth = 0;
  bool has_bias = false;
  for (const auto& t : table.all_tensors) {
    const HfTensorName n = hf_name(t.name);
    expected.insert(n.name);
    if (t.name.ends_with(".attn_norm")) ++depth;
    if (t.name.ends_with(".attn.bq")) has_bias = true;
    const auto* c = ckpt.find(n.name);
    if (c == nullptr)
      throw core::InputError(
          "checkpoint " + ckpt.path() + " has no tensor " + n.name + ", which " +
              std::string(model_name) + " needs" +
              (t.name == "head" ? " (its LM head is not tied to the embedding)" : ""),
          "pass a checkpoint of " + std::string(model_name) + " (Llama/Qwen2/Mistral naming)");
    const auto want = hf_shape(t, n);
    if (c->shape != want)
      throw core::InputError(c->file + ": tensor " + n.name + " has shape " + shape_text(c->shape) +
                                 ", " + std::string(model_name) + " needs " + shape_text(want),
                             "pass a checkpoint of " + std::string(model_name) +
                                 " (or the model this checkpoint is of)");
    if (c->type == WeightType::other)
      throw core::InputError(c->file + ": tensor " + n.name + " has dtype " + c->dtype +
                                 ", which tprimat does not read as weights",
                             "convert the checkpoint to BF16, F16 or F32");
    ++report.tensors;
  }
  for (const auto* c : ckpt.tensors()) {
    if (expected.count(c->name)) continue;
    const int layer = detail::hf_layer_of(c->name);
    if (!has_bias && layer >= 0 && layer < depth && c->name.ends_with("_proj.bias"))
      throw core::InputError(c->file + ": tensor " + c->name + " is a projection bias, but " +
                                 std::string(model_name) + " has none",
                             "pass a checkpoint of " + std::string(model_name) +
                                 " (Qwen2 checkpoints carry QKV biases)");
    if (layer >= depth)
      report.deeper.push_back(c->name);
    else
      report.unexpected.push_back(c->name);
  }
  return report;
}

/// Loads this shard's part of a checkpoint into `params` (table.total() values in table order):
/// each tensor reads only its TP block [row_begin, +rows) x [col_begin, +cols) of the whole
/// tensor, transposed from HF's [out, in] where needed, converted from BF16/F16/F32.
template <class T>
WeightsReport load_hf_weights(const SafetensorsCheckpoint& ckpt, const train::ParameterTable& table,
                              std::string_view model_name, std::span<T> params) {
  if (static_cast<std::int64_t>(params.size()) != table.total())
    throw core::InputError("parameter buffer of " + std::to_string(params.size()) +
                               " values for a table of " + std::to_string(table.total()),
                           "");
  WeightsReport report = check_hf_weights(ckpt, table, model_name);
  std::vector<float> run;
  for (const auto& t : table.tensors) {
    const HfTensorName n = hf_name(t.name);
    const SafetensorsTensor& c = *ckpt.find(n.name);
    T* out = params.data() + t.offset;
    if (!n.transposed) {  // our row r is a contiguous run of HF's row-major data
      run.resize(static_cast<std::size_t>(t.cols));
      for (std::int64_t r = 0; r < t.rows; ++r) {
        c.read((t.row_begin + r) * t.full_cols + t.col_begin, run);
        std::copy(run.begin(), run.end(), out + r * t.cols);
      }
    } else {  // HF row j (our column j) holds our rows contiguously
      run.resize(static_cast<std::size_t>(t.rows));
      for (std::int64_t j = 0; j < t.cols; ++j) {
        c.read((t.col_begin + j) * t.full_rows + t.row_begin, run);
        for (std::int64_t r = 0; r < t.rows; ++r) out[r * t.cols + j] = static_cast<T>(run[r]);
      }
    }
  }
  return report;
}

/// Saves a whole model (one process: TP=1, every pipeline stage) in HF naming and layout, so
/// `--init` and Hugging Face tools read it back. A tied model writes no lm_head.weight, as HF
/// does. Values are rounded to `type` (round to nearest even for BF16/F16).
template <class T>
void save_hf_weights(const std::string& path, const train::ParameterTable& table,
                     std::span<const T> params, WeightType type) {
  if (table.tensors.size() != table.all_tensors.size())
    throw core::InputError("saving weights needs the whole model: this table holds one stage",
                           "save from a single-process (TP=1, PP=1) model");
  for (const auto& t : table.tensors)
    if (!t.replicated())
      throw core::InputError("saving weights needs the whole model: " + t.name + " is one TP block",
                             "save from a single-process (TP=1, PP=1) model");
  if (static_cast<std::int64_t>(params.size()) != table.total())
    throw core::InputError("parameter buffer of " + std::to_string(params.size()) +
                               " values for a table of " + std::to_string(table.total()),
                           "");
  SafetensorsWriter w(path, type);
  w.metadata("format", "pt");  // what HF transformers expects of a PyTorch checkpoint
  for (const auto& t : table.tensors) {
    const HfTensorName n = hf_name(t.name);
    const T* p = params.data() + t.offset;
    w.add(n.name, hf_shape(t, n), [p, t, transposed = n.transposed](std::span<float> out) {
      for (std::int64_t r = 0; r < t.rows; ++r)
        for (std::int64_t c = 0; c < t.cols; ++c)
          out[transposed ? c * t.rows + r : r * t.cols + c] = static_cast<float>(p[r * t.cols + c]);
    });
  }
  w.finish();
}

}  // namespace tprimat::data
