// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// bench/metrics.hpp: throughput, FLOP/s and MFU from step times, by hand.
#include "tprimat/bench/metrics.hpp"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "tprimat/model/counts.hpp"
#include "tprimat/model/llama31_8b.hpp"

namespace {

using namespace tprimat;

TEST(Metrics, ThroughputFromMeanStepTime) {
  const std::vector<double> t{1.0, 2.0, 3.0};  // mean 2 s
  bench::MetricsInput in;
  in.tokens_per_step = 64.0 * 2048;
  in.num_gpus = 8;
  in.flops_per_token_palm = 1e9;
  in.flops_per_token_6n = 5e8;
  const auto m = bench::compute_metrics(t, in);
  EXPECT_DOUBLE_EQ(m.step_time.mean, 2.0);
  EXPECT_DOUBLE_EQ(m.step_time.median, 2.0);
  EXPECT_DOUBLE_EQ(m.step_time.std, 1.0);
  EXPECT_DOUBLE_EQ(m.step_time.min, 1.0);
  EXPECT_DOUBLE_EQ(m.step_time.max, 3.0);
  EXPECT_DOUBLE_EQ(m.steps_per_second, 0.5);
  EXPECT_DOUBLE_EQ(m.tokens_per_second, 65536.0);
  EXPECT_DOUBLE_EQ(m.tokens_per_second_per_gpu, 8192.0);
  EXPECT_DOUBLE_EQ(m.model_tflops_per_gpu, 8192.0 * 1e9 / 1e12);
  EXPECT_DOUBLE_EQ(m.tflops_per_gpu_6n, 8192.0 * 5e8 / 1e12);
  EXPECT_FALSE(m.mfu.has_value()) << "no peak known: MFU must be unknown, not 0";
}

TEST(Metrics, MfuAgainstDensePeak) {
  // Llama 3.1 8B at 989.4 TFLOP/s dense: 1000 tokens/s/GPU is PaLM FLOPs x 1000 / peak.
  const auto d = model::dims<model::Llama31_8B>();
  bench::MetricsInput in;
  in.tokens_per_step = 1000;
  in.num_gpus = 1;
  in.flops_per_token_palm = model::flops_per_token(d, 2048);
  in.flops_per_token_6n = model::flops_per_token_6n(d);
  in.peak_tflops_dense = 989.4;
  const std::vector<double> t{1.0};
  const auto m = bench::compute_metrics(t, in);
  ASSERT_TRUE(m.mfu.has_value());
  EXPECT_NEAR(*m.mfu, 1000 * model::flops_per_token(d, 2048) / 989.4e12, 1e-15);
  EXPECT_GT(in.flops_per_token_palm, in.flops_per_token_6n * 0.9);
  EXPECT_TRUE(std::isnan(m.step_time.std)) << "one sample has no spread";
}

TEST(Metrics, MfuUnderBothConventionsNamed) {
  // Llama 3.1 8B at seq 131072 on an H100 (989.4 dense bf16, 1978.9 FP8): 4,000 tokens/s/GPU
  // is 4000 x 251,187,978,240 / 1e12 = 1004.75 TFLOP/s under PaLM's count (MFU 101.6%, past
  // the peak), 4000 x 148,108,763,136 / 1e12 = 592.44 under the causal count (MFU 59.9%).
  const auto d = model::dims<model::Llama31_8B>();
  bench::MetricsInput in;
  in.tokens_per_step = 4000;
  in.num_gpus = 1;
  in.flops_per_token_palm = model::flops_per_token(d, 131072);
  in.flops_per_token_causal = model::flops_per_token_causal(d, 131072);
  in.peak_tflops_dense = 989.4;
  in.peak_tflops_fp8_dense = 1978.9;
  const std::vector<double> t{1.0};
  const auto m = bench::compute_metrics(t, in);
  EXPECT_NEAR(m.model_tflops_per_gpu, 1004.751912960, 1e-9);
  EXPECT_NEAR(m.tflops_per_gpu_causal, 592.435052544, 1e-9);
  ASSERT_TRUE(m.mfu && m.mfu_causal && m.mfu_fp8_peak && m.mfu_fp8_peak_causal);
  EXPECT_NEAR(*m.mfu, 1004.751912960 / 989.4, 1e-12);
  EXPECT_GT(*m.mfu, 1.0);
  EXPECT_NEAR(*m.mfu_causal, 592.435052544 / 989.4, 1e-12);
  EXPECT_NEAR(*m.mfu_fp8_peak_causal, 592.435052544 / 1978.9, 1e-12);
  // No peak: neither convention has an MFU.
  in.peak_tflops_dense = in.peak_tflops_fp8_dense = 0;
  const auto unknown = bench::compute_metrics(t, in);
  EXPECT_FALSE(unknown.mfu_causal.has_value());
  EXPECT_FALSE(unknown.mfu_fp8_peak_causal.has_value());
}

TEST(Metrics, NoStepsMeansUnknownThroughput) {
  bench::MetricsInput in;
  in.tokens_per_step = 10;
  in.peak_tflops_dense = 100;
  const auto m = bench::compute_metrics({}, in);
  EXPECT_EQ(m.step_time.count, 0u);
  EXPECT_TRUE(std::isnan(m.tokens_per_second));
  EXPECT_FALSE(m.mfu.has_value());
}

}  // namespace
