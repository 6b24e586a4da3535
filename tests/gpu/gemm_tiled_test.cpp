// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// TiledGemm (the portable GEMM kernel) against Cpu::gemm in double and against Gpu::gemm
// (cuBLASLt) on the same fresh random bf16 operands: ragged shapes, every transpose, beta, bias.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gemm_cases.hpp"
#include "gpu_test.hpp"
#include "tprimat/backend/cpu.hpp"
#include "tprimat/backend/gpu/gemm_tiled.hpp"
#include "tprimat/core/error.hpp"

namespace tprimat::testing {
namespace {

using backend::Gpu;// cuBLASLt's suite: NVIDIA only

using backend::Cpu;
using backend::gpu_check;
using backend::TiledGemm;

/// bf16 output against the double reference: rounding to bf16 (8 significant bits) costs at most
/// 2^-9 ~ 2e-3 of the element, hence of the largest one; 1e-2 leaves 5x for fp32 accumulation.
constexpr double bf16_out_bound = 1e-2;
/// fp32 output against the double reference: bf16 x bf16 products are exact in fp32, so the only
/// error is each thread's k sequential fp32 additions. Their roundings (2^-24 of a partial sum
/// each) have random signs and grow like sqrt(k): ~1e-6 of the largest output at k = 1024.
/// 1e-4 leaves ~100x, and a wrong, missing or doubled term (an O(1) change of an output of size
/// ~sqrt(k)) still fails it by far.
constexpr double fp32_out_bound = 1e-4;
/// Against cuBLASLt, both fp32-accumulated: fp32 outputs differ by both accumulation errors
/// (twice the bound above); bf16 outputs may round to neighbouring bf16 values, 2^-8 ~ 4e-3 of
/// the element, so the bf16 bound holds.
constexpr double fp32_vs_cublaslt_bound = 2e-4;
constexpr double bf16_vs_cublaslt_bound = 1e-2;

/// relative_error that also refuses a non-finite reference: a NaN from cuBLASLt (or anything
/// else) on the `want` side would otherwise drop out of the max and pass.
double checked_error(std::span<const float> got, std::span<const float> want) {
  for (float w : want)
    if (!std::isfinite(w)) return INFINITY;
  return relative_error(got, want);
}

/// Fresh random operands (bf16-rounded, so every side multiplies the same values), uploaded
/// once; run() launches one implementation into a fresh C and returns C[m, n].
template <class Out>
class GemmInputs {
 public:
  GemmInputs(const GemmCase& g, std::uint64_t seed, cudaStream_t s)
      : g_(g),
        s_(s),
        lda_(leading(g.trans_a ? g.m : g.k, g)),
        ldb_(leading(g.trans_b ? g.k : g.n, g)),
        ldc_(leading(g.n, g)),
        a_(round_bf16(random_normal((g.trans_a ? g.k : g.m) * lda_, seed))),
        b_(round_bf16(random_normal((g.trans_b ? g.n : g.k) * ldb_, seed + 1))),
        bias_(round_bf16(random_normal(g.n, seed + 2))),
        c0_(round_bf16(random_normal(g.m * ldc_, seed + 3))),
        da_(upload<bf16>(to_bf16(a_), s)),
        db_(upload<bf16>(to_bf16(b_), s)),
        dbias_(upload<bf16>(to_bf16(bias_), s)) {}

  /// Runs `gemm` (TiledGemm::gemm<Out> or Gpu::gemm<Out>) on a C that is NaN-poisoned for
  /// beta 0 (which must not read it) and holds C0 otherwise; expects the padding columns of C
  /// untouched and returns C[m, n] row by row.
  template <class Gemm>
  std::vector<float> run(Gemm gemm) {
    DeviceBuffer<Out> dc(g_.m * ldc_, s_);
    if (g_.beta == 0)
      dc.fill_bytes(0xFF);
    else
      dc.upload(to_out<Out>(c0_));
    gemm(g_.trans_a, g_.trans_b, g_.m, g_.n, g_.k, da_.data(), lda_, db_.data(), ldb_, g_.beta,
         dc.data(), ldc_, g_.bias ? dbias_.data() : nullptr, s_);
    gpu_check(cudaStreamSynchronize(s_), "gemm");
    const std::vector<float> all = from_out<Out>(dc.download());
    std::vector<float> c(g_.m * g_.n);
    std::int64_t touched = 0;
    for (std::int64_t i = 0; i < g_.m; ++i) {
      for (std::int64_t j = 0; j < g_.n; ++j) c[i * g_.n + j] = all[i * ldc_ + j];
      for (std::int64_t j = g_.n; j < ldc_; ++j) {
        const float v = all[i * ldc_ + j];
        touched += g_.beta == 0 ? !std::isnan(v) : v != c0_[i * ldc_ + j];
      }
    }
    EXPECT_EQ(touched, 0) << "gemm wrote outside C[m, n] (padding columns of ldc)";
    return c;
  }

  /// op(A) op(B) + beta C0 (+ bias) in double on the host, from the stored operands as the
  /// contract lays them out.
  std::vector<float> reference() const {
    const std::vector<double> a(a_.begin(), a_.end()), b(b_.begin(), b_.end());
    std::vector<double> c(g_.m * g_.n);
    for (std::int64_t i = 0; i < g_.m; ++i)
      for (std::int64_t j = 0; j < g_.n; ++j) c[i * g_.n + j] = c0_[i * ldc_ + j];
    Cpu::gemm<double>(g_.trans_a, g_.trans_b, g_.m, g_.n, g_.k, 1.0, a.data(), lda_, b.data(), ldb_,
                      double(g_.beta), c.data(), g_.n);
    if (g_.bias) {
      const std::vector<double> bias(bias_.begin(), bias_.end());
      Cpu::add_bias(c.data(), bias.data(), g_.m, g_.n);
    }
    return {c.begin(), c.end()};
  }

 private:
  GemmCase g_;
  cudaStream_t s_;
  std::int64_t lda_, ldb_, ldc_;
  std::vector<float> a_, b_, bias_, c0_;
  DeviceBuffer<bf16> da_, db_, dbias_;
};

constexpr auto tiled = [](auto... args) { TiledGemm::gemm(args...); };
constexpr auto cublaslt = [](auto... args) { Gpu::gemm(args...); };

/// TiledGemm on fresh random inputs against the double reference.
template <class Out>
void check_reference(const GemmCase& g) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(describe<Out>(g) + ", seed " + std::to_string(seed));
  TestStream s;
  GemmInputs<Out> in(g, seed, s);
  const double bound = is_bf16<Out> ? bf16_out_bound : fp32_out_bound;
  EXPECT_LE(checked_error(in.run(tiled), in.reference()), bound);
}

/// TiledGemm and Gpu::gemm (cuBLASLt) on the same fresh inputs: each against the reference, and
/// against each other. The case must have cuBLASLt-compatible leading dimensions.
template <class Out>
void check_against_cublaslt(const GemmCase& g) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(describe<Out>(g) + ", seed " + std::to_string(seed));
  TestStream s;
  Gpu::gemm_prepare(s);
  GemmInputs<Out> in(g, seed, s);
  const std::vector<float> want = in.reference();
  const std::vector<float> got_tiled = in.run(tiled);
  const std::vector<float> got_lt = in.run(cublaslt);
  const double bound = is_bf16<Out> ? bf16_out_bound : fp32_out_bound;
  EXPECT_LE(checked_error(got_tiled, want), bound) << "tiled vs double reference";
  EXPECT_LE(checked_error(got_lt, want), bound) << "cuBLASLt vs double reference";
  EXPECT_LE(checked_error(got_tiled, got_lt),
            is_bf16<Out> ? bf16_vs_cublaslt_bound : fp32_vs_cublaslt_bound)
      << "tiled vs cuBLASLt";
}

constexpr bool flags[] = {false, true};

// 67 x 130 x 255: no dimension a multiple of the 64 x 64 x 16 tile, odd leading dimensions
// (unaligned rows, which cuBLASLt would refuse).
TEST(TiledGemm, RaggedAllTransposes) {
  TPRIMAT_REQUIRE_GPU();
  for (bool ta : flags)
    for (bool tb : flags) {
      const GemmCase g{.trans_a = ta, .trans_b = tb, .m = 67, .n = 130, .k = 255};
      check_reference<bf16>(g);
      check_reference<float>(g);
    }
}

// beta != 0 reads C (gradient accumulation, residual-style adds), with and without the bias.
TEST(TiledGemm, RaggedAccumulateAndBias) {
  TPRIMAT_REQUIRE_GPU();
  for (bool ta : flags)
    for (bool tb : flags)
      for (float beta : {0.0f, 1.0f, 0.5f})
        for (bool bias : flags) {
          if (beta == 0 && !bias) continue;  // RaggedAllTransposes
          const GemmCase g{.trans_a = ta,
                       .trans_b = tb,
                       .m = 67,
                       .n = 130,
                       .k = 255,
                       .beta = beta,
                       .bias = bias};
          check_reference<bf16>(g);
          check_reference<float>(g);
        }
}

// Smaller than one tile, one row or column, k = 1, exact tile multiples, one more than a tile,
// and padded leading dimensions with the padding checked untouched.
TEST(TiledGemm, EdgeShapes) {
  TPRIMAT_REQUIRE_GPU();
  const GemmCase shapes[] = {
      {.m = 1, .n = 1, .k = 1},
      {.m = 1, .n = 130, .k = 7},
      {.trans_a = true, .m = 67, .n = 1, .k = 255},
      {.trans_b = true, .m = 5, .n = 3, .k = 1},
      {.m = 64, .n = 64, .k = 16},
      {.trans_a = true, .trans_b = true, .m = 128, .n = 192, .k = 32},
      {.m = 65, .n = 65, .k = 17},
      {.m = 40, .n = 56, .k = 104, .pad = 3},
      {.trans_a = true, .trans_b = true, .m = 72, .n = 24, .k = 40, .beta = 1, .pad = 24},
  };
  for (const GemmCase& g : shapes) {
    check_reference<bf16>(g);
    check_reference<float>(g);
  }
}

// Llama-ish: 512 tokens x 4096 x 1024 as a forward projection (x W^T, bf16 out) and as a weight
// gradient accumulated in fp32 (trans_a, beta 1); every output checked.
TEST(TiledGemm, LlamaShape) {
  TPRIMAT_REQUIRE_GPU();
  check_reference<bf16>({.trans_b = true, .m = 512, .n = 4096, .k = 1024});
  check_reference<float>({.trans_a = true, .m = 512, .n = 4096, .k = 1024, .beta = 1});
}

// The stand-in claim: the same inputs through cuBLASLt give the same product within bf16
// bounds, for ragged shapes (16-byte leading dimensions, as cuBLASLt needs) and the Llama shape.
TEST(TiledGemm, MatchesCublasLt) {
  TPRIMAT_REQUIRE_GPU();
  for (bool ta : flags)
    for (bool tb : flags) {
      const GemmCase g{
          .trans_a = ta, .trans_b = tb, .m = 67, .n = 130, .k = 255, .ld_multiple = 8};
      check_against_cublaslt<bf16>(g);
      check_against_cublaslt<float>(g);
      GemmCase accumulate = g;
      accumulate.beta = 1;
      check_against_cublaslt<float>(accumulate);
      GemmCase bias = g;
      bias.bias = true;
      check_against_cublaslt<bf16>(bias);
    }
  check_against_cublaslt<bf16>({.trans_b = true, .m = 512, .n = 4096, .k = 1024});
  check_against_cublaslt<float>({.trans_a = true, .m = 512, .n = 4096, .k = 1024, .beta = 1});
}

// gemm_add: D = A B + C into another buffer; C must stay as it was.
TEST(TiledGemm, GemmAddWritesAnotherBuffer) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t m = 67, n = 130, k = 255;
  const auto a = round_bf16(random_normal(m * k, seed));
  const auto b = round_bf16(random_normal(k * n, seed + 1));
  const auto c = random_normal(m * n, seed + 2);
  std::vector<double> want(c.begin(), c.end());
  const std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end());
  Cpu::gemm<double>(false, false, m, n, k, 1.0, ad.data(), k, bd.data(), n, 1.0, want.data(), n);
  TestStream s;
  auto da = upload<bf16>(to_bf16(a), s);
  auto db = upload<bf16>(to_bf16(b), s);
  auto dc = upload<float>(c, s);
  DeviceBuffer<float> dd(m * n, s);
  dd.fill_bytes(0xFF);  // poisoned: every element must be written
  TiledGemm::gemm_add<float>(false, false, m, n, k, da.data(), k, db.data(), n, dc.data(),
                             dd.data(), n, s);
  const std::vector<float> wantf(want.begin(), want.end());
  EXPECT_LE(checked_error(dd.download(), wantf), fp32_out_bound);
  EXPECT_EQ(dc.download(), c) << "the residual input must not be written";
}

// Gpu::gemm's argument rule, checked before any device work: runs without a GPU too.
TEST(TiledGemm, RejectsWhatCudaGemmRejects) {
  const bf16* none = nullptr;
  float* c = nullptr;
  try {
    // lda 32 < k 64: rows of A would overlap.
    TiledGemm::gemm<float>(false, false, 64, 64, 64, none, 32, none, 64, 0.0f, c, 64, nullptr,
                           nullptr);
    ADD_FAILURE() << "expected core::RunError";
  } catch (const core::RunError& e) {
    EXPECT_NE(std::string(e.what()).find("m=64 n=64 k=64"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("lda=32"), std::string::npos) << e.what();
  }
  EXPECT_THROW(
      TiledGemm::gemm<float>(false, true, 8, 8, 0, none, 8, none, 8, 0.0f, c, 8, nullptr, nullptr),
      core::RunError)
      << "k = 0";
  EXPECT_THROW(
      TiledGemm::gemm<float>(true, false, 8, 8, 8, none, 4, none, 8, 0.0f, c, 8, nullptr, nullptr),
      core::RunError)
      << "trans_a: lda must cover m";
}

}  // namespace
}  // namespace tprimat::testing
