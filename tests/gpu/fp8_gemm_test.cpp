// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::fp8_gemm (cuBLASLt FP8) against a double reference on the decoded bytes: the hybrid
// recipe's three type pairs, bf16 and fp32 outputs, beta 0 and 1, both accumulation modes; and
// the shapes it refuses, named before any device call.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu_test.hpp"
#include "tprimat/backend/gpu/fp8_gemm.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/kernels/fp8_format.hpp"

namespace tprimat::testing {
namespace {

using backend::Fp8Accumulation;
using backend::Fp8Matrix;
using kernels::Fp8Format;

// Error bound, per element, against S = |alpha| sa sb sum_k |a_ik b_jk| + |beta d0| (the sum of
// the magnitudes the GEMM adds, so cancellation cannot hide an error) and |want|:
//   |got - want| <= accumulation * S + u * (|want| + (beta != 0 ? S : 0)).
// The product of two FP8 values is exact in fp32 (at most 4 x 4 significant bits); the error is
// in the additions and in the output rounding.
// - accumulation: Hopper's FP8 tensor cores add the products of one MMA in a narrower accumulator
//   (about 14 significant bits, aligned to the largest term: DeepSeek-V3 sec. 3.3.2), so even one
//   MMA's sum is off by more than fp32's 2^-24. Measured on the H100 (cuBLAS of CUDA 13.0,
//   2026-11-24; fp32 out, random finite bytes, the small shapes below x 3 pairs x beta 0/1 and
//   the Llama weight gradient), worst error / S: split 6.4e-4 (48 x 80 x 144; 2.1e-4 at
//   k = 1040), fast 1.06e-3 (112 x 96 x 400; 9.6e-4 at k = 1040).
//   Named bounds: split 2^-9 + k 2^-24 (k fp32 additions of promoted partial sums, worst case all
//   of one sign), 3x the worst measured; fast 2^-8, the looser one, 3.7x its worst measured (its
//   partial sums stay narrow across MMAs, so it grows with k where split does not).
// - output rounding: unit roundoff u = 2^-8 for bf16 (8 significant bits), 2^-24 for fp32, of
//   |want|; with beta != 0 and a bf16 C, errors beyond one rounding up to 4.9e-3 S (1.25 x 2^-8)
//   were measured at k = 16, as if the product were rounded to bf16 before C is added: a second
//   rounding, allowed as u S.
// A wrong scale, a dropped or doubled term, or a swapped operand is off by O(S): far outside.
double accumulation_bound(Fp8Accumulation acc, std::int64_t k) {
  return acc == Fp8Accumulation::fast ? std::ldexp(1.0, -8)
                                      : std::ldexp(1.0, -9) + double(k) * std::ldexp(1.0, -24);
}
template <class Out>
constexpr double unit_roundoff = std::is_same_v<Out, float> ? 0x1p-24 : 0x1p-8;

/// `n` random bytes of format `f`, every finite value equally likely: no NaN, no infinity (an
/// inf operand makes inf or NaN outputs that no bound can check).
std::vector<std::uint8_t> random_fp8(std::size_t n, Fp8Format f, std::mt19937_64& rng) {
  std::vector<std::uint8_t> finite;
  for (int b = 0; b < 256; ++b)
    if (std::isfinite(kernels::fp8_to_float(std::uint8_t(b), f))) finite.push_back(std::uint8_t(b));
  std::uniform_int_distribution<std::size_t> pick(0, finite.size() - 1);
  std::vector<std::uint8_t> out(n);
  for (auto& x : out) x = finite[pick(rng)];
  return out;
}

std::array<float, 256> decode_table(Fp8Format f) {
  std::array<float, 256> t{};
  for (int b = 0; b < 256; ++b) t[b] = kernels::fp8_to_float(std::uint8_t(b), f);
  return t;
}

template <class Out>
double as_double(Out x) {
  if constexpr (std::is_same_v<Out, float>)
    return x;
  else
    return __bfloat162float(x);
}
template <class Out>
Out from_float(float x) {
  if constexpr (std::is_same_v<Out, float>)
    return x;
  else
    return __float2bfloat16(x);
}

const char* name(Fp8Format f) { return f == Fp8Format::e4m3 ? "e4m3" : "e5m2"; }

struct Fp8Case {
  std::int64_t m, n, k;
  Fp8Format fa, fb;
  float beta;
  Fp8Accumulation acc;
  std::int64_t pad = 0;   ///< extra elements per row of A, B and D (ld > k, ld > n)
  std::int64_t rows = 0;  ///< reference rows checked (0: all); the rest checked for NaN only
  float alpha = 1.0f;

  std::string describe() const {
    return "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) + " " +
           name(fa) + " x " + name(fb) + " beta=" + std::to_string(beta) +
           (acc == Fp8Accumulation::fast ? " fast" : " split") + " pad=" + std::to_string(pad);
  }
};

/// What one case measured: worst error over the bound's accumulation term (0..1 passes).
struct Fp8Result {
  double worst_ratio = 0;  ///< max over checked elements of |got - want| / bound (<= 1 passes)
  double worst_rel_s = 0;  ///< max of (|got - want| - rounding allowance) / S: accumulation error
  bool all_finite = true;
};

template <class Out>
Fp8Result run_case(const Fp8Case& c, std::uint64_t seed, cudaStream_t s) {
  std::mt19937_64 rng(seed);
  const std::int64_t lda = c.k + c.pad, ldb = c.k + c.pad, ldd = c.n + c.pad;
  const auto a = random_fp8(std::size_t(c.m * lda), c.fa, rng);
  const auto b = random_fp8(std::size_t(c.n * ldb), c.fb, rng);
  // Non-trivial scales, not powers of two, so a scale applied twice, to the wrong operand or not
  // at all is seen. E5M2 values are up to 128x larger than E4M3's: its scale is smaller.
  auto scale_of = [](Fp8Format f, double u) {
    return float((f == Fp8Format::e5m2 ? 0.0071 : 0.37) * (1.0 + u));
  };
  std::uniform_real_distribution<double> u(0.1, 0.9);
  const std::array<float, 2> scales{scale_of(c.fa, u(rng)), scale_of(c.fb, u(rng))};
  const auto d0f = random_normal(std::size_t(c.m * ldd), rng(), 100.0f);
  std::vector<Out> d0(d0f.size());
  for (std::size_t i = 0; i < d0.size(); ++i) d0[i] = from_float<Out>(d0f[i]);

  auto a_dev = upload<std::uint8_t>(a, s);
  auto b_dev = upload<std::uint8_t>(b, s);
  // Each scale on a 256-byte boundary of its own, as a tensor's scale_inv allocation would be.
  std::vector<float> scale_host(128, 0.0f);
  scale_host[0] = scales[0];
  scale_host[64] = scales[1];
  auto scale_dev = upload<float>(scale_host, s);
  auto d_dev = upload<Out>(d0, s);
  backend::fp8_gemm<Out>(c.m, c.n, c.k, Fp8Matrix{a_dev.data(), c.fa, scale_dev.data(), lda},
                         Fp8Matrix{b_dev.data(), c.fb, scale_dev.data() + 64, ldb}, c.alpha, c.beta,
                         d_dev.data(), ldd, c.acc, s);
  const std::vector<Out> d = d_dev.download();

  const auto ta = decode_table(c.fa), tb = decode_table(c.fb);
  Fp8Result r;
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t j = 0; j < ldd; ++j) {
      const double got = as_double(d[std::size_t(i * ldd + j)]);
      if (j < c.n && !std::isfinite(got)) r.all_finite = false;
      // Padding beyond n is never written.
      if (j >= c.n && got != as_double(d0[std::size_t(i * ldd + j)])) r.worst_ratio = INFINITY;
    }
  std::vector<std::int64_t> rows(std::size_t(c.m));
  for (std::int64_t i = 0; i < c.m; ++i) rows[std::size_t(i)] = i;
  if (c.rows > 0) {
    std::shuffle(rows.begin(), rows.end(), rng);
    rows.resize(std::size_t(c.rows));
  }
  const double ab = double(c.alpha) * scales[0] * scales[1];
  const double bound_acc = accumulation_bound(c.acc, c.k);
  std::vector<double> arow(std::size_t(c.k));
  for (std::int64_t i : rows) {
    for (std::int64_t p = 0; p < c.k; ++p) arow[std::size_t(p)] = ta[a[std::size_t(i * lda + p)]];
    for (std::int64_t j = 0; j < c.n; ++j) {
      const std::uint8_t* bj = &b[std::size_t(j * ldb)];
      double sum = 0, mag = 0;
      for (std::int64_t p = 0; p < c.k; ++p) {
        const double prod = arow[std::size_t(p)] * double(tb[bj[p]]);
        sum += prod;
        mag += std::abs(prod);
      }
      const double init = as_double(d0[std::size_t(i * ldd + j)]);
      const double want = ab * sum + double(c.beta) * init;
      const double magnitude = std::abs(ab) * mag + std::abs(double(c.beta) * init);
      const double got = as_double(d[std::size_t(i * ldd + j)]);
      const double err = std::abs(got - want);
      const double rounded = std::abs(want) + (c.beta != 0.0f ? magnitude : 0.0);
      const double bound = bound_acc * magnitude + unit_roundoff<Out> * rounded;
      r.worst_ratio = std::max(r.worst_ratio, std::isfinite(got) ? err / bound : INFINITY);
      if (magnitude > 0)
        r.worst_rel_s =
            std::max(r.worst_rel_s, std::max(0.0, err - unit_roundoff<Out> * rounded) / magnitude);
    }
  }
  return r;
}

template <class Out>
void expect_within_bound(const Fp8Case& c, cudaStream_t s) {
  const std::uint64_t seed = fresh_seed();
  const Fp8Result r = run_case<Out>(c, seed, s);
  const std::string what = c.describe() + (std::is_same_v<Out, float> ? " out=fp32" : " out=bf16") +
                           " seed=" + std::to_string(seed);
  EXPECT_TRUE(r.all_finite) << what << ": NaN or Inf in the output";
  // NaN compares false: a NaN ratio fails here too.
  EXPECT_TRUE(r.worst_ratio <= 1.0) << what << ": worst |got - want| / bound = " << r.worst_ratio;
  std::printf("  %-70s worst err/bound %.3g, accumulation err/S %.3g\n", what.c_str(),
              r.worst_ratio, r.worst_rel_s);
}

constexpr std::array<std::array<Fp8Format, 2>, 3> recipe_pairs{{
    {Fp8Format::e4m3, Fp8Format::e4m3},  // forward: x W^T
    {Fp8Format::e5m2, Fp8Format::e4m3},  // input gradient: dy W
    {Fp8Format::e4m3, Fp8Format::e5m2},  // weight gradient (as dW^T = x^T dy)
}};

/// Small legal shapes, every one a multiple of 16 but few of 64 or 128 (partial tiles), one with
/// padded rows: every pair, both outputs, beta 0 and 1, both accumulation modes, every element.
TEST(Fp8Gemm, SmallShapesEveryPairOutputBetaAndAccumulation) {
  TPRIMAT_REQUIRE_GPU();
  TestStream s;
  struct Shape {
    std::int64_t m, n, k, pad;
  };
  for (const Shape sh : {Shape{16, 16, 16, 0}, Shape{48, 80, 144, 0}, Shape{272, 208, 1040, 0},
                         Shape{112, 96, 400, 32}})
    for (const auto& [fa, fb] : recipe_pairs)
      for (const float beta : {0.0f, 1.0f})
        for (const Fp8Accumulation acc : {Fp8Accumulation::split, Fp8Accumulation::fast}) {
          const Fp8Case c{sh.m, sh.n, sh.k, fa, fb, beta, acc, sh.pad};
          expect_within_bound<bf16>(c, s);
          expect_within_bound<float>(c, s);
        }
}

/// alpha scales the product and not beta's term.
TEST(Fp8Gemm, AlphaScalesTheProductOnly) {
  TPRIMAT_REQUIRE_GPU();
  TestStream s;
  Fp8Case c{64, 128, 256, Fp8Format::e4m3, Fp8Format::e4m3, 1.0f, Fp8Accumulation::split};
  c.alpha = -0.75f;
  expect_within_bound<float>(c, s);
}

/// Llama 3.1 8B's gate/up projection at 4096 tokens, in the recipe's three GEMMs as the step
/// would run them (forward bf16 with fast accumulation, input gradient bf16 split, weight
/// gradient accumulated into fp32 split), and the down projection's forward: 64 random rows
/// checked against the reference (the full product is 2.4e11 multiply-adds), every element for
/// NaN.
TEST(Fp8Gemm, LlamaShapes) {
  TPRIMAT_REQUIRE_GPU();
  TestStream s;
  const std::int64_t tokens = 4096, hidden = 4096, ffn = 14336;
  // forward: y[tokens, ffn] = x[tokens, hidden] W[ffn, hidden]^T
  expect_within_bound<bf16>(
      {tokens, ffn, hidden, Fp8Format::e4m3, Fp8Format::e4m3, 0, Fp8Accumulation::fast, 0, 64}, s);
  // input gradient: dx[tokens, hidden] = dy[tokens, ffn] (W^T)[hidden, ffn]^T
  expect_within_bound<bf16>(
      {tokens, hidden, ffn, Fp8Format::e5m2, Fp8Format::e4m3, 0, Fp8Accumulation::split, 0, 64}, s);
  // weight gradient: dW^T[hidden, ffn] += (x^T)[hidden, tokens] (dy^T)[ffn, tokens]^T
  expect_within_bound<float>(
      {hidden, ffn, tokens, Fp8Format::e4m3, Fp8Format::e5m2, 1, Fp8Accumulation::split, 0, 64}, s);
  // down projection forward: [tokens, hidden] = [tokens, ffn] [hidden, ffn]^T
  expect_within_bound<bf16>(
      {tokens, hidden, ffn, Fp8Format::e4m3, Fp8Format::e4m3, 0, Fp8Accumulation::fast, 0, 64}, s);
}

/// The shapes and formats cuBLASLt's FP8 GEMM refuses are named before any device call, so these
/// run without a GPU too. The pointers are never read: aligned stand-ins.
TEST(Fp8Gemm, RefusedShapesAndFormatsAreNamed) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(std::uintptr_t{4096});
  const auto* scale = reinterpret_cast<const float*>(std::uintptr_t{8192});
  auto* d = reinterpret_cast<float*>(std::uintptr_t{16384});
  auto refused = [&](std::int64_t m, std::int64_t n, std::int64_t k, Fp8Matrix a, Fp8Matrix b,
                     std::int64_t ldd, const std::string& rule) {
    try {
      backend::fp8_gemm<float>(m, n, k, a, b, 1.0f, 0.0f, d, ldd, Fp8Accumulation::split, nullptr);
      ADD_FAILURE() << "accepted; expected the rule: " << rule;
    } catch (const core::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(rule), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not refused as input (expected the rule: " << rule << "): " << e.what();
    }
  };
  const Fp8Matrix e4{bytes, Fp8Format::e4m3, scale, 64}, e5{bytes, Fp8Format::e5m2, scale, 64};
  refused(24, 64, 64, e4, e4, 64, "multiples of 16");
  refused(64, 64, 40, {bytes, Fp8Format::e4m3, scale, 48}, {bytes, Fp8Format::e4m3, scale, 48}, 64,
          "multiples of 16");
  refused(64, 64, 64, e5, e5, 64, "no e5m2 x e5m2");
  refused(64, 64, 64, {bytes, Fp8Format::e4m3_fnuz, scale, 64}, e4, 64, "e4m3_fnuz");
  refused(64, 64, 64, {bytes, Fp8Format::e4m3, scale, 32}, e4, 64, "at least k");
  refused(64, 64, 64, {bytes, Fp8Format::e4m3, scale, 72}, e4, 64, "lda and ldb must be");
  refused(64, 64, 64, e4, e4, 60, "ldd must be at least n");
  refused(64, 64, 64, e4, e4, 66, "16 bytes");  // 264 bytes a row of fp32
  refused(64, 64, 64, {bytes + 8, Fp8Format::e4m3, scale, 64}, e4, 64, "16-byte boundaries");
  refused(64, 64, 64, {bytes, Fp8Format::e4m3, nullptr, 64}, e4, 64, "scale_inv");
  // Two scales packed in one array: the second is 4 bytes in, which cuBLASLt refuses.
  refused(64, 64, 64, e4, {bytes, Fp8Format::e4m3, scale + 1, 64}, 64, "16-byte boundary");
}

}  // namespace
}  // namespace tprimat::testing
