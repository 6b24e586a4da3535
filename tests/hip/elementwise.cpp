// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// HIP check of src/cuda/elementwise.cu's kernels: every element-wise launcher it calls.
#include "launchers.hpp"
#include "tprimat/kernels/adamw.cuh"
#include "tprimat/kernels/bias.cuh"
#include "tprimat/kernels/convert.cuh"
#include "tprimat/kernels/cross_entropy.cuh"
#include "tprimat/kernels/embedding.cuh"
#include "tprimat/kernels/reduce.cuh"
#include "tprimat/kernels/rmsnorm.cuh"
#include "tprimat/kernels/rope.cuh"
#include "tprimat/kernels/swiglu.cuh"

namespace tprimat::hip_check {
namespace {

/// backend::OptimizerScalars' fields (include/tprimat/backend/cuda.hpp includes the CUDA runtime,
/// so it cannot be included here); a field the kernel reads and this lacks fails the compile.
struct OptimizerScalars {
  float lr, beta1, beta2, eps, weight_decay, bias_correction1, bias_correction2, clip_norm;
};

const AnyLauncher launchers[] = {
    any(&kernels::embedding_forward),
    any(&kernels::embedding_backward),
    any(&kernels::rmsnorm_forward),
    any(&kernels::rmsnorm_backward),
    any(&kernels::rope_forward),
    any(&kernels::rope_backward),
    any(&kernels::swiglu_forward),
    any(&kernels::swiglu_backward),
    any(&kernels::bias_backward),
    any(&kernels::cross_entropy),
    any(&kernels::reduce_sum),
    any(&kernels::to_bf16),
    any(&kernels::adamw<OptimizerScalars>),
};

}  // namespace

std::span<const AnyLauncher> elementwise_launchers() { return launchers; }

}  // namespace tprimat::hip_check
