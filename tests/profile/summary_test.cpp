// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// profile::summarize on a committed PyTorch profiler (Kineto) trace and on tprimat's own traces:
// every figure is known from the events and asserted exactly.
#include "tprimat/profile/summary.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/profile/chrome_trace.hpp"
#include "tprimat/profile/summary_text.hpp"
#include "tprimat/profile/trace_reader.hpp"

namespace {

namespace profile = tprimat::profile;
using profile::Kind;
using profile::TraceEvent;

constexpr std::int64_t us = 1000;  // ns per microsecond

const std::string fixture = std::string(TPRIMAT_PROFILE_FIXTURES) + "/kineto_small.json";

// tests/profile/fixtures/kineto_small.json: two ProfilerSteps of 500 us; on GPU 0, stream 7 runs
// per step an H2D copy (10 us), a cuBLAS GEMM (100 us, aten::mm 2e10 FLOPs), an elementwise add
// (20 us), an nvjet GEMM (90 us, aten::addmm 1.35e10 FLOPs), a memset (5 us), a flash-attention
// kernel (50 us, CUTLASS in its template arguments) and a D2H copy (2 us); stream 20 an NCCL
// all-reduce: 120 us in step 5, of which 90 us under the GEMM and the attention kernel, and
// 50 us in step 6, alone.
TEST(ProfileSummary, KinetoFixtureFiguresExactly) {
  const auto trace = profile::read_chrome_trace(fixture);
  EXPECT_EQ(trace.format, "kineto");
  const auto s = profile::summarize(trace);
  EXPECT_EQ(s.steps, 2);
  EXPECT_EQ(s.step_ns, 1000 * us);
  EXPECT_EQ(s.devices, 1);
  EXPECT_EQ(s.streams, 2);
  EXPECT_EQ(s.span_ns, 930 * us);  // first H2D copy at 20 us to the last all-reduce's end
  EXPECT_EQ(s.busy_ns, 629 * us);
  EXPECT_EQ(s.idle_ns, 301 * us);
  EXPECT_EQ(s.gaps, 12);
  EXPECT_EQ(s.largest_gap_ns, 158 * us);  // between the steps
  EXPECT_EQ(s.kernel_count, 10);
  EXPECT_EQ(s.kernel_ns, 690 * us);
  EXPECT_EQ(s.memcpy_count, 4);
  EXPECT_EQ(s.memcpy_ns, 24 * us);
  EXPECT_EQ(s.memcpy_bytes, 2'000'016);
  EXPECT_EQ(s.memset_count, 2);
  EXPECT_EQ(s.memset_ns, 10 * us);

  ASSERT_EQ(s.kernels.size(), 5u);
  const std::vector<std::pair<std::string, std::int64_t>> want = {
      {"sm90_xmma_gemm", 200 * us},
      {"nvjet_tst", 180 * us},
      {"ncclDevKernel", 170 * us},
      {"void flash::flash_fwd_kernel", 100 * us},
      {"void at::native::vectorized", 40 * us}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].first);
    EXPECT_EQ(s.kernels[i].name.rfind(want[i].first, 0), 0u) << s.kernels[i].name;
    EXPECT_EQ(s.kernels[i].total_ns, want[i].second);
    EXPECT_EQ(s.kernels[i].count, 2);
  }
  EXPECT_TRUE(s.kernels[0].gemm);
  EXPECT_TRUE(s.kernels[1].gemm);
  EXPECT_TRUE(s.kernels[2].communication);
  EXPECT_FALSE(s.kernels[3].gemm);  // attention, though CUTLASS is in its template arguments
  EXPECT_FALSE(s.kernels[4].gemm);  // its aten::add carries FLOPs; it is no GEMM

  EXPECT_EQ(s.gemm_count, 4);
  EXPECT_EQ(s.gemm_ns, 380 * us);
  EXPECT_DOUBLE_EQ(s.gemm_flops, 6.7e10);
  EXPECT_EQ(s.gemm_flops_ns, 380 * us);
  ASSERT_TRUE(s.kernels[0].tflops());
  EXPECT_NEAR(*s.kernels[0].tflops(), 200.0, 1e-9);  // 2e10 FLOPs in 100 us
  EXPECT_NEAR(*s.kernels[1].tflops(), 150.0, 1e-9);  // 1.35e10 in 90 us
  const auto rate = s.gemm_tflops();
  ASSERT_TRUE(rate);
  EXPECT_NEAR(rate->first, 6.7e10 / 380e-6 / 1e12, 1e-9);
  EXPECT_EQ(rate->second, "trace");

  EXPECT_EQ(s.comm_count, 2);
  EXPECT_EQ(s.comm_ns, 170 * us);
  EXPECT_EQ(s.comm_overlap_ns, 90 * us);  // nvjet 200-270 and flash 300-320 under step 5's
  EXPECT_FALSE(s.overhead_fraction());    // Kineto records none
}

TEST(ProfileSummary, KinetoFixtureText) {
  const auto s = profile::summarize(profile::read_chrome_trace(fixture));
  const std::string text = profile::summary_text(s, "kineto_small.json", 3);
  EXPECT_NE(text.find("format: PyTorch profiler (Kineto)"), std::string::npos) << text;
  EXPECT_NE(text.find("steps: 2 (ProfilerStep ranges), 1.000 ms in all, 0.500 ms each"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("busy 0.629 ms of a 0.930 ms span (67.6%)"), std::string::npos) << text;
  EXPECT_NE(text.find("idle gaps: 0.301 ms in 12 gaps, largest 0.158 ms"), std::string::npos);
  EXPECT_NE(text.find("top 3 of 5 kernels"), std::string::npos) << text;
  EXPECT_NE(text.find("achieved 176.3 TFLOP/s (FLOPs recorded with the launches)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("0.170 ms in 2 NCCL kernels; 0.090 ms (52.9%) overlapped"), std::string::npos)
      << text;
  EXPECT_NE(text.find("not recorded in this trace"), std::string::npos);
  const std::string md = profile::summary_text(s, "kineto_small.json", 3, true);
  EXPECT_NE(md.find("| time ms | % busy | % step | count | mean us | kernel |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| 0.200 | 31.8 | 20.0 | 2 | 100.0 | `sm90_xmma_gemm"), std::string::npos)
      << md;
}

TraceEvent gpu(Kind kind, const char* name, std::int64_t stream, std::int64_t b, std::int64_t e,
               std::uint64_t ext = 0) {
  TraceEvent t;
  t.kind = kind;
  t.category = kind == Kind::kernel ? "kernel" : kind == Kind::memcpy ? "gpu_memcpy" : "gpu_memset";
  t.name = name;
  t.pid = 0;
  t.tid = stream;
  t.start_ns = b;
  t.end_ns = e;
  t.external_id = ext;
  if (kind != Kind::kernel) t.bytes = 1024;
  return t;
}

TraceEvent range(const char* name, std::int64_t b, std::int64_t e, std::uint64_t id,
                 double flops = 0) {
  TraceEvent t;
  t.category = "user_annotation";
  t.name = name;
  t.pid = 999;
  t.tid = 1000;
  t.start_ns = b;
  t.end_ns = e;
  t.external_id = id;
  t.flops = flops;
  return t;
}

// What StepProfiler writes, through the writer and reader: host ranges with FLOPs on their GEMMs
// (eager steps), and the metadata block's overhead and per-step GEMM FLOPs.
TEST(ProfileSummary, OwnTraceRoundTrip) {
  std::vector<TraceEvent> ev = {
      range("ProfilerStep#2", 0, 1000 * us, 1),
      range("train_step", 10 * us, 990 * us, 2),
      range("gemm", 20 * us, 30 * us, 3, 4e9),
      gpu(Kind::memcpy, "Memcpy HtoD (Pinned -> Device)", 13, 15 * us, 25 * us, 2),
      gpu(Kind::kernel, "sm90_xmma_gemm_bf16bf16_bf16f32", 13, 100 * us, 120 * us, 3),
      gpu(Kind::kernel, "cublasLt::splitKreduce_kernel", 13, 120 * us, 140 * us, 3),
      gpu(Kind::kernel, "rmsnorm_forward", 13, 150 * us, 160 * us, 2),
      gpu(Kind::memset, "Memset (Device)", 13, 160 * us, 170 * us, 2),
  };
  nlohmann::json meta = {
      {"gemm_flops_per_step", 1e9},
      {"cuda_graph", false},
      {"profiling_overhead", {{"profiled_step_seconds", 0.105}, {"unprofiled_step_seconds", 0.1}}}};
  const auto trace =
      profile::parse_chrome_trace(nlohmann::json::parse(profile::chrome_trace_json(ev, {}, meta)));
  EXPECT_EQ(trace.format, "tprimat");
  const auto s = profile::summarize(trace);
  EXPECT_EQ(s.steps, 1);
  EXPECT_EQ(s.step_ns, 1000 * us);
  EXPECT_EQ(s.busy_ns, 10 * us + 40 * us + 20 * us);
  EXPECT_EQ(s.span_ns, 155 * us);
  EXPECT_EQ(s.gaps, 2);
  EXPECT_EQ(s.largest_gap_ns, 75 * us);
  EXPECT_EQ(s.gemm_count, 2);  // the split-K reduction is part of the GEMM
  EXPECT_EQ(s.gemm_ns, 40 * us);
  // The range's 4e9 FLOPs split over its two GEMM kernels by time: 100 TFLOP/s for both.
  EXPECT_DOUBLE_EQ(s.gemm_flops, 4e9);
  EXPECT_NEAR(s.gemm_tflops()->first, 100.0, 1e-9);
  EXPECT_EQ(s.gemm_tflops()->second, "trace");
  ASSERT_TRUE(s.overhead_fraction());
  EXPECT_NEAR(*s.overhead_fraction(), 0.05, 1e-12);
  const std::string text = profile::summary_text(s, "t.json");
  EXPECT_NE(text.find("profiled steps 0.1050 s vs unprofiled 0.1000 s (+5.0%)"), std::string::npos)
      << text;
}

// A step replayed from a CUDA graph: no range encloses the launches, so the GEMM rate comes from
// the model's GEMM FLOPs per step.
TEST(ProfileSummary, GraphStepsUseTheModelsGemmFlops) {
  std::vector<TraceEvent> ev = {range("ProfilerStep#2", 0, 1000 * us, 1),
                                range("ProfilerStep#3", 1000 * us, 2000 * us, 2),
                                gpu(Kind::kernel, "nvjet_tst_64x8", 7, 100 * us, 300 * us, 1),
                                gpu(Kind::kernel, "nvjet_tst_64x8", 7, 1100 * us, 1300 * us, 2)};
  const auto trace = profile::parse_chrome_trace(nlohmann::json::parse(
      profile::chrome_trace_json(ev, {}, {{"gemm_flops_per_step", 4e10}, {"cuda_graph", true}})));
  const auto s = profile::summarize(trace);
  ASSERT_TRUE(s.gemm_tflops());
  EXPECT_NEAR(s.gemm_tflops()->first, 200.0, 1e-9);  // 2 x 4e10 FLOPs in 400 us
  EXPECT_EQ(s.gemm_tflops()->second, "model");
  EXPECT_FALSE(s.kernels[0].tflops());
  const std::string text = profile::summary_text(s, "t.json");
  EXPECT_NE(text.find("per-kernel TFLOP/s needs eager steps: profile with --no-graph"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("not measured: the run had no unprofiled measured step"), std::string::npos);
}

TEST(ProfileSummary, KernelNameClasses) {
  EXPECT_TRUE(profile::is_gemm_kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n"));
  EXPECT_TRUE(profile::is_gemm_kernel("nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNT"));
  EXPECT_TRUE(
      profile::is_gemm_kernel("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm>"));
  EXPECT_TRUE(profile::is_gemm_kernel("Cijk_Alik_Bljk_BBS_BH_MT128x128x32"));
  EXPECT_FALSE(profile::is_gemm_kernel("void flash::flash_bwd_kernel<cutlass::bfloat16_t>"));
  EXPECT_FALSE(profile::is_gemm_kernel("cudnn_generated_fort_native_sdpa_sm90_flash_fprop"));
  EXPECT_FALSE(profile::is_gemm_kernel("ncclDevKernel_AllGather_RING_LL"));
  EXPECT_TRUE(profile::is_communication_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  EXPECT_FALSE(profile::is_communication_kernel("rmsnorm_forward"));
}

TEST(ProfileSummary, EmptyTraceSaysSo) {
  const auto s = profile::summarize(profile::Trace{});
  EXPECT_EQ(s.busy_ns, 0);
  const std::string text = profile::summary_text(s, "empty.json");
  EXPECT_NE(text.find("no ProfilerStep ranges"), std::string::npos);
  EXPECT_NE(text.find("none found by name"), std::string::npos);
  EXPECT_NE(text.find("no NCCL kernels"), std::string::npos);
}

}  // namespace

// What the trace_reader fuzzer taught (tests/fuzz/regressions/trace_reader): ids, sizes and
// counts out of any sane range are clamped, names of the wrong type read as empty, and times past
// 73 years, missing or reversed times and FLOPs past any launch's are bad input, never undefined
// behaviour or an escaping nlohmann exception.
TEST(ProfileSummary, OutOfRangeNumbersAreClampedOrRefused) {
  const auto trace = profile::parse_chrome_trace(nlohmann::json::parse(R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": 7, "pid": 1.5e300, "tid": -0.5, "ts": 10, "dur": 5,
     "args": {"flops": 1e20, "bytes": -1e300, "grid": [1e30, -3, 2.5], "correlation": 1e30,
              "External id": -4}},
    {"ph": "X", "cat": "user_annotation", "name": "gemm", "ts": 10, "dur": 5,
     "args": {"flops": 1e21}}]})"));
  ASSERT_EQ(trace.events.size(), 2u);
  const auto& k = trace.events[0];
  EXPECT_EQ(k.name, "");
  EXPECT_EQ(k.grid[0], std::numeric_limits<int>::max());
  EXPECT_EQ(k.grid[1], 0);
  EXPECT_EQ(k.grid[2], 2);
  EXPECT_EQ(k.bytes, -1);
  EXPECT_EQ(k.correlation, std::uint64_t(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(k.external_id, 0u);
  EXPECT_EQ(trace.events[1].flops, 1e21);
  EXPECT_EQ(profile::summarize(trace).kernel_ns, 5 * us);

  // What the message names, or "" where the event is read.
  const auto refusal = [](const char* event) -> std::string {
    try {
      (void)profile::parse_chrome_trace(
          nlohmann::json::parse(std::string(R"({"traceEvents": [)") + event + "]}"));
    } catch (const tprimat::core::InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(refusal(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1e300, "dur": 1})"), "");
  EXPECT_NE(refusal(R"({"ph": "X", "name": "g", "ts": 0, "dur": 1, "args": {"flops": 1e300}})")
                .find("'g' states 1e+300 FLOPs"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"ph": "X", "name": "g", "ts": 0, "dur": 1, "args": {"flops": -1}})"), "");
  // A time the event does not give is not 0.
  EXPECT_NE(refusal(R"({"ph": "X", "cat": "kernel", "name": "k", "dur": 100})").find("has no ts"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 5})").find("has no dur"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"ph": "X", "name": "k", "ts": "5", "dur": 1})").find(R"(ts "5")"),
            std::string::npos);
  // PyTorch writes dur -1 for an op still open when the profiler stopped: left out, counted,
  // never negative time in the sums; an E before its B, kept as zero-length and told apart.
  const auto unfinished = profile::parse_chrome_trace(nlohmann::json::parse(R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "ts": 5, "dur": 4},
    {"ph": "X", "cat": "cpu_op", "name": "open", "ts": 5, "dur": -1},
    {"ph": "B", "name": "r", "ts": 5}, {"ph": "E", "ts": 2}]})"));
  ASSERT_EQ(unfinished.events.size(), 2u);
  EXPECT_EQ(unfinished.unfinished, 1u);
  EXPECT_EQ(unfinished.reversed, 1u);
  EXPECT_EQ(unfinished.events[1].duration_ns(), 0);
  const auto unfinished_summary = profile::summarize(unfinished);
  EXPECT_EQ(unfinished_summary.kernel_ns, 4 * us);
  const std::string text = profile::summary_text(unfinished_summary, "t.json");
  EXPECT_NE(text.find("1 event(s) left out for a negative duration"), std::string::npos) << text;
  EXPECT_NE(text.find("1 range(s) whose end (E) comes before their begin (B), counted as "
                      "zero-length"),
            std::string::npos)
      << text;
  EXPECT_EQ(refusal(R"({"ph": "M", "name": "process_name", "args": {"name": "p"}})"), "");
}

TEST(ProfileSummary, AKernelOverlappingItselfHoldsTheGpuOnce) {
  // One name on two streams at once (NCCL beside compute does this): 100 us of kernel time in a
  // 60 us busy span. Its share of the busy time is the 60 us it ran, not 167%.
  const auto s = profile::summarize(profile::parse_chrome_trace(nlohmann::json::parse(R"({
    "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 80},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 50},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 8, "ts": 20, "dur": 50},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 7, "ts": 10, "dur": 10}]})")));
  ASSERT_EQ(s.kernels.size(), 1u);
  EXPECT_EQ(s.kernels[0].total_ns, 110 * us);
  EXPECT_EQ(s.kernels[0].wall_ns, 70 * us);  // 60 us on device 0, 10 on device 1
  EXPECT_EQ(s.busy_ns, 70 * us);
  const std::string text = profile::summary_text(s, "t.json");
  // Its share of the step: one process's 80 us step on each of its two devices, 160 us of
  // device time, of which k held 70 (not 70 of 80: the devices' times summed against one).
  EXPECT_EQ(s.step_hosts, 1);
  EXPECT_DOUBLE_EQ(s.device_step_ns(), 160.0 * us);
  EXPECT_NE(text.find("100.0   43.8"), std::string::npos) << text;
  EXPECT_EQ(text.find("157.1"), std::string::npos) << text;
}

TEST(ProfileSummary, EachRanksStepIsItsDevicesStep) {
  // Two ranks' traces merged (host pids 100 and 101, devices 0 and 1), a 100 us step each: the
  // devices had 200 us of step between them, as many as the ranks timed.
  const auto s = profile::summarize(profile::parse_chrome_trace(nlohmann::json::parse(R"({
    "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 100, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 101, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 50},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 7, "ts": 10, "dur": 50}]})")));
  EXPECT_EQ(s.step_hosts, 2);
  EXPECT_DOUBLE_EQ(s.device_step_ns(), 200.0 * us);
  const std::string text = profile::summary_text(s, "t.json");
  EXPECT_NE(text.find("100.0   50.0"), std::string::npos) << text;
}
