// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// One safetensors checkpoint loaded by the CPU and the GPU TrainingStep: the same first-step loss.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "../support/test_models.hpp"
#include "gpu_test.hpp"
#include "tprimat/backend/cpu.hpp"
#include "tprimat/backend/gpu.hpp"
#include "tprimat/data/hf_weights.hpp"
#include "tprimat/data/safetensors.hpp"
#include "tprimat/model/qwen25_7b.hpp"
#include "tprimat/model/tiny.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/train/parameters.hpp"
#include "tprimat/train/training_step.hpp"

namespace {

using namespace tprimat;
using backend::Cpu;
using backend::Gpu;
using One = parallel::Layout<1, 1>;
using tprimat::testing::QwenNarrow;
using tprimat::testing::random_tokens;
using tprimat::testing::TinyTied;




/// Writes a BF16 checkpoint of M's seeded init (norm gains and biases moved off 1 and 0, so a
/// mix-up shows), loads it into a CPU and a GPU step built from two other seeds, and compares
/// their first-step losses on the same tokens.
template <class M>
void same_first_loss(train::StepShape shape) {
  const std::uint64_t seed = tprimat::testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto file =
      std::filesystem::temp_directory_path() / ("tprimat_gpu_init_" + std::to_string(::getpid()) +
                                                "_" + std::string(M::cli_name) + ".safetensors");
  const model::Dims d = model::dims<M>();
  const auto whole = train::make_parameter_table(d, train::Shard{});
  std::vector<float> weights(static_cast<std::size_t>(whole.total()));
  train::init_parameters(whole, 0.02, seed, weights.data());
  std::mt19937_64 rng(seed + 1);
  std::normal_distribution<float> jitter(0.0f, 0.05f);
  for (const auto& t : whole.tensors)
    if (t.init != train::Init::normal)
      for (std::int64_t i = 0; i < t.size(); ++i) weights[t.offset + i] += jitter(rng);
  data::save_hf_weights<float>(file.string(), whole, weights, data::WeightType::bf16);
  const data::SafetensorsCheckpoint ckpt(file.string());

  train::OptimizerConfig opt;
  train::TrainingStep<Cpu, M, One> cpu(shape, opt, seed + 2);
  {
    auto& m = cpu.model();
    (void)data::load_hf_weights<float>(ckpt, train::make_parameter_table(m.dims(), m.shard()),
                                       M::name, m.params());
  }
  train::TrainingStep<Gpu, M, One> gpu(shape, opt, seed + 3);
  std::vector<float> host(static_cast<std::size_t>(gpu.engine().parameter_count()));
  (void)data::load_hf_weights<float>(ckpt, gpu.engine().table(), M::name, host);
  gpu.engine().load_parameters(host);
  std::filesystem::remove(file);

  // Both engines hold the checkpoint's values, in the one table order they share.
  const std::vector<float> on_cpu(cpu.model().params().begin(), cpu.model().params().end());
  ASSERT_EQ(on_cpu, host);
  EXPECT_EQ(gpu.engine().parameters(), host) << "fp32 master weights on the device";

  const auto tokens = random_tokens(std::size_t(shape.grad_accum) * shape.mbs * (shape.seq + 1),
                                    M::vocab, seed + 4);
  const double c = cpu.run(tokens).loss, g = gpu.run(tokens).loss;
  ASSERT_TRUE(std::isfinite(g));
  // Bound 2e-2 relative: bf16 GEMM operands and activations on the GPU against the fp32 CPU
  // reference, from identical (bf16-representable) weights, one forward pass.
  EXPECT_LE(std::abs(g - c) / std::abs(c), 2e-2) << "gpu " << g << " cpu " << c;
}

TEST(GpuInitCheckpoint, TinySameFirstLossOnCpuAndGpu) {
  TPRIMAT_REQUIRE_GPU();
  same_first_loss<model::Tiny>({2, 256, 1, 0});
}

TEST(GpuInitCheckpoint, TiedEmbeddingsSameFirstLossOnCpuAndGpu) {
  TPRIMAT_REQUIRE_GPU();
  same_first_loss<TinyTied>({2, 128, 2, 0});
}

TEST(GpuInitCheckpoint, NarrowQwenWithBiasSameFirstLossOnCpuAndGpu) {
  TPRIMAT_REQUIRE_GPU();
  same_first_loss<QwenNarrow>({1, 64, 1, 0});
}

}  // namespace
