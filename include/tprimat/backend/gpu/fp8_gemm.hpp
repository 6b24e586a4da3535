// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The FP8 GEMM of backend::Gpu (cuBLASLt or hipBLASLt; definitions in backend/blaslt/fp8_gemm.hpp): declarations.
#pragma once

#include <cstdint>

#include "tprimat/backend/gpu/runtime.hpp"
#include "tprimat/kernels/fp8_format.hpp"

namespace tprimat::backend {

/// One FP8 operand, row-major [rows, k] with k contiguous ("K-major": the one layout Hopper's
/// FP8 tensor cores take for both operands, cuBLAS's "TN"): its bytes, what a byte means, and the
/// DEVICE pointer to the fp32 factor that turns a decoded byte back into the tensor's value (the
/// scale_inv of the cast that produced it), read by cuBLASLt when the GEMM runs, so a captured
/// graph picks up scales the device updated.
struct Fp8Matrix {
  const std::uint8_t* data = nullptr;
  kernels::Fp8Format format = kernels::Fp8Format::e4m3;
  const float* scale_inv = nullptr;  ///< device pointer, one fp32, on a 16-byte boundary
  std::int64_t ld = 0;               ///< elements (bytes) between rows, at least k
};

/// How the tensor cores' partial sums reach the fp32 accumulator (CUBLASLT_MATMUL_DESC_FAST_ACCUM).
/// Transformer Engine's default, followed here: fast for the forward GEMM, split for the two
/// backward GEMMs, whose gradients are the more sensitive to the lost precision.
enum class Fp8Accumulation : std::uint8_t {
  split,  ///< partial sums promoted to fp32 registers regularly: the accurate one
  fast,   ///< partial sums kept in the tensor core's narrower accumulator longer: faster
};

/// Row-major D[m, n] = alpha * (sa * A)[m, k] (sb * B)[n, k]^T + beta * D, where sa = *a.scale_inv
/// and sb = *b.scale_inv: A and B both K-major FP8, fp32 accumulation, D bf16 or fp32. beta 0
/// ignores D's contents; beta 1 with fp32 D accumulates into it (weight gradients summed over
/// micro-batches).
/// The hybrid recipe's three GEMMs of a linear layer y = x W^T (W [out, in]): forward
/// y = x W^T (A = x E4M3, B = W E4M3); input gradient dx = dy W (A = dy E5M2, B = W^T E4M3);
/// weight gradient dW = dy^T x (A = dy^T E5M2, B = x^T E4M3), or dW^T = x^T dy with the operands
/// the other way round (A = x^T E4M3, B = dy^T E5M2). cuBLASLt takes E4M3 x E4M3, E4M3 x E5M2
/// and E5M2 x E4M3; E5M2 x E5M2 and the fnuz formats throw core::InputError.
/// Shapes (cuBLASLt's FP8 requirements, checked before the call, core::InputError naming the
/// rule): m, n, k positive multiples of 16; a.ld and b.ld multiples of 16 and at least k; ldd a
/// multiple of 16 bytes' worth of Out and at least n; every pointer, the scale pointers included,
/// 16-byte aligned.
/// `c` (optional): beta scales c instead of D's old contents (D = alpha A B^T + beta c, same
/// layout as D): a residual added on the way, with no copy. `bias` (optional, bf16 D only): a
/// bf16 bias[n] added to every row (cuBLASLt's BIAS epilogue).
/// Plans are cached per shape as Gpu::gemm's; the handle and workspace are Gpu::gemm's (call
/// Gpu::gemm_prepare before capture; GEMMs on one device must be stream-ordered).
template <class Out>
void fp8_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const Fp8Matrix& a,
              const Fp8Matrix& b, float alpha, float beta, Out* d, std::int64_t ldd,
              Fp8Accumulation accumulation, gpu::Stream stream, const Out* c = nullptr,
              const gpu::bf16* bias = nullptr);

/// Whether this build has an FP8 GEMM: cuBLASLt's on CUDA, hipBLASLt's on HIP where the build
/// found hipBLASLt (TPRIMAT_HAVE_HIPBLASLT, backend/blaslt/fp8_gemm.hpp); a HIP build without it has
/// no fp8_gemm definition.
#if !TPRIMAT_GPU_HIP || defined(TPRIMAT_HAVE_HIPBLASLT)
inline constexpr bool has_fp8_gemm = true;
#else
inline constexpr bool has_fp8_gemm = false;
#endif

/// The FP8 formats fp8_gemm takes on the current device: the forward operands' (E4M3) and the
/// gradients' (E5M2). OCP e4m3/e5m2 on NVIDIA and on gfx950; e4m3_fnuz/e5m2_fnuz on gfx942
/// (MI300X), whose matrix cores compute only those. Throws core::InputError on an AMD GPU without
/// FP8 matrix cores, or in a HIP build without hipBLASLt.
struct Fp8GemmFormats {
  kernels::Fp8Format forward;   ///< e4m3 or e4m3_fnuz
  kernels::Fp8Format gradient;  ///< e5m2 or e5m2_fnuz
};
Fp8GemmFormats fp8_gemm_formats();

/// The explicit instantiations for bf16 and fp32 D (in the TU that compiles Gpu::gemm, src/cuda or
/// src/hip: the declaration is one for both platforms).
#define TPRIMAT_CUDA_INSTANTIATE_FP8_GEMMS()                                                   \
  template void ::tprimat::backend::fp8_gemm<::tprimat::gpu::bf16>(                            \
      std::int64_t, std::int64_t, std::int64_t, const ::tprimat::backend::Fp8Matrix&,          \
      const ::tprimat::backend::Fp8Matrix&, float, float, ::tprimat::gpu::bf16*, std::int64_t, \
      ::tprimat::backend::Fp8Accumulation, ::tprimat::gpu::Stream, const ::tprimat::gpu::bf16*, \
      const ::tprimat::gpu::bf16*);                                                            \
  template void ::tprimat::backend::fp8_gemm<float>(                                           \
      std::int64_t, std::int64_t, std::int64_t, const ::tprimat::backend::Fp8Matrix&,          \
      const ::tprimat::backend::Fp8Matrix&, float, float, float*, std::int64_t,                \
      ::tprimat::backend::Fp8Accumulation, ::tprimat::gpu::Stream, const float*,               \
      const ::tprimat::gpu::bf16*)

}  // namespace tprimat::backend
