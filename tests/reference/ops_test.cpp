// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Cpu ops against direct (naive) formulas: RoPE and llama3 scaling, attention, losses.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "tprimat/backend/cpu.hpp"
#include "tprimat/model/llama31_8b.hpp"
#include "tprimat/model/tiny.hpp"

namespace {

using tprimat::backend::Cpu;
namespace model = tprimat::model;

std::vector<double> random_vector(std::size_t n, std::uint64_t seed, double std = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, std);
  std::vector<double> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

// Llama 3.1 (theta 5e5, head_dim 128, factor 8, low 1, high 4, original 8192): frequencies
// with wavelength < 2048 are kept, > 8192 divided by 8, in between interpolated. Values are
// closed forms of doubles: 1e-12 relative.
TEST(Rope, Llama3ScalingBranches) {
  const auto d = model::dims<model::Llama31_8B>();
  const auto inv = Cpu::rope_inv_freq(d);
  ASSERT_EQ(inv.size(), 64u);
  int kept = 0, scaled = 0, smoothed = 0;
  for (int i = 0; i < 64; ++i) {
    const double base = std::pow(500000.0, -2.0 * i / 128);
    const double wavelen = 2 * std::numbers::pi / base;
    if (wavelen < 2048) {
      EXPECT_NEAR(inv[i], base, 1e-12 * base) << i;
      ++kept;
    } else if (wavelen > 8192) {
      EXPECT_NEAR(inv[i], base / 8, 1e-12 * base) << i;
      ++scaled;
    } else {
      const double smooth = (8192 / wavelen - 1) / (4 - 1);
      EXPECT_NEAR(inv[i], (1 - smooth) * base / 8 + smooth * base, 1e-12 * base) << i;
      EXPECT_GT(inv[i], base / 8);
      EXPECT_LT(inv[i], base);
      ++smoothed;
    }
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(scaled, 0);
  EXPECT_GT(smoothed, 0);
  EXPECT_EQ(inv[0], 1.0);  // position angle of the fastest pair is the position itself
  // Frequencies stay strictly decreasing across the branch boundaries.
  for (int i = 1; i < 64; ++i) EXPECT_LT(inv[i], inv[i - 1]) << i;
}

TEST(Rope, NoScalingIsPlainTheta) {
  const auto d = model::dims<model::Tiny>();
  const auto inv = Cpu::rope_inv_freq(d);
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(inv[i], std::pow(10000.0, -2.0 * i / 16), 1e-15);
}

// Rotation pairs (i, i + head_dim/2): norms are kept, backward inverts forward, and
// q(p1) . k(p2) depends only on p1 - p2 (the point of RoPE). fp64: 1e-12.
TEST(Rope, RotateHalfProperties) {
  const auto d = model::dims<model::Llama31_8B>();
  const int seq = 40, heads = 2, hd = d.head_dim;
  std::vector<double> cos_t(seq * hd / 2), sin_t(seq * hd / 2);
  Cpu::rope_tables(d, seq, cos_t.data(), sin_t.data());
  // Pair i of position p rotates by p * inv[i]: check one entry by hand.
  const auto inv = Cpu::rope_inv_freq(d);
  std::vector<double> x(seq * heads * hd, 0.0);
  x[(5 * heads + 1) * hd + 3] = 1.0;  // position 5, head 1, first half of pair 3
  Cpu::rope_forward(x.data(), seq, seq, heads, hd, cos_t.data(), sin_t.data());
  EXPECT_NEAR(x[(5 * heads + 1) * hd + 3], std::cos(5 * inv[3]), 1e-12);
  EXPECT_NEAR(x[(5 * heads + 1) * hd + 3 + hd / 2], std::sin(5 * inv[3]), 1e-12);

  const auto v = random_vector(seq * heads * hd, 1);
  auto r = v;
  Cpu::rope_forward(r.data(), seq, seq, heads, hd, cos_t.data(), sin_t.data());
  for (int t = 0; t < seq * heads; ++t) {
    double n0 = 0, n1 = 0;
    for (int i = 0; i < hd; ++i)
      n0 += v[t * hd + i] * v[t * hd + i], n1 += r[t * hd + i] * r[t * hd + i];
    EXPECT_NEAR(n0, n1, 1e-12 * n0);
  }
  auto back = r;
  Cpu::rope_backward(back.data(), seq, seq, heads, hd, cos_t.data(), sin_t.data());
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(back[i], v[i], 1e-12);

  // The same q and k vectors placed at positions (p1, p2) with equal p1 - p2.
  const auto q = random_vector(hd, 2), k = random_vector(hd, 3);
  auto dot_at = [&](int pq, int pk) {
    std::vector<double> a(seq * hd, 0.0), b(seq * hd, 0.0);
    std::copy(q.begin(), q.end(), a.begin() + pq * hd);
    std::copy(k.begin(), k.end(), b.begin() + pk * hd);
    Cpu::rope_forward(a.data(), seq, seq, 1, hd, cos_t.data(), sin_t.data());
    Cpu::rope_forward(b.data(), seq, seq, 1, hd, cos_t.data(), sin_t.data());
    double s = 0;
    for (int i = 0; i < hd; ++i) s += a[pq * hd + i] * b[pk * hd + i];
    return s;
  };
  EXPECT_NEAR(dot_at(7, 3), dot_at(30, 26), 1e-10);
  EXPECT_NEAR(dot_at(12, 12), dot_at(0, 0), 1e-10);
}

// Naive GQA causal attention in fp64 (one query row at a time, full softmax) against the tiled
// Eigen version, with a sequence spanning three tiles. 1e-12 absolute (outputs are O(1)).
TEST(Attention, MatchesNaiveAcrossTiles) {
  const int batch = 2, seq = 2 * Cpu::attention_block + 7, heads = 6, kv = 2, hd = 8;
  const auto q = random_vector(std::size_t(batch) * seq * heads * hd, 4);
  const auto k = random_vector(std::size_t(batch) * seq * kv * hd, 5);
  const auto v = random_vector(std::size_t(batch) * seq * kv * hd, 6);
  std::vector<double> o(q.size()), lse(std::size_t(batch) * heads * seq),
      ws(Cpu::attention_workspace(seq));
  Cpu::attention_forward(q.data(), k.data(), v.data(), o.data(), lse.data(), batch, seq, heads, kv,
                         hd, ws.data());
  const double scale = 1 / std::sqrt(double(hd));
  double worst = 0;
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h) {
      const int g = h / (heads / kv);  // query heads 0-2 share KV head 0, 3-5 KV head 1
      for (int i = 0; i < seq; i += 37) {
        std::vector<double> s(i + 1);
        double mx = -1e300;
        for (int j = 0; j <= i; ++j) {
          double dot = 0;
          for (int c = 0; c < hd; ++c)
            dot += q[((b * seq + i) * heads + h) * hd + c] * k[((b * seq + j) * kv + g) * hd + c];
          s[j] = dot * scale;
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (auto& x : s) sum += (x = std::exp(x - mx));
        for (int c = 0; c < hd; ++c) {
          double out = 0;
          for (int j = 0; j <= i; ++j) out += s[j] / sum * v[((b * seq + j) * kv + g) * hd + c];
          worst = std::max(worst, std::abs(out - o[((b * seq + i) * heads + h) * hd + c]));
        }
        EXPECT_NEAR(lse[(b * heads + h) * seq + i], mx + std::log(sum), 1e-12);
      }
    }
  EXPECT_LT(worst, 1e-12);
}

// Cross-entropy of uniform logits is ln(vocab); its gradient is softmax - onehot, scaled.
TEST(CrossEntropy, ValueAndGradient) {
  std::vector<double> logits{1.0, 2.0, 3.0, 0.5, 0.5, 0.5};
  const std::int32_t targets[] = {2, 0};
  const double loss = Cpu::cross_entropy(logits.data(), targets, 2, 3, 0.5, true);
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_NEAR(loss, (std::log(z) - 3.0) + std::log(3.0), 1e-14);
  EXPECT_NEAR(logits[0], 0.5 * std::exp(1.0) / z, 1e-15);
  EXPECT_NEAR(logits[2], 0.5 * (std::exp(3.0) / z - 1), 1e-15);
  EXPECT_NEAR(logits[3], 0.5 * (1.0 / 3 - 1), 1e-15);
  double row_sum = logits[3] + logits[4] + logits[5];
  EXPECT_NEAR(row_sum, 0.0, 1e-15);  // softmax - onehot sums to zero
}

TEST(SwiGlu, ForwardAndDerivative) {
  const double g = 0.7, u = -1.3, dh = 1.0;
  double h = 0, dg = 0, du = 0;
  Cpu::swiglu_forward(&g, &u, &h, 1);
  const double silu = g / (1 + std::exp(-g));
  EXPECT_NEAR(h, silu * u, 1e-15);
  Cpu::swiglu_backward(&g, &u, &dh, &dg, &du, 1);
  const double e = 1e-6;  // central difference, fp64: error ~e^2 ~ 1e-12
  const double num =
      ((g + e) / (1 + std::exp(-(g + e))) - (g - e) / (1 + std::exp(-(g - e)))) / (2 * e) * u;
  EXPECT_NEAR(dg, num, 1e-9);
  EXPECT_NEAR(du, silu, 1e-15);
}

TEST(Gemm, AllTransposeCombinations) {
  // C = A B with A [2,3], B [3,2], each stored plain or transposed; beta accumulates.
  const double a[] = {1, 2, 3, 4, 5, 6}, at[] = {1, 4, 2, 5, 3, 6};
  const double b[] = {7, 8, 9, 10, 11, 12}, bt[] = {7, 9, 11, 8, 10, 12};
  const double expected[] = {58, 64, 139, 154};
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      double c[4] = {1, 1, 1, 1};
      Cpu::gemm<double>(ta, tb, 2, 2, 3, 1.0, ta ? at : a, ta ? 2 : 3, tb ? bt : b, tb ? 3 : 2, 2.0,
                        c, 2);
      for (int i = 0; i < 4; ++i) EXPECT_EQ(c[i], expected[i] + 2.0) << ta << tb << i;
    }
}

TEST(DeviceInfo, DescribesTheHost) {
  const auto info = Cpu::device_info();
  EXPECT_EQ(info.platform, "cpu");
  EXPECT_EQ(info.software_stack, "cpu");
  EXPECT_FALSE(info.device_name.empty());
  EXPECT_GE(info.cores, 1);
  EXPECT_GT(info.total_memory_gb, 0.0);
  EXPECT_TRUE(info.runtime_version.empty());  // no runtime: the compiler is reproduce.compiler
  EXPECT_EQ(info.peak_tflops_dense, 0.0);
}

}  // namespace
