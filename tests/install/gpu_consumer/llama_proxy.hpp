// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The GPU consumer's one function: timed training steps of a Llama 3.1 8B proxy.
#pragma once

/// Step rate of the measured steps after `warmup` steps, as `tprimat bench` reports it.
struct StepRate {
  double tokens_per_second = 0;
  double last_loss = 0;
};

/// Llama 3.1 8B with `layers` layers at seq 2048 on this process's GPU (backend::Gpu or
/// backend::Gpu by the compiler), mbs x grad_accum = gbs sequences a step of seed-42 synthetic
/// tokens, as `tprimat bench` feeds them.
StepRate run_llama_proxy(int layers, int mbs, int gbs, int warmup, int steps);
