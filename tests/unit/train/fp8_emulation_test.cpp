// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The CPU's FP8 emulation: the quantiser, the recipes' scales, and FP8 steps against fp32 ones.
#include "tprimat/train/cpu/fp8_emulation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tprimat/backend/cpu.hpp"
#include "tprimat/data/synthetic.hpp"
#include "tprimat/model/tiny.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/train/training_step.hpp"
#include "../../support/short_training.hpp"
#include "../../support/step_shape.hpp"

namespace {

using namespace tprimat;
using tprimat::testing::short_schedule;
using tprimat::testing::step_shape;
using tprimat::testing::synthetic_batch;
using kernels::Fp8Format;
using train::Fp8Tensor;
using TinyStep = train::TrainingStep<backend::Cpu, model::Tiny, parallel::Layout<1, 1>>;

constexpr auto fp8 = train::PrecisionConfig::fp8_hybrid;


std::vector<float> weight_of(const train::Transformer<backend::Cpu, float>& m, int layer,
                             const std::string& name) {
  for (const auto& t : m.tensors())
    if (t.name == "layers." + std::to_string(layer) + "." + name)
      return {m.params().begin() + t.offset, m.params().begin() + t.offset + t.size()};
  throw std::runtime_error("no tensor " + name);
}

float amax(const std::vector<float>& x) {
  float m = 0;
  for (float v : x) m = std::max(m, std::abs(v));
  return m;
}

// ---- the quantiser --------------------------------------------------------------------------

TEST(Fp8Quantize, HandComputedValues) {
  // E4M3 in [0.25, 0.5) is spaced 2^-5: 0.3 lies between 0.28125 and 0.3125, nearer the latter.
  EXPECT_EQ(train::fp8_quantize(0.3f, 1.0f, Fp8Format::e4m3), 0.3125f);
  // Scale 3: 0.9 in [0.5, 1) (spaced 2^-4) rounds to 0.875, then times 1/3 in fp32.
  EXPECT_EQ(train::fp8_quantize(0.3f, 3.0f, Fp8Format::e4m3), 0.875f * (1.0f / 3.0f));
  // Ties go to the even mantissa: 1.0625 between 1.0 (000) and 1.125 (001) -> 1.0; 1.1875
  // between 1.125 (001) and 1.25 (010) -> 1.25.
  EXPECT_EQ(train::fp8_quantize(1.0625f, 1.0f, Fp8Format::e4m3), 1.0f);
  EXPECT_EQ(train::fp8_quantize(-1.1875f, 1.0f, Fp8Format::e4m3), -1.25f);
  // Saturation at max_finite: 448 (E4M3), 57344 (E5M2), infinity included.
  EXPECT_EQ(train::fp8_quantize(1000.0f, 1.0f, Fp8Format::e4m3), 448.0f);
  EXPECT_EQ(train::fp8_quantize(-1e6f, 2.0f, Fp8Format::e5m2), -57344.0f * 0.5f);
  EXPECT_EQ(train::fp8_quantize(std::numeric_limits<float>::infinity(), 1.0f, Fp8Format::e5m2),
            57344.0f);
  // E5M2 in [0.25, 0.5) is spaced 2^-4: 0.3 -> 0.3125; below its smallest subnormal half
  // (2^-17), a value flushes to zero.
  EXPECT_EQ(train::fp8_quantize(0.3f, 1.0f, Fp8Format::e5m2), 0.3125f);
  EXPECT_EQ(train::fp8_quantize(std::ldexp(1.0f, -18), 1.0f, Fp8Format::e5m2), 0.0f);
  EXPECT_TRUE(std::isnan(train::fp8_quantize(NAN, 1.0f, Fp8Format::e4m3)));
}

TEST(Fp8Quantize, IsTheReferenceCastDecodedAndUnscaled) {
  // Over a spread of magnitudes and scales: Q(x; s) is the reference cast's byte decoded, times
  // 1/s in fp32, and within half a spacing of x (3 mantissa bits: 2^-4 relative; 2 bits: 2^-3)
  // where x s is a normal number inside the range.
  for (Fp8Format f : {Fp8Format::e4m3, Fp8Format::e5m2}) {
    const float rel = f == Fp8Format::e4m3 ? 0.0625f : 0.125f;
    const float max_finite = kernels::fp8_spec(f).max_finite;
    for (float s : {1.0f, 3.0f, 448.0f / 0.07f, 57344.0f / 1e-3f})
      for (int k = -400; k <= 400; ++k) {
        const float x = std::ldexp(1.0f + 0.00731f * std::abs(k), k / 40) * (k < 0 ? -1 : 1);
        const float q = train::fp8_quantize(x, s, f);
        const float want =
            kernels::fp8_to_float(kernels::fp8_reference_cast(x * s, f), f) * (1.0f / s);
        ASSERT_EQ(q, want) << "x " << x << " s " << s;
        const float xs = std::abs(x * s);
        if (xs >= 1.0f / 64 && xs <= max_finite)
          ASSERT_LE(std::abs(q - x), rel * std::abs(x)) << "x " << x << " s " << s;
      }
  }
}

TEST(Fp8Quantize, AmaxPropagatesNaNAndScaleKeepsThePrevious) {
  const std::vector<float> x{0.5f, -2.0f, 1.0f};
  EXPECT_EQ(train::fp8_amax(x.data(), 3), 2.0f);
  const std::vector<float> bad{0.5f, NAN, -7.0f};
  EXPECT_TRUE(std::isnan(train::fp8_amax(bad.data(), 3)));
  EXPECT_EQ(kernels::fp8_reference_scale(NAN, 5.0f, Fp8Format::e4m3, 0), 5.0f);
  EXPECT_EQ(train::fp8_format_of(Fp8Tensor::w_down), Fp8Format::e4m3);
  EXPECT_EQ(train::fp8_format_of(Fp8Tensor::x_down), Fp8Format::e4m3);
  EXPECT_EQ(train::fp8_format_of(Fp8Tensor::g_down), Fp8Format::e5m2);
  EXPECT_FALSE(train::fp8_split_by_tp(Fp8Tensor::g_o));
  EXPECT_TRUE(train::fp8_split_by_tp(Fp8Tensor::g_q));
  EXPECT_STREQ(train::fp8_tensor_name(Fp8Tensor::g_v), "g_v");
}

// ---- the model ------------------------------------------------------------------------------

TEST(Fp8Emulation, BadSettingsAndMissingStepAreErrors) {
  const auto d = model::dims<model::Tiny>().with_layers(2);
  auto p = fp8(train::Fp8Recipe::delayed);
  p.fp8.amax_history = 0;
  try {
    train::Transformer<backend::Cpu, float> m(d, 1, 8, 0.02, 42, {}, {}, p);
    FAIL() << "expected InputError";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("amax history must hold at least 1"), std::string::npos)
        << e.what();
  }
  train::Transformer<backend::Cpu, float> m(d, 1, 8, 0.02, 42, {}, {},
                                            fp8(train::Fp8Recipe::delayed));
  const auto tokens = synthetic_batch(0, 1, 8);
  EXPECT_THROW(m.forward(tokens), core::RunError);  // no begin_step: no weight casts yet
  EXPECT_THROW(m.end_step(), core::RunError);
  m.begin_step();
  EXPECT_TRUE(std::isfinite(m.forward(tokens)));
  m.end_step();
  EXPECT_EQ(m.fp8().steps(), 1);
}

TEST(Fp8Emulation, CurrentRecipeKeepsFirstAndLastLayersInBf16) {
  const auto d = model::dims<model::Tiny>();  // 4 layers
  train::Transformer<backend::Cpu, float> cur(d, 1, 8, 0.02, 42, {}, {},
                                              fp8(train::Fp8Recipe::current));
  train::Transformer<backend::Cpu, float> del(d, 1, 8, 0.02, 42, {}, {},
                                              fp8(train::Fp8Recipe::delayed));
  for (int l = 0; l < 4; ++l) {
    EXPECT_EQ(cur.fp8().layer_in_fp8(l), l == 1 || l == 2) << l;
    EXPECT_TRUE(del.fp8().layer_in_fp8(l)) << l;
  }
  // A pipeline stage decides by the global index: the stage holding layers 2 and 3 of 4.
  train::Shard last;
  last.layer_begin = 2;
  last.layer_count = 2;
  last.first_stage = false;
  train::Transformer<backend::Cpu, float> stage(d, 1, 8, 0.02, 42, last, {},
                                                fp8(train::Fp8Recipe::current));
  EXPECT_TRUE(stage.fp8().layer_in_fp8(0));   // global layer 2
  EXPECT_FALSE(stage.fp8().layer_in_fp8(1));  // global layer 3, the model's last
}

TEST(Fp8Emulation, TheLayersKeptInBf16AreSetApartFromTheRecipe) {
  const auto d = model::dims<model::Tiny>();  // 4 layers
  auto all = fp8(train::Fp8Recipe::current);
  all.fp8.bf16_layers_at_start = 0;
  all.fp8.bf16_layers_at_end = 0;
  auto front = fp8(train::Fp8Recipe::delayed);
  front.fp8.bf16_layers_at_start = 2;  // the end keeps the delayed recipe's none
  train::Transformer<backend::Cpu, float> a(d, 1, 8, 0.02, 42, {}, {}, all);
  train::Transformer<backend::Cpu, float> f(d, 1, 8, 0.02, 42, {}, {}, front);
  for (int l = 0; l < 4; ++l) {
    EXPECT_TRUE(a.fp8().layer_in_fp8(l)) << l;
    EXPECT_EQ(f.fp8().layer_in_fp8(l), l >= 2) << l;
  }
}

// (c) Under the current recipe a 2-layer model has no FP8 layer: bit for bit the fp32 run.
TEST(Fp8Step, CurrentRecipeOnTwoLayersIsTheFp32Run) {
  TinyStep plain(step_shape(1, 16, 2, 2), short_schedule());
  TinyStep fp8_step(step_shape(1, 16, 2, 2), short_schedule(), 42, parallel::comm::Single{},
                    fp8(train::Fp8Recipe::current));
  for (int s = 0; s < 2; ++s) {
    const auto tokens = synthetic_batch(s, 2, 16);
    const auto a = plain.run(tokens), b = fp8_step.run(tokens);
    EXPECT_EQ(a.loss, b.loss) << "step " << s;
    EXPECT_EQ(a.grad_norm, b.grad_norm) << "step " << s;
  }
  const auto pa = plain.model().params(), pb = fp8_step.model().params();
  EXPECT_TRUE(std::equal(pa.begin(), pa.end(), pb.begin(), pb.end()));
}

// (b) 4 steps of Tiny (4 layers), 2 micro-batches of 2 x 32 tokens: FP8 changes every step's
// numbers but not the training. E4M3 rounds each operand by up to 2^-4 relative (in random
// directions), so a GEMM output moves by ~2^-5 / sqrt(K) of its size per element and the loss,
// an average over 128 tokens, by far less. Measured: loss within 0.06%, gradient norm within
// 1.2% of the fp32 run; bounds 0.3% and 3%. They do not pin the scale rules (a run casting
// everything with scale 1 measured 3.7% on the norm, E5M2 flushing the smallest gradients):
// the scale tests below do.
void expect_close_to_fp32(train::Fp8Recipe recipe, const char* name) {
  TinyStep plain(step_shape(2, 32, 2, 4), short_schedule());
  TinyStep fp8_step(step_shape(2, 32, 2, 4), short_schedule(), 42, parallel::comm::Single{},
                    fp8(recipe));
  double worst_loss = 0, worst_norm = 0;
  for (int s = 0; s < 4; ++s) {
    const auto tokens = synthetic_batch(s, 4, 32);
    const auto a = plain.run(tokens), b = fp8_step.run(tokens);
    ASSERT_TRUE(std::isfinite(b.loss) && std::isfinite(b.grad_norm)) << name << " step " << s;
    EXPECT_NE(a.loss, b.loss) << name << " step " << s << ": FP8 changed nothing";
    EXPECT_NE(a.grad_norm, b.grad_norm) << name << " step " << s;
    const double dl = std::abs(b.loss - a.loss) / a.loss;
    const double dn = std::abs(b.grad_norm - a.grad_norm) / a.grad_norm;
    EXPECT_LE(dl, 0.003) << name << " step " << s << ": loss " << b.loss << " vs " << a.loss;
    EXPECT_LE(dn, 0.03) << name << " step " << s << ": grad norm " << b.grad_norm << " vs "
                        << a.grad_norm;
    worst_loss = std::max(worst_loss, dl);
    worst_norm = std::max(worst_norm, dn);
  }
  std::printf("FP8 %s vs fp32, Tiny 4 layers, 4 steps: max rel diff loss %.3g, grad norm %.3g\n",
              name, worst_loss, worst_norm);
}

TEST(Fp8Step, DelayedIsCloseToFp32ButNotEqual) {
  expect_close_to_fp32(train::Fp8Recipe::delayed, "delayed");
}
TEST(Fp8Step, CurrentIsCloseToFp32ButNotEqual) {
  expect_close_to_fp32(train::Fp8Recipe::current, "current");
}

// (e) Two identical FP8 runs agree bit for bit.
TEST(Fp8Step, Deterministic) {
  for (auto recipe : {train::Fp8Recipe::delayed, train::Fp8Recipe::current}) {
    TinyStep a(step_shape(1, 16, 2, 4), short_schedule(), 42, parallel::comm::Single{},
               fp8(recipe));
    TinyStep b(step_shape(1, 16, 2, 4), short_schedule(), 42, parallel::comm::Single{},
               fp8(recipe));
    for (int s = 0; s < 3; ++s) {
      const auto tokens = synthetic_batch(s, 2, 16);
      const auto sa = a.run(tokens), sb = b.run(tokens);
      EXPECT_EQ(sa.loss, sb.loss);
      EXPECT_EQ(sa.grad_norm, sb.grad_norm);
    }
    const auto pa = a.model().params(), pb = b.model().params();
    EXPECT_TRUE(std::equal(pa.begin(), pa.end(), pb.begin(), pb.end()));
    for (int l = 0; l < 4; ++l)
      for (int t = 0; t < train::fp8_tensors_per_layer; ++t)
        EXPECT_EQ(a.model().fp8().scale(l, Fp8Tensor(t)), b.model().fp8().scale(l, Fp8Tensor(t)));
  }
}

// Current: each weight is cast with max_finite / its amax now, and the FP8 copy holds exactly
// Q(w) of the master before the step's update.
TEST(Fp8Step, CurrentScalesWeightsByTheirAmaxNow) {
  TinyStep step(step_shape(1, 16, 1, 4), short_schedule(), 42, parallel::comm::Single{},
                fp8(train::Fp8Recipe::current));
  for (int s = 0; s < 2; ++s) {
    const auto w = weight_of(step.model(), 1, "mlp.w_up");
    step.run(synthetic_batch(s, 1, 16));
    const float want = 448.0f / amax(w);
    const auto& f = step.model().fp8();
    EXPECT_EQ(f.scale(1, Fp8Tensor::w_up), want) << "step " << s;
    const float* q = f.weight(1, Fp8Tensor::w_up);
    for (std::size_t i = 0; i < w.size(); ++i)
      ASSERT_EQ(q[i], train::fp8_quantize(w[i], want, Fp8Format::e4m3)) << "element " << i;
    // Gradients are E5M2: the scale of one, from its own amax, is max_finite / amax.
    EXPECT_EQ(f.scale(1, Fp8Tensor::g_down), 57344.0f / f.step_amax(1, Fp8Tensor::g_down));
    EXPECT_EQ(f.scale(0, Fp8Tensor::w_up), 1.0f);  // layer 0 stays bf16: never cast
  }
}

// The reference of an MI300X run casts to gfx942's fnuz formats when the settings say so: the
// weights' scale from E4M3 fnuz's 240, the gradients' from E5M2 fnuz's 57344, the copies its
// bytes' values.
TEST(Fp8Step, FnuzSettingsCastToGfx942Formats) {
  auto p = fp8(train::Fp8Recipe::current);
  p.fp8.forward_format = Fp8Format::e4m3_fnuz;
  p.fp8.gradient_format = Fp8Format::e5m2_fnuz;
  EXPECT_EQ(train::fp8_format_of(Fp8Tensor::x_qkv, p.fp8), Fp8Format::e4m3_fnuz);
  EXPECT_EQ(train::fp8_format_of(Fp8Tensor::g_q, p.fp8), Fp8Format::e5m2_fnuz);
  TinyStep step(step_shape(1, 16, 1, 4), short_schedule(), 42, parallel::comm::Single{}, p);
  const auto w = weight_of(step.model(), 1, "mlp.w_up");
  step.run(synthetic_batch(0, 1, 16));
  const float want = 240.0f / amax(w);
  const auto& f = step.model().fp8();
  EXPECT_EQ(f.scale(1, Fp8Tensor::w_up), want);
  const float* q = f.weight(1, Fp8Tensor::w_up);
  bool differs_from_ocp = false;
  for (std::size_t i = 0; i < w.size(); ++i) {
    ASSERT_EQ(q[i], train::fp8_quantize(w[i], want, Fp8Format::e4m3_fnuz)) << "element " << i;
    differs_from_ocp |= q[i] != train::fp8_quantize(w[i], 448.0f / amax(w), Fp8Format::e4m3);
  }
  EXPECT_TRUE(differs_from_ocp) << "the fnuz copy must not be the OCP one";
  EXPECT_EQ(f.scale(1, Fp8Tensor::g_down), 57344.0f / f.step_amax(1, Fp8Tensor::g_down));
}

// (d) Delayed: the first step scales as current does and records the amaxes; every later step
// casts with max_finite / (max of the recorded history), not with its tensors' amax now.
TEST(Fp8Step, DelayedScalesComeFromTheHistory) {
  auto p = fp8(train::Fp8Recipe::delayed);
  p.fp8.amax_history = 2;  // so that the third step drops the first step's amax
  TinyStep step(step_shape(1, 16, 2, 4), short_schedule(), 42, parallel::comm::Single{}, p);
  const auto& f = step.model().fp8();
  std::vector<float> amaxes;  // the w_gate amax of layer 2 at each step's start
  for (int s = 0; s < 4; ++s) {
    const auto w = weight_of(step.model(), 2, "mlp.w_gate");
    amaxes.push_back(amax(w));
    const float scale_before = f.scale(2, Fp8Tensor::w_gate);
    const float x_scale_before = f.scale(2, Fp8Tensor::x_qkv);
    step.run(synthetic_batch(s, 2, 16));
    // The cast this step made: step 0 from the weight's own amax, later from the history.
    const float used = s == 0 ? 448.0f / amaxes[0] : scale_before;
    if (s > 0) {
      const float history_max =
          *std::max_element(amaxes.end() - 1 - std::min(s, 2), amaxes.end() - 1);
      EXPECT_EQ(used, 448.0f / history_max) << "step " << s;
      EXPECT_NE(used, 448.0f / amaxes.back()) << "step " << s << " used its amax now";
    }
    const float* q = f.weight(2, Fp8Tensor::w_gate);
    for (std::size_t i = 0; i < w.size(); ++i)
      ASSERT_EQ(q[i], train::fp8_quantize(w[i], used, Fp8Format::e4m3))
          << "step " << s << " element " << i;
    // After the step: the history holds the step amaxes newest first (at most 2), and every
    // tensor's next scale is max_finite / their max.
    const auto hist = f.amax_history(2, Fp8Tensor::w_gate);
    ASSERT_EQ(hist.size(), static_cast<std::size_t>(std::min(s + 1, 2)));
    EXPECT_EQ(hist[0], amaxes.back());
    for (int t = 0; t < train::fp8_tensors_per_layer; ++t) {
      const auto id = Fp8Tensor(t);
      const auto h = f.amax_history(2, id);
      ASSERT_FALSE(h.empty());
      const float m = *std::max_element(h.begin(), h.end());
      ASSERT_GT(m, 0.0f) << train::fp8_tensor_name(id);
      EXPECT_EQ(f.scale(2, id), kernels::fp8_spec(train::fp8_format_of(id)).max_finite / m)
          << train::fp8_tensor_name(id) << " after step " << s;
    }
    // Activations: step 0 cast each micro-batch with its own amax (at most the step's, so a
    // scale at least max_finite / step amax); later steps with the scale set before the step.
    const float x_used = f.activation_scale(2, Fp8Tensor::x_qkv, 0);
    if (s == 0)
      EXPECT_GE(x_used, 448.0f / f.amax_history(2, Fp8Tensor::x_qkv)[0]);
    else
      EXPECT_EQ(x_used, x_scale_before) << "step " << s;
  }
}

}  // namespace
