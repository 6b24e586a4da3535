// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The whole model's weights from every rank's shard (TP blocks, pipeline stages), for saving.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "tprimat/model/spec.hpp"
#include "tprimat/train/parameters.hpp"

namespace tprimat::train {

/// The weights of the whole model as `make_parameter_table(dims, Shard{})` lays them out, on
/// every rank. Each rank passes its shard (`table`, `params`: its TP block of its stage) and its
/// index among the ranks holding the same shard (DP, times CP under context parallelism). One
/// all-reduce sum over all ranks of the whole model's size: every element has exactly one
/// contributor (replica 0; TP rank 0 for tensors every TP rank holds whole), the others add +0,
/// so the sum is the value itself, bit for bit.
template <class T, class Comm>
std::vector<float> gather_whole_model(const model::Dims& dims, const ParameterTable& table,
                                      std::span<const T> params, int tp_rank, int dp_rank,
                                      Comm& comm) {
  const ParameterTable whole = make_parameter_table(dims, Shard{});
  std::vector<float> out(static_cast<std::size_t>(whole.total()), 0.0f);
  if (dp_rank == 0) {
    for (std::size_t k = 0; k < table.all_tensors.size(); ++k) {
      if (table.local_index[k] < 0) continue;  // another stage holds it
      const ParamTensor& t = table.tensors[table.local_index[k]];
      if (t.replicated() && tp_rank != 0) continue;
      const ParamTensor& w = whole.tensors[k];  // the whole table owns every tensor, in order
      for (std::int64_t r = 0; r < t.rows; ++r) {
        const T* src = params.data() + t.offset + r * t.cols;
        float* dst = out.data() + w.offset + (t.row_begin + r) * w.cols + t.col_begin;
        std::transform(src, src + t.cols, dst, [](T v) { return static_cast<float>(v); });
      }
    }
  }
  if (comm.size() > 1) comm.all_reduce_sum(std::span<float>(out));
  return out;
}

}  // namespace tprimat::train
