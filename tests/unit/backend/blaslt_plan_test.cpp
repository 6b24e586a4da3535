// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend/blaslt/plan.hpp: the operand views give the row-major product, keys tell calls apart,
// shapes and FP8 formats are refused by name.
#include "tprimat/backend/blaslt/plan.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

namespace tprimat::testing {
namespace {

using namespace backend::detail::blaslt;
using kernels::Fp8Format;

/// What a column-major BLASLt library computes from the views it is handed: D = op(A) op(B),
/// each view's element (i, j) at data[i + j * ld], op = transpose when its flag is set.
std::vector<double> library_product(const LibraryOperands& o, const std::vector<double>& a_data,
                                    const std::vector<double>& b_data) {
  auto at = [](const std::vector<double>& d, const MatrixView& v, bool t, std::int64_t i,
               std::int64_t j) { return t ? d[j + i * v.ld] : d[i + j * v.ld]; };
  const std::int64_t inner = o.trans_a ? o.a.rows : o.a.cols;
  EXPECT_EQ(inner, o.trans_b ? o.b.cols : o.b.rows) << "the views' inner sizes differ";
  EXPECT_EQ(o.trans_a ? o.a.cols : o.a.rows, o.c.rows);
  EXPECT_EQ(o.trans_b ? o.b.rows : o.b.cols, o.c.cols);
  std::vector<double> d(static_cast<std::size_t>(o.c.ld * o.c.cols), 0.0);
  for (std::int64_t i = 0; i < o.c.rows; ++i)
    for (std::int64_t j = 0; j < o.c.cols; ++j) {
      double s = 0;
      for (std::int64_t p = 0; p < inner; ++p)
        s += at(a_data, o.a, o.trans_a, i, p) * at(b_data, o.b, o.trans_b, p, j);
      d[static_cast<std::size_t>(i + j * o.c.ld)] = s;
    }
  return d;
}

struct Shape {
  std::int64_t m, n, k;
  bool trans_a, trans_b;
};

/// Row-major A (stored [m, k], or [k, m] when trans_a) and B ([k, n], or [n, k] when trans_b),
/// leading dimensions padded past the row length; the library, handed our B as its A and our A
/// as its B, must write our row-major C[m, n] (row stride ldc) exactly.
void expect_row_major_product(const Shape& s) {
  const std::int64_t lda = (s.trans_a ? s.m : s.k) + 3, ldb = (s.trans_b ? s.k : s.n) + 2,
                     ldc = s.n + 5;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> value(-4, 4);  // small integers: exact in double
  std::vector<double> a(static_cast<std::size_t>(lda * (s.trans_a ? s.k : s.m)));
  std::vector<double> b(static_cast<std::size_t>(ldb * (s.trans_b ? s.n : s.k)));
  for (double& x : a) x = value(rng);
  for (double& x : b) x = value(rng);
  const LibraryOperands o =
      library_operands(GemmKey{s.m, s.n, s.k, lda, ldb, ldc, s.trans_a, s.trans_b, false, false,
                               OutType::fp32, 256, 256, 256, 0});
  const std::vector<double> d = library_product(o, b, a);  // swapped: its A is our B
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t j = 0; j < s.n; ++j) {
      double want = 0;
      for (std::int64_t p = 0; p < s.k; ++p)
        want += (s.trans_a ? a[p * lda + i] : a[i * lda + p]) *
                (s.trans_b ? b[j * ldb + p] : b[p * ldb + j]);
      ASSERT_EQ(d[static_cast<std::size_t>(i * ldc + j)], want)
          << "C[" << i << ", " << j << "] trans_a=" << s.trans_a << " trans_b=" << s.trans_b;
    }
}

TEST(BlasltPlan, OperandViewsGiveTheRowMajorProductForEveryTranspose) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) expect_row_major_product({5, 7, 3, ta, tb});
}

TEST(BlasltPlan, OperandViewsOfTheLlamaQkvForward) {
  // y[tokens, q + 2 kv] = x[tokens, hidden] W^T, W stored [q + 2 kv, hidden] (trans_b).
  const LibraryOperands o = library_operands(4096, 6144, 4096, false, true, 4096, 4096, 6144);
  EXPECT_TRUE(o.trans_a);                          // its A is our W, transposed
  EXPECT_FALSE(o.trans_b);                         // its B is our x
  EXPECT_EQ(o.a, (MatrixView{4096, 6144, 4096}));  // W: k rows, n cols column-major
  EXPECT_EQ(o.b, (MatrixView{4096, 4096, 4096}));  // x: k rows, m cols
  EXPECT_EQ(o.c, (MatrixView{6144, 4096, 6144}));  // y: n rows, m cols
}

TEST(BlasltPlan, Fp8OperandsAreTheKMajorGemm) {
  const Fp8Key key{
      32,   48,    64,  80,  96,  112, Fp8Format::e4m3, Fp8Format::e4m3, OutType::bf16, false,
      true, false, 256, 256, 256, 0};
  const LibraryOperands o = library_operands(key);
  EXPECT_TRUE(o.trans_a);
  EXPECT_FALSE(o.trans_b);
  EXPECT_EQ(o.a, (MatrixView{64, 48, 96}));   // our B [n, k]: k rows, n cols, ldb
  EXPECT_EQ(o.b, (MatrixView{64, 32, 80}));   // our A [m, k]: k rows, m cols, lda
  EXPECT_EQ(o.c, (MatrixView{48, 32, 112}));  // our D [m, n]: n rows, m cols, ldd
  expect_row_major_product({3, 4, 5, false, true});
}

TEST(BlasltPlan, KeysTellEveryFieldApart) {
  const GemmKey base{64,    128,           32,  32,  128, 128, false, false, false,
                     false, OutType::bf16, 256, 256, 256, 0};
  std::vector<GemmKey> keys(14, base);
  keys[1].m = 65;
  keys[2].n = 129;
  keys[3].k = 33;
  keys[4].lda = 48;
  keys[5].ldb = 144;
  keys[6].ldc = 136;
  keys[7].trans_a = true;
  keys[8].trans_b = true;
  keys[9].accumulate = true;
  keys[10].bias = true;
  keys[11].out = OutType::fp32;
  keys[12].align_a = 16;
  keys[13].device = 1;
  std::unordered_set<GemmKey, GemmKeyHash> set(keys.begin(), keys.end());
  EXPECT_EQ(set.size(), keys.size());
  GemmKey again = base;
  EXPECT_TRUE(set.contains(again));
  EXPECT_EQ(GemmKeyHash{}(again), GemmKeyHash{}(base));

  const Fp8Key fp8{64,
                   64,
                   64,
                   64,
                   64,
                   64,
                   Fp8Format::e4m3_fnuz,
                   Fp8Format::e4m3_fnuz,
                   OutType::bf16,
                   false,
                   false,
                   false,
                   256,
                   256,
                   256,
                   0};
  std::vector<Fp8Key> fp8_keys(5, fp8);
  fp8_keys[1].format_b = Fp8Format::e5m2_fnuz;
  fp8_keys[2].fast = true;
  fp8_keys[3].bias = true;
  fp8_keys[4].align_d = 16;
  EXPECT_EQ((std::unordered_set<Fp8Key, Fp8KeyHash>(fp8_keys.begin(), fp8_keys.end()).size()),
            fp8_keys.size());
}

TEST(BlasltPlan, EpilogueAndOutputType) {
  EXPECT_EQ(epilogue(true), Epilogue::bias);
  EXPECT_EQ(epilogue(false), Epilogue::none);
  EXPECT_EQ(out_type_of<float>, OutType::fp32);
  EXPECT_EQ(out_type_of<std::uint16_t>, OutType::bf16);  // a 2-byte Out: the backend's bf16
  EXPECT_STREQ(out_name(OutType::bf16), "bf16");
}

TEST(BlasltPlan, AlignmentIsTheLowestSetBitCappedAt256) {
  auto at = [](std::uintptr_t a) { return alignment(reinterpret_cast<const void*>(a)); };
  EXPECT_EQ(at(0), 256u);
  EXPECT_EQ(at(0x10000), 256u);
  EXPECT_EQ(at(0x10080), 128u);
  EXPECT_EQ(at(0x10010), 16u);
  EXPECT_EQ(at(0x10008), 8u);
  EXPECT_EQ(at(0x10002), 2u);
}

TEST(BlasltPlan, GemmShapeChecksNameTheShape) {
  const GemmKey ok{8,   16,  4,   4, 16, 16, false, false, false, false, OutType::fp32,
                   256, 256, 256, 0};
  EXPECT_NO_THROW(check_gemm_shape(ok));
  GemmKey transposed = ok;  // A stored [k, m]: lda at least m
  transposed.trans_a = true;
  transposed.lda = 8;
  EXPECT_NO_THROW(check_gemm_shape(transposed));
  auto refused = [](GemmKey key) {
    try {
      check_gemm_shape(key);
      ADD_FAILURE() << "accepted " << describe(key);
    } catch (const core::RunError& e) {
      EXPECT_NE(std::string(e.what()).find("leading dimension"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(describe(key)), std::string::npos) << e.what();
    }
  };
  GemmKey k = ok;
  k.k = 0;
  refused(k);
  k = ok;
  k.lda = 3;  // below k
  refused(k);
  k = transposed;
  k.lda = 7;  // below m
  refused(k);
  k = ok;
  k.trans_b = true;  // B stored [n, k]: ldb 16 >= k passes, 3 does not
  k.ldb = 3;
  refused(k);
  k = ok;
  k.ldc = 15;
  refused(k);
}

TEST(BlasltPlan, HipblasltFp8FormatsFollowTheArchitecture) {
  const Fp8Formats gfx942 = hipblaslt_fp8_formats("gfx942:sramecc+:xnack-");
  EXPECT_EQ(gfx942.e4m3, Fp8Format::e4m3_fnuz);
  EXPECT_EQ(gfx942.e5m2, Fp8Format::e5m2_fnuz);
  const Fp8Formats gfx950 = hipblaslt_fp8_formats("gfx950");
  EXPECT_EQ(gfx950.e4m3, Fp8Format::e4m3);
  EXPECT_EQ(gfx950.e5m2, Fp8Format::e5m2);
  EXPECT_EQ(cublaslt_fp8_formats.e4m3, Fp8Format::e4m3);
  try {
    (void)hipblaslt_fp8_formats("gfx90a:sramecc+:xnack-");
    ADD_FAILURE() << "gfx90a (MI250, no FP8 matrix cores) accepted";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("this GPU is gfx90a"), std::string::npos) << e.what();
  }
}

/// The shapes and formats refused before any library call, each by its rule.
TEST(BlasltPlan, Fp8ShapeChecksNameTheRule) {
  const Fp8Formats mi300x = hipblaslt_fp8_formats("gfx942");
  const Fp8Key ok{64,
                  64,
                  64,
                  64,
                  64,
                  64,
                  Fp8Format::e4m3_fnuz,
                  Fp8Format::e5m2_fnuz,
                  OutType::bf16,
                  false,
                  false,
                  true,
                  256,
                  256,
                  256,
                  0};
  EXPECT_NO_THROW(check_fp8_shape(ok, 2, mi300x));
  auto refused = [&](Fp8Key key, std::int64_t out_bytes, const Fp8Formats& lib,
                     const std::string& rule) {
    try {
      check_fp8_shape(key, out_bytes, lib);
      ADD_FAILURE() << "accepted " << describe(key) << "; expected the rule: " << rule;
    } catch (const core::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(rule), std::string::npos) << e.what();
    }
  };
  Fp8Key k = ok;
  k.format_a = Fp8Format::e4m3;  // OCP on gfx942
  refused(k, 2, mi300x, "hipBLASLt takes e4m3_fnuz and e5m2_fnuz on gfx942, not e4m3");
  refused(ok, 2, cublaslt_fp8_formats,
          "cuBLASLt takes e4m3 and e5m2 on NVIDIA GPUs, not e4m3_fnuz");
  k = ok;
  k.format_a = Fp8Format::e5m2_fnuz;
  refused(k, 2, mi300x, "no e5m2_fnuz x e5m2_fnuz");
  k = ok;
  k.n = 40;
  k.ldd = 40;
  refused(k, 2, mi300x, "multiples of 16");
  k = ok;
  k.lda = 48;
  refused(k, 2, mi300x, "at least k");
  k = ok;
  k.ldb = 72;
  refused(k, 2, mi300x, "lda and ldb must be multiples of 16");
  k = ok;
  k.ldd = 60;
  refused(k, 2, mi300x, "ldd must be at least n");
  k = ok;
  k.bias = false;
  k.ldd = 66;  // 264 bytes a row of fp32
  refused(k, 4, mi300x, "16 bytes of the output type");
  k = ok;
  k.align_b = 8;
  refused(k, 2, mi300x, "16-byte boundaries");
  refused(ok, 4, mi300x, "a bias needs a bf16 D");
}

TEST(BlasltPlan, Fp8ScalesMustBeSetAndOnTheirOwn16Bytes) {
  const Fp8Key key{
      64,    64,    64,  64,  64,  64, Fp8Format::e4m3, Fp8Format::e4m3, OutType::fp32, false,
      false, false, 256, 256, 256, 0};
  const auto* scale = reinterpret_cast<const float*>(std::uintptr_t{8192});
  EXPECT_NO_THROW(check_fp8_scales(key, scale, scale + 4));
  EXPECT_THROW(check_fp8_scales(key, nullptr, scale), core::InputError);
  try {
    check_fp8_scales(key, scale, scale + 1);  // packed side by side: 4 bytes in
    ADD_FAILURE() << "a scale 4 bytes off a 16-byte boundary was accepted";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("own 16-byte slot"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tprimat::testing
