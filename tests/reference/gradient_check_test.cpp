// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Central finite differences in fp64 against the analytic backward, for every parameter tensor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tprimat/backend/cpu.hpp"
#include "tprimat/model/spec.hpp"
#include "tprimat/model/tiny.hpp"
#include "tprimat/train/cpu/transformer.hpp"

namespace {

using namespace tprimat;

/// Test-local model exercising the paths Tiny does not: Qwen's QKV bias and Llama 3.1's "llama3"
/// RoPE scaling. With head_dim 8, theta 1e4 and original context 64 the four wavelengths
/// (6.3, 63, 628, 6283) land in all three branches of the rule (kept, smoothed, scaled).
struct BiasRopeModel {
  static constexpr std::string_view name = "bias+llama3-rope test model";
  static constexpr std::string_view cli_name = "test";
  static constexpr int hidden = 32;
  static constexpr int layers = 2;
  static constexpr int heads = 4;
  static constexpr int kv_heads = 2;
  static constexpr int head_dim = 8;
  static constexpr int ffn = 48;
  static constexpr int vocab = 40;
  static constexpr double rope_theta = 10000.0;
  static constexpr model::RopeScaling rope_scaling{8.0, 1.0, 4.0, 64};
  static constexpr double norm_eps = 1e-5;
  static constexpr bool qkv_bias = true;
  static constexpr bool tied_embeddings = false;
};
static_assert(model::ModelSpec<BiasRopeModel>);

using Model = train::Transformer<backend::Cpu, double>;

struct CheckResult {
  double worst_rel = 0;
  std::string worst_where;
  int checked = 0;
};

/// Checks `samples` entries of every tensor (first, last, and random ones) of model `d` at
/// mbs x seq. Weights are re-drawn around their init (matrices std 0.3, gains 1 +- 0.3, biases
/// std 0.3) so the softmaxes, norms and SwiGLU are well away from their linear regime and no
/// gradient is trivially small.
/// Error per entry: |a - n| / max(|a|, |n|, 1e-4), a analytic, n the fourth-order central
/// difference (8 (L(w+h) - L(w-h)) - (L(w+2h) - L(w-2h))) / 12h with h = 1e-4: truncation
/// O(h^4) ~ 1e-16, fp64 round-off ~ 1e-16 * L / h ~ 1e-11. The 1e-4 floor makes entries with
/// tiny gradients pass on an absolute error below 1e-10.
CheckResult gradient_check(const model::Dims& d, int mbs, int seq, int samples,
                           std::uint64_t seed) {
  Model m(d, mbs, seq, 0.3, seed);
  std::mt19937_64 rng(seed + 1);
  std::normal_distribution<double> noise(0.0, 0.3);
  auto params = m.params();
  for (const auto& t : m.tensors())
    for (std::int64_t i = 0; i < t.size(); ++i) {
      double& w = params[t.offset + i];
      if (t.init == train::Init::ones) w = 1.0 + noise(rng);
      if (t.init == train::Init::zeros) w = noise(rng);
    }
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(mbs) * (seq + 1));
  std::uniform_int_distribution<int> tok(0, d.vocab - 1);
  for (auto& x : tokens) x = tok(rng);

  const double scale = 1.0 / (mbs * seq);  // loss = mean over target tokens, as TrainingStep
  m.zero_grads();
  const double loss = scale * m.forward_backward(tokens, scale);
  EXPECT_TRUE(std::isfinite(loss));
  const std::vector<double> analytic(m.grads().begin(), m.grads().end());

  const double h = 1e-4;
  CheckResult r;
  for (const auto& t : m.tensors()) {
    std::vector<std::int64_t> idx{0, t.size() - 1};
    std::uniform_int_distribution<std::int64_t> pick(0, t.size() - 1);
    while (static_cast<int>(idx.size()) < samples) idx.push_back(pick(rng));
    double tensor_max = 0;
    for (std::int64_t i = 0; i < t.size(); ++i)
      tensor_max = std::max(tensor_max, std::abs(analytic[t.offset + i]));
    // A tensor whose gradient vanished would pass vacuously.
    EXPECT_GT(tensor_max, 1e-4) << t.name << " has an all-but-zero gradient";
    for (const std::int64_t i : idx) {
      double& w = params[t.offset + i];
      const double saved = w;
      auto loss_at = [&](double delta) {
        w = saved + delta;
        return scale * m.forward(tokens);
      };
      const double numeric =
          (8 * (loss_at(h) - loss_at(-h)) - (loss_at(2 * h) - loss_at(-2 * h))) / (12 * h);
      w = saved;
      const double a = analytic[t.offset + i];
      const double rel = std::abs(a - numeric) / std::max({std::abs(a), std::abs(numeric), 1e-4});
      EXPECT_LT(rel, 1e-6) << t.name << "[" << i << "] analytic " << a << " numeric " << numeric;
      ++r.checked;
      if (rel > r.worst_rel) {
        r.worst_rel = rel;
        r.worst_where = t.name + "[" + std::to_string(i) + "]";
      }
    }
  }
  return r;
}

TEST(GradientCheck, TinyEveryTensor) {
  const model::Dims d = model::dims<model::Tiny>().with_layers(2);
  const auto r = gradient_check(d, 2, 9, 6, 11);
  EXPECT_EQ(r.checked, 6 * (1 + 2 * 9 + 2));  // embedding, 9 tensors per layer, final norm, head
  RecordProperty("worst_relative_error", std::to_string(r.worst_rel));
  std::printf("Tiny: %d entries, worst relative error %.3g at %s\n", r.checked, r.worst_rel,
              r.worst_where.c_str());
}

TEST(GradientCheck, QkvBiasAndLlama3RopeEveryTensor) {
  const model::Dims d = model::dims<BiasRopeModel>();
  ASSERT_TRUE(d.qkv_bias);
  ASSERT_TRUE(d.rope_scaling.enabled());
  // seq 20 > the smallest scaled wavelength's effect is visible; positions up to 19 rotate the
  // high-frequency pairs through several turns.
  const auto r = gradient_check(d, 2, 20, 8, 5);
  EXPECT_EQ(r.checked, 8 * (1 + 2 * 12 + 2));  // 12 tensors per layer with q/k/v biases
  std::printf("bias+llama3 rope: %d entries, worst relative error %.3g at %s\n", r.checked,
              r.worst_rel, r.worst_where.c_str());
}

TEST(GradientCheck, TiedEmbeddings) {
  model::Dims d = model::dims<BiasRopeModel>();
  d.tied_embeddings = true;
  const auto r = gradient_check(d, 1, 12, 6, 9);
  EXPECT_EQ(r.checked, 6 * (1 + 2 * 12 + 1));  // no separate head
  std::printf("tied: %d entries, worst relative error %.3g at %s\n", r.checked, r.worst_rel,
              r.worst_where.c_str());
}

// Attention tiles query rows by Cpu::attention_block (128); a sequence of 2 tiles + a remainder
// checks the tile edges of the causal mask through the whole model.
TEST(GradientCheck, SequenceLongerThanAttentionTile) {
  model::Dims d = model::dims<BiasRopeModel>().with_layers(1);
  const int seq = 2 * backend::Cpu::attention_block + 5;
  const auto r = gradient_check(d, 1, seq, 4, 21);
  std::printf("long sequence: %d entries, worst relative error %.3g at %s\n", r.checked,
              r.worst_rel, r.worst_where.c_str());
}

// fp32 and fp64 runs of the same weights and tokens: Tiny at full depth, seq 64.
// Bounds: loss within 1e-6 relative (fp32 unit round-off 6e-8; measured ~1e-8); each tensor's
// gradient within 1e-4 of its own largest entry (max |g32 - g64| / max |g64|; measured ~1e-6,
// the margin covers other compilers' and vector widths' summation orders).
TEST(Precision, Fp32AgreesWithFp64) {
  const model::Dims d = model::dims<model::Tiny>();
  train::Transformer<backend::Cpu, float> m32(d, 1, 64, 0.02, 42);
  train::Transformer<backend::Cpu, double> m64(d, 1, 64, 0.02, 42);
  std::vector<std::int32_t> tokens(65);
  std::mt19937_64 rng(3);
  for (auto& x : tokens) x = static_cast<std::int32_t>(rng() % 256);
  const double l32 = m32.forward_backward(tokens, 1.0 / 64) / 64;
  const double l64 = m64.forward_backward(tokens, 1.0 / 64) / 64;
  EXPECT_NEAR(l32, l64, 1e-6 * l64);
  double worst = 0;
  for (const auto& t : m64.tensors()) {
    double max64 = 0, max_diff = 0;
    for (std::int64_t i = 0; i < t.size(); ++i) {
      const double g64 = m64.grads()[t.offset + i], g32 = m32.grads()[t.offset + i];
      max64 = std::max(max64, std::abs(g64));
      max_diff = std::max(max_diff, std::abs(g32 - g64));
    }
    ASSERT_GT(max64, 0.0) << t.name;
    EXPECT_LT(max_diff / max64, 1e-4) << t.name;
    worst = std::max(worst, max_diff / max64);
  }
  std::printf("fp32 vs fp64: loss %.8f vs %.8f, worst gradient deviation %.3g\n", l32, l64, worst);
}

}  // namespace
