// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// backend::Cuda::gemm (cuBLASLt, cached plans) beside a plain cublasGemmEx baseline, on the 8192^3
// ceiling GEMM and the Llama 3.1 8B step's GEMMs at 2048 tokens; CUDA-event time per GEMM.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "tprimat/backend/cuda.hpp"
#include "tprimat/model/llama31_8b.hpp"

namespace {

using tprimat::backend::Cuda;
using tprimat::model::Llama31_8B;
using bf16 = Cuda::bf16;

/// One row-major GEMM as the step issues it: C[m, n] (+)= op(A) op(B).
struct Shape {
  const char* name;
  bool trans_a, trans_b;
  std::int64_t m, n, k;
  bool fp32_out;  ///< weight gradients accumulate in fp32; activations are bf16
  float beta;
};

constexpr std::int64_t tokens = 2048;           // one micro-batch of seq 2048
constexpr std::int64_t h = Llama31_8B::hidden;  // 4096
constexpr std::int64_t kv = Llama31_8B::kv_heads * Llama31_8B::head_dim;  // 1024
constexpr std::int64_t qkv = h + 2 * kv;                                  // 6144
constexpr std::int64_t f = Llama31_8B::ffn;                               // 14336
constexpr std::int64_t v = Llama31_8B::vocab;                             // 128256

// Forward: y[t, out] = x[t, in] W[out, in]^T (trans_b). Data gradient: dx[t, in] = dy[t, out]
// W[out, in]. Weight gradient: dW[out, in] += dy[t, out]^T x[t, in] (trans_a, fp32, beta 1).
constexpr Shape shapes[] = {
    {"square8192", false, false, 8192, 8192, 8192, false, 0},  // the ceiling MFU is read against
    {"fwd_qkv", false, true, tokens, qkv, h, false, 0},
    {"fwd_kv", false, true, tokens, kv, h, false, 0},  // K or V alone, if not fused
    {"fwd_o", false, true, tokens, h, h, false, 0},    // also Q alone
    {"fwd_gate_up", false, true, tokens, f, h, false, 0},
    {"fwd_down", false, true, tokens, h, f, false, 0},
    {"fwd_lm_head", false, true, tokens, v, h, false, 0},
    {"dgrad_qkv", false, false, tokens, h, qkv, false, 0},
    {"dgrad_o", false, false, tokens, h, h, false, 0},
    {"dgrad_gate_up", false, false, tokens, h, f, false, 0},
    {"dgrad_down", false, false, tokens, f, h, false, 0},
    {"dgrad_lm_head", false, false, tokens, h, v, false, 0},
    {"wgrad_qkv", true, false, qkv, h, tokens, true, 1},
    {"wgrad_kv", true, false, kv, h, tokens, true, 1},
    {"wgrad_o", true, false, h, h, tokens, true, 1},
    {"wgrad_gate_up", true, false, f, h, tokens, true, 1},
    {"wgrad_down", true, false, h, f, tokens, true, 1},
    {"wgrad_lm_head", true, false, v, h, tokens, true, 1},
};

void check(cudaError_t status, const char* what) { tprimat::backend::cuda_check(status, what); }
void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(status));
}

/// Operands shared by every benchmark: grown to the largest shape seen, filled with N(0, 1)
/// bf16 values (a 1 Mi-element random tile repeated; zeros would flatter the tensor cores, which
/// draw less power on them).
class Operands {
 public:
  static Operands& get() {
    static Operands o;
    return o;
  }
  cudaStream_t stream() const { return stream_; }
  void* a(std::size_t bytes) { return grow(a_, bytes); }
  void* b(std::size_t bytes) { return grow(b_, bytes); }
  void* c(std::size_t bytes) { return grow(c_, bytes); }

 private:
  struct Buffer {
    void* p = nullptr;
    std::size_t bytes = 0;
  };
  Operands() {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    std::mt19937_64 rng(42);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    tile_.resize(std::size_t{1} << 20);
    for (auto& x : tile_) x = __float2bfloat16(dist(rng));
  }
  void* grow(Buffer& buf, std::size_t bytes) {
    if (bytes <= buf.bytes) return buf.p;
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    if (buf.p) check(cudaFree(buf.p), "cudaFree");
    buf = {};
    check(cudaMalloc(&buf.p, bytes), "cudaMalloc");
    buf.bytes = bytes;
    // bf16 pattern; an fp32 C read as floats holds finite small values too (two bf16 halves).
    const std::size_t tile_bytes = tile_.size() * sizeof(bf16);
    for (std::size_t off = 0; off < bytes; off += tile_bytes)
      check(cudaMemcpy(static_cast<char*>(buf.p) + off, tile_.data(),
                       std::min(tile_bytes, bytes - off), cudaMemcpyHostToDevice),
            "cudaMemcpy");
    return buf.p;
  }
  cudaStream_t stream_ = nullptr;
  std::vector<bf16> tile_;
  Buffer a_, b_, c_;
};

/// The device once: name for the label, dense peak for the fraction-of-peak counter.
struct Device {
  std::string name;
  double peak_tflops = 0;
  static const Device& get() {
    static const Device d = [] {
      const tprimat::backend::DeviceInfo info = Cuda::device_info();
      return Device{info.device_name, info.peak_tflops_dense};
    }();
    return d;
  }
};

/// Times `gemm` (one call per GEMM) with CUDA events; enough GEMMs per timed iteration that
/// launch gaps vanish in ~1 ms of work.
template <class Gemm>
void time_gemm(benchmark::State& state, const Shape& s, Gemm&& gemm) {
  try {
    const Device& device = Device::get();
    cudaStream_t stream = Operands::get().stream();
    const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
    const int batch = int(std::clamp(std::ceil(1e-3 / (flops / 600e12)), 1.0, 100.0));
    gemm(stream);  // warm-up: plans the shape (Cuda::gemm) or runs cuBLAS's heuristics
    check(cudaStreamSynchronize(stream), "warm-up");

    cudaEvent_t start = nullptr, stop = nullptr;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    double total_s = 0;
    std::int64_t gemms = 0;
    for (auto _ : state) {
      check(cudaEventRecord(start, stream), "cudaEventRecord");
      for (int i = 0; i < batch; ++i) gemm(stream);
      check(cudaEventRecord(stop, stream), "cudaEventRecord");
      check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      state.SetIterationTime(ms * 1e-3 / batch);
      total_s += ms * 1e-3;
      gemms += batch;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    const double tflops = flops * double(gemms) / total_s * 1e-12;
    state.counters["TFLOP/s"] = tflops;
    if (device.peak_tflops > 0) state.counters["of_dense_peak"] = tflops / device.peak_tflops;
    state.counters["m"] = double(s.m);
    state.counters["n"] = double(s.n);
    state.counters["k"] = double(s.k);
    state.SetLabel(device.name);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

struct Buffers {
  void* a;
  void* b;
  void* c;
  std::int64_t lda, ldb, ldc;
};
Buffers buffers(const Shape& s) {
  Operands& o = Operands::get();
  const std::size_t out_bytes = s.fp32_out ? sizeof(float) : sizeof(bf16);
  return {o.a(std::size_t(s.m) * s.k * sizeof(bf16)),
          o.b(std::size_t(s.k) * s.n * sizeof(bf16)),
          o.c(std::size_t(s.m) * s.n * out_bytes),
          s.trans_a ? s.m : s.k,
          s.trans_b ? s.k : s.n,
          s.n};
}

/// Reports the benchmark skipped, with the reason, where there is no GPU (CI builds this binary).
bool skip_without_gpu(benchmark::State& state) {
  if (Cuda::device_count() > 0) return false;
  state.SkipWithError("no CUDA device (driver or GPU missing): run on a GPU machine");
  return true;
}

void BM_CudaGemm(benchmark::State& state, Shape s) {
  if (skip_without_gpu(state)) return;
  Buffers buf{};
  try {
    Cuda::gemm_prepare(Operands::get().stream());
    buf = buffers(s);
  } catch (const std::exception& e) {
    return state.SkipWithError(e.what());
  }
  const auto* a = static_cast<const bf16*>(buf.a);
  const auto* b = static_cast<const bf16*>(buf.b);
  time_gemm(state, s, [&](cudaStream_t stream) {
    if (s.fp32_out)
      Cuda::gemm<float>(s.trans_a, s.trans_b, s.m, s.n, s.k, a, buf.lda, b, buf.ldb, s.beta,
                        static_cast<float*>(buf.c), buf.ldc, nullptr, stream);
    else
      Cuda::gemm<bf16>(s.trans_a, s.trans_b, s.m, s.n, s.k, a, buf.lda, b, buf.ldb, s.beta,
                       static_cast<bf16*>(buf.c), buf.ldc, nullptr, stream);
  });
}

// Baseline: the same product through cublasGemmEx (bf16 in, fp32 compute, default algorithm
// selection, cuBLAS's own workspace), row-major handled by the same operand swap.
void BM_CublasGemmEx(benchmark::State& state, Shape s) {
  if (skip_without_gpu(state)) return;
  static cublasHandle_t handle = nullptr;
  Buffers buf{};
  try {
    if (!handle) check(cublasCreate(&handle), "cublasCreate");
    buf = buffers(s);
  } catch (const std::exception& e) {
    return state.SkipWithError(e.what());
  }
  const float alpha = 1.0f;
  time_gemm(state, s, [&](cudaStream_t stream) {
    check(cublasSetStream(handle, stream), "cublasSetStream");
    check(cublasGemmEx(handle, s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                       s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, int(s.n), int(s.m), int(s.k), &alpha,
                       buf.b, CUDA_R_16BF, int(buf.ldb), buf.a, CUDA_R_16BF, int(buf.lda), &s.beta,
                       buf.c, s.fp32_out ? CUDA_R_32F : CUDA_R_16BF, int(buf.ldc),
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  });
}

void register_all() {
  for (const Shape& s : shapes) {
    const std::string suffix = std::string(s.name) + (s.fp32_out ? "/fp32_out" : "/bf16_out");
    benchmark::RegisterBenchmark(("CudaGemm/" + suffix).c_str(), BM_CudaGemm, s)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("CublasGemmEx/" + suffix).c_str(), BM_CublasGemmEx, s)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
}
const bool registered = (register_all(), true);

}  // namespace
