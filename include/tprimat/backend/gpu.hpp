// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Gpu: the GPU backend's ops as host functions over device pointers (one stream each),
// CUDA or HIP by the platform this TU is compiled for (one struct, one name: kernels/platform.hpp
// picks the platform).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tprimat/backend/device_info.hpp"
#include "tprimat/backend/gpu/runtime.hpp"
#include "tprimat/config.hpp"
#include "tprimat/kernels/fp8_format.hpp"
#include "tprimat/kernels/fp8_target.hpp"
#include "tprimat/kernels/reduction_chunks.hpp"

namespace tprimat::backend {

/// The scalars the optimizer kernels read from device memory, so that a captured CUDA graph
/// replays every step unchanged while the learning rate moves (the host writes this struct
/// before each replay).
struct OptimizerScalars {
  float lr = 0;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0;      ///< applied to tensors whose decay flag is set
  float bias_correction1 = 1;  ///< 1 - beta1^step
  float bias_correction2 = 1;  ///< 1 - beta2^step
  float clip_norm = 0;         ///< clip gradients to this global norm; <= 0 disables
};

/// The GPU backend: a tag type whose static functions enqueue work on a stream. Element types:
/// bf16 for GEMM operands and activations, fp32 for the residual stream, norms' statistics,
/// gradients, master weights and AdamW state. This header declares; the definitions are headers
/// too, by concern (backend/gpu/all.cuh lists them): the ops that launch tprimat's kernels
/// (backend/gpu/*.cuh, the kernels in kernels/tprimat/kernels/) are written once for nvcc and
/// hipcc, the vendor parts (GEMM library, attention, profiling) side by side in backend/cuda/
/// and backend/hip/. A build has one GPU platform: this class is NVIDIA's or AMD's by the
/// compiler, under one name.
/// Every op is asynchronous on `stream` and allocates nothing (so a step can be graph-captured);
/// scratch comes from the caller, sized by the *_workspace functions.
struct Gpu {
  static constexpr std::string_view name = TPRIMAT_GPU_HIP ? "hip" : "cuda";
  static constexpr bool is_device = true;
  using bf16 = gpu::bf16;
  using Stream = gpu::Stream;

  /// Name, memory, SMs (CUs), driver/runtime and GEMM/attention library versions of the current
  /// device; the dense bf16 peak by device name (0 when unknown). Throws core::RunError without
  /// a GPU.
  static DeviceInfo device_info();
  /// Number of usable devices (0 without a driver or GPU; never throws).
  static int device_count();
  /// Makes device `local_rank` current for this process (one GPU per rank on a node), before
  /// anything else touches the GPU. Throws core::InputError when the node has fewer GPUs.
  static void use_device(int local_rank);

  // ---- GEMM (backend/blaslt/gemm.hpp: cuBLASLt or hipBLASLt; backend/hip/gemm.hpp picks it, or the tiled
  // fallback where the build has no hipBLASLt) ----------------------------------------------------
  /// The GEMM implementation this build uses: "cublaslt", "hipblaslt" or "fallback" (the portable
  /// tiled kernel: correct, slow), as gpu_info.gemm records it.
  static std::string_view gemm_library();
  /// Row-major C[m, n] = op(A) op(B) + beta C (+ bias[n] broadcast over rows when bias is set),
  /// op(A) [m, k] (A stored [k, m] when trans_a), op(B) [k, n] (B stored [n, k] when trans_b);
  /// bf16 operands, fp32 accumulation, C bf16 or fp32. beta 0 ignores C's contents.
  /// The algorithm is chosen once per shape by cuBLASLt's (hipBLASLt's) heuristic and cached. Call
  /// gemm_prepare() (outside graph capture) before the first gemm on a device.
  template <class Out>
  static void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                   const bf16* a, std::int64_t lda, const bf16* b, std::int64_t ldb, float beta,
                   Out* c, std::int64_t ldc, const bf16* bias, Stream stream);
  /// D = op(A) op(B) + C with C and D distinct buffers of one layout: a residual add without a
  /// copy (cuBLASLt reads C and writes D). Instantiated for fp32 (the residual stream).
  template <class Out>
  static void gemm_add(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                       std::int64_t k, const bf16* a, std::int64_t lda, const bf16* b,
                       std::int64_t ldb, const Out* c, Out* d, std::int64_t ldc, Stream stream);
  /// Creates the cuBLASLt (hipBLASLt) handle and its workspace (gemm_workspace_bytes, from the
  /// stream-ordered pool) for the current device. Idempotent.
  static void gemm_prepare(Stream stream);
  static constexpr std::size_t gemm_workspace_bytes = 32u << 20;

  // ---- element-wise (backend/gpu/elementwise.cuh) ----------------------------------------------
  /// out[t, :] = table[ids[t], :]; table [vocab, hidden] a split fp32 master (the bf16 weights
  /// and their remainders table_lo, see split_master; table_lo null: the bf16 weights alone, as
  /// the engine reads them), out [n, hidden] fp32. ids[t] < 0 gives a row of zeros (a token of
  /// another TP rank's vocabulary slice).
  static void embedding_forward(const std::int32_t* ids, std::int64_t n, const bf16* table,
                                const std::uint16_t* table_lo, int hidden, float* out,
                                Stream stream);
  /// Deterministic backward: the n positions grouped by token id (built on the host with
  /// embedding_groups): for each group u < *group_count, dtable[group_ids[u], :] += the sum, in
  /// position order, of dout[positions[offsets[u] .. offsets[u + 1]), :]. max_groups bounds
  /// *group_count (the grid is sized by it so that a captured graph stays valid).
  static void embedding_backward(const std::int32_t* group_ids, const std::int32_t* offsets,
                                 const std::int32_t* positions, const std::int32_t* group_count,
                                 std::int64_t max_groups, const float* dout, int hidden,
                                 float* dtable, Stream stream);

  /// y = bf16(x * rstd * g), rstd = 1 / sqrt(mean(x^2) + eps); x [n, h] fp32, g [h] a split
  /// fp32 master (g, g_lo: see split_master; g_lo null: the bf16 gain alone, as the engine
  /// reads it).
  static void rmsnorm_forward(const float* x, const bf16* g, const std::uint16_t* g_lo,
                              std::int64_t n, int h, float eps, bf16* y, float* rstd,
                              Stream stream);
  /// dx += rstd * u - x * rstd^3 * (u . x) / h with u = dy * g, then dx_bf16 = bf16(dx);
  /// dg += sum_t dy * x * rstd, reduced deterministically through `partials`
  /// (rmsnorm_partials(n, h) floats).
  static void rmsnorm_backward(const float* x, const bf16* g, const std::uint16_t* g_lo,
                               const float* rstd, const float* dy, std::int64_t n, int h,
                               float* dx, bf16* dx_bf16, float* dg, float* partials,
                               Stream stream);
  static std::int64_t rmsnorm_partials(std::int64_t n, int h);

  /// In-place rotation of x [rows, heads * head_dim] (row t at position t % seq), HF
  /// rotate_half pairing (i, i + head_dim/2); cos/sin fp32 [seq, head_dim/2]. Backward applies
  /// the inverse rotation to the gradient.
  static void rope_forward(bf16* x, std::int64_t rows, int seq, int heads, int head_dim,
                           const float* cos_table, const float* sin_table, Stream stream);
  static void rope_backward(bf16* dx, std::int64_t rows, int seq, int heads, int head_dim,
                            const float* cos_table, const float* sin_table, Stream stream);

  /// h = silu(gate) * up; backward dgate, dup from dh (silu recomputed in fp32), and with
  /// h != nullptr the forward's h again from the same reads (a backward pass that recomputes
  /// h instead of keeping it).
  static void swiglu_forward(const bf16* gate, const bf16* up, bf16* h, std::int64_t n,
                             Stream stream);
  static void swiglu_backward(const bf16* gate, const bf16* up, const bf16* dh, bf16* dgate,
                              bf16* dup, bf16* h, std::int64_t n, Stream stream);

  /// dbias[cols] += column sums of dy [rows, cols] (fp32 accumulation, deterministic through
  /// `partials`: bias_partials(rows, cols) floats).
  static void bias_backward(const bf16* dy, std::int64_t rows, std::int64_t cols, float* dbias,
                            float* partials, Stream stream);
  static std::int64_t bias_partials(std::int64_t rows, std::int64_t cols);

  /// Fused softmax cross-entropy over logits [n, vocab] bf16: row_loss[t] = logsumexp(row) -
  /// row[targets[t]] (fp32); with_grad overwrites the logits with grad_scale * (softmax -
  /// onehot) in bf16, so no fp32 copy of the logits ever exists.
  static void cross_entropy(bf16* logits, const std::int32_t* targets, std::int64_t n, int vocab,
                            float grad_scale, bool with_grad, float* row_loss, Stream stream);
  /// Vocab-parallel cross_entropy in two parts around one exchange: each TP rank holds logits
  /// [n, vocab] of the vocabulary [vocab_begin, vocab_begin + vocab). Part 1 writes this slice's
  /// per-row statistics, cross_entropy_stats_per_row floats a row, into `stats` [n][3]; once
  /// every rank's are gathered rank after rank ([ranks][n][3]), part 2 gives every rank the same
  /// row losses and (with_grad) this slice's gradient grad_scale * (softmax - onehot) in place.
  static constexpr int cross_entropy_stats_per_row = kernels::cross_entropy_stats_per_row;
  static void cross_entropy_stats(const bf16* logits, const std::int32_t* targets, std::int64_t n,
                                  int vocab, int vocab_begin, float* stats, Stream stream);
  static void cross_entropy_combine(bf16* logits, const std::int32_t* targets, std::int64_t n,
                                    int vocab, int vocab_begin, const float* stats, int ranks,
                                    float grad_scale, bool with_grad, float* row_loss,
                                    Stream stream);

  /// *out (+)= sum of x[i] (or x[i]^2 with squares) in double, deterministically: a fixed grid
  /// writes reduce_partials() doubles into `partials`, one block sums them in order.
  static void reduce_sum(const float* x, std::int64_t n, bool squares, bool accumulate,
                         double* out, double* partials, Stream stream);
  static constexpr int reduce_partials = static_cast<int>(kernels::sum_partials);
  /// reduce_sum in two halves, for one sum over segments reduced at different times, on any
  /// stream: reduce_sum_partials writes the reduce_partials doubles of one segment, sum_partials
  /// adds `count` doubles in order into *out. Deterministic like reduce_sum.
  static void reduce_sum_partials(const float* x, std::int64_t n, bool squares, double* partials,
                                  Stream stream);
  static void sum_partials(const double* partials, int count, double* out, Stream stream);

  /// dst = bf16(src).
  static void to_bf16(const float* src, bf16* dst, std::int64_t n, Stream stream);
  /// out = residual + float(y) (out may be residual): sequence parallelism's row-parallel sums,
  /// reduce-scattered in bf16, onto the fp32 residual stream.
  static void add_bf16(const float* residual, const bf16* y, float* out, std::int64_t n,
                       Stream stream);

  /// Attention over two key blocks from each block's (o, lse): (o, lse) becomes the merged
  /// softmax's, in place. o, o_part [rows, heads * head_dim]; lse, lse_part [heads, rows].
  static void attention_merge(bf16* o, float* lse, const bf16* o_part, const float* lse_part,
                              std::int64_t rows, int heads, int head_dim, Stream stream);
  /// x += y, summed in fp32 and rounded once.
  static void accumulate_bf16(bf16* x, const bf16* y, std::int64_t n, Stream stream);
  /// x += y in fp32.
  static void accumulate(float* x, const float* y, std::int64_t n, Stream stream);

  /// The engine's fp32 master weights live split (kernels/tprimat/kernels/split_float.hpp):
  /// `weights`, the bf16 every GEMM reads (rounded to nearest, ties away from zero), and
  /// `master_lo`, 16-bit remainders with bits(w) = (weights << 16) + master_lo exactly. 4 bytes a
  /// weight instead of an fp32 master plus a bf16 copy. split_master fills both from fp32.
  static void split_master(const float* src, bf16* weights, std::uint16_t* master_lo,
                           std::int64_t n, Stream stream);

  /// AdamW over the flat split master in one launch: tensor k covers [tensor_ends[k-1],
  /// tensor_ends[k]) and takes weight decay when decay[k] != 0. Gradients are first scaled by
  /// min(1, clip_norm / sqrt(*grad_sum_squares)) (global-norm clipping); each weight is joined to
  /// fp32, updated in fp32 (the op order of Cpu::adamw) and split again, with both moments.
  static void adamw(bf16* weights, std::uint16_t* master_lo, const float* grads, float* m,
                    float* v, std::int64_t n, const std::int64_t* tensor_ends,
                    const std::uint8_t* decay, int tensors, const OptimizerScalars* scalars,
                    const double* grad_sum_squares, Stream stream);

  // ---- FP8 casts and scales (backend/gpu/fp8_cast.cuh) -----------------------------------------
  // FP8 tensors are bytes of one kernels::Fp8Format; each has a device float scale (x * scale is
  // cast) and scale_inv = 1 / scale (what the GEMM multiplies back). Casts saturate and round to
  // nearest even, bit for bit kernels/fp8_cast_reference.hpp. An amax is max-reduced into (the
  // caller zeroes it before the first reduction; the delayed update zeroes it after reading);
  // NaNs are left out of it, infinities kept.
  /// out[i] = cast(x[i] * *scale); *amax = max(*amax, max |x|) unless amax is null.
  static void fp8_cast(const bf16* x, std::int64_t n, kernels::Fp8Format format,
                       const float* scale, std::uint8_t* out, float* amax, Stream stream);
  static void fp8_cast(const float* x, std::int64_t n, kernels::Fp8Format format,
                       const float* scale, std::uint8_t* out, float* amax, Stream stream);
  /// *amax = max(*amax, max |x|) alone: current scaling's pass before the cast.
  static void fp8_amax(const bf16* x, std::int64_t n, float* amax, Stream stream);
  /// x [rows, cols] -> out [rows, cols] and out_t [cols, rows] (both cast(x * *scale)) and the
  /// amax, in one pass over x (Transformer Engine's cast_transpose): Hopper's FP8 GEMM takes
  /// K-major operands only, so the backward GEMMs read out_t. A null `out` writes out_t alone.
  static void fp8_cast_transpose(const bf16* x, std::int64_t rows, std::int64_t cols,
                                 kernels::Fp8Format format, const float* scale, std::uint8_t* out,
                                 std::uint8_t* out_t, float* amax, Stream stream);
  /// SwiGLU's h [rows, cols] (swiglu_forward's bf16 values) computed from gate and up and cast
  /// as `h` says (fp8_cast_transpose's outputs and amax, or the amax alone) in one pass: h is
  /// never written in bf16 nor read back.
  static void fp8_swiglu_cast(const bf16* gate, const bf16* up, std::int64_t rows,
                              std::int64_t cols, kernels::Fp8Format format,
                              const kernels::Fp8Target& h, Stream stream);
  /// swiglu_backward's dgate and dup [rows, cols] computed from gate, up and dh and cast as
  /// `dgate` and `dup` say, in one pass: the bf16 gradients are never written.
  static void fp8_swiglu_grad_cast(const bf16* gate, const bf16* up, const bf16* dh,
                                   std::int64_t rows, std::int64_t cols, kernels::Fp8Format format,
                                   const kernels::Fp8Target& dgate, const kernels::Fp8Target& dup,
                                   Stream stream);
  /// Delayed scaling of `count` tensors of one format: amax_history [count, history] rolls by one
  /// (entry 0 takes amax[t], the oldest drops), scale[t] = max_finite / max(history) / 2^margin
  /// (kept where that max is 0 or not finite), scale_inv[t] = 1 / scale[t], amax[t] = 0.
  /// Transformer Engine's DelayedScaling defaults: history 1024, max, margin 0. Tensor t's
  /// scale_inv is scale_inv[t * scale_inv_stride] (4: each on its own 16 bytes, as cuBLASLt
  /// takes scale pointers).
  static void fp8_delayed_scale_update(float* amax_history, int history, float* amax, int count,
                                       kernels::Fp8Format format, int margin, float* scale,
                                       float* scale_inv, Stream stream, int scale_inv_stride = 1);
  /// Current scaling: scale[t] from this step's amax[t] by the same rule, scale_inv (strided as
  /// above) = 1 / it; amax[t] = 0 after.
  static void fp8_current_scale_update(float* amax, int count, kernels::Fp8Format format,
                                       int margin, float* scale, float* scale_inv, Stream stream,
                                       int scale_inv_stride = 1);

  // ---- initialisation (backend/gpu/init.cuh) -----------------------------------------------------
  /// p[i] = stddev * N(0, 1), drawn from a counter hash of (seed, first + i): the same weights
  /// for the same seed whatever the grid. (Not the CPU engine's mt19937 draws: a device run
  /// that must start from CPU weights copies them in.)
  static void init_normal(float* p, std::int64_t n, float stddev, std::uint64_t seed,
                          std::uint64_t first, Stream stream);
  /// p [rows, cols] = the block of a [*, stride] tensor whose element (r, c) is drawn from
  /// (seed, first + r * stride + c): a tensor-parallel shard gets the whole tensor's values.
  static void init_normal_block(float* p, std::int64_t rows, std::int64_t cols,
                                std::int64_t stride, float stddev, std::uint64_t seed,
                                std::uint64_t first, Stream stream);
  static void fill(float* p, std::int64_t n, float value, Stream stream);
  /// Zeroes rows rows[r], r < *count (device scalar), of table [*, hidden]; max_rows bounds it.
  static void zero_rows(const std::int32_t* rows, const std::int32_t* count,
                        std::int64_t max_rows, int hidden, float* table, Stream stream);

  // ---- memory (backend/gpu/memory.hpp) ----------------------------------------------------------
  /// Stream-ordered allocation from the current device's default pool (release threshold set
  /// to keep freed memory), never managed memory. Throws core::RunError naming the size and the
  /// free memory when the device is out of memory.
  static void* allocate(std::size_t bytes, Stream stream);
  static void deallocate(void* p, Stream stream);
  /// High-water marks of the pool since the last reset: bytes in use and bytes reserved.
  static std::size_t peak_allocated_bytes();
  static std::size_t peak_reserved_bytes();
  static void reset_peaks();
};

/// Throws core::RunError("<what>: <runtime error string>") when `status` is not gpuSuccess
/// (core::OutOfMemoryError when the device is out of memory).
void gpu_check(gpuError_t status, const char* what);

/// Explicit instantiations of Class::gemm and gemm_add (Gpu's, or a GEMM with its contract such
/// as TiledGemm) for the output types the engine uses: bf16 and fp32, and the fp32 residual add.
/// For the TU that compiles a GEMM's definitions once for the in-tree binaries (src/).
#define TPRIMAT_GPU_INSTANTIATE_GEMMS(Class)                                                     \
  template void Class::gemm<::tprimat::backend::Gpu::bf16>(                                      \
      bool, bool, std::int64_t, std::int64_t, std::int64_t, const ::tprimat::backend::Gpu::bf16*, \
      std::int64_t, const ::tprimat::backend::Gpu::bf16*, std::int64_t, float,                   \
      ::tprimat::backend::Gpu::bf16*, std::int64_t, const ::tprimat::backend::Gpu::bf16*,        \
      ::tprimat::backend::Gpu::Stream);                                                          \
  template void Class::gemm<float>(bool, bool, std::int64_t, std::int64_t, std::int64_t,       \
                                   const ::tprimat::backend::Gpu::bf16*, std::int64_t,           \
                                   const ::tprimat::backend::Gpu::bf16*, std::int64_t, float,    \
                                   float*, std::int64_t, const ::tprimat::backend::Gpu::bf16*,   \
                                   ::tprimat::backend::Gpu::Stream);                             \
  template void Class::gemm_add<float>(bool, bool, std::int64_t, std::int64_t, std::int64_t,   \
                                       const ::tprimat::backend::Gpu::bf16*, std::int64_t,       \
                                       const ::tprimat::backend::Gpu::bf16*, std::int64_t,       \
                                       const float*, float*, std::int64_t,                       \
                                       ::tprimat::backend::Gpu::Stream)

}  // namespace tprimat::backend

