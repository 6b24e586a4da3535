// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Throughput, model FLOP/s and MFU from measured step times: the result's performance_metrics.
#pragma once

#include <cmath>
#include <optional>
#include <span>

#include "tprimat/core/stats.hpp"

namespace tprimat::bench {

/// What turns step times into throughput. `flops_per_token_*` are for the layers actually run.
struct MetricsInput {
  double tokens_per_step = 0;        ///< global batch x sequence length
  int num_gpus = 1;                  ///< ranks of the run (TP x PP x CP x DP)
  double flops_per_token_palm = 0;   ///< model::flops_per_token: 6 P_matmul + 12 L H Dh S
  /// model::flops_per_token_causal: 6 P_matmul + 6 L H Dh S, the attention term halved
  double flops_per_token_causal = 0;
  double flops_per_token_6n = 0;     ///< the seeds' 6 x all parameters
  double peak_tflops_dense = 0;      ///< per device; 0 when unknown (then MFU is unknown)
  double peak_tflops_fp8_dense = 0;  ///< dense FP8 peak per device; 0 when unknown or none
};

struct Metrics {
  core::Summary step_time;            ///< seconds, measured steps only (warm-up excluded)
  double tokens_per_second = NAN;     ///< tokens_per_step / mean step time
  double tokens_per_second_per_gpu = NAN;
  double steps_per_second = NAN;
  double model_tflops_per_gpu = NAN;  ///< PaLM FLOPs/token x tokens/s/GPU / 1e12
  double tflops_per_gpu_6n = NAN;     ///< the same with the seeds' 6N FLOPs/token
  std::optional<double> mfu;          ///< model_tflops_per_gpu / dense bf16 peak, as a fraction
  /// model_tflops_per_gpu / dense FP8 peak: the same model FLOPs (they do not change with
  /// precision) against the FP8 peak, as NVIDIA's tables state an FP8 run's MFU.
  std::optional<double> mfu_fp8_peak;
  /// The same three under the causal convention (attention halved: the work the kernels do,
  /// Megatron-Bridge's and NeMo's MFU); the PaLM ones above keep their meaning.
  double tflops_per_gpu_causal = NAN;
  std::optional<double> mfu_causal;
  std::optional<double> mfu_fp8_peak_causal;
};

/// Mean step time drives throughput (total tokens over total time, as the seeds compute it).
inline Metrics compute_metrics(std::span<const double> step_times, const MetricsInput& in) {
  Metrics m;
  m.step_time = core::summarize(step_times);
  const double t = m.step_time.mean;
  if (!(t > 0)) return m;  // no (or zero-length) measured steps: throughput unknown
  m.steps_per_second = 1.0 / t;
  m.tokens_per_second = in.tokens_per_step / t;
  m.tokens_per_second_per_gpu = m.tokens_per_second / in.num_gpus;
  m.model_tflops_per_gpu = m.tokens_per_second_per_gpu * in.flops_per_token_palm / 1e12;
  m.tflops_per_gpu_6n = m.tokens_per_second_per_gpu * in.flops_per_token_6n / 1e12;
  m.tflops_per_gpu_causal = m.tokens_per_second_per_gpu * in.flops_per_token_causal / 1e12;
  if (in.peak_tflops_dense > 0) {
    m.mfu = m.model_tflops_per_gpu / in.peak_tflops_dense;
    m.mfu_causal = m.tflops_per_gpu_causal / in.peak_tflops_dense;
  }
  if (in.peak_tflops_fp8_dense > 0) {
    m.mfu_fp8_peak = m.model_tflops_per_gpu / in.peak_tflops_fp8_dense;
    m.mfu_fp8_peak_causal = m.tflops_per_gpu_causal / in.peak_tflops_fp8_dense;
  }
  return m;
}

}  // namespace tprimat::bench
