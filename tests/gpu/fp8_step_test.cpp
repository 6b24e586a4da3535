// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Whole FP8 training steps (docs/fp8.md) on the GPU backend: against the fp32 CPU reference and
// the bf16 device step from the same weights, graph replay against eager launches, recast FP8
// copies against kept ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../support/test_models.hpp"
#include "gpu_test.hpp"
#include "tprimat/backend/cpu.hpp"
#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/fp8_gemm.hpp"  // fp8_gemm_formats(), CUDA or HIP
#include "tprimat/parallel/communicator.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/train/cpu/fp8_emulation.hpp"
#include "tprimat/train/training_step.hpp"

namespace {

using namespace tprimat;
using backend::Cpu;
using backend::Gpu;
using One = parallel::Layout<1, 1>;

/// Four layers, so the current recipe (first and last decoder layers in bf16) has FP8 layers.
struct Llama4 : tprimat::testing::LlamaNarrow {
  static constexpr int layers = 4;
};
struct Qwen4 : tprimat::testing::QwenNarrow {
  static constexpr int layers = 4;
};

struct Trace {
  std::vector<double> loss, grad_norm;
};

constexpr auto fp8 = train::PrecisionConfig::fp8_hybrid;

/// `steps` steps of M from the CPU's initial weights, fresh tokens each step: the fp32 CPU
/// reference, the bf16 device step, and the FP8 device step with and without the graph.
template <class M>
void compare_fp8(train::StepShape shape, int steps, train::Fp8Recipe recipe) {
  const std::uint64_t seed = tprimat::testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " recipe " + train::recipe_name(recipe));
  train::OptimizerConfig opt;
  opt.warmup_steps = 2;
  train::TrainingStep<Cpu, M, One> cpu(shape, opt, seed);
  const std::vector<float> initial(cpu.model().params().begin(), cpu.model().params().end());
  train::DeviceOptions bf16_options, graph_on, graph_off;
  graph_on.precision = graph_off.precision = fp8(recipe);
  graph_off.graph = false;
  train::TrainingStep<Gpu, M, One> bf16(shape, opt, seed, {}, bf16_options);
  train::TrainingStep<Gpu, M, One> gpu(shape, opt, seed, {}, graph_on);
  train::TrainingStep<Gpu, M, One> eager(shape, opt, seed, {}, graph_off);
  for (auto* t : {&bf16, &gpu, &eager}) t->engine().load_parameters(initial);

  const std::size_t per_step = std::size_t(shape.grad_accum) * shape.mbs * (shape.seq + 1);
  Trace c, b, g, e;
  for (int s = 0; s < steps; ++s) {
    const auto tokens = tprimat::testing::random_tokens(per_step, M::vocab, seed + 1000 + s);
    for (auto [trace, stats] : {std::pair{&c, cpu.run(tokens)}, std::pair{&b, bf16.run(tokens)},
                                std::pair{&g, gpu.run(tokens)}, std::pair{&e, eager.run(tokens)}}) {
      trace->loss.push_back(stats.loss);
      trace->grad_norm.push_back(stats.grad_norm);
    }
  }
  EXPECT_TRUE(gpu.engine().graph_captured());
  // FP8 against the fp32 reference: E4M3 operands carry 3 mantissa bits (relative rounding
  // error up to 2^-4 an element), E5M2 gradients 2; averaged over K-long dot products the loss
  // stays within 3e-2 relative over a few AdamW steps, the gradient norm within 1.5e-1.
  constexpr double loss_bound = 3e-2, norm_bound = 1.5e-1;
  for (int s = 0; s < steps; ++s) {
    SCOPED_TRACE("step " + std::to_string(s + 1));
    for (const Trace* t : {&g, &e}) {
      ASSERT_TRUE(std::isfinite(t->loss[s]) && std::isfinite(t->grad_norm[s]));
      EXPECT_LE(std::abs(t->loss[s] - c.loss[s]) / c.loss[s], loss_bound)
          << "fp8 " << t->loss[s] << " cpu " << c.loss[s];
      EXPECT_LE(std::abs(t->grad_norm[s] - c.grad_norm[s]) / c.grad_norm[s], norm_bound)
          << "fp8 " << t->grad_norm[s] << " cpu " << c.grad_norm[s];
    }
    // The same kernels on the same data, every reduction deterministic: identical.
    EXPECT_EQ(g.loss[s], e.loss[s]) << "graph and eager FP8 steps differ";
    EXPECT_EQ(g.grad_norm[s], e.grad_norm[s]) << "graph and eager FP8 steps differ";
    // The projections did run in FP8: the gradient norm is not the bf16 step's.
    EXPECT_NE(g.grad_norm[s], b.grad_norm[s]) << "FP8 step equals the bf16 step: no FP8 ran?";
  }
}

/// The device's scale of CPU tensor t of local layer l (DeviceTransformer::fp8_scales' layout).
float device_scale(const std::pair<std::vector<float>, std::vector<float>>& s, int layers, int l,
                   train::Fp8Tensor t) {
  const std::string name = train::fp8_tensor_name(t);
  static const std::vector<std::string> weights = {"w_q",    "w_k",  "w_v",   "w_o",
                                                   "w_gate", "w_up", "w_down"};
  static const std::vector<std::string> inputs = {"x_qkv", "x_o", "x_mlp", "x_down"};
  static const std::vector<std::string> grads = {"g_q",    "g_k",  "g_v",   "g_o",
                                                 "g_gate", "g_up", "g_down"};
  auto at = [&](const std::vector<std::string>& v) {
    return int(std::find(v.begin(), v.end(), name) - v.begin());
  };
  if (at(weights) < 7) return s.first.at(std::size_t(l * 7 + at(weights)));
  if (at(inputs) < 4) return s.first.at(std::size_t(layers * 7 + l * 4 + at(inputs)));
  return s.second.at(std::size_t(l * 7 + at(grads)));
}

/// The CPU emulation of `recipe` in this device's FP8 formats (gfx942: the fnuz pair).
train::PrecisionConfig emulation_of(train::Fp8Recipe recipe) {
  train::PrecisionConfig p = fp8(recipe);
  const backend::Fp8GemmFormats device = backend::fp8_gemm_formats();
  p.fp8.forward_format = device.forward;
  p.fp8.gradient_format = device.gradient;
  return p;
}

/// The GPU FP8 step against the CPU's emulation of the same recipe (the same casts at the same
/// points with the same scale rules, on fp32 activations where the device's are bf16).
template <class M>
void compare_with_emulation(train::StepShape shape, int steps, train::Fp8Recipe recipe) {
  const std::uint64_t seed = tprimat::testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " recipe " + train::recipe_name(recipe));
  train::OptimizerConfig opt;
  opt.warmup_steps = 2;
  train::TrainingStep<Cpu, M, One> cpu(shape, opt, seed, parallel::comm::Single{},
                                        emulation_of(recipe));
  const std::vector<float> initial(cpu.model().params().begin(), cpu.model().params().end());
  train::DeviceOptions options;
  options.precision = fp8(recipe);
  train::TrainingStep<Gpu, M, One> gpu(shape, opt, seed, {}, options);
  gpu.engine().load_parameters(initial);
  const std::size_t per_step = std::size_t(shape.grad_accum) * shape.mbs * (shape.seq + 1);
  const int layers = M::layers;
  for (int s = 0; s < steps; ++s) {
    SCOPED_TRACE("step " + std::to_string(s + 1));
    const auto tokens = tprimat::testing::random_tokens(per_step, M::vocab, seed + 1000 + s);
    const auto c = cpu.run(tokens), g = gpu.run(tokens);
    ASSERT_TRUE(std::isfinite(g.loss) && std::isfinite(g.grad_norm));
    // bf16 activations on the device against fp32 on the CPU, both quantised to FP8 at the same
    // points with (nearly) the same scales. Measured on H100 (2026-11-24, 3 tests x 3 steps):
    // loss within 2.9e-4, gradient norm within 9.1e-3; bounds 2e-3 and 3e-2 (about 3x).
    EXPECT_LE(std::abs(g.loss - c.loss) / c.loss, 2e-3) << "gpu " << g.loss << " cpu " << c.loss;
    EXPECT_LE(std::abs(g.grad_norm - c.grad_norm) / c.grad_norm, 3e-2)
        << "gpu " << g.grad_norm << " cpu " << c.grad_norm;
    std::printf("  step %d: loss gpu %.6f cpu %.6f (%.2e), grad norm gpu %.6f cpu %.6f (%.2e)\n",
                s + 1, g.loss, c.loss, std::abs(g.loss - c.loss) / c.loss, g.grad_norm,
                c.grad_norm, std::abs(g.grad_norm - c.grad_norm) / c.grad_norm);
    if (s != 0) continue;
    // After the first step both sides hold the scales the second will use: a weight's from the
    // amax of the same weights (bf16 high half against fp32 master: 2^-8, bound 1e-2), an
    // input's and a gradient's from tensors computed in bf16 against fp32, where the amax is one
    // extreme element (measured up to 6.1e-2 and 1.1e-1: bounds 1.5e-1 and 2.5e-1).
    const auto scales = gpu.engine().fp8_scales();
    double worst[3] = {0, 0, 0};
    for (int l = 0; l < layers; ++l)
      for (int t = 0; t < train::fp8_tensors_per_layer; ++t) {
        const auto tensor = train::Fp8Tensor(t);
        const float want = cpu.model().fp8().scale(l, tensor);
        const float got = device_scale(scales, layers, l, tensor);
        ASSERT_TRUE(std::isfinite(got)) << train::fp8_tensor_name(tensor);
        const double rel = std::abs(double(got) - want) / want;
        const int kind = t < 7 ? 0 : t < 11 ? 1 : 2;
        worst[kind] = std::max(worst[kind], rel);
        const double bound = kind == 0 ? 1e-2 : kind == 1 ? 1.5e-1 : 2.5e-1;
        EXPECT_LE(rel, bound) << "layer " << l << " " << train::fp8_tensor_name(tensor) << " gpu "
                              << got << " cpu " << want;
      }
    std::printf("  scales after step 1, worst relative difference: weights %.2e, inputs %.2e, "
                "gradients %.2e\n", worst[0], worst[1], worst[2]);
  }
}

/// Recast copies (a layer's weights cast at each GEMM that reads them, x_o's and x_down's
/// transposes cast again in the backward pass) against kept ones: the same bf16 tensors cast
/// with the same scales, so every step is the kept step bit for bit, in less memory.
template <class M>
void compare_recast_with_kept(train::StepShape shape, int steps, train::Fp8Recipe recipe) {
  const std::uint64_t seed = tprimat::testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " recipe " + train::recipe_name(recipe));
  train::OptimizerConfig opt;
  opt.warmup_steps = 2;
  train::DeviceOptions kept, recast;
  kept.precision = recast.precision = fp8(recipe);
  recast.precision.fp8.copies = train::Fp8Copies::recast;
  train::TrainingStep<Gpu, M, One> a(shape, opt, seed, {}, kept);
  train::TrainingStep<Gpu, M, One> b(shape, opt, seed, {}, recast);
  b.engine().load_parameters(a.engine().parameters());
  const std::size_t per_step = std::size_t(shape.grad_accum) * shape.mbs * (shape.seq + 1);
  for (int s = 0; s < steps; ++s) {
    SCOPED_TRACE("step " + std::to_string(s + 1));
    const auto tokens = tprimat::testing::random_tokens(per_step, M::vocab, seed + 1000 + s);
    const auto x = a.run(tokens), y = b.run(tokens);
    ASSERT_TRUE(std::isfinite(x.loss) && std::isfinite(x.grad_norm));
    EXPECT_EQ(x.loss, y.loss);
    EXPECT_EQ(x.grad_norm, y.grad_norm);
  }
  EXPECT_TRUE(a.engine().parameters() == b.engine().parameters()) << "weights differ";
  EXPECT_TRUE(a.engine().fp8_scales() == b.engine().fp8_scales()) << "scales differ";
  EXPECT_LT(b.engine().held_bytes(), a.engine().held_bytes());
  std::printf("  held: kept %zu bytes, recast %zu\n", a.engine().held_bytes(),
              b.engine().held_bytes());
}

TEST(GpuFp8Step, DelayedRecastCopiesAreTheKeptOnesBitForBit) {
  TPRIMAT_REQUIRE_GPU();
  compare_recast_with_kept<Llama4>({2, 64, 3, 0}, 3, train::Fp8Recipe::delayed);
}

TEST(GpuFp8Step, CurrentRecastCopiesAreTheKeptOnesBitForBit) {
  TPRIMAT_REQUIRE_GPU();
  compare_recast_with_kept<Qwen4>({1, 128, 2, 0}, 3, train::Fp8Recipe::current);
}

TEST(GpuFp8Step, DelayedLlamaMatchesTheCpuEmulation) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_emulation<Llama4>({2, 64, 2, 0}, 3, train::Fp8Recipe::delayed);
}

TEST(GpuFp8Step, CurrentLlamaMatchesTheCpuEmulation) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_emulation<Llama4>({2, 64, 2, 0}, 3, train::Fp8Recipe::current);
}

TEST(GpuFp8Step, DelayedQwenWithBiasMatchesTheCpuEmulation) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_emulation<Qwen4>({1, 128, 2, 0}, 3, train::Fp8Recipe::delayed);
}

TEST(GpuFp8Step, DelayedLlamaTracksTheReference) {
  TPRIMAT_REQUIRE_GPU();
  compare_fp8<Llama4>({2, 64, 2, 0}, 4, train::Fp8Recipe::delayed);
}

TEST(GpuFp8Step, CurrentLlamaTracksTheReference) {
  TPRIMAT_REQUIRE_GPU();
  compare_fp8<Llama4>({2, 64, 2, 0}, 4, train::Fp8Recipe::current);
}

TEST(GpuFp8Step, DelayedQwenWithBiasTracksTheReference) {
  TPRIMAT_REQUIRE_GPU();
  compare_fp8<Qwen4>({1, 128, 3, 0}, 4, train::Fp8Recipe::delayed);
}

TEST(GpuFp8Step, ShapesOffTheFp8GemmGridAreRefused) {
  TPRIMAT_REQUIRE_GPU();
  train::DeviceOptions options;
  options.precision = fp8(train::Fp8Recipe::delayed);
  // 1 x 100 tokens a micro-batch: not a multiple of 16.
  EXPECT_THROW((train::TrainingStep<Gpu, Llama4, One>({1, 100, 1, 0}, {}, 1, {}, options)),
               core::InputError);
}

}  // namespace
