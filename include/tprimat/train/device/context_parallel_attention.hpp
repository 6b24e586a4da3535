// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// ContextParallelAttention: causal attention over a sequence split across the CP ranks
// (parallel::ContextSplit), on the device: keys and values all-gathered, each local query chunk
// attending to the keys before it, the key/value gradients reduce-scattered back to their owners.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tprimat/backend/environment.hpp"
#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/attention.hpp"
#include "tprimat/backend/gpu/buffer.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/parallel/context_parallel.hpp"
#include "tprimat/parallel/device_collectives.hpp"
#include "tprimat/train/config.hpp"
#include "tprimat/train/device/attention.hpp"
#include "tprimat/train/device/resources.hpp"

namespace tprimat::train::device {

/// Why all-gather rather than the CPU reference's ring: with grouped-query attention the keys and
/// values are a quarter of the queries' size (Llama 3.1 8B: 8 of 32 heads), so gathering them is
/// cheap beside the attention it feeds, and each block is then one fused attention call with no
/// ring step to schedule (Llama 3's own context parallelism gathers keys and values the same way).
/// Query chunk g (of 2 x CP) attends to key chunks 0..g, split as the reference splits it: causal
/// over its own key chunk, unmasked over chunks 0..g-1, merged by log-sum-exp; in the backward
/// each block runs on the merged output and statistics (so each block's dQ, dK, dV are exact
/// shares) and the two dQ are added. dK and dV (fp32, arranged by owner) are reduce-scattered
/// over CP. TPRIMAT_CP_FUSED_BLOCKS=1 runs each chunk in one call instead, causal with the
/// diagonal at the keys' end (where cuDNN has an engine for it): the same result, but on H200 with
/// cuDNN 9 its backward measured 10-16% slower than the two blocks' (benchmarks/RESULTS.md).
/// The flash kernels (HIP, or asked for) always run one call a chunk: they take the band of keys
/// directly, so the split would only add the merge and a second pass over the queries.
///
/// Layouts as DeviceAttention's, over this rank's local_seq tokens a sequence (chunk r, then
/// chunk 2CP-1-r), except lse, which only this class reads: [mbs][2 chunks][heads][chunk].
class ContextParallelAttention {
 public:
  using bf16 = backend::Gpu::bf16;

  /// `kernels` names what the run asked for (automatic: cuDNN where it supports every block, else
  /// flash); `shape` is one rank's whole-sequence shape (batch mbs, seq the model's, heads and
  /// kv_heads this TP rank's).
  ContextParallelAttention(std::shared_ptr<parallel::DeviceCollectives> cp,
                           parallel::ContextSplit split, AttentionChoice kernels,
                           const backend::AttentionShape& shape)
      : cp_(std::move(cp)), split_(split), whole_(shape) {
    if (!cp_ || cp_->size() != split_.cp || cp_->rank() != split_.rank)
      throw core::InputError("context parallelism over " + std::to_string(split_.cp) +
                             " ranks needs its CP group's collectives");
#if !TPRIMAT_GPU_HIP
    if (kernels != AttentionChoice::flash) {
      fused_ = backend::cp_fused_blocks_requested();
      for (int local = 0; local < 2; ++local)
        if (const int chunk = split_.global_chunk(local); chunk > 0 && fused_)
          fused_ = backend::CudnnAttention::supports(through(chunk));
    }
#endif
    use_cudnn_ = runs_cudnn(kernels, shapes(),
                            "context parallelism's blocks of " + std::to_string(split_.chunk()) +
                                " queries (head_dim " + std::to_string(whole_.head_dim) + ")");
    if (!use_cudnn_) {
      fused_ = true;
      check_flash_runs(shapes());
    }
  }

  std::string name() const {
    return std::string(use_cudnn_ ? "cudnn" : "flash") + ", context-parallel " +
           std::to_string(split_.cp) + (fused_ && use_cudnn_ ? " (one call a chunk)" : "");
  }

  /// The table's buffers (train/buffer_table.hpp's context_parallel_buffers): gathered_
  /// [rank][K, V][mbs * local_seq * kv_dim]; keys_ and values_ [mbs * seq, kv_dim], whole
  /// sequences; a split block's part_out_ and part_lse_ (one chunk); part_dk_ and part_dv_ up to
  /// the last chunk's keys; key_grads_ [owner rank][dK, dV][its tokens].
  void allocate(BufferAllocator& a, const BufferTable& table) {
    side_.create();
    fork_ = OwnedEvent(EventUse::order);
    joined_ = OwnedEvent(EventUse::order);
    using B = BufferId;
    for (const BufferEntry& e : table) {
      if (owner_of(e.buffer) != BufferOwner::context_parallel) continue;
      switch (e.buffer) {
        case B::cp_gathered: gathered_ = a.take<bf16>(e); break;
        case B::cp_keys: keys_ = a.take<bf16>(e); break;
        case B::cp_values: values_ = a.take<bf16>(e); break;
        case B::cp_part_out: part_out_ = a.take<bf16>(e); break;
        case B::cp_part_lse: part_lse_ = a.take<float>(e); break;
        case B::cp_part_dk: part_dk_ = a.take<bf16>(e); break;
        case B::cp_part_dv: part_dv_ = a.take<bf16>(e); break;
        case B::cp_key_grads: key_grads_ = a.take<float>(e); break;
        default: break;
      }
    }
  }

  /// cuDNN's plans, built before a graph is captured.
  void prepare(gpuStream_t stream) const {
#if !TPRIMAT_GPU_HIP
    if (use_cudnn_)
      for (const backend::AttentionShape& s : shapes()) backend::CudnnAttention::prepare(s, stream);
#endif
    (void)stream;
  }

  std::size_t backward_workspace_bytes() const {
    std::size_t bytes = 0;
    for (const backend::AttentionShape& s : shapes()) {
#if !TPRIMAT_GPU_HIP
      if (use_cudnn_) {
        bytes = std::max(bytes, backend::CudnnAttention::backward_workspace_bytes(s));
        continue;
      }
#endif
      bytes = std::max(bytes, backend::FlashAttention::backward_workspace_bytes(s));
    }
    return bytes;
  }

  /// Starts gathering every rank's keys and values (this rank's k and v, as forward and backward
  /// take them) on a stream of its own, after what `stream` has enqueued: the next forward or
  /// backward on `stream` waits for it instead of gathering in line, so the gather runs beside
  /// the GEMMs the caller enqueues meanwhile (the Q projection; the MLP's backward).
  void begin_gather(const bf16* k, const bf16* v, gpuStream_t stream) {
    stream_wait(side_, stream, fork_);
    gather_keys_and_values(k, v, side_);
    backend::gpu_check(gpuEventRecord(joined_, side_), "gpuEventRecord");
    gathering_ = true;
  }

  void forward(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse,
               gpuStream_t stream) {
    keys_and_values(k, v, stream);
    for_each_block([&](int b, int local, int chunk) {
      const std::int64_t at = row_of(b, local);
      bf16* out = o + at * q_dim();
      float* stats = lse + stats_of(b, local);
      if (fused_ || chunk == 0)
        return run_forward(q + at * q_dim(), key_row(b, 0), out, stats, through(chunk), stream);
      run_forward(q + at * q_dim(), key_row(b, chunk), out, stats, diagonal(), stream);
      run_forward(q + at * q_dim(), key_row(b, 0), part_out_.data(), part_lse_.data(),
                  prefix(chunk), stream);
      backend::Gpu::attention_merge(out, stats, part_out_.data(), part_lse_.data(), split_.chunk(),
                                    whole_.heads, whole_.head_dim, stream);
    });
  }

  /// dq, dk, dv (written, not accumulated) of this rank's tokens from dout.
  void backward(const bf16* q, const bf16* k, const bf16* v, const bf16* o, const float* lse,
                const bf16* dout, bf16* dq, bf16* dk, bf16* dv, void* workspace,
                gpuStream_t stream) {
    keys_and_values(k, v, stream);
    backend::gpu_check(gpuMemsetAsync(key_grads_.data(), 0, key_grads_.bytes(), stream),
                       "context-parallel key gradients");
    const std::int64_t c = split_.chunk();
    for_each_block([&](int b, int local, int chunk) {
      const std::int64_t at = row_of(b, local);
      const bf16 *q_rows = q + at * q_dim(), *o_rows = o + at * q_dim();
      const bf16* do_rows = dout + at * q_dim();
      const float* stats = lse + stats_of(b, local);
      bf16* dq_rows = dq + at * q_dim();
      if (fused_ || chunk == 0) {
        run_backward(q_rows, key_row(b, 0), o_rows, stats, do_rows, dq_rows, through(chunk),
                     workspace, stream);
        return add_key_grads(b, 0, chunk + 1, stream);
      }
      run_backward(q_rows, key_row(b, chunk), o_rows, stats, do_rows, dq_rows, diagonal(),
                   workspace, stream);
      add_key_grads(b, chunk, 1, stream);
      // The prefix block's dQ goes through the free merge buffer, then onto the diagonal's.
      run_backward(q_rows, key_row(b, 0), o_rows, stats, do_rows, part_out_.data(), prefix(chunk),
                   workspace, stream);
      backend::Gpu::accumulate_bf16(dq_rows, part_out_.data(), c * q_dim(), stream);
      add_key_grads(b, 0, chunk, stream);
    });
    const std::int64_t kv = kv_elements();
    cp_->reduce_scatter_sum(key_grads_.data(), static_cast<std::size_t>(2 * kv), stream);
    const float* mine = key_grads_.data() + std::int64_t{split_.rank} * 2 * kv;
    backend::Gpu::to_bf16(mine, dk, kv, stream);
    backend::Gpu::to_bf16(mine + kv, dv, kv, stream);
  }

 private:
  std::int64_t q_dim() const { return std::int64_t{whole_.heads} * whole_.head_dim; }
  std::int64_t kv_dim() const { return std::int64_t{whole_.kv_heads} * whole_.head_dim; }
  /// Elements of this rank's keys (or values): mbs x local_seq rows.
  std::int64_t kv_elements() const {
    return std::int64_t{whole_.batch} * split_.local_seq() * kv_dim();
  }
  /// This rank's first row of local chunk `local` (0 or 1) of sequence b.
  std::int64_t row_of(int b, int local) const {
    return std::int64_t{b} * split_.local_seq() + std::int64_t{local} * split_.chunk();
  }
  std::int64_t stats_of(int b, int local) const {
    return (std::int64_t{b} * 2 + local) * whole_.heads * split_.chunk();
  }
  /// The sequence's chunk `chunk` (of 2 x CP) in the whole keys.
  std::int64_t key_row(int b, int chunk) const {
    return std::int64_t{b} * split_.seq + std::int64_t{chunk} * split_.chunk();
  }

  backend::AttentionShape block(int keys, backend::AttentionShape::Mask mask) const {
    backend::AttentionShape s = whole_;
    s.batch = 1;
    s.seq = split_.chunk();
    s.kv_seq = keys;
    s.mask = mask;
    return s;
  }
  backend::AttentionShape diagonal() const {
    return block(split_.chunk(), backend::AttentionShape::Mask::causal);
  }
  backend::AttentionShape prefix(int chunk) const {
    return block(chunk * split_.chunk(), backend::AttentionShape::Mask::none);
  }
  /// Chunk `chunk`'s queries over every key up to its own, in one call.
  backend::AttentionShape through(int chunk) const {
    return chunk == 0 ? diagonal()
                      : block((chunk + 1) * split_.chunk(), backend::AttentionShape::Mask::causal_end);
  }
  /// Every shape this rank runs: the diagonal block, and for each local chunk past 0 its prefix
  /// (or, fused, the chunk through its own keys).
  std::vector<backend::AttentionShape> shapes() const {
    std::vector<backend::AttentionShape> s{diagonal()};
    for (int local = 0; local < 2; ++local)
      if (const int chunk = split_.global_chunk(local); chunk > 0)
        s.push_back(fused_ ? through(chunk) : prefix(chunk));
    return s;
  }
  template <class F>
  void for_each_block(F f) const {
    for (int b = 0; b < whole_.batch; ++b)
      for (int local = 0; local < 2; ++local) f(b, local, split_.global_chunk(local));
  }

  /// keys_ and values_ ready on `stream`: the gather begin_gather started, or one in line.
  void keys_and_values(const bf16* k, const bf16* v, gpuStream_t stream) {
    if (!gathering_) return gather_keys_and_values(k, v, stream);
    backend::gpu_check(gpuStreamWaitEvent(stream, joined_, 0), "gpuStreamWaitEvent");
    gathering_ = false;
  }

  /// Every rank's keys and values into keys_ and values_, whole sequences in position order.
  void gather_keys_and_values(const bf16* k, const bf16* v, gpuStream_t stream) {
    const std::int64_t kv = kv_elements();
    bf16* mine = gathered_.data() + std::int64_t{split_.rank} * 2 * kv;
    copy(mine, k, kv, stream);
    copy(mine + kv, v, kv, stream);
    cp_->all_gather_bytes(gathered_.data(), static_cast<std::size_t>(2 * kv) * sizeof(bf16),
                          stream);
    const std::int64_t c = split_.chunk();
    for (int chunk = 0; chunk < 2 * split_.cp; ++chunk) {
      const auto [rank, local] = split_.owner_of(chunk);
      const bf16* theirs = gathered_.data() + std::int64_t{rank} * 2 * kv;
      for (int b = 0; b < whole_.batch; ++b) {
        const std::int64_t from = row_of(b, local) * kv_dim(), to = key_row(b, chunk) * kv_dim();
        copy(keys_.data() + to, theirs + from, c * kv_dim(), stream);
        copy(values_.data() + to, theirs + kv + from, c * kv_dim(), stream);
      }
    }
  }

  /// part_dk_/part_dv_'s `chunks` chunks, from sequence b's chunk `first`, onto their owners'
  /// rows of key_grads_.
  void add_key_grads(int b, int first, int chunks, gpuStream_t stream) {
    const std::int64_t kv = kv_elements(), c = split_.chunk(), n = c * kv_dim();
    for (int i = 0; i < chunks; ++i) {
      const auto [rank, local] = split_.owner_of(first + i);
      float* dk = key_grads_.data() + std::int64_t{rank} * 2 * kv + row_of(b, local) * kv_dim();
      backend::Gpu::add_bf16(dk, part_dk_.data() + i * n, dk, n, stream);
      backend::Gpu::add_bf16(dk + kv, part_dv_.data() + i * n, dk + kv, n, stream);
    }
  }

  void run_forward(const bf16* q, std::int64_t key, bf16* o, float* lse,
                   const backend::AttentionShape& s, gpuStream_t stream) const {
    const bf16 *k = keys_.data() + key * kv_dim(), *v = values_.data() + key * kv_dim();
#if !TPRIMAT_GPU_HIP
    if (use_cudnn_) return backend::CudnnAttention::forward(q, k, v, o, lse, s, stream);
#endif
    backend::FlashAttention::forward(q, k, v, o, lse, s, stream);
  }
  /// dQ into dq, dK and dV into part_dk_ and part_dv_.
  void run_backward(const bf16* q, std::int64_t key, const bf16* o, const float* lse,
                    const bf16* dout, bf16* dq, const backend::AttentionShape& s, void* workspace,
                    gpuStream_t stream) {
    const bf16 *k = keys_.data() + key * kv_dim(), *v = values_.data() + key * kv_dim();
#if !TPRIMAT_GPU_HIP
    if (use_cudnn_)
      return backend::CudnnAttention::backward(q, k, v, o, lse, dout, dq, part_dk_.data(),
                                               part_dv_.data(), s, workspace, stream);
#endif
    backend::FlashAttention::backward(q, k, v, o, lse, dout, dq, part_dk_.data(), part_dv_.data(),
                                      s, workspace, stream);
  }

  static void copy(bf16* to, const bf16* from, std::int64_t n, gpuStream_t stream) {
    backend::gpu_check(gpuMemcpyAsync(to, from, static_cast<std::size_t>(n) * sizeof(bf16),
                                      gpuMemcpyDeviceToDevice, stream),
                       "context-parallel key/value copy");
  }

  std::shared_ptr<parallel::DeviceCollectives> cp_;
  OwnedStream side_;            // begin_gather's
  OwnedEvent fork_, joined_;    // side_ after the caller's stream; the caller after side_
  bool gathering_ = false;      // begin_gather's gather is in flight
  parallel::ContextSplit split_;
  backend::AttentionShape whole_;
  bool use_cudnn_ = false;  // cuDNN's fused attention, else the flash kernels
  bool fused_ = false;      // one call a chunk (Mask::causal_end), else two blocks merged
  backend::DeviceBuffer<bf16> gathered_, keys_, values_, part_out_, part_dk_, part_dv_;
  backend::DeviceBuffer<float> part_lse_, key_grads_;
};

}  // namespace tprimat::train::device
