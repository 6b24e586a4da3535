// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// `tprimat data`: Megatron .bin/.idx pairs inspected and written; safetensors weights listed.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/core/input_file.hpp"
#include "tprimat/core/json_input.hpp"
#include "tprimat/data/hf_weights.hpp"
#include "tprimat/data/indexed_writer.hpp"
#include "tprimat/data/megatron_indexed.hpp"
#include "tprimat/data/safetensors.hpp"
#include "tprimat/model/all.hpp"
#include "tprimat/train/parameters.hpp"
#include "cli/options.hpp"

namespace tprimat::cli {

struct DataCommand {
  CLI::App* inspect = nullptr;
  CLI::App* write = nullptr;
  CLI::App* inspect_weights = nullptr;
  std::string prefix;       ///< inspect
  std::string input;        ///< write: JSONL of {"ids": [...]}
  std::string text;         ///< write: plain text, one byte per token
  std::string output;       ///< write: output prefix
  std::string dtype;        ///< write: token type name; "" picks one
  std::string weights;      ///< inspect-weights: checkpoint path
  std::string weights_for;  ///< inspect-weights --model: check against this model
};

/// Registers `tprimat data inspect|write|inspect-weights`; `cmd` must outlive parsing (CLI11
/// keeps pointers).
inline void add_data_command(CLI::App& app, DataCommand& cmd) {
  auto* data = app.add_subcommand(
      "data", "read and write Megatron .bin/.idx token data sets; list safetensors weights");
  data->require_subcommand(1);
  cmd.inspect = data->add_subcommand(
      "inspect", "print documents, tokens, dtype and min/max token of a .bin/.idx pair");
  cmd.inspect->add_option("prefix", cmd.prefix, "data set prefix (PREFIX.bin + PREFIX.idx)")
      ->required();
  cmd.write = data->add_subcommand(
      "write", "build a .bin/.idx pair from JSONL token ids or from the bytes of a text file");
  cmd.write->add_option("--input", cmd.input,
                        "JSONL file, one document per line: {\"ids\": [1, 2, ...]}");
  cmd.write->add_option("--text", cmd.text,
                        "plain-text file: its bytes are the tokens (vocab 256), one document per "
                        "paragraph (blank-line separated; the documents concatenate back to the "
                        "file byte for byte)");
  cmd.write->add_option("--output", cmd.output, "output prefix: writes PREFIX.bin and PREFIX.idx")
      ->required();
  cmd.write->add_option("--dtype", cmd.dtype,
                        "uint8, int8, int16, uint16, int32, int64, float32 or float64 (default: "
                        "uint8 for --text; for --input uint16 below id 65500, else int32)");
  cmd.inspect_weights = data->add_subcommand(
      "inspect-weights",
      "list the tensors (name, dtype, shape) of a Hugging Face safetensors checkpoint");
  cmd.inspect_weights
      ->add_option(
          "path", cmd.weights,
          "a .safetensors file, a model.safetensors.index.json, or a directory holding one")
      ->required();
  cmd.inspect_weights->add_option(
      "--model", cmd.weights_for,
      "also check the checkpoint against this model (what `tprimat bench --init` checks)");
}

namespace detail {

/// The largest token id a data set may hold: int32's.
inline constexpr std::int64_t max_token_id = INT32_MAX;

/// One document per JSONL line ({"ids": [...]}); blank lines are skipped.
inline std::vector<std::vector<std::int64_t>> jsonl_documents(const std::string& path) {
  const std::string fix = "write one {\"ids\": [1, 2, ...]} object per line";
  const std::string text =
      core::read_input_file(path, core::InputKind{"JSONL file", core::max_jsonl_bytes,
                                                  "pass a JSONL file (a larger data set: write "
                                                  "it in parts, and blend them with --data)"});
  std::vector<std::vector<std::int64_t>> docs;
  std::size_t at = 0;
  for (int n = 1; at < text.size(); ++n) {
    const std::size_t eol = std::min(text.find('\n', at), text.size());
    const std::string_view line(text.data() + at, eol - at);
    at = eol + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = path + " line " + std::to_string(n);
    core::check_json_text(line, where, fix);
    const auto j =
        nlohmann::json::parse(line, core::KeysOnce(where, fix), /*allow_exceptions=*/false);
    if (j.is_discarded()) throw core::InputError(where + " is not valid JSON", fix);
    if (!j.is_object() || !j.contains("ids") || !j["ids"].is_array())
      throw core::InputError(where + " has no \"ids\" array", fix);
    std::vector<std::int64_t> ids;
    for (const auto& v : j["ids"]) {
      if (!v.is_number_integer())
        throw core::InputError(where + ": token id " + v.dump() + " is not an integer", fix);
      // A token id indexes a vocabulary: 0 up to int32's range, which Megatron's largest dtype
      // choice (int32) and tprimat's batches hold; the largest vocabularies have ~256K ids.
      if (v.is_number_unsigned() ? v.get<std::uint64_t>() > max_token_id
                                 : v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > max_token_id)
        throw core::InputError(where + ": token id " + v.dump() + " is no vocabulary index",
                               "token ids run from 0 to " + std::to_string(max_token_id) +
                                   " (int32); fix the tokenizer's output");
      ids.push_back(v.get<std::int64_t>());
    }
    docs.push_back(std::move(ids));
  }
  return docs;
}

/// Paragraphs: a document ends after a run of blank lines, which it keeps, so that the
/// documents concatenated are the file again.
inline std::vector<std::vector<std::int64_t>> text_documents(const std::string& path) {
  const std::string text = core::read_input_file(
      path, core::InputKind{"text file", core::max_text_bytes,
                            "pass a text file (a larger one: write it in parts, and blend them "
                            "with --data)"});
  std::vector<std::vector<std::int64_t>> docs(1);
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t eol = text.find('\n', i);
    const std::size_t end = eol == std::string::npos ? text.size() : eol + 1;
    const bool blank = text.find_first_not_of(" \t\r\n", i) >= end;
    const bool next_blank = end < text.size() && text.find_first_not_of(" \t\r\n", end) >=
                                                     std::min(text.find('\n', end), text.size());
    for (std::size_t k = i; k < end; ++k)
      docs.back().push_back(static_cast<unsigned char>(text[k]));
    if (blank && !next_blank && end < text.size()) docs.emplace_back();
    i = end;
  }
  if (docs.back().empty()) docs.pop_back();
  return docs;
}

inline int inspect(const DataCommand& c) {
  const data::IndexedDataset ds(data::resolve_prefix(c.prefix));
  const auto range = ds.token_range();
  std::printf("data set   %s\n", ds.prefix().c_str());
  std::printf("files      %s (%zu bytes), %s (%zu bytes)\n", data::bin_path(ds.prefix()).c_str(),
              ds.bin_bytes(), data::idx_path(ds.prefix()).c_str(), ds.idx_bytes());
  std::printf("dtype      %s (code %d, %zu bytes per token)\n",
              std::string(data::token_type_name(ds.token_type())).c_str(),
              static_cast<int>(ds.token_type()), data::token_bytes(ds.token_type()));
  std::printf("documents  %lld\n", static_cast<long long>(ds.documents()));
  std::printf("sequences  %lld\n", static_cast<long long>(ds.sequences()));
  std::printf("tokens     %lld\n", static_cast<long long>(ds.tokens()));
  if (ds.tokens() > 0) {
    std::printf("min token  %lld\n", static_cast<long long>(range.min));
    std::printf("max token  %lld\n", static_cast<long long>(range.max));
  } else {
    std::printf("min token  n/a (no tokens)\nmax token  n/a (no tokens)\n");
  }
  return 0;
}

inline int write(const DataCommand& c) {
  if (c.input.empty() == c.text.empty())
    throw core::InputError("tprimat data write needs exactly one of --input and --text",
                           "pass --input FILE.jsonl or --text FILE");
  const bool text = !c.text.empty();
  const auto docs = text ? text_documents(c.text) : jsonl_documents(c.input);
  std::int64_t max_id = 0;
  for (const auto& d : docs)
    for (auto v : d) max_id = std::max(max_id, v);
  data::TokenType type = text ? data::TokenType::uint8 : data::default_token_type(max_id);
  if (!c.dtype.empty()) {
    const auto t = data::token_type_from_name(c.dtype);
    if (!t)
      throw core::InputError("unknown --dtype '" + core::shown(c.dtype) + "'",
                             "pick one of uint8, int8, int16, uint16, int32, int64, float32, "
                             "float64");
    type = *t;
  }
  // The writer's prefix and token_type, told as --output and --dtype.
  if (const auto why = data::prefix_problem(c.output))
    throw core::InputError("--output '" + c.output + "' " + *why,
                           "pass a prefix that ends in a file name, e.g. --output data/my_set "
                           "(writes data/my_set.bin and data/my_set.idx)");
  data::IndexedWriter w(c.output, type, "pass another --output prefix");
  std::int64_t tokens = 0;
  try {
    for (const auto& d : docs) {
      w.add_document(d);
      tokens += static_cast<std::int64_t>(d.size());
    }
  } catch (const core::SettingError& e) {
    throw with_flag_advice(e, "pass");
  }
  w.finish();
  std::printf("wrote %s and %s: %lld documents, %lld tokens, dtype %s\n",
              data::bin_path(c.output).c_str(), data::idx_path(c.output).c_str(),
              static_cast<long long>(docs.size()), static_cast<long long>(tokens),
              std::string(data::token_type_name(type)).c_str());
  return 0;
}

/// Natural order: "layers.2" before "layers.10".
inline bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && digit(a[ei])) ++ei;
      while (ej < b.size() && digit(b[ej])) ++ej;
      const auto x = std::stoull(a.substr(i, ei - i)), y = std::stoull(b.substr(j, ej - j));
      if (x != y) return x < y;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

inline int inspect_weights(const DataCommand& c) {
  const data::SafetensorsCheckpoint ck(c.weights);
  // --model first: a checkpoint that does not fit fails before anything is printed.
  std::optional<data::WeightsReport> fit;
  std::string fit_name;
  if (!c.weights_for.empty()) {
    const auto d = model::find(c.weights_for);
    if (!d)
      throw core::InputError("unknown model '" + core::shown(c.weights_for) + "'",
                             "pick one of " + model::known_names());
    fit = data::check_hf_weights(ck, train::make_parameter_table(*d, train::Shard{}), d->name);
    fit_name = std::string(d->name);
  }
  auto tensors = ck.tensors();
  std::sort(tensors.begin(), tensors.end(),
            [](auto* a, auto* b) { return natural_less(a->name, b->name); });
  std::uint64_t bytes = 0;
  for (const auto& f : ck.files()) bytes += f.file_bytes();
  std::int64_t params = 0;
  std::map<std::string, int> dtypes;
  std::size_t width = 6;
  for (const auto* t : tensors) {
    params += t->elements();
    ++dtypes[t->dtype];
    width = std::max(width, t->name.size());
  }
  std::printf("checkpoint  %s\n", ck.path().c_str());
  if (!ck.index_path().empty())
    std::printf("files       %zu shards of %s (%llu bytes)\n", ck.files().size(),
                ck.index_path().c_str(), static_cast<unsigned long long>(bytes));
  else
    std::printf("files       %s (%llu bytes)\n", ck.files().front().path().c_str(),
                static_cast<unsigned long long>(bytes));
  std::printf("tensors     %zu\n", tensors.size());
  std::printf("parameters  %lld\n", static_cast<long long>(params));
  std::string types;
  for (const auto& [d, n] : dtypes)
    types += (types.empty() ? "" : ", ") + d + " x" + std::to_string(n);
  std::printf("dtypes      %s\n", types.empty() ? "none" : types.c_str());
  std::map<std::string, std::string> metadata;  // shards usually repeat theirs
  for (const auto& f : ck.files()) metadata.insert(f.metadata().begin(), f.metadata().end());
  for (const auto& [k, v] : metadata) std::printf("metadata    %s = %s\n", k.c_str(), v.c_str());
  if (fit)
    std::printf("model       %s: all %lld tensors present with its shapes; %zu unexpected\n",
                fit_name.c_str(), static_cast<long long>(fit->tensors), fit->unexpected.size());
  std::printf("\n%-*s  %-5s  %s\n", static_cast<int>(width), "tensor", "dtype", "shape");
  for (const auto* t : tensors)
    std::printf("%-*s  %-5s  %s\n", static_cast<int>(width), t->name.c_str(), t->dtype.c_str(),
                data::shape_text(t->shape).c_str());
  return 0;
}

}  // namespace detail

/// The exit code when a data subcommand was given, else nothing. Errors are core::InputError
/// (exit 2 in main), each naming the file and the problem.
inline std::optional<int> run_data_command(const DataCommand& c) {
  if (c.inspect != nullptr && c.inspect->parsed()) return detail::inspect(c);
  if (c.write != nullptr && c.write->parsed()) return detail::write(c);
  if (c.inspect_weights != nullptr && c.inspect_weights->parsed())
    return detail::inspect_weights(c);
  return std::nullopt;
}

}  // namespace tprimat::cli
