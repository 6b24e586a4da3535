// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Gpu's FP8 ops bit for bit against the CPU reference (kernels/fp8_cast_reference.hpp):
// every bf16 pattern at several scales, fp32 classes, cast_transpose on odd shapes with its amax,
// SwiGLU's tile passes against its kernels and a cast, and the delayed/current scale updates
// against a CPU model of the history.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gpu_test.hpp"
#include "tprimat/kernels/fp8_cast_reference.hpp"

namespace tprimat::testing {
namespace {

using kernels::fp8_reference_cast;
using kernels::Fp8Format;

// The OCP formats take Hopper's hardware cvt, the fnuz ones the portable bit arithmetic that
// gfx942 runs: on CUDA both are checked here.
constexpr Fp8Format all_formats[] = {Fp8Format::e4m3, Fp8Format::e5m2, Fp8Format::e4m3_fnuz,
                                     Fp8Format::e5m2_fnuz};
constexpr float inf = std::numeric_limits<float>::infinity();
// Unwritten output bytes keep this; it is no format's NaN (0x7f/0x80), so a NaN input left
// unwritten cannot pass.
constexpr int poison = 0xff;

float bf16_value(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}
std::vector<bf16> bf16_of_bits(const std::vector<std::uint16_t>& bits) {
  std::vector<bf16> v(bits.size());
  std::memcpy(v.data(), bits.data(), bits.size() * sizeof(std::uint16_t));
  return v;
}
/// max |x| with NaNs left out, as the kernels reduce it.
float amax_of(const std::vector<float>& x) {
  float m = 0;
  for (const float v : x) m = std::fmax(m, std::fabs(v));
  return m;
}

/// A tensor's [rows, cols] for the 2-D passes.
struct Shape {
  std::int64_t rows, cols;
};

/// Counts the bytes that differ from the reference of x * scale and reports the first few.
int expect_bytes(const std::vector<std::uint8_t>& got, const std::vector<float>& x, float scale,
                 Fp8Format f, const char* what) {
  int bad = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::uint8_t want = fp8_reference_cast(x[i] * scale, f);
    if (got[i] != want && ++bad <= 5)
      ADD_FAILURE() << what << " format " << int(f) << " x " << std::hexfloat << x[i] << " scale "
                    << scale << ": got 0x" << std::hex << int(got[i]) << ", want 0x" << int(want);
  }
  return bad;
}

TEST(GpuFp8Cast, EveryBf16PatternAtSeveralScales) {
  TPRIMAT_REQUIRE_GPU();
  TestStream s;
  std::vector<std::uint16_t> bits(65536);
  std::vector<float> x(65536);
  for (std::uint32_t b = 0; b < 65536; ++b) {
    bits[b] = static_cast<std::uint16_t>(b);
    x[b] = bf16_value(static_cast<std::uint16_t>(b));
  }
  const std::vector<bf16> host = bf16_of_bits(bits);
  DeviceBuffer<bf16> d_x = upload<bf16>(host, s);
  DeviceBuffer<std::uint8_t> d_out(x.size(), s);
  DeviceBuffer<float> d_scale(1, s), d_amax(1, s);
  for (const Fp8Format f : all_formats)
    for (const float scale : {1.0f, 0x1p-8f, 0x1p8f, 0.7371f}) {
      d_scale.upload(std::vector<float>{scale});
      d_amax.fill_bytes(0);
      d_out.fill_bytes(poison);
      Gpu::fp8_cast(d_x.data(), 65536, f, d_scale.data(), d_out.data(), d_amax.data(), s);
      EXPECT_EQ(expect_bytes(d_out.download(), x, scale, f, "bf16"), 0);
      EXPECT_EQ(d_amax.download()[0], inf) << "the patterns include +-inf; NaNs are left out";
    }
}

TEST(GpuFp8Cast, Fp32Classes) {
  TPRIMAT_REQUIRE_GPU();
  TestStream s;
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937 rng(static_cast<std::uint32_t>(seed));
  std::vector<float> x;
  for (const float stddev : {1.0f, 1e-3f, 300.0f, 3e4f})
    for (const float v : random_normal(20000, rng(), stddev)) x.push_back(v);
  for (int i = 0; i < 20000; ++i)
    x.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));  // any bits
  for (int i = 0; i < 5000; ++i)
    x.push_back(
        std::bit_cast<float>(static_cast<std::uint32_t>(rng() & 0x807fffffu)));  // fp32 subnormals
  // Around each value and midpoint of each format, and its saturation boundary, +-4 ulps.
  for (const Fp8Format f : all_formats) {
    const std::vector<double>& v = kernels::fp8_reference_values(f);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double next = i + 1 < v.size() ? v[i + 1] : 2 * v[i];
      for (const double p : {v[i], 0.5 * (v[i] + next)})
        for (int d = -4; d <= 4; ++d)
          for (const float sign : {1.0f, -1.0f})
            x.push_back(sign * std::bit_cast<float>(std::bit_cast<std::uint32_t>(float(p)) + d));
    }
  }
  for (const float special : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                              448.0f, 57344.0f, 240.0f, 464.0f, 61440.0f, 248.0f})
    x.push_back(special);
  DeviceBuffer<float> d_x = upload<float>(x, s);
  DeviceBuffer<std::uint8_t> d_out(x.size(), s);
  DeviceBuffer<float> d_scale(1, s), d_amax(1, s);
  for (const Fp8Format f : all_formats)
    for (const float scale : {1.0f, 0.7371f}) {
      d_scale.upload(std::vector<float>{scale});
      d_amax.fill_bytes(0);
      d_out.fill_bytes(poison);
      Gpu::fp8_cast(d_x.data(), static_cast<std::int64_t>(x.size()), f, d_scale.data(),
                     d_out.data(), d_amax.data(), s);
      EXPECT_EQ(expect_bytes(d_out.download(), x, scale, f, "fp32"), 0);
      EXPECT_EQ(d_amax.download()[0], amax_of(x));
    }
}

// Unaligned and short inputs take the one-element kernel; an odd length leaves a tail.
TEST(GpuFp8Cast, OddLengthsAndAmaxOnly) {
  TPRIMAT_REQUIRE_GPU();
  TestStream s;
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  const std::vector<float> x = round_bf16(random_normal(100003, seed, 50.0f));
  DeviceBuffer<bf16> d_x = upload<bf16>(to_bf16(x), s);
  DeviceBuffer<std::uint8_t> d_out(x.size(), s);
  DeviceBuffer<float> d_scale(1, s), d_amax(1, s);
  d_scale.upload(std::vector<float>{3.3f});
  for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
    const std::vector<float> part(x.begin() + offset, x.end());
    d_amax.fill_bytes(0);
    d_out.fill_bytes(poison);
    Gpu::fp8_cast(d_x.data() + offset, static_cast<std::int64_t>(part.size()), Fp8Format::e4m3,
                   d_scale.data(), d_out.data() + offset, d_amax.data(), s);
    std::vector<std::uint8_t> got = d_out.download();
    got.erase(got.begin(), got.begin() + offset);
    EXPECT_EQ(expect_bytes(got, part, 3.3f, Fp8Format::e4m3, "offset"), 0) << offset;
    EXPECT_EQ(d_amax.download()[0], amax_of(part));
    d_amax.fill_bytes(0);
    Gpu::fp8_amax(d_x.data() + offset, static_cast<std::int64_t>(part.size()), d_amax.data(), s);
    EXPECT_EQ(d_amax.download()[0], amax_of(part));
  }
}

TEST(GpuFp8Cast, CastTransposeOddShapes) {
  TPRIMAT_REQUIRE_GPU();
  TestStream s;
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  for (const Shape sh :
       {Shape{1, 1}, Shape{1, 77}, Shape{77, 1}, Shape{64, 64}, Shape{65, 130}, Shape{127, 257},
        Shape{8, 24}, Shape{256, 512}, Shape{1000, 8}, Shape{24, 1000}, Shape{136, 72}})
    for (const Fp8Format f : all_formats) {
      SCOPED_TRACE(::testing::Message() << sh.rows << " x " << sh.cols << " format " << int(f));
      const std::size_t n = static_cast<std::size_t>(sh.rows * sh.cols);
      // Wide enough to saturate at this scale and to reach the subnormals.
      std::vector<float> x = round_bf16(random_normal(n, seed + n, 40.0f));
      x[n / 2] = -1e-6f;
      x = round_bf16(x);
      const float scale = 5.9f;
      DeviceBuffer<bf16> d_x = upload<bf16>(to_bf16(x), s);
      DeviceBuffer<std::uint8_t> d_out(n, s), d_out_t(n, s);
      DeviceBuffer<float> d_scale(1, s), d_amax(1, s);
      d_scale.upload(std::vector<float>{scale});
      d_amax.fill_bytes(0);
      d_out.fill_bytes(poison);
      d_out_t.fill_bytes(poison);
      Gpu::fp8_cast_transpose(d_x.data(), sh.rows, sh.cols, f, d_scale.data(), d_out.data(),
                               d_out_t.data(), d_amax.data(), s);
      EXPECT_EQ(expect_bytes(d_out.download(), x, scale, f, "out"), 0);
      std::vector<float> xt(n);
      for (std::int64_t r = 0; r < sh.rows; ++r)
        for (std::int64_t c = 0; c < sh.cols; ++c) xt[c * sh.rows + r] = x[r * sh.cols + c];
      EXPECT_EQ(expect_bytes(d_out_t.download(), xt, scale, f, "out_t"), 0);
      EXPECT_EQ(d_amax.download()[0], amax_of(x));
      // No `out`: the transpose alone (recast FP8 copies), the same bytes, no amax.
      d_out_t.fill_bytes(poison);
      Gpu::fp8_cast_transpose(d_x.data(), sh.rows, sh.cols, f, d_scale.data(), nullptr,
                               d_out_t.data(), nullptr, s);
      EXPECT_EQ(expect_bytes(d_out_t.download(), xt, scale, f, "out_t alone"), 0);
    }
}

/// SwiGLU's tile passes (the output, or both gradients, computed where they are cast) against
/// SwiGLU's own kernels followed by cast_transpose: the same bytes and amaxes, bit for bit, on
/// odd and aligned shapes; then each target alone (rows, transpose, amax only).
TEST(GpuFp8Cast, SwigluCastsAreTheUnfusedOnesBitForBit) {
  TPRIMAT_REQUIRE_GPU();
  TestStream s;
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  for (const Shape sh : {Shape{1, 1}, Shape{65, 130}, Shape{127, 257}, Shape{8, 24},
                         Shape{256, 512}, Shape{136, 72}})
    for (const Fp8Format f : all_formats) {
      SCOPED_TRACE(::testing::Message() << sh.rows << " x " << sh.cols << " format " << int(f));
      const std::size_t n = static_cast<std::size_t>(sh.rows * sh.cols);
      // Wide enough that some outputs saturate at these scales.
      const auto input = [&](std::uint64_t k, float stddev) {
        return upload<bf16>(to_bf16(random_normal(n, seed + k * 7919 + n, stddev)), s);
      };
      DeviceBuffer<bf16> gate = input(1, 4.0f), up = input(2, 20.0f), dh = input(3, 20.0f);
      DeviceBuffer<bf16> h(n, s), dgate(n, s), dup(n, s);
      Gpu::swiglu_forward(gate.data(), up.data(), h.data(), static_cast<std::int64_t>(n), s);
      Gpu::swiglu_backward(gate.data(), up.data(), dh.data(), dgate.data(), dup.data(), nullptr,
                           static_cast<std::int64_t>(n), s);
      DeviceBuffer<float> scales(2, s);
      scales.upload(std::vector<float>{5.9f, 0.37f});
      // What one target of a pass wrote.
      struct Cast {
        DeviceBuffer<std::uint8_t> out, out_t;
        DeviceBuffer<float> amax;
        Cast(std::size_t n, gpuStream_t st) : out(n, st), out_t(n, st), amax(1, st) {
          out.fill_bytes(poison);
          out_t.fill_bytes(poison);
          amax.fill_bytes(0);
        }
        kernels::Fp8Target target(const float* scale) {
          return {scale, out.data(), out_t.data(), amax.data()};
        }
      };
      const auto same = [](Cast& want, Cast& got, const char* what) {
        EXPECT_TRUE(want.out.download() == got.out.download()) << what << ": rows differ";
        EXPECT_TRUE(want.out_t.download() == got.out_t.download()) << what << ": transposes differ";
        EXPECT_EQ(want.amax.download()[0], got.amax.download()[0]) << what << ": amax";
      };
      // The output.
      Cast want_h(n, s), got_h(n, s);
      Gpu::fp8_cast_transpose(h.data(), sh.rows, sh.cols, f, scales.data(), want_h.out.data(),
                              want_h.out_t.data(), want_h.amax.data(), s);
      Gpu::fp8_swiglu_cast(gate.data(), up.data(), sh.rows, sh.cols, f, got_h.target(scales.data()),
                           s);
      same(want_h, got_h, "h");
      // The gradients, each with its own scale.
      Cast want_dg(n, s), want_du(n, s), got_dg(n, s), got_du(n, s);
      Gpu::fp8_cast_transpose(dgate.data(), sh.rows, sh.cols, f, scales.data(), want_dg.out.data(),
                              want_dg.out_t.data(), want_dg.amax.data(), s);
      Gpu::fp8_cast_transpose(dup.data(), sh.rows, sh.cols, f, scales.data() + 1,
                              want_du.out.data(), want_du.out_t.data(), want_du.amax.data(), s);
      Gpu::fp8_swiglu_grad_cast(gate.data(), up.data(), dh.data(), sh.rows, sh.cols, f,
                                got_dg.target(scales.data()), got_du.target(scales.data() + 1), s);
      same(want_dg, got_dg, "dgate");
      same(want_du, got_du, "dup");
      ASSERT_GT(want_dg.amax.download()[0], 0.0f);
      // Each target alone: the transpose (a recast input), the rows, the amax (current scaling's
      // pass before the cast); nothing else written.
      Cast only_t(n, s), only_rows(n, s), only_amax(n, s);
      Gpu::fp8_swiglu_cast(gate.data(), up.data(), sh.rows, sh.cols, f,
                           {scales.data(), nullptr, only_t.out_t.data(), nullptr}, s);
      Gpu::fp8_swiglu_cast(gate.data(), up.data(), sh.rows, sh.cols, f,
                           {scales.data(), only_rows.out.data(), nullptr, nullptr}, s);
      Gpu::fp8_swiglu_grad_cast(gate.data(), up.data(), dh.data(), sh.rows, sh.cols, f,
                                {nullptr, nullptr, nullptr, only_amax.amax.data()},
                                {nullptr, nullptr, nullptr, nullptr}, s);
      EXPECT_TRUE(only_t.out_t.download() == want_h.out_t.download());
      EXPECT_TRUE(only_rows.out.download() == want_h.out.download());
      EXPECT_EQ(only_amax.amax.download()[0], want_dg.amax.download()[0]);
      const std::vector<std::uint8_t> untouched(n, poison);
      EXPECT_TRUE(only_t.out.download() == untouched && only_rows.out_t.download() == untouched &&
                  only_amax.out.download() == untouched && only_amax.out_t.download() == untouched);
      EXPECT_EQ(only_t.amax.download()[0], 0.0f);
    }
}

// The CPU model of delayed scaling: history[0] the newest, the scale from max(history).
struct DelayedModel {
  std::vector<float> history;
  float scale = 1, scale_inv = 1;
  void step(float amax, Fp8Format f, int margin) {
    std::rotate(history.rbegin(), history.rbegin() + 1, history.rend());
    history[0] = amax;
    float m = 0;
    for (const float v : history) m = std::fmax(m, v);
    scale = kernels::fp8_reference_scale(m, scale, f, margin);
    scale_inv = 1.0f / scale;
  }
};

TEST(GpuFp8Cast, DelayedScaleUpdateFollowsTheHistory) {
  TPRIMAT_REQUIRE_GPU();
  TestStream s;
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937 rng(static_cast<std::uint32_t>(seed));
  std::uniform_real_distribution<float> draw(1e-3f, 1e3f);
  for (const int h : {1, 4, 1024})
    for (const Fp8Format f : {Fp8Format::e4m3, Fp8Format::e5m2, Fp8Format::e4m3_fnuz})
      for (const int margin : {0, 2}) {
        SCOPED_TRACE(::testing::Message()
                     << "history " << h << " format " << int(f) << " margin " << margin);
        constexpr int count = 3;
        std::vector<DelayedModel> model(count, DelayedModel{std::vector<float>(h, 0.0f)});
        DeviceBuffer<float> d_hist(count * h, s), d_amax(count, s), d_scale(count, s),
            d_scale_inv(count, s);
        d_hist.fill_bytes(0);
        d_scale.upload(std::vector<float>(count, 1.0f));
        d_scale_inv.upload(std::vector<float>(count, 1.0f));
        // Step 0 sees zeros (keep the scale), a later step an infinity (kept while in the
        // history), then a tiny amax whose quotient overflows.
        for (int step = 0; step < 8 + h % 7; ++step) {
          std::vector<float> amax(count);
          for (int t = 0; t < count; ++t) amax[t] = draw(rng);
          if (step == 0) amax = {0.0f, 0.0f, 0.0f};
          if (step == 2) amax[1] = inf;
          if (step == 3) amax[2] = 1e-44f;
          d_amax.upload(amax);
          Gpu::fp8_delayed_scale_update(d_hist.data(), h, d_amax.data(), count, f, margin,
                                         d_scale.data(), d_scale_inv.data(), s);
          for (int t = 0; t < count; ++t) model[t].step(amax[t], f, margin);
          const std::vector<float> hist = d_hist.download(), scale = d_scale.download(),
                                   scale_inv = d_scale_inv.download(), after = d_amax.download();
          for (int t = 0; t < count; ++t) {
            EXPECT_EQ(scale[t], model[t].scale) << "step " << step << " tensor " << t;
            EXPECT_EQ(scale_inv[t], model[t].scale_inv) << "step " << step << " tensor " << t;
            EXPECT_EQ(after[t], 0.0f) << "the step's amax is zeroed for the next casts";
            EXPECT_TRUE(
                std::equal(model[t].history.begin(), model[t].history.end(), hist.begin() + t * h))
                << "step " << step << " tensor " << t;
          }
        }
      }
}

TEST(GpuFp8Cast, CurrentScaleUpdate) {
  TPRIMAT_REQUIRE_GPU();
  TestStream s;
  const std::vector<float> amax = {3.5f, 0.0f, inf, 1e-44f, 448.0f, 0.001953125f, 7.25e4f};
  const std::vector<float> previous = {2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f};
  const int count = static_cast<int>(amax.size());
  for (const Fp8Format f : all_formats)
    for (const int stride : {1, 4}) {  // 4: each scale_inv on its own 16 bytes, as cuBLASLt's
      DeviceBuffer<float> d_amax = upload<float>(amax, s);
      DeviceBuffer<float> d_scale = upload<float>(previous, s);
      DeviceBuffer<float> d_scale_inv = upload<float>(std::vector<float>(count * stride, -1.0f), s);
      Gpu::fp8_current_scale_update(d_amax.data(), count, f, 1, d_scale.data(),
                                     d_scale_inv.data(), s, stride);
      const std::vector<float> scale = d_scale.download(), scale_inv = d_scale_inv.download(),
                               after = d_amax.download();
      for (int t = 0; t < count; ++t) {
        const float want = kernels::fp8_reference_scale(amax[t], previous[t], f, 1);
        EXPECT_EQ(scale[t], want) << "format " << int(f) << " amax " << amax[t];
        EXPECT_EQ(scale_inv[t * stride], 1.0f / want) << "format " << int(f) << " amax " << amax[t];
        for (int gap = 1; gap < stride; ++gap)
          EXPECT_EQ(scale_inv[t * stride + gap], -1.0f) << "between two strided scale_invs";
        EXPECT_EQ(after[t], 0.0f) << "the amax is zeroed for the next pass to reduce into";
      }
    }
}

}  // namespace
}  // namespace tprimat::testing
