// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Gpu's GEMM: cuBLASLt through the wrapper both GEMM libraries share (blaslt/gemm.hpp),
// and what only cuBLASLt can say of its plans (backend/cuda/gemm_plans.hpp's introspection, for tests
// and benchmarks: hipBLASLt's algorithm is an opaque index).
#pragma once

#include <cublasLt.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>

#include "tprimat/backend/blaslt/gemm.hpp"
#include "tprimat/backend/cuda/gemm_plans.hpp"
#include "tprimat/backend/gpu.hpp"

namespace tprimat::backend {

TPRIMAT_GPU_INLINE std::size_t gemm_cached_plans() {
  detail::blaslt::Cache& c = detail::blaslt::cache();
  std::lock_guard lock(c.mutex);
  return c.plans.size();
}

TPRIMAT_GPU_INLINE GemmTuning gemm_tuning() {
  detail::blaslt::Cache& c = detail::blaslt::cache();
  std::lock_guard lock(c.mutex);
  GemmTuning t;
  for (const auto& entry : c.plans) {
    t.timed += entry.second->heuristic_rank >= 0;
    t.changed += entry.second->heuristic_rank > 0;
  }
  return t;
}

TPRIMAT_GPU_INLINE std::string gemm_algorithm(const GemmQuery& q) {
  int device = 0;
  gpu_check(cudaGetDevice(&device), "cudaGetDevice");
  using detail::blaslt::OutType;
  const OutType out = q.fp32_out ? OutType::fp32 : OutType::bf16;
  detail::blaslt::Cache& c = detail::blaslt::cache();
  std::lock_guard lock(c.mutex);
  const detail::blaslt::Plan* best = nullptr;
  std::uint32_t best_align = 0;
  for (const auto& [key, plan] : c.plans) {
    if (key.m != q.m || key.n != q.n || key.k != q.k || key.lda != q.lda || key.ldb != q.ldb ||
        key.ldc != q.ldc || key.trans_a != q.trans_a || key.trans_b != q.trans_b ||
        key.accumulate != q.accumulate || key.bias != q.bias || key.out != out ||
        key.device != device)
      continue;
    const std::uint32_t align = std::min({key.align_a, key.align_b, key.align_c});
    if (!best || align > best_align) {
      best = plan.get();
      best_align = align;
    }
  }
  if (!best) return {};
  // Each attribute's type as cublasLt.h documents it; one that cannot be read shows as 0.
  auto get = [&]<class T>(cublasLtMatmulAlgoConfigAttributes_t attr, T) {
    T value{};
    std::size_t written = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&best->algo, attr, &value, sizeof(value), &written);
    return std::to_string(value);
  };
  return "algo=" + get(CUBLASLT_ALGO_CONFIG_ID, std::int32_t{}) +
         " tile=" + get(CUBLASLT_ALGO_CONFIG_TILE_ID, std::uint32_t{}) +
         " stages=" + get(CUBLASLT_ALGO_CONFIG_STAGES_ID, std::uint32_t{}) +
         " splitk=" + get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, std::int32_t{}) +
         " reduction=" + get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, std::uint32_t{}) +
         " swizzle=" + get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, std::uint32_t{}) +
         " custom=" + get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, std::uint32_t{}) +
         " cluster=" + get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, std::uint16_t{}) +
         " rank=" + std::to_string(best->heuristic_rank) +
         " of=" + std::to_string(best->timed_candidates);
}

}  // namespace tprimat::backend
