// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// bench/sanity.hpp: impossible and contradicted figures are flagged, plausible ones are not.
#include "tprimat/bench/sanity.hpp"

#include <limits>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>


namespace tprimat::bench {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

TEST(Sanity, PlausibleFiguresPass) {
  EXPECT_TRUE(sanity_warnings({400, 989.4, "NVIDIA H100 80GB HBM3", nan}).empty());
  EXPECT_TRUE(sanity_warnings({nan, 989.4, "NVIDIA H100 80GB HBM3", 400}).empty());
  EXPECT_TRUE(sanity_warnings({400, 0, "unknown", nan}).empty());  // no peak: nothing to check
  // Within 10% of the log's own figure.
  EXPECT_TRUE(sanity_warnings({440, 989.4, "NVIDIA H100 80GB HBM3", 400}).empty());
}

TEST(Sanity, MfuOverOneHundredPercent) {
  const auto w = sanity_warnings({1283, 989.4, "NVIDIA H100 80GB HBM3", nan});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "MFU 129.7% exceeds 100% (1283.0 TFLOP/s/GPU against a dense peak of 989.4): a "
            "figure behind it is wrong");
}

TEST(Sanity, AnFp8RunIsBoundByTheFp8Peak) {
  // 1,283 TFLOP/s of model FLOPs passes the bf16 peak, which FP8 GEMMs may; not the FP8 one.
  SanityFigures f{1283, 989.4, "NVIDIA H100 80GB HBM3", nan};
  f.fp8 = true;
  f.fp8_peak_tflops = 1978.9;
  EXPECT_TRUE(sanity_warnings(f).empty());
  f.tflops_per_gpu = 2100;
  const auto w = sanity_warnings(f);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "MFU against the FP8 peak 106.1% exceeds 100% (2100.0 TFLOP/s/GPU against a dense "
            "FP8 peak of 1978.9): a figure behind it is wrong");
  // Read from a document: its precision and its FP8 peak, else the device table's.
  nlohmann::json doc = {{"gpu_info", {{"device_name", "NVIDIA H200"}}},
                        {"training_config", {{"precision", "fp8-hybrid-current"}}},
                        {"performance_metrics",
                         {{"model_tflops_per_gpu", 1500.0}, {"peak_tflops_dense", 989.4}}}};
  const auto read = sanity_figures(doc);
  EXPECT_TRUE(read.fp8);
  EXPECT_EQ(read.fp8_peak_tflops, 1978.9);
  EXPECT_TRUE(sanity_warnings(read).empty());
  doc["training_config"]["precision"] = "bf16";  // the same figure from a bf16 run: impossible
  const auto bf16 = sanity_warnings(sanity_figures(doc));
  ASSERT_EQ(bf16.size(), 1u);
  EXPECT_EQ(bf16[0].rfind("MFU 151.6% exceeds 100% (1500.0 TFLOP/s/GPU against a dense peak of "
                          "989.4)",
                          0),
            0u)
      << bf16[0];
}

TEST(Sanity, Fp8PeaksOfTheDeviceTable) {
  EXPECT_EQ(backend::dense_fp8_peak_tflops("NVIDIA H100 80GB HBM3"), 1978.9);
  EXPECT_EQ(backend::dense_fp8_peak_tflops("NVIDIA H200"), 1978.9);
  EXPECT_EQ(backend::dense_fp8_peak_tflops("NVIDIA H100 PCIe"), 1513.0);
  EXPECT_EQ(backend::dense_fp8_peak_tflops("AMD Instinct MI300X"), 2614.9);
  EXPECT_EQ(backend::dense_fp8_peak_tflops("NVIDIA A100-SXM4-80GB"), 0);  // no FP8 tensor cores
  EXPECT_EQ(backend::dense_fp8_peak_tflops("unknown"), 0);
  // Every FP8 peak is twice the bf16 one where both are known.
  for (const auto& p : backend::dense_peaks)
    if (p.dense_fp8_tflops > 0) EXPECT_NEAR(p.dense_fp8_tflops, 2 * p.dense_bf16_tflops, 0.11);
}

TEST(Sanity, DevicePeakEvenWhenMfuUsedAnother) {
  // peak --peak-tflops 5000 hides MFU over 100%; the device's own dense peak still bounds it.
  const auto w = sanity_warnings({1283, 5000, "NVIDIA H100 80GB HBM3", nan});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "1283.0 TFLOP/s/GPU exceeds the dense bf16 peak of NVIDIA H100 80GB HBM3 (989.4 "
            "TFLOP/s): a figure behind it is wrong");
}

TEST(Sanity, LogDisagreement) {
  // The Megatron import: 1,283 TFLOP/s computed where the log itself says 400.9.
  const auto w = sanity_warnings({1283, 989.4, "NVIDIA H100 80GB HBM3", 400.9});
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[1],
            "computed 1283.0 TFLOP/s/GPU differs from the log's own 400.9 by +220.0%: the global "
            "batch, sequence length, GPU count or model read for it is wrong");
  EXPECT_NE(sanity_warnings({300, 989.4, "x", 400})[0].find("by -25.0%"), std::string::npos);
}

TEST(Sanity, UnknownDeviceStillBoundsTheFigure) {
  // An imported log of 1 ns steps on a device with no peak: 3e11 TFLOP/s a GPU.
  EXPECT_TRUE(sanity_warnings({9000, 0, "unknown", nan}).empty());
  const auto w = sanity_warnings({3e11, 0, "unknown", nan});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].find("300000000000.0 TFLOP/s/GPU is more than any GPU reaches (10000"), 0u)
      << w[0];
}

TEST(Sanity, LogTokensDisagreement) {
  // A Primus log states tokens/s a GPU: a wrong GPU count shows there whatever the model.
  EXPECT_TRUE(sanity_warnings({nan, 989.4, "x", nan, 6603.3 * 1.05, 6603.3}).empty());
  const auto w = sanity_warnings({nan, 989.4, "x", nan, 6603.3 / 8, 6603.3});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "computed 825.4 tokens/s/GPU differs from the log's own 6603.3 by -87.5%: the global "
            "batch, sequence length or GPU count read for it is wrong");
}

TEST(Sanity, TheCausalFigureIsJudged) {
  // Llama 3.1 8B at seq 131072 on an H100: 1004.8 TFLOP/s/GPU under PaLM's count (MFU 101.6%)
  // is 592.4 of work really done (causal MFU 59.9%): plausible, not flagged.
  SanityFigures f{1004.8, 989.4, "NVIDIA H100 80GB HBM3", nan};
  f.tflops_per_gpu_causal = 592.4;
  EXPECT_TRUE(sanity_warnings(f).empty());
  // The causal figure past the peak is flagged, named.
  f.tflops_per_gpu = 1200;
  f.tflops_per_gpu_causal = 1050;
  const auto w = sanity_warnings(f);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "MFU 106.1% exceeds 100% (1050.0 TFLOP/s/GPU against a dense peak of 989.4; causal "
            "count: attention halved): a figure behind it is wrong");
  // From a result document: its causal figure, as written.
  nlohmann::json doc = {{"gpu_info", {{"device_name", "NVIDIA H100 80GB HBM3"}}},
                        {"training_config", {{"precision", "bf16"}}},
                        {"performance_metrics",
                         {{"model_tflops_per_gpu", 1004.8},
                          {"tflops_per_gpu_causal", 592.4},
                          {"peak_tflops_dense", 989.4}}}};
  set_sanity_warnings(doc);
  EXPECT_EQ(doc["warnings"], nlohmann::json::array());
  // A log's own figure agrees with ours under either count (frameworks print one or the other).
  f = SanityFigures{400, 989.4, "NVIDIA H100 80GB HBM3", 356};
  f.tflops_per_gpu_causal = 355.5;
  EXPECT_TRUE(sanity_warnings(f).empty());
  f.log_tflops_per_gpu = 400;
  EXPECT_TRUE(sanity_warnings(f).empty());
  f.log_tflops_per_gpu = 250;
  ASSERT_EQ(sanity_warnings(f).size(), 1u);
  EXPECT_EQ(sanity_warnings(f)[0],
            "computed 400.0 TFLOP/s/GPU differs from the log's own 250.0 by +60.0%: the global "
            "batch, sequence length, GPU count or model read for it is wrong");
}

TEST(Sanity, FiguresOfOurDocuments) {
  nlohmann::json doc;
  doc["performance_metrics"] = {{"model_tflops_per_gpu", 1200.0}, {"peak_tflops_dense", 989.4}};
  doc["gpu_info"] = {{"device_name", "NVIDIA H200"}};
  doc["imported"] = {{"log_tflops_per_gpu_mean", 1190.0}};
  const auto f = sanity_figures(doc);
  EXPECT_DOUBLE_EQ(f.tflops_per_gpu, 1200);
  EXPECT_DOUBLE_EQ(f.mfu_peak_tflops, 989.4);
  EXPECT_EQ(f.device_name, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(f.log_tflops_per_gpu, 1190);
  set_sanity_warnings(doc);
  EXPECT_EQ(doc["warnings"].size(), 1u);
  doc["performance_metrics"]["peak_tflops_dense"] = nullptr;  // CPU: MFU unknown
  doc["gpu_info"]["device_name"] = "test cpu";
  set_sanity_warnings(doc);
  EXPECT_EQ(doc["warnings"], nlohmann::json::array());
  EXPECT_TRUE(sanity_warnings(sanity_figures(nlohmann::json("not an object"))).empty());
}

}  // namespace
}  // namespace tprimat::bench
