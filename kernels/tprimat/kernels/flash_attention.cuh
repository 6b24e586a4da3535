// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Grouped-query flash attention with a causal band, forward and backward: bf16 in and out, fp32
// softmax.
#pragma once

// Layouts (token-major, the CPU reference's): q, o, dout, dq [batch * seq, heads * D]; k, v, dk,
// dv [batch * kv_seq, kv_heads * D]; lse and the backward's row dots fp32 [batch, heads, seq].
// lse = log(sum_j exp(scale * q.k_j)), natural log, scale = 1 / sqrt(D); query head h reads KV
// head h / (heads / kv_heads). Query i sees key j when j <= i + key_offset: the model's causal
// self-attention is kv_seq = seq, key_offset 0; context parallelism's blocks are a query chunk
// over the keys up to its own (key_offset = kv_seq - seq) or over earlier keys only (every key
// visible: key_offset = kv_seq - 1). No seq x kv_seq matrix ever reaches global memory.
//
// Two implementations of the same three kernels, chosen at compile time:
// - CUDA (sm_80+): tensor cores through mma.sync m16n8k16 (bf16 in, fp32 accumulate), operands
//   staged in shared memory with cp.async and read with ldmatrix. FlashAttention-2's structure:
//   each warp owns 16 rows, scores and softmax statistics never leave registers.
// - HIP, or CUDA with TPRIMAT_FLASH_SCALAR defined (to check that path on an NVIDIA GPU; CMake's
//   -DTPRIMAT_FLASH_SCALAR=ON): one thread per row with scalar FMAs (in the backward at head dim
//   128, two adjacent threads per row, each with half the columns), warp-size agnostic. Correct
//   and slow.
// The backward is deterministic in both: no atomics, every sum has a fixed order. It runs three
// kernels: row dots D_i = dO_i . O_i; dK, dV per (batch, KV head, key block), looping over the
// group's query heads and the query blocks that see the key block; dQ per (batch, head, query
// block), recomputing the probabilities from q, k and lse.
//
// Shared memory stays within the 48 KiB every block may use statically, so no launcher needs a
// vendor call to raise the limit. Pointers must be 16-byte aligned (rows are D * 2 bytes, D >= 16).

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "tprimat/kernels/gpu.cuh"

#if TPRIMAT_GPU_HIP || defined(TPRIMAT_FLASH_SCALAR)
#define TPRIMAT_FLASH_MMA 0
#else
#define TPRIMAT_FLASH_MMA 1
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "tprimat: flash attention's tensor-core path needs sm_80 or later (bf16 mma.sync)"
#endif
#endif

namespace tprimat::kernels {

/// Everything a flash-attention kernel reads: pointers unused by a pass stay null.
struct FlashParams {
  const gpu::bf16* q = nullptr;     // [batch * seq, heads * D]
  const gpu::bf16* k = nullptr;     // [batch * kv_seq, kv_heads * D]
  const gpu::bf16* v = nullptr;     // [batch * kv_seq, kv_heads * D]
  const gpu::bf16* o = nullptr;     // [batch * seq, heads * D] (backward input)
  const gpu::bf16* dout = nullptr;  // [batch * seq, heads * D]
  gpu::bf16* out = nullptr;         // forward output o [batch * seq, heads * D]
  float* lse_out = nullptr;         // [batch, heads, seq], written by the forward
  const float* lse = nullptr;       // [batch, heads, seq], the forward's, read by the backward
  float* row_dot = nullptr;         // [batch, heads, seq], D_i = dO_i . O_i (backward workspace)
  gpu::bf16* dq = nullptr;          // [batch * seq, heads * D]
  gpu::bf16* dk = nullptr;          // [batch * kv_seq, kv_heads * D]
  gpu::bf16* dv = nullptr;          // [batch * kv_seq, kv_heads * D]
  int batch = 0;
  int seq = 0;         // queries a sequence
  int kv_seq = 0;      // keys (and values) a sequence
  int key_offset = 0;  // query i sees key j when j <= i + key_offset (0 <= key_offset < kv_seq)
  int heads = 0;
  int kv_heads = 0;
  float scale = 0;  // 1 / sqrt(D)
};

namespace flash_detail {

inline constexpr float log2e = 1.4426950408889634f;
inline constexpr float ln2 = 0.6931471805599453f;

/// Row `row` of head `head` in a token-major [batch * seq, heads * D] tensor.
template <int D, class T>
__device__ __forceinline__ T* head_row(T* base, int batch_index, int seq, int heads, int head,
                                       int row) {
  return base + ((std::int64_t{batch_index} * seq + row) * heads + head) * D;
}

/// Whether query `query` sees key `key` (both from 0 in their sequence).
__device__ __forceinline__ bool key_visible(const FlashParams& p, int query, int key) {
  return key <= query + p.key_offset && key < p.kv_seq;
}

/// The last key any query of [q0, q0 + rows) sees.
__device__ __forceinline__ int last_visible_key(const FlashParams& p, int q0, int rows) {
  return min(min(q0 + rows, p.seq) - 1 + p.key_offset, p.kv_seq - 1);
}

/// Index of (batch, head, row) in an fp32 [batch, heads, seq] statistics tensor.
__device__ __forceinline__ std::int64_t stat_index(int batch_index, int heads, int head, int seq,
                                                   int row) {
  return (std::int64_t{batch_index} * heads + head) * seq + row;
}

/// D_i = dO_i . O_i for every (token, head): one warp per row, lanes over head_dim.
template <int D>
__global__ TPRIMAT_LAUNCH_BOUNDS(256) void flash_row_dot_kernel(FlashParams p) {
  const std::int64_t row =
      (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / gpu::warp_size;  // token * heads + h
  const int lane = threadIdx.x % gpu::warp_size;
  if (row >= std::int64_t{p.batch} * p.seq * p.heads) return;  // uniform across the warp
  const gpu::bf16* o = p.o + row * D;
  const gpu::bf16* dout = p.dout + row * D;
  float acc = 0;
  for (int c = lane; c < D; c += gpu::warp_size)
    acc += gpu::to_float(o[c]) * gpu::to_float(dout[c]);
  acc = gpu::warp_sum(acc);
  if (lane == 0) {
    const std::int64_t token = row / p.heads;
    const int h = static_cast<int>(row % p.heads);
    const int b = static_cast<int>(token / p.seq), s = static_cast<int>(token % p.seq);
    p.row_dot[stat_index(b, p.heads, h, p.seq, s)] = acc;
  }
}
inline constexpr int row_dot_threads = 256;

}  // namespace flash_detail

#if TPRIMAT_FLASH_MMA
// ===================================== tensor-core path =====================================
namespace flash_detail {

/// Block shapes. Every kernel runs 4 warps, each owning 16 rows of the block's tile.
struct Tiles {
  static constexpr int warps = 4;
  static constexpr int threads = warps * 32;       // 128
  static constexpr int forward_rows = warps * 16;  // 64 query rows per forward block
  static constexpr int forward_keys = 64;          // == forward_rows: only the diagonal tile masks
  static constexpr int key_rows = warps * 16;      // 64 keys per dK/dV block
  static constexpr int query_rows = warps * 16;    // 64 query rows per dQ block
  /// Queries per dK/dV step and keys per dQ step: 32 at D = 128 keeps the two [16, step] fp32
  /// score tiles plus the [16, D] accumulators within 255 registers and smem within 48 KiB.
  template <int D>
  static constexpr int inner = D >= 128 ? 32 : 64;
  /// Backward block size, the launchers' name for it (the scalar path's grows with D).
  template <int D>
  static constexpr int backward_threads = threads;
};

// ---- PTX wrappers (sm_80+) -----------------------------------------------------------------

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
/// 16 bytes global -> shared without passing through registers; zero-fills when !valid.
__device__ __forceinline__ void cp_async_16(void* smem, const void* global, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(smem)), "l"(global),
               "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

/// Four 8x8 bf16 matrices; lanes 8i..8i+7 give the row addresses of matrix i, and lane l gets
/// (row l/4, columns 2(l%4), 2(l%4)+1) of each, transposed with _trans.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const gpu::bf16* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const gpu::bf16* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}

/// c[16x8] += a[16x16] b[16x8], bf16 operands, fp32 accumulators. With g = lane / 4 and
/// t = lane % 4: a = {(g, 2t..2t+1), (g+8, 2t..), (g, 2t+8..), (g+8, 2t+8..)};
/// b = {(k 2t..2t+1, n g), (k 2t+8..2t+9, n g)}; c = {(g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1)}.
__device__ __forceinline__ void mma_16816(float (&c)[4], const std::uint32_t (&a)[4],
                                          std::uint32_t b0, std::uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// Two floats as bf16x2 (round to nearest even), `lo` in the low half (the lower column).
__device__ __forceinline__ std::uint32_t pack_bf16(float lo, float hi) {
  std::uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

/// Max and sum over the 4 lanes of a quad: the lanes holding one accumulator row.
__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// ---- shared-memory tiles --------------------------------------------------------------------

/// Element offset of (row, col) in a [rows, D] bf16 tile whose 16-byte chunks are XOR-swizzled,
/// so that ldmatrix's eight 16-byte reads of eight consecutive rows hit eight different bank
/// groups (rows of 32..256 bytes would otherwise collide), with no padding.
template <int D>
__device__ __forceinline__ int swizzle(int row, int col) {
  constexpr int chunks = D / 8;                                // 16-byte chunks per row
  constexpr int rows_per_line = chunks >= 8 ? 1 : 8 / chunks;  // rows sharing 128 bytes
  constexpr int span = chunks >= 8 ? 8 : chunks;
  return row * D + ((col / 8) ^ ((row / rows_per_line) % span)) * 8 + col % 8;
}

/// Starts copying rows [0, Rows) of a [Rows, D] tile (global rows `stride` elements apart) into
/// swizzled shared memory; rows >= valid_rows are zero-filled, so scores and products on them
/// stay finite. All Tiles::threads threads call it.
template <int D, int Rows>
__device__ __forceinline__ void load_tile(gpu::bf16* tile, const gpu::bf16* src,
                                          std::int64_t stride, int valid_rows) {
  constexpr int chunks = D / 8, total = Rows * chunks;
#pragma unroll
  for (int i0 = 0; i0 < total; i0 += Tiles::threads) {
    const int i = i0 + static_cast<int>(threadIdx.x);
    if (total % Tiles::threads != 0 && i >= total) break;
    const int r = i / chunks, c = (i % chunks) * 8;
    const bool valid = r < valid_rows;
    cp_async_16(tile + swizzle<D>(r, c), src + (valid ? r * stride + c : 0), valid);
  }
}

// ---- warp-level products ---------------------------------------------------------------------

/// A fragment of rows [row0, row0 + 16) x columns [col0, col0 + 16) of a [*, D] tile.
template <int D>
__device__ __forceinline__ void load_a(std::uint32_t (&a)[4], const gpu::bf16* tile, int row0,
                                       int col0, int lane) {
  ldmatrix_x4(a, tile + swizzle<D>(row0 + lane % 16, col0 + (lane / 16) * 8));
}

/// acc[16, 8 NT] += A[16, D] B^T for B a [8 NT, D] tile (row n holds column n of the product's
/// right operand): S = Q K^T, dP = dO V^T, and their transposes. A comes as D/16 fragments.
template <int D, int NT>
__device__ __forceinline__ void mma_abt(float (&acc)[NT][4], const std::uint32_t (&a)[D / 16][4],
                                        const gpu::bf16* b_tile, int lane) {
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
    for (int jj = 0; jj < NT / 2; ++jj) {
      // b[0..1]: rows jj*16 + 0..7, b[2..3]: rows jj*16 + 8..15, each over columns kk*16 + 0..15.
      std::uint32_t b[4];
      ldmatrix_x4(b, b_tile + swizzle<D>(jj * 16 + lane % 8 + (lane / 16) * 8,
                                         kk * 16 + ((lane / 8) % 2) * 8));
      mma_16816(acc[2 * jj], a[kk], b[0], b[1]);
      mma_16816(acc[2 * jj + 1], a[kk], b[2], b[3]);
    }
  }
}

/// As mma_abt, with A read from rows [a_row0, a_row0 + 16) of a shared [*, D] tile, one 16-column
/// slab at a time (the dK/dV kernel cannot afford to keep K and V in registers).
template <int D, int NT>
__device__ __forceinline__ void mma_abt_smem(float (&acc)[NT][4], const gpu::bf16* a_tile,
                                             int a_row0, const gpu::bf16* b_tile, int lane) {
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    std::uint32_t a[4];
    load_a<D>(a, a_tile, a_row0, kk * 16, lane);
#pragma unroll
    for (int jj = 0; jj < NT / 2; ++jj) {
      std::uint32_t b[4];
      ldmatrix_x4(b, b_tile + swizzle<D>(jj * 16 + lane % 8 + (lane / 16) * 8,
                                         kk * 16 + ((lane / 8) % 2) * 8));
      mma_16816(acc[2 * jj], a, b[0], b[1]);
      mma_16816(acc[2 * jj + 1], a, b[2], b[3]);
    }
  }
}

/// acc[16, D] += A[16, K] B for B a [K, D] tile stored row by row: O += P V, dQ += dS K,
/// dV += P^T dO, dK += dS^T Q. A comes as K/16 fragments; B is read transposed by ldmatrix.
template <int K, int D>
__device__ __forceinline__ void mma_ab(float (&acc)[D / 8][4], const std::uint32_t (&a)[K / 16][4],
                                       const gpu::bf16* b_tile, int lane) {
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
#pragma unroll
    for (int dd = 0; dd < D / 16; ++dd) {
      // b[0..1]: columns dd*16 + 0..7, b[2..3]: columns dd*16 + 8..15, over rows kk*16 + 0..15.
      std::uint32_t b[4];
      ldmatrix_x4_trans(b, b_tile + swizzle<D>(kk * 16 + lane % 8 + ((lane / 8) % 2) * 8,
                                               dd * 16 + (lane / 16) * 8));
      mma_16816(acc[2 * dd], a[kk], b[0], b[1]);
      mma_16816(acc[2 * dd + 1], a[kk], b[2], b[3]);
    }
  }
}

/// fp32 accumulators [16, 8 NT] as the bf16 A fragments of the next product: the accumulator
/// layout of two adjacent 8-column tiles is exactly the A layout of one 16-column slab.
template <int NT>
__device__ __forceinline__ void to_a_fragments(std::uint32_t (&a)[NT / 2][4],
                                               const float (&c)[NT][4]) {
#pragma unroll
  for (int kk = 0; kk < NT / 2; ++kk) {
    a[kk][0] = pack_bf16(c[2 * kk][0], c[2 * kk][1]);
    a[kk][1] = pack_bf16(c[2 * kk][2], c[2 * kk][3]);
    a[kk][2] = pack_bf16(c[2 * kk + 1][0], c[2 * kk + 1][1]);
    a[kk][3] = pack_bf16(c[2 * kk + 1][2], c[2 * kk + 1][3]);
  }
}

/// Writes a warp's [16, D] accumulator rows, row r scaled by scale[r >= 8], as bf16 through the
/// warp's own rows [row0, row0 + 16) of a swizzled staging tile, then to global rows
/// dst[(row0 + r) * stride] with 16-byte stores; rows row0 + r >= valid_rows are skipped.
template <int D>
__device__ __forceinline__ void store_rows(const float (&acc)[D / 8][4], float scale_lo,
                                           float scale_hi, gpu::bf16* stage, int row0,
                                           gpu::bf16* dst, std::int64_t stride, int valid_rows,
                                           int lane) {
  __syncwarp();  // the warp's earlier ldmatrix reads of `stage` are done
  const int r = row0 + lane / 4;
#pragma unroll
  for (int j = 0; j < D / 8; ++j) {
    const int c = j * 8 + (lane % 4) * 2;
    *reinterpret_cast<std::uint32_t*>(stage + swizzle<D>(r, c)) =
        pack_bf16(acc[j][0] * scale_lo, acc[j][1] * scale_lo);
    *reinterpret_cast<std::uint32_t*>(stage + swizzle<D>(r + 8, c)) =
        pack_bf16(acc[j][2] * scale_hi, acc[j][3] * scale_hi);
  }
  __syncwarp();
  constexpr int chunks = D / 8;
#pragma unroll
  for (int i = lane; i < 16 * chunks; i += 32) {
    const int row = row0 + i / chunks, c = (i % chunks) * 8;
    if (row < valid_rows)
      *reinterpret_cast<uint4*>(dst + row * stride + c) =
          *reinterpret_cast<const uint4*>(stage + swizzle<D>(row, c));
  }
}

// ---- forward ---------------------------------------------------------------------------------

/// One block per (query block of 64 rows, head, batch); warp w owns rows 16w..16w+15. Key tiles
/// run from the last one the block sees down to 0: V(n) loads while S = Q K(n)^T and the softmax
/// run, and K(n-1) loads while O += P V(n) runs, with one K and one V buffer. Only tiles reaching
/// past a query's last key are masked: the diagonal one when the offset is a multiple of 64.
template <int D>
__global__ TPRIMAT_LAUNCH_BOUNDS(Tiles::threads) void flash_forward_kernel(FlashParams p) {
  constexpr int M = Tiles::forward_rows, N = Tiles::forward_keys;
  __shared__ alignas(128) gpu::bf16 sq[M * D];  // later: staging of the output
  __shared__ alignas(128) gpu::bf16 sk[N * D];
  __shared__ alignas(128) gpu::bf16 sv[N * D];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, row0 = warp * 16;
  const int m_block = gridDim.x - 1 - blockIdx.x;  // longest (last) query blocks start first
  const int h = blockIdx.y, b = blockIdx.z, g = h / (p.heads / p.kv_heads);
  const int q0 = m_block * M;
  const std::int64_t q_stride = std::int64_t{p.heads} * D, kv_stride = std::int64_t{p.kv_heads} * D;
  const gpu::bf16* k = head_row<D>(p.k, b, p.kv_seq, p.kv_heads, g, 0);
  const gpu::bf16* v = head_row<D>(p.v, b, p.kv_seq, p.kv_heads, g, 0);
  const int n_last = last_visible_key(p, q0, M) / N;

  load_tile<D, M>(sq, head_row<D>(p.q, b, p.seq, p.heads, h, q0), q_stride, p.seq - q0);
  load_tile<D, N>(sk, k + n_last * N * kv_stride, kv_stride, p.kv_seq - n_last * N);
  cp_async_commit();

  const float scale_log2 = p.scale * log2e;  // exp(scale * s) = exp2(scale_log2 * s)
  std::uint32_t qf[D / 16][4];
  float o[D / 8][4] = {};
  float row_max[2] = {-INFINITY, -INFINITY};  // raw scores, rows lane/4 and lane/4 + 8
  float row_sum[2] = {0, 0};                  // this lane's part of sum exp(scale (s - max))

  for (int n = n_last; n >= 0; --n) {
    cp_async_wait_all();
    __syncthreads();  // K(n) landed; every warp is done with V(n+1)
    if (n == n_last) {
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) load_a<D>(qf[kk], sq, row0, kk * 16, lane);
    }
    load_tile<D, N>(sv, v + n * N * kv_stride, kv_stride, p.kv_seq - n * N);
    cp_async_commit();

    float s[N / 8][4] = {};
    mma_abt<D, N / 8>(s, qf, sk, lane);

    // Keys past a query's last (or past kv_seq, zero-filled) are masked. Rows >= seq are
    // computed but never stored.
    if (n * N + N - 1 > q0 + p.key_offset || n * N + N > p.kv_seq) {
#pragma unroll
      for (int j = 0; j < N / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int query = q0 + row0 + lane / 4 + (e / 2) * 8;
          const int key = n * N + j * 8 + (lane % 4) * 2 + e % 2;
          if (!key_visible(p, query, key)) s[j][e] = -INFINITY;
        }
    }

    // Online softmax: rescale what was accumulated to the new row maximum.
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = row_max[r];
#pragma unroll
      for (int j = 0; j < N / 8; ++j) mx = fmaxf(mx, fmaxf(s[j][2 * r], s[j][2 * r + 1]));
      mx = quad_max(mx);
      // A row may see no key of the first tiles (the block's last rows see further): mx is
      // -inf until its first visible key, and so is everything accumulated before it.
      const float base = mx == -INFINITY ? 0.f : mx * scale_log2;
      const float correction = exp2f(row_max[r] * scale_log2 - base);
      row_max[r] = mx;
      row_sum[r] *= correction;
#pragma unroll
      for (int j = 0; j < D / 8; ++j) {
        o[j][2 * r] *= correction;
        o[j][2 * r + 1] *= correction;
      }
#pragma unroll
      for (int j = 0; j < N / 8; ++j) {
        s[j][2 * r] = exp2f(s[j][2 * r] * scale_log2 - base);
        s[j][2 * r + 1] = exp2f(s[j][2 * r + 1] * scale_log2 - base);
        row_sum[r] += s[j][2 * r] + s[j][2 * r + 1];
      }
    }
    std::uint32_t pf[N / 16][4];
    to_a_fragments<N / 8>(pf, s);

    cp_async_wait_all();
    __syncthreads();  // V(n) landed; every warp is done with K(n)
    if (n > 0) {
      load_tile<D, N>(sk, k + (n - 1) * N * kv_stride, kv_stride, p.kv_seq - (n - 1) * N);
      cp_async_commit();
    }
    mma_ab<N, D>(o, pf, sv, lane);
  }

  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    row_sum[r] = quad_sum(row_sum[r]);
    inv[r] = 1.f / row_sum[r];
  }
  // sq rows [row0, row0 + 16) were read by this warp only, so they can stage its output.
  store_rows<D>(o, inv[0], inv[1], sq, row0, head_row<D>(p.out, b, p.seq, p.heads, h, q0), q_stride,
                p.seq - q0, lane);
  if (lane % 4 == 0) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = q0 + row0 + lane / 4 + r * 8;
      if (row < p.seq)
        p.lse_out[stat_index(b, p.heads, h, p.seq, row)] = row_max[r] * p.scale + logf(row_sum[r]);
    }
  }
}

// ---- backward: dK, dV ------------------------------------------------------------------------

/// One block per (key block of 64, KV head, batch); warp w owns keys 16w..16w+15 and keeps their
/// dK, dV [16, D] in registers while it walks the group's query heads and, for each, the query
/// tiles that see the key block: S^T = K Q^T, P^T = exp(scale S^T - lse), dP^T = V dO^T,
/// dS^T = P^T (dP^T - D), dV += P^T dO, dK += dS^T Q. K and V stay in shared memory.
template <int D>
__global__ TPRIMAT_LAUNCH_BOUNDS(Tiles::threads) void flash_backward_dkdv_kernel(FlashParams p) {
  constexpr int N = Tiles::key_rows, M = Tiles::inner<D>;
  __shared__ alignas(128) gpu::bf16 sk[N * D];  // later: staging of dK
  __shared__ alignas(128) gpu::bf16 sv[N * D];  // later: staging of dV
  __shared__ alignas(128) gpu::bf16 sq[M * D];
  __shared__ alignas(128) gpu::bf16 sdo[M * D];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, row0 = warp * 16;
  const int n_block = blockIdx.x;  // block 0 has the most query tiles and starts first
  const int g = blockIdx.y, b = blockIdx.z, group = p.heads / p.kv_heads;
  const int k0 = n_block * N;
  const std::int64_t q_stride = std::int64_t{p.heads} * D, kv_stride = std::int64_t{p.kv_heads} * D;
  const int m_first = max(k0 - p.key_offset, 0) / M;
  const int steps = group * max((p.seq + M - 1) / M - m_first, 0), m_count = steps / group;

  const auto load_query_tile = [&](int step) {
    const int h = g * group + step / m_count, q_start = (m_first + step % m_count) * M;
    load_tile<D, M>(sq, head_row<D>(p.q, b, p.seq, p.heads, h, q_start), q_stride, p.seq - q_start);
    load_tile<D, M>(sdo, head_row<D>(p.dout, b, p.seq, p.heads, h, q_start), q_stride,
                    p.seq - q_start);
  };
  load_tile<D, N>(sk, head_row<D>(p.k, b, p.kv_seq, p.kv_heads, g, k0), kv_stride, p.kv_seq - k0);
  load_tile<D, N>(sv, head_row<D>(p.v, b, p.kv_seq, p.kv_heads, g, k0), kv_stride, p.kv_seq - k0);
  if (steps > 0) load_query_tile(0);
  cp_async_commit();

  const float scale_log2 = p.scale * log2e;
  float dk[D / 8][4] = {}, dv[D / 8][4] = {};
  for (int step = 0; step < steps; ++step) {
    const int h = g * group + step / m_count, q_start = (m_first + step % m_count) * M;
    // lse (log2 domain) and D of the query columns this lane holds; +inf lse zeroes P past seq.
    float lse_c[M / 8][2], dot_c[M / 8][2];
#pragma unroll
    for (int j = 0; j < M / 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int query = q_start + j * 8 + (lane % 4) * 2 + e;
        const bool valid = query < p.seq;
        const std::int64_t i = stat_index(b, p.heads, h, p.seq, valid ? query : 0);
        lse_c[j][e] = valid ? p.lse[i] * log2e : INFINITY;
        dot_c[j][e] = valid ? p.row_dot[i] : 0.f;
      }
    cp_async_wait_all();
    __syncthreads();  // Q, dO tile landed

    float st[M / 8][4] = {}, dpt[M / 8][4] = {};
    mma_abt_smem<D, M / 8>(st, sk, row0, sq, lane);    // S^T = K Q^T
    mma_abt_smem<D, M / 8>(dpt, sv, row0, sdo, lane);  // dP^T = V dO^T
    const bool masked = k0 + row0 + 15 > q_start + p.key_offset;  // a key past some query's last
#pragma unroll
    for (int j = 0; j < M / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float prob = exp2f(st[j][e] * scale_log2 - lse_c[j][e % 2]);
        if (masked) {
          const int key = k0 + row0 + lane / 4 + (e / 2) * 8;
          const int query = q_start + j * 8 + (lane % 4) * 2 + e % 2;
          if (key > query + p.key_offset) prob = 0;  // keys past kv_seq are never stored
        }
        st[j][e] = prob;                                   // P^T
        dpt[j][e] = prob * (dpt[j][e] - dot_c[j][e % 2]);  // dS^T
      }
    std::uint32_t pf[M / 16][4], dsf[M / 16][4];
    to_a_fragments<M / 8>(pf, st);
    to_a_fragments<M / 8>(dsf, dpt);
    mma_ab<M, D>(dv, pf, sdo, lane);  // dV += P^T dO
    mma_ab<M, D>(dk, dsf, sq, lane);  // dK += dS^T Q

    __syncthreads();  // every warp is done with this Q, dO tile
    if (step + 1 < steps) {
      load_query_tile(step + 1);
      cp_async_commit();
    }
  }

  // sk, sv rows [row0, row0 + 16) were read by this warp only: they stage its dK, dV.
  store_rows<D>(dk, p.scale, p.scale, sk, row0, head_row<D>(p.dk, b, p.kv_seq, p.kv_heads, g, k0),
                kv_stride, p.kv_seq - k0, lane);
  store_rows<D>(dv, 1.f, 1.f, sv, row0, head_row<D>(p.dv, b, p.kv_seq, p.kv_heads, g, k0),
                kv_stride, p.kv_seq - k0, lane);
}

// ---- backward: dQ ----------------------------------------------------------------------------

/// One block per (query block of 64, head, batch); warp w owns rows 16w..16w+15, holds their Q
/// and dO fragments and dQ [16, D] in registers, and walks the key tiles up to its last key:
/// S = Q K^T, P = exp(scale S - lse), dP = dO V^T, dS = P (dP - D), dQ += dS K. Once Q and dO
/// are in registers their buffers become the second stage of a double-buffered K, V pipeline.
template <int D>
__global__ TPRIMAT_LAUNCH_BOUNDS(Tiles::threads) void flash_backward_dq_kernel(FlashParams p) {
  constexpr int M = Tiles::query_rows, N = Tiles::inner<D>;
  static_assert(N <= M, "stage 1 of K, V lives in the Q, dO buffers");
  __shared__ alignas(128) gpu::bf16 sq[M * D];   // Q, then K stage 1, then dQ staging
  __shared__ alignas(128) gpu::bf16 sdo[M * D];  // dO, then V stage 1
  __shared__ alignas(128) gpu::bf16 sk[N * D];   // K stage 0
  __shared__ alignas(128) gpu::bf16 sv[N * D];   // V stage 0
  // Stage s of the K, V pipeline; selects, since an array indexed at run time goes to memory.
  const auto k_stage = [&](int s) { return s == 0 ? sk : sq; };
  const auto v_stage = [&](int s) { return s == 0 ? sv : sdo; };

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, row0 = warp * 16;
  const int m_block = gridDim.x - 1 - blockIdx.x;  // longest (last) query blocks start first
  const int h = blockIdx.y, b = blockIdx.z, g = h / (p.heads / p.kv_heads);
  const int q0 = m_block * M;
  const std::int64_t q_stride = std::int64_t{p.heads} * D, kv_stride = std::int64_t{p.kv_heads} * D;
  const gpu::bf16* k = head_row<D>(p.k, b, p.kv_seq, p.kv_heads, g, 0);
  const gpu::bf16* v = head_row<D>(p.v, b, p.kv_seq, p.kv_heads, g, 0);
  const int n_last = last_visible_key(p, q0, M) / N;

  load_tile<D, M>(sq, head_row<D>(p.q, b, p.seq, p.heads, h, q0), q_stride, p.seq - q0);
  load_tile<D, M>(sdo, head_row<D>(p.dout, b, p.seq, p.heads, h, q0), q_stride, p.seq - q0);
  load_tile<D, N>(sk, k, kv_stride, p.kv_seq);
  load_tile<D, N>(sv, v, kv_stride, p.kv_seq);
  cp_async_commit();

  const float scale_log2 = p.scale * log2e;
  float lse_r[2], dot_r[2];  // rows lane/4 and lane/4 + 8; rows past seq get finite stand-ins
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = q0 + row0 + lane / 4 + r * 8;
    const std::int64_t i = stat_index(b, p.heads, h, p.seq, row < p.seq ? row : 0);
    lse_r[r] = row < p.seq ? p.lse[i] * log2e : 0.f;
    dot_r[r] = row < p.seq ? p.row_dot[i] : 0.f;
  }

  std::uint32_t qf[D / 16][4], dof[D / 16][4];
  float dq[D / 8][4] = {};
  for (int n = 0; n <= n_last; ++n) {
    cp_async_wait_all();
    __syncthreads();  // K(n), V(n) landed; every warp is done with stage (n + 1) % 2
    if (n == 0) {
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        load_a<D>(qf[kk], sq, row0, kk * 16, lane);
        load_a<D>(dof[kk], sdo, row0, kk * 16, lane);
      }
      __syncthreads();  // sq, sdo are free for stage 1
    }
    if (n < n_last) {
      const int next = (n + 1) * N;
      load_tile<D, N>(k_stage((n + 1) % 2), k + next * kv_stride, kv_stride, p.kv_seq - next);
      load_tile<D, N>(v_stage((n + 1) % 2), v + next * kv_stride, kv_stride, p.kv_seq - next);
      cp_async_commit();
    }
    const gpu::bf16* kt = k_stage(n % 2);
    const gpu::bf16* vt = v_stage(n % 2);

    float s[N / 8][4] = {}, dp[N / 8][4] = {};
    mma_abt<D, N / 8>(s, qf, kt, lane);             // S = Q K^T
    mma_abt<D, N / 8>(dp, dof, vt, lane);           // dP = dO V^T
    // Some key past a query of this warp's last, or past kv_seq (zero-filled).
    const bool masked = n * N + N - 1 > q0 + row0 + p.key_offset || n * N + N > p.kv_seq;
#pragma unroll
    for (int j = 0; j < N / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float prob = exp2f(s[j][e] * scale_log2 - lse_r[e / 2]);
        if (masked) {
          const int query = q0 + row0 + lane / 4 + (e / 2) * 8;
          const int key = n * N + j * 8 + (lane % 4) * 2 + e % 2;
          if (!key_visible(p, query, key)) prob = 0;
        }
        dp[j][e] = prob * (dp[j][e] - dot_r[e / 2]);  // dS
      }
    std::uint32_t dsf[N / 16][4];
    to_a_fragments<N / 8>(dsf, dp);
    mma_ab<N, D>(dq, dsf, kt, lane);  // dQ += dS K
  }

  __syncthreads();  // other warps may still read K stage 1 from sq
  store_rows<D>(dq, p.scale, p.scale, sq, row0, head_row<D>(p.dq, b, p.seq, p.heads, h, q0),
                q_stride, p.seq - q0, lane);
}

}  // namespace flash_detail

#else
// ======================================= scalar path ========================================
namespace flash_detail {

/// Block shapes: one thread per row, or a group of split(D) adjacent threads per row in the
/// backward, so nothing depends on the warp width (32 or 64): a group is at most 32 lanes.
struct Tiles {
  static constexpr int threads = 64;            // forward threads, one per row
  static constexpr int forward_rows = threads;  // query rows per forward block
  static constexpr int key_rows = threads;      // keys per dK/dV block
  static constexpr int query_rows = threads;    // query rows per dQ block
  static constexpr int forward_step = 32;       // keys staged per forward step
  static constexpr int backward_step = 16;      // rows of the other side staged per backward step
  /// Threads per row in the backward: each owns D / split columns of the row's accumulators (dK
  /// and dV, or dQ) and of its staged rows; the row's dot products are summed over the group.
  /// 64 columns a thread is what D = 64 holds without spilling; one thread with dK[128] and
  /// dV[128] (or dQ[128] beside its Q and dO rows) spills under ROCm 7's clang on gfx90a, gfx942
  /// and gfx950.
  static constexpr int split(int d) { return d > 64 ? d / 64 : 1; }
  template <int D>
  static constexpr int backward_threads = split(D) * threads;
};

/// Copies rows [row0, row0 + rows) of a head's [seq, D] slice into a dense [rows, D] shared tile,
/// zeros past seq; all `Threads` threads of the block call it.
template <int D, int Threads>
__device__ __forceinline__ void stage_rows(gpu::bf16* tile, const gpu::bf16* head0,
                                           std::int64_t stride, int row0, int rows, int seq) {
  for (int i = threadIdx.x; i < rows * D; i += Threads) {
    const int r = i / D, c = i % D;
    tile[i] = row0 + r < seq ? head0[(row0 + r) * stride + c] : gpu::to_bf16(0.f);
  }
}

/// a[0, N) . b[0, N) in fp32, in column order.
template <int N>
__device__ __forceinline__ float dot_rows(const gpu::bf16* a, const gpu::bf16* b) {
  float s = 0;
#pragma unroll
  for (int c = 0; c < N; ++c) s += gpu::to_float(a[c]) * gpu::to_float(b[c]);
  return s;
}

template <int D>
__global__ TPRIMAT_LAUNCH_BOUNDS(Tiles::threads) void flash_forward_kernel(FlashParams p) {
  constexpr int R = Tiles::forward_rows, T = Tiles::forward_step;
  __shared__ gpu::bf16 sq[R * D], sk[T * D], sv[T * D];
  const int m_block = gridDim.x - 1 - blockIdx.x;
  const int h = blockIdx.y, b = blockIdx.z, g = h / (p.heads / p.kv_heads);
  const int q0 = m_block * R, row = q0 + threadIdx.x;
  const std::int64_t q_stride = std::int64_t{p.heads} * D, kv_stride = std::int64_t{p.kv_heads} * D;
  const gpu::bf16* k = head_row<D>(p.k, b, p.kv_seq, p.kv_heads, g, 0);
  const gpu::bf16* v = head_row<D>(p.v, b, p.kv_seq, p.kv_heads, g, 0);
  stage_rows<D, Tiles::threads>(sq, head_row<D>(p.q, b, p.seq, p.heads, h, 0), q_stride, q0, R,
                                p.seq);

  const float scale_log2 = p.scale * log2e;
  float acc[D] = {};
  float mx = -INFINITY, sum = 0;  // log2-domain running max and sum of exp2(s - mx)
  const int last_key = last_visible_key(p, q0, R);
  for (int t0 = 0; t0 <= last_key; t0 += T) {
    __syncthreads();
    stage_rows<D, Tiles::threads>(sk, k, kv_stride, t0, T, p.kv_seq);
    stage_rows<D, Tiles::threads>(sv, v, kv_stride, t0, T, p.kv_seq);
    __syncthreads();
    if (row < p.seq) {
      for (int r = 0; r < T && key_visible(p, row, t0 + r); ++r) {
        const float s = dot_rows<D>(sq + threadIdx.x * D, sk + r * D) * scale_log2;
        if (s > mx) {
          const float correction = exp2f(mx - s);
          sum *= correction;
#pragma unroll
          for (int c = 0; c < D; ++c) acc[c] *= correction;
          mx = s;
        }
        const float prob = exp2f(s - mx);
        sum += prob;
#pragma unroll
        for (int c = 0; c < D; ++c) acc[c] += prob * gpu::to_float(sv[r * D + c]);
      }
    }
  }
  if (row < p.seq) {
    gpu::bf16* out = head_row<D>(p.out, b, p.seq, p.heads, h, row);
#pragma unroll
    for (int c = 0; c < D; ++c) out[c] = gpu::to_bf16(acc[c] / sum);
    p.lse_out[stat_index(b, p.heads, h, p.seq, row)] = (mx + log2f(sum)) * ln2;
  }
}

/// One block per (key block of 64, KV head, batch). Key k0 + i belongs to threads
/// i * S .. i * S + S - 1 (S = split(D)), each holding dK and dV of its D / S columns; the group
/// walks the query heads of the KV head and, for each, the query rows that see its key.
template <int D>
__global__ TPRIMAT_LAUNCH_BOUNDS(Tiles::backward_threads<D>) void flash_backward_dkdv_kernel(
    FlashParams p) {
  constexpr int R = Tiles::key_rows, T = Tiles::backward_step, S = Tiles::split(D), C = D / S;
  constexpr int threads = Tiles::backward_threads<D>;
  __shared__ gpu::bf16 sk[R * D], sv[R * D], sq[T * D], sdo[T * D];
  __shared__ float slse[T], sdot[T];
  const int g = blockIdx.y, b = blockIdx.z, group = p.heads / p.kv_heads;
  const int local = threadIdx.x / S, c0 = threadIdx.x % S * C;  // the key's row, first column
  const int k0 = blockIdx.x * R, key = k0 + local;
  const std::int64_t q_stride = std::int64_t{p.heads} * D, kv_stride = std::int64_t{p.kv_heads} * D;
  stage_rows<D, threads>(sk, head_row<D>(p.k, b, p.kv_seq, p.kv_heads, g, 0), kv_stride, k0, R,
                         p.kv_seq);
  stage_rows<D, threads>(sv, head_row<D>(p.v, b, p.kv_seq, p.kv_heads, g, 0), kv_stride, k0, R,
                         p.kv_seq);

  float dk[C] = {}, dv[C] = {};
  for (int h = g * group; h < (g + 1) * group; ++h) {
    for (int t0 = max(k0 - p.key_offset, 0); t0 < p.seq; t0 += T) {
      __syncthreads();
      stage_rows<D, threads>(sq, head_row<D>(p.q, b, p.seq, p.heads, h, 0), q_stride, t0, T, p.seq);
      stage_rows<D, threads>(sdo, head_row<D>(p.dout, b, p.seq, p.heads, h, 0), q_stride, t0, T,
                             p.seq);
      if (threadIdx.x < T) {
        const int query = t0 + threadIdx.x;
        const std::int64_t i = stat_index(b, p.heads, h, p.seq, query < p.seq ? query : 0);
        slse[threadIdx.x] = query < p.seq ? p.lse[i] : 0.f;
        sdot[threadIdx.x] = query < p.seq ? p.row_dot[i] : 0.f;
      }
      __syncthreads();
      // Every branch from here on depends on the key only: a group takes it together, as the
      // group sums need.
      if (key >= p.kv_seq) continue;
      for (int r = 0; r < T; ++r) {
        const int query = t0 + r;
        if (!key_visible(p, query, key) || query >= p.seq) continue;
        const float s =
            gpu::lane_group_sum<S>(dot_rows<C>(sq + r * D + c0, sk + local * D + c0)) * p.scale;
        const float prob = expf(s - slse[r]);
        const float dprob =
            gpu::lane_group_sum<S>(dot_rows<C>(sdo + r * D + c0, sv + local * D + c0));
        const float ds = prob * (dprob - sdot[r]);
#pragma unroll
        for (int c = 0; c < C; ++c) {
          dv[c] += prob * gpu::to_float(sdo[r * D + c0 + c]);
          dk[c] += ds * gpu::to_float(sq[r * D + c0 + c]);
        }
      }
    }
  }
  if (key < p.kv_seq) {
    gpu::bf16* dk_row = head_row<D>(p.dk, b, p.kv_seq, p.kv_heads, g, key) + c0;
    gpu::bf16* dv_row = head_row<D>(p.dv, b, p.kv_seq, p.kv_heads, g, key) + c0;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      dk_row[c] = gpu::to_bf16(dk[c] * p.scale);
      dv_row[c] = gpu::to_bf16(dv[c]);
    }
  }
}

/// One block per (query block of 64, head, batch). Query row q0 + i belongs to threads
/// i * S .. i * S + S - 1 (S = split(D)), each holding dQ of its D / S columns; the group walks
/// the keys the row sees.
template <int D>
__global__ TPRIMAT_LAUNCH_BOUNDS(Tiles::backward_threads<D>) void flash_backward_dq_kernel(
    FlashParams p) {
  constexpr int R = Tiles::query_rows, T = Tiles::backward_step, S = Tiles::split(D), C = D / S;
  constexpr int threads = Tiles::backward_threads<D>;
  __shared__ gpu::bf16 sq[R * D], sdo[R * D], sk[T * D], sv[T * D];
  const int m_block = gridDim.x - 1 - blockIdx.x;
  const int h = blockIdx.y, b = blockIdx.z, g = h / (p.heads / p.kv_heads);
  const int local = threadIdx.x / S, c0 = threadIdx.x % S * C;  // the query's row, first column
  const int q0 = m_block * R, row = q0 + local;
  const std::int64_t q_stride = std::int64_t{p.heads} * D, kv_stride = std::int64_t{p.kv_heads} * D;
  const gpu::bf16* k = head_row<D>(p.k, b, p.kv_seq, p.kv_heads, g, 0);
  const gpu::bf16* v = head_row<D>(p.v, b, p.kv_seq, p.kv_heads, g, 0);
  stage_rows<D, threads>(sq, head_row<D>(p.q, b, p.seq, p.heads, h, 0), q_stride, q0, R, p.seq);
  stage_rows<D, threads>(sdo, head_row<D>(p.dout, b, p.seq, p.heads, h, 0), q_stride, q0, R, p.seq);
  const std::int64_t i = stat_index(b, p.heads, h, p.seq, row < p.seq ? row : 0);
  const float lse = row < p.seq ? p.lse[i] : 0.f, dot = row < p.seq ? p.row_dot[i] : 0.f;

  float dq[C] = {};
  const int last_key = last_visible_key(p, q0, R);
  for (int t0 = 0; t0 <= last_key; t0 += T) {
    __syncthreads();
    stage_rows<D, threads>(sk, k, kv_stride, t0, T, p.kv_seq);
    stage_rows<D, threads>(sv, v, kv_stride, t0, T, p.kv_seq);
    __syncthreads();
    // Every branch from here on depends on the row only: a group takes it together.
    if (row >= p.seq) continue;
    for (int r = 0; r < T && key_visible(p, row, t0 + r); ++r) {
      const float s =
          gpu::lane_group_sum<S>(dot_rows<C>(sq + local * D + c0, sk + r * D + c0)) * p.scale;
      const float prob = expf(s - lse);
      const float dprob =
          gpu::lane_group_sum<S>(dot_rows<C>(sdo + local * D + c0, sv + r * D + c0));
      const float ds = prob * (dprob - dot);
#pragma unroll
      for (int c = 0; c < C; ++c) dq[c] += ds * gpu::to_float(sk[r * D + c0 + c]);
    }
  }
  if (row < p.seq) {
    gpu::bf16* dq_row = head_row<D>(p.dq, b, p.seq, p.heads, h, row) + c0;
#pragma unroll
    for (int c = 0; c < C; ++c) dq_row[c] = gpu::to_bf16(dq[c] * p.scale);
  }
}

}  // namespace flash_detail
#endif

// ---- host launchers ----------------------------------------------------------------------------

/// o and lse of GQA attention under the causal band (p.q, p.k, p.v, p.out, p.lse_out and the
/// sizes set).
template <int D>
void flash_attention_forward(const FlashParams& p, gpu::Stream stream) {
  static_assert(D == 16 || D == 32 || D == 64 || D == 128, "tprimat: head_dim 16, 32, 64 or 128");
  using flash_detail::Tiles;
  if (p.batch == 0 || p.seq == 0 || p.kv_seq == 0) return;
  const dim3 grid((p.seq + Tiles::forward_rows - 1) / Tiles::forward_rows, p.heads, p.batch);
  flash_detail::flash_forward_kernel<D><<<grid, Tiles::threads, 0, stream>>>(p);
}

/// dq, dk, dv (overwritten) from q, k, v, o, lse, dout; p.row_dot is the fp32 [batch, heads, seq]
/// workspace. Deterministic: the same inputs give the same bits.
template <int D>
void flash_attention_backward(const FlashParams& p, gpu::Stream stream) {
  static_assert(D == 16 || D == 32 || D == 64 || D == 128, "tprimat: head_dim 16, 32, 64 or 128");
  using flash_detail::Tiles;
  if (p.batch == 0 || p.seq == 0 || p.kv_seq == 0) return;
  const std::int64_t rows = std::int64_t{p.batch} * p.seq * p.heads;
  constexpr int rows_per_block = flash_detail::row_dot_threads / gpu::warp_size;
  flash_detail::flash_row_dot_kernel<D>
      <<<gpu::blocks_for(rows, rows_per_block), flash_detail::row_dot_threads, 0, stream>>>(p);
  const dim3 key_grid((p.kv_seq + Tiles::key_rows - 1) / Tiles::key_rows, p.kv_heads, p.batch);
  constexpr int threads = Tiles::backward_threads<D>;
  flash_detail::flash_backward_dkdv_kernel<D><<<key_grid, threads, 0, stream>>>(p);
  const dim3 query_grid((p.seq + Tiles::query_rows - 1) / Tiles::query_rows, p.heads, p.batch);
  flash_detail::flash_backward_dq_kernel<D><<<query_grid, threads, 0, stream>>>(p);
}

}  // namespace tprimat::kernels
