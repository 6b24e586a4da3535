// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Test helper for `bench --init`: seeded weights as a checkpoint; a result's first loss checked.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tprimat/backend/cpu.hpp"
#include "tprimat/data/hf_weights.hpp"
#include "tprimat/data/safetensors.hpp"
#include "tprimat/data/synthetic.hpp"
#include "tprimat/model/tiny.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/train/parameters.hpp"
#include "tprimat/train/training_step.hpp"

namespace {

using namespace tprimat;

/// tiny, or Tiny with a wider FFN or QKV biases (checkpoints of a model the CLI does not run).
model::Dims dims_of(const std::string& name) {
  model::Dims d = model::dims<model::Tiny>();
  if (name == "tiny-wide")
    d.ffn = 384;
  else if (name == "tiny-bias")
    d.qkv_bias = true;
  else if (name != "tiny")
    throw std::runtime_error("unknown model " + name);
  return d;
}

double first_loss(const std::string& result) {
  std::ifstream f(result);
  const auto doc = nlohmann::json::parse(f);
  return doc.at("raw_loss_values").at(0).get<double>();
}

/// The loss of step 1 of `tprimat bench --model tiny --warmup-steps 0 --seq S --mbs M --seed
/// SEED` (gbs = mbs, one process), from `weights` when given, else from the seeded init.
double cpu_first_loss(int seq, int mbs, std::uint64_t seed, const std::string& weights) {
  train::StepShape shape;
  shape.mbs = mbs;
  shape.seq = seq;
  train::TrainingStep<backend::Cpu, model::Tiny, parallel::Layout<1, 1>> step(shape, {}, seed);
  if (!weights.empty()) {
    auto& m = step.model();
    const data::SafetensorsCheckpoint ck(weights);
    (void)data::load_hf_weights<float>(ck, train::make_parameter_table(m.dims(), m.shard()),
                                       m.dims().name, m.params());
  }
  const data::SyntheticTokens tokens(model::Tiny::vocab, seed);
  std::vector<std::int32_t> batch(static_cast<std::size_t>(mbs) * (seq + 1));
  data::fill_rank_batch(tokens, 0, mbs, 0, 1, seq, batch);
  return step.run(batch).loss;
}

/// Every weight of a checkpoint of `d`, in the whole model's table order.
std::vector<float> load_whole(const std::string& path, const model::Dims& d) {
  const auto table = train::make_parameter_table(d, train::Shard{});
  std::vector<float> params(static_cast<std::size_t>(table.total()));
  (void)data::load_hf_weights<float>(data::SafetensorsCheckpoint(path), table, "Tiny", params);
  return params;
}

/// The largest |a - b| over the whole model, and the tensor where it is.
std::pair<double, std::string> largest_difference(const std::vector<float>& a,
                                                  const std::vector<float>& b,
                                                  const model::Dims& d) {
  const auto table = train::make_parameter_table(d, train::Shard{});
  std::pair<double, std::string> worst{0.0, "none"};
  for (const auto& t : table.tensors)
    for (std::int64_t i = t.offset; i < t.offset + t.size(); ++i) {
      const double diff = std::abs(double(a[i]) - double(b[i]));
      if (!(diff <= worst.first)) worst = {diff, t.name};  // NaN counts as the worst
    }
  return worst;
}

}  // namespace

// usage:
//   tprimat_init_weights save MODEL SEED OUT.safetensors [F32|BF16|F16]
//   tprimat_init_weights first-loss RESULT.json WEIGHTS SEQ MBS SEED
//       exit 0 when the result's first loss is the CPU step's loss from WEIGHTS, exactly, and
//       differs from the loss of the seeded random init (so --init did take effect)
//   tprimat_init_weights same-first-loss A.json B.json RELATIVE_TOLERANCE
//   tprimat_init_weights same-weights A.safetensors B.safetensors MODEL ABSOLUTE_TOLERANCE
//       exit 0 when every weight of A is within the tolerance of B's
//   tprimat_init_weights trained-weights A.safetensors MODEL SEED
//       exit 0 when A's weights are not the seeded init's (training moved them)
int main(int argc, char** argv) {
  try {
    const std::vector<std::string> a(argv + 1, argv + argc);
    if (a.size() >= 4 && a[0] == "save") {
      const model::Dims d = dims_of(a[1]);
      const auto table = train::make_parameter_table(d, train::Shard{});
      std::vector<float> params(static_cast<std::size_t>(table.total()));
      train::init_parameters(table, 0.02, std::stoull(a[2]), params.data());
      const auto type = data::weight_type_from_name(a.size() > 4 ? a[4] : "F32");
      if (!type) throw std::runtime_error("unknown dtype " + a[4]);
      data::save_hf_weights<float>(a[3], table, params, *type);
      std::printf("wrote %s\n", a[3].c_str());
      return 0;
    }
    if (a.size() == 6 && a[0] == "first-loss") {
      const double got = first_loss(a[1]);
      const int seq = std::stoi(a[3]), mbs = std::stoi(a[4]);
      const std::uint64_t seed = std::stoull(a[5]);
      const double want = cpu_first_loss(seq, mbs, seed, a[2]);
      const double random = cpu_first_loss(seq, mbs, seed, "");
      std::printf("first loss %.17g, CPU step from %s %.17g, from the seed-%llu init %.17g\n", got,
                  a[2].c_str(), want, static_cast<unsigned long long>(seed), random);
      return got == want && got != random ? 0 : 1;
    }
    if (a.size() == 4 && a[0] == "same-first-loss") {
      const double x = first_loss(a[1]), y = first_loss(a[2]), tol = std::stod(a[3]);
      const double rel = std::abs(x - y) / std::abs(x);
      std::printf("first losses %.17g and %.17g: relative difference %.3g (bound %.3g)\n", x, y,
                  rel, tol);
      return rel <= tol ? 0 : 1;
    }
    if (a.size() == 5 && a[0] == "same-weights") {
      const model::Dims d = dims_of(a[3]);
      const auto [diff, where] = largest_difference(load_whole(a[1], d), load_whole(a[2], d), d);
      const double tol = std::stod(a[4]);
      std::printf("largest |difference| %.3g in %s (bound %.3g)\n", diff, where.c_str(), tol);
      return diff <= tol ? 0 : 1;
    }
    if (a.size() == 4 && a[0] == "trained-weights") {
      const model::Dims d = dims_of(a[2]);
      const auto table = train::make_parameter_table(d, train::Shard{});
      std::vector<float> init(static_cast<std::size_t>(table.total()));
      train::init_parameters(table, 0.02, std::stoull(a[3]), init.data());
      const auto [diff, where] = largest_difference(load_whole(a[1], d), init, d);
      std::printf("largest |difference| from the seeded init %.3g in %s\n", diff, where.c_str());
      return diff > 0 && std::isfinite(diff) ? 0 : 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::fprintf(stderr,
               "usage: %s save MODEL SEED OUT [DTYPE] | first-loss RESULT WEIGHTS SEQ MBS SEED | "
               "same-first-loss A B TOL | same-weights A B MODEL TOL | trained-weights A MODEL SEED\n",
               argv[0]);
  return 2;
}
