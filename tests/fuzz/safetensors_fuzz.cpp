// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Fuzz harness: safetensors files (data/safetensors.hpp), opened, read, and checked against models.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "scratch_dir.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/data/hf_weights.hpp"
#include "tprimat/data/safetensors.hpp"
#include "tprimat/model/all.hpp"
#include "tprimat/train/parameters.hpp"

namespace data = tprimat::data;

// The input is the whole file. The reader maps files, so it is written to a scratch directory
// first. What `tprimat data inspect-weights [--model]` and `bench --init` do with it: open it,
// read every weight tensor, check it against each model. Bad input must end in core::InputError.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const auto& dir = tprimat::fuzz::scratch_dir();
  const auto path = dir.write("w.safetensors", std::span(bytes, size));
  try {
    const data::SafetensorsCheckpoint ckpt(path);
    for (const auto* t : ckpt.tensors()) {
      (void)data::shape_text(t->shape);
      if (t->type != data::WeightType::other) (void)t->values();
      (void)ckpt.find(t->name);
    }
    for (const auto& f : ckpt.files()) (void)f.metadata();
    for (std::string_view model : {"tiny", "qwen"}) {
      const auto dims = *tprimat::model::find(model);
      try {
        data::check_hf_weights(ckpt, tprimat::train::make_parameter_table(dims, {}), dims.name);
      } catch (const tprimat::core::InputError&) {
      }
    }
  } catch (const tprimat::core::InputError&) {
  }
  // Text that opens as JSON is also read as a sharded checkpoint's index (its weight_map may name
  // w.safetensors, these same bytes, or any other path: all are opened as inputs are).
  if (size > 0 && bytes[0] == '{') {
    const auto index = dir.write("model.safetensors.index.json", std::span(bytes, size));
    try {
      const data::SafetensorsCheckpoint ckpt(index);
      for (const auto* t : ckpt.tensors()) (void)ckpt.find(t->name);
    } catch (const tprimat::core::InputError&) {
    }
  }
  return 0;
}
