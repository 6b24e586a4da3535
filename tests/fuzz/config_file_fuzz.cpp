// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Fuzz harness: custom-strategy config JSON (bench/config_file.hpp), then the plan it feeds.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "json_depth.hpp"
#include "tprimat/bench/config_file.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/model/all.hpp"
#include "tprimat/parallel/strategy.hpp"

namespace {

namespace par = tprimat::parallel;

/// What the bench does next with a strategy (the program's cli/jobs.hpp): layout rules, then the plan on the
/// ranks the file asks for.
void plan(const tprimat::bench::ConfigStrategy& s, std::string_view model) {
  const auto dims = tprimat::model::find(model);
  if (!dims) return;
  const long long world = 1LL * s.tp * s.pp * (s.dp > 0 ? s.dp : 1);
  if (world > 1 << 20) return;  // no run has that many ranks; make_plan takes an int
  const int mbs = 1;
  const int gbs = static_cast<int>(world) * (s.grad_accum > 0 ? s.grad_accum : 1);
  par::make_plan(*dims, s.name, {s.tp, s.pp}, static_cast<int>(world), mbs, gbs, s.dp,
                 s.grad_accum);
}

}  // namespace

// Bad input must end in core::InputError (the CLI's exit code 2); anything else escaping,
// a crash, UB or a leak is a finding.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string file = "fuzz/config.json";
  nlohmann::json root;
  try {
    root = tprimat::bench::parse_config_json(text, file);
  } catch (const tprimat::core::InputError&) {
    return 0;
  }
  tprimat::fuzz::check_depth(root);
  // Every model and platform the CLI passes, without a name and with the file's first named one.
  std::string first_name = "none";
  if (root.is_object())
    if (auto it = root.find("parallelism"); it != root.end() && it->is_object() && !it->empty())
      first_name = it->begin().key();
  for (std::string_view model : {"llama", "qwen", "mistral", "tiny"})
    for (std::string_view platform : {"nvd", "amd", "cpu"})
      for (const std::string& name : {std::string(), first_name}) {
        try {
          plan(tprimat::bench::parse_config_strategy(root, file, name, model, platform), model);
        } catch (const tprimat::core::InputError&) {
        }
      }
  return 0;
}
