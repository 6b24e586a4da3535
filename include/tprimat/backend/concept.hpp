// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The Backend concept: the static calls a TrainingStep makes on its compute policy.
#pragma once

#include <concepts>
#include <cstdint>
#include <string_view>

#include "tprimat/backend/device_info.hpp"

namespace tprimat::backend {

/// One AdamW update's hyper-parameters; `step` counts from 1 (bias correction).
struct AdamWArgs {
  double lr = 0;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0;  ///< decoupled (AdamW), 0 for tensors that take no decay
  int step = 1;
};

/// A backend is a tag type of constants and static functions (no virtual calls on the step's
/// path). Checked for float, the element type of a timed run; the reference also runs double.
template <class B>
concept Backend = requires(const float* cx, float* x, const std::int32_t* ids, std::int64_t n,
                           int h, double eps) {
  { B::name } -> std::convertible_to<std::string_view>;
  { B::device_info() } -> std::same_as<DeviceInfo>;
  B::template gemm<float>(false, false, n, n, n, 1.0f, cx, n, cx, n, 0.0f, x, n);
  B::template embedding_forward<float>(ids, n, cx, h, x);
  B::template embedding_backward<float>(ids, n, cx, h, x);
  B::template rmsnorm_forward<float>(cx, cx, n, h, eps, x, x);
  B::template rmsnorm_backward<float>(cx, cx, cx, cx, n, h, x, x);
  B::template swiglu_forward<float>(cx, cx, x, n);
  B::template swiglu_backward<float>(cx, cx, cx, x, x, n);
  { B::template sum_squares<float>(cx, n) } -> std::convertible_to<double>;
};

/// A device backend (CUDA, HIP): its ops take device pointers and a stream, so TrainingStep runs
/// it through the device engine (train/device/training_step.hpp) instead of the host one.
template <class B>
concept DeviceBackend = requires {
  { B::name } -> std::convertible_to<std::string_view>;
  requires B::is_device;
};

}  // namespace tprimat::backend
