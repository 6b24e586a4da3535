// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Gpu::gemm (cuBLASLt) against Cpu::gemm in double on the same bf16 operands, its plan cache and
// graph capture, and Gpu::device_info.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gemm_cases.hpp"
#include "gpu_test.hpp"
#include "tprimat/backend/cpu.hpp"
#include "tprimat/backend/cuda/gemm_plans.hpp"
#include "tprimat/backend/environment.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/model/llama31_8b.hpp"
#include "tprimat/model/tiny.hpp"

namespace tprimat::testing {
namespace {

using backend::Gpu;// cuBLASLt's suite: NVIDIA only

using backend::Cpu;
using backend::gpu_check;
using model::Llama31_8B;
using model::Tiny;

/// bf16 output: the one rounding to bf16 (8 significant bits) costs at most 2^-9 ~ 2e-3 of the
/// element, hence of the largest one; 1e-2 leaves 5x for the fp32 accumulation order.
constexpr double bf16_out_bound = 1e-2;
/// fp32 output: bf16 x bf16 products are exact in fp32 (16 significant bits), so the only error
/// is fp32 accumulation. Tensor cores add one truncated partial sum per k-step of 16, so k = 4096
/// makes 256 additions of at most one ulp of a partial sum: <= 256 * 2^-23 ~ 3e-5 of the largest
/// output even in the worst case (errors all of one sign); typical errors are ~1e-6.
constexpr double fp32_out_bound = 1e-4;

/// Random operands on host and device, one Gpu::gemm, and its error against the double
/// reference on the same (bf16-rounded) values.
template <class Out>
class GemmCheck {
 public:
  GemmCheck(const GemmCase& g, std::uint64_t seed, cudaStream_t s)
      : g_(g),
        s_(s),
        lda_(leading(g.trans_a ? g.m : g.k, g)),
        ldb_(leading(g.trans_b ? g.k : g.n, g)),
        ldc_(leading(g.n, g)),
        // ~N(0, 1), rounded to bf16: the reference multiplies exactly what the device reads.
        // C starts bf16-rounded too, so a bf16 C and its reference start from the same value.
        a_(round_bf16(random_normal((g.trans_a ? g.k : g.m) * lda_, seed))),
        b_(round_bf16(random_normal((g.trans_b ? g.n : g.k) * ldb_, seed + 1))),
        bias_(round_bf16(random_normal(g.n, seed + 2))),
        c0_(round_bf16(random_normal(g.m * ldc_, seed + 3))),
        da_(upload<bf16>(to_bf16(a_), s)),
        db_(upload<bf16>(to_bf16(b_), s)),
        dbias_(upload<bf16>(to_bf16(bias_), s)),
        dc_(g.m * ldc_, s) {
    reset_output();
  }

  /// Poisons C (NaN) before a beta-0 call, which must not read it; restores C otherwise.
  void reset_output() {
    if (g_.beta == 0)
      dc_.fill_bytes(0xFF);
    else
      dc_.upload(to_out<Out>(c0_));
    gpu_check(cudaStreamSynchronize(s_), "reset output");
  }

  void launch() {
    Gpu::gemm<Out>(g_.trans_a, g_.trans_b, g_.m, g_.n, g_.k, da_.data(), lda_, db_.data(), ldb_,
                    g_.beta, dc_.data(), ldc_, g_.bias ? dbias_.data() : nullptr, s_);
  }

  /// Relative error of C[m, n] (all rows, or `sampled_rows` spread over m for large shapes);
  /// also expects the padding columns of C untouched.
  double error(std::int64_t sampled_rows = 0) {
    gpu_check(cudaStreamSynchronize(s_), "gemm");
    const std::vector<float> got_all = from_out<Out>(dc_.download());
    std::vector<std::int64_t> rows;
    const std::int64_t r = sampled_rows > 0 ? std::min(sampled_rows, g_.m) : g_.m;
    for (std::int64_t i = 0; i < r; ++i) rows.push_back(i * g_.m / r + (i * 7) % (g_.m / r));

    // op(A) rows gathered straight from the contract (A stored [k, m] when trans_a), then the
    // CPU reference in double for op(A)_rows [r, k] x op(B) [k, n] + beta C_rows (+ bias).
    const std::int64_t k = g_.k, n = g_.n;
    std::vector<double> a_rows(r * k), b(b_.begin(), b_.end()), want(r * n);
    for (std::int64_t i = 0; i < r; ++i)
      for (std::int64_t kk = 0; kk < k; ++kk)
        a_rows[i * k + kk] = g_.trans_a ? a_[kk * lda_ + rows[i]] : a_[rows[i] * lda_ + kk];
    for (std::int64_t i = 0; i < r; ++i)
      for (std::int64_t j = 0; j < n; ++j) want[i * n + j] = c0_[rows[i] * ldc_ + j];
    Cpu::gemm<double>(false, g_.trans_b, r, n, k, 1.0, a_rows.data(), k, b.data(), ldb_,
                      double(g_.beta), want.data(), n);
    if (g_.bias) {
      const std::vector<double> bias(bias_.begin(), bias_.end());
      Cpu::add_bias(want.data(), bias.data(), r, n);
    }

    std::vector<float> got(r * n), want_f(want.begin(), want.end());
    for (std::int64_t i = 0; i < r; ++i)
      for (std::int64_t j = 0; j < n; ++j) got[i * n + j] = got_all[rows[i] * ldc_ + j];

    // Columns [n, ldc) belong to the caller: still poisoned (beta 0) or still C (beta != 0).
    std::int64_t touched = 0;
    for (std::int64_t i = 0; i < g_.m; ++i)
      for (std::int64_t j = n; j < ldc_; ++j) {
        const float v = got_all[i * ldc_ + j];
        touched += g_.beta == 0 ? !std::isnan(v) : v != c0_[i * ldc_ + j];
      }
    EXPECT_EQ(touched, 0) << "gemm wrote outside C[m, n] (padding columns of ldc)";
    return relative_error(got, want_f);
  }

 private:
  GemmCase g_;
  cudaStream_t s_;
  std::int64_t lda_, ldb_, ldc_;
  std::vector<float> a_, b_, bias_, c0_;
  DeviceBuffer<bf16> da_, db_, dbias_;
  DeviceBuffer<Out> dc_;
};

/// One call on fresh random inputs, checked against its bound.
template <class Out>
void check_gemm(const GemmCase& g, std::int64_t sampled_rows = 0) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(describe<Out>(g) + ", seed " + std::to_string(seed));
  TestStream s;
  Gpu::gemm_prepare(s);
  GemmCheck<Out> check(g, seed, s);
  check.launch();
  const double bound = is_bf16<Out> ? bf16_out_bound : fp32_out_bound;
  EXPECT_LE(check.error(sampled_rows), bound);
}

constexpr bool flags[] = {false, true};

TEST(CudaGemm, AllTransposesBf16Out) {
  TPRIMAT_REQUIRE_GPU();
  for (bool ta : flags)
    for (bool tb : flags)
      check_gemm<bf16>({.trans_a = ta, .trans_b = tb, .m = 136, .n = 200, .k = 328});
}

TEST(CudaGemm, AllTransposesFp32Out) {
  TPRIMAT_REQUIRE_GPU();
  for (bool ta : flags)
    for (bool tb : flags)
      check_gemm<float>({.trans_a = ta, .trans_b = tb, .m = 136, .n = 200, .k = 328});
}

// beta 1: gradient accumulation into fp32 (weight gradients) and a bf16 residual-style add.
TEST(CudaGemm, AccumulatesIntoFp32C) {
  TPRIMAT_REQUIRE_GPU();
  for (bool ta : flags)
    for (bool tb : flags)
      check_gemm<float>({.trans_a = ta, .trans_b = tb, .m = 96, .n = 176, .k = 264, .beta = 1});
}

TEST(CudaGemm, AccumulatesIntoBf16C) {
  TPRIMAT_REQUIRE_GPU();
  for (bool ta : flags)
    for (bool tb : flags)
      check_gemm<bf16>({.trans_a = ta, .trans_b = tb, .m = 96, .n = 176, .k = 264, .beta = 1});
}

// bias[n] broadcast over rows (Qwen's QKV bias): the forward pattern (trans_b), every other
// combination, and bias together with beta 1.
TEST(CudaGemm, BiasEpilogueBf16Out) {
  TPRIMAT_REQUIRE_GPU();
  for (bool ta : flags)
    for (bool tb : flags)
      check_gemm<bf16>({.trans_a = ta, .trans_b = tb, .m = 120, .n = 232, .k = 144, .bias = true});
  check_gemm<bf16>({.trans_b = true, .m = 64, .n = 72, .k = 80, .beta = 1, .bias = true});
}

// Non-square, odd multiples of 8 (16-byte rows, the cuBLASLt minimum), and padded leading
// dimensions (views into wider buffers) with the padding checked untouched.
TEST(CudaGemm, NonSquareAndPaddedShapes) {
  TPRIMAT_REQUIRE_GPU();
  const GemmCase shapes[] = {
      {.m = 8, .n = 8, .k = 8},
      {.m = 24, .n = 1000, .k = 72},
      {.m = 264, .n = 8, .k = 520},
      {.m = 520, .n = 264, .k = 8},
      {.m = 40, .n = 56, .k = 104, .pad = 8},
      {.trans_a = true, .trans_b = true, .m = 72, .n = 24, .k = 40, .pad = 24},
  };
  for (GemmCase g : shapes) {
    check_gemm<bf16>(g);
    check_gemm<float>(g);
    g.beta = 1;
    check_gemm<float>(g);
  }
}

// The Tiny model at 256 tokens: forward (x W^T), data gradient (dy W) and weight gradient
// (dy^T x, accumulated in fp32).
TEST(CudaGemm, TinyModelShapes) {
  TPRIMAT_REQUIRE_GPU();
  constexpr std::int64_t tokens = 256;
  constexpr std::int64_t qkv = (Tiny::heads + 2 * Tiny::kv_heads) * Tiny::head_dim;  // 256
  check_gemm<bf16>({.trans_b = true, .m = tokens, .n = qkv, .k = Tiny::hidden});
  check_gemm<bf16>({.trans_b = true, .m = tokens, .n = Tiny::ffn, .k = Tiny::hidden});
  check_gemm<bf16>({.trans_b = true, .m = tokens, .n = Tiny::hidden, .k = Tiny::ffn});
  check_gemm<float>({.m = tokens, .n = Tiny::hidden, .k = Tiny::ffn});  // 256x128x352
  check_gemm<float>({.trans_a = true, .m = Tiny::ffn, .n = Tiny::hidden, .k = tokens, .beta = 1});
  check_gemm<float>({.trans_a = true, .m = Tiny::hidden, .n = Tiny::ffn, .k = tokens, .beta = 1});
}

// Llama 3.1 8B's O projection at 2048 tokens, fp32 out (2048x4096x4096; 64 rows checked), and
// its weight gradient (trans_a, accumulated).
TEST(CudaGemm, LlamaShapeFp32Out) {
  TPRIMAT_REQUIRE_GPU();
  constexpr std::int64_t tokens = 2048, h = Llama31_8B::hidden;
  check_gemm<float>({.trans_b = true, .m = tokens, .n = h, .k = h}, 64);
  check_gemm<float>({.trans_a = true, .m = h, .n = h, .k = tokens, .beta = 1}, 64);
}

TEST(CudaGemm, CachesOnePlanPerShape) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  TestStream s;
  Gpu::gemm_prepare(s);
  Gpu::gemm_prepare(s);  // idempotent
  // A shape no other test uses, so the counts below are this test's own.
  const GemmCase g{.trans_b = true, .m = 48, .n = 456, .k = 392};
  GemmCheck<float> check(g, seed, s);
  const std::size_t before = backend::gemm_cached_plans();
  check.launch();
  EXPECT_EQ(backend::gemm_cached_plans(), before + 1) << "first call plans the shape";
  check.reset_output();
  check.launch();
  EXPECT_EQ(backend::gemm_cached_plans(), before + 1) << "second call reuses the plan";
  EXPECT_LE(check.error(), fp32_out_bound) << "the cached plan computes the same product";

  GemmCase accumulate = g;
  accumulate.beta = 1;
  GemmCheck<float> check_beta(accumulate, seed + 10, s);
  check_beta.launch();
  EXPECT_EQ(backend::gemm_cached_plans(), before + 2) << "beta != 0 is another plan";
  EXPECT_LE(check_beta.error(), fp32_out_bound);
  GemmCheck<bf16> check_bf16(g, seed + 20, s);
  check_bf16.launch();
  EXPECT_EQ(backend::gemm_cached_plans(), before + 3) << "bf16 output is another plan";
  EXPECT_LE(check_bf16.error(), bf16_out_bound);
}

// The first call of a shape times the heuristic's candidates on its own operands
// (backend/blaslt/tuning.hpp): a weight gradient's accumulation into fp32 runs once per candidate
// and then for real, so its C is saved and restored around the timing; the product is still
// C + AB once, within the accumulating bound. TPRIMAT_GEMM_TUNING=0 skips the timing.
TEST(CudaGemm, TimesTheCandidatesOnceAndKeepsTheAccumulation) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  TestStream s;
  Gpu::gemm_prepare(s);
  const GemmCase g{.trans_a = true, .m = 1024, .n = 1536, .k = 2048, .beta = 1};  // no other test's
  const backend::GemmTuning before = backend::gemm_tuning();
  GemmCheck<float> check(g, seed, s);
  check.launch();
  EXPECT_LE(check.error(64), fp32_out_bound) << "C + AB, accumulated once";
  const backend::GemmTuning after = backend::gemm_tuning();
  const std::string algo = backend::gemm_algorithm(
      {.trans_a = true, .m = g.m, .n = g.n, .k = g.k, .lda = g.m, .ldb = g.n, .ldc = g.n,
       .fp32_out = true, .accumulate = true});
  if (!backend::gemm_tuning_enabled()) {
    EXPECT_EQ(after.timed, before.timed) << "tuning off: nothing timed";
    EXPECT_NE(algo.find(" rank=-1"), std::string::npos) << algo;
  } else {
    EXPECT_EQ(after.timed, before.timed + 1) << "cuBLASLt offers several algorithms here";
    EXPECT_EQ(algo.find(" rank=-1"), std::string::npos) << algo;
  }
  check.reset_output();
  check.launch();
  EXPECT_EQ(backend::gemm_tuning().timed, after.timed) << "a shape is timed once";
  EXPECT_LE(check.error(64), fp32_out_bound) << "the chosen algorithm, again";
}

// What the engine relies on: after one eager call, the same GEMM captured into a CUDA graph
// replays correctly and plans nothing new.
TEST(CudaGemm, ReplaysInCapturedGraph) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  TestStream s;
  for (float beta : {0.0f, 1.0f}) {
    const GemmCase g{.trans_a = true, .m = 128, .n = 192, .k = 256, .beta = beta};
    SCOPED_TRACE(describe<float>(g));
    GemmCheck<float> check(g, seed, s);
    check.launch();  // eager: plans the shape
    const std::size_t plans = backend::gemm_cached_plans();
    check.reset_output();

    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    gpu_check(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "begin capture");
    check.launch();
    gpu_check(cudaStreamEndCapture(s, &graph), "end capture");
    gpu_check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    gpu_check(cudaGraphLaunch(exec, s), "graph launch");
    EXPECT_LE(check.error(), fp32_out_bound);
    EXPECT_EQ(backend::gemm_cached_plans(), plans);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
}

TEST(CudaGemm, RejectsShortLeadingDimension) {
  TPRIMAT_REQUIRE_GPU();
  TestStream s;
  Gpu::gemm_prepare(s);
  DeviceBuffer<bf16> a(64 * 64, s), b(64 * 64, s), c(64 * 64, s);
  try {
    // lda 32 < k 64: rows of A would overlap.
    Gpu::gemm<bf16>(false, false, 64, 64, 64, a.data(), 32, b.data(), 64, 0.0f, c.data(), 64,
                     nullptr, s);
    ADD_FAILURE() << "expected core::RunError";
  } catch (const core::RunError& e) {
    EXPECT_NE(std::string(e.what()).find("m=64 n=64 k=64"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("lda=32"), std::string::npos) << e.what();
  }
}

TEST(CudaDeviceInfo, FieldsFilled) {
  TPRIMAT_REQUIRE_GPU();
  const backend::DeviceInfo info = Gpu::device_info();
  EXPECT_EQ(info.platform, "nvd");
  EXPECT_EQ(info.software_stack, "cuda");
  EXPECT_FALSE(info.device_name.empty());
  EXPECT_EQ(info.device_count, Gpu::device_count());
  EXPECT_GT(info.cores, 0) << "SM count";
  EXPECT_GT(info.total_memory_gb, 1.0);
  EXPECT_FALSE(info.driver_version.empty());
  EXPECT_FALSE(info.runtime_version.empty());
  EXPECT_EQ(info.blas_version.rfind("cuBLASLt ", 0), 0u) << info.blas_version;
#if defined(TPRIMAT_HAVE_CUDNN)
  EXPECT_EQ(info.dnn_version.rfind("cuDNN ", 0), 0u) << info.dnn_version;
#endif
  const bool hopper = info.device_name.find("H100") != std::string::npos ||
                      info.device_name.find("H200") != std::string::npos;
  if (hopper) {
    EXPECT_GT(info.peak_tflops_dense, 0) << info.device_name;
  }
  if (info.device_name == "NVIDIA H100 80GB HBM3") {
    EXPECT_DOUBLE_EQ(info.peak_tflops_dense, 989.4) << "H100 SXM dense bf16, not the sparse 1979";
  }
  RecordProperty("device", info.device_name + ", driver " + info.driver_version + ", runtime " +
                               info.runtime_version + ", " + info.blas_version + ", " +
                               info.dnn_version);
}

// The one check that runs without a GPU: the documented error instead of a crash.
TEST(CudaDeviceInfo, ThrowsWithoutGpu) {
  if (Gpu::device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_THROW(Gpu::device_info(), core::RunError);
}

}  // namespace
}  // namespace tprimat::testing

namespace tprimat::testing {
namespace {

// gemm_add: D = A B + C with C and D distinct (the residual stream's add); C must stay as it was.
TEST(CudaGemmAdd, ReadsTheResidualAndWritesAnotherBuffer) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = tprimat::testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t m = 200, n = 136, k = 328;
  const auto a = tprimat::testing::round_bf16(tprimat::testing::random_normal(m * k, seed));
  const auto b = tprimat::testing::round_bf16(tprimat::testing::random_normal(k * n, seed + 1));
  const auto c = tprimat::testing::random_normal(m * n, seed + 2);
  std::vector<double> want(m * n);
  for (std::int64_t i = 0; i < m * n; ++i) want[i] = c[i];
  const std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end());
  Cpu::gemm<double>(false, false, m, n, k, 1.0, ad.data(), k, bd.data(), n, 1.0, want.data(), n);
  tprimat::testing::TestStream s;
  auto da = tprimat::testing::upload<bf16>(tprimat::testing::to_bf16(a), s);
  auto db = tprimat::testing::upload<bf16>(tprimat::testing::to_bf16(b), s);
  auto dc = tprimat::testing::upload<float>(c, s);
  DeviceBuffer<float> dd(m * n, s);
  dd.fill_bytes(0xFF);  // poisoned: every element must be written
  Gpu::gemm_add<float>(false, false, m, n, k, da.data(), k, db.data(), n, dc.data(), dd.data(), n,
                        s);
  const auto got = dd.download();
  const std::vector<float> wantf(want.begin(), want.end());
  // fp32 output from exact bf16 products, fp32 accumulation over k = 328: 1e-4 relative.
  EXPECT_LE(tprimat::testing::relative_error(got, wantf), 1e-4);
  EXPECT_EQ(dc.download(), c) << "the residual input must not be written";
}

}  // namespace
}  // namespace tprimat::testing
