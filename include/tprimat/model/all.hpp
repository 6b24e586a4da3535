// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Every model the CLI can name, and lookup of a model's Dims by its `--model` name.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "tprimat/model/llama31_8b.hpp"
#include "tprimat/model/mistral_7b.hpp"
#include "tprimat/model/qwen25_7b.hpp"
#include "tprimat/model/tiny.hpp"

namespace tprimat::model {

/// The CLI's run-time view of the models; adding a model adds one entry here.
template <class... Ms>
struct ModelList {
  static constexpr std::size_t size = sizeof...(Ms);
  static constexpr std::array<Dims, size> all{dims<Ms>()...};
  /// Calls f.template operator()<M>() for the model whose cli_name is `name`; false if none.
  template <class F>
  static bool visit(std::string_view name, F&& f) {
    return ((Ms::cli_name == name ? (f.template operator()<Ms>(), true) : false) || ...);
  }
};
using Models = ModelList<Llama31_8B, Qwen25_7B, Mistral7B, Tiny>;

inline std::optional<Dims> find(std::string_view cli_name) {
  for (const auto& d : Models::all)
    if (d.cli_name == cli_name) return d;
  return std::nullopt;
}

/// "llama, qwen, mistral, tiny" for error messages.
inline std::string known_names() {
  std::string out;
  for (const auto& d : Models::all) out += (out.empty() ? "" : ", ") + std::string(d.cli_name);
  return out;
}

}  // namespace tprimat::model
