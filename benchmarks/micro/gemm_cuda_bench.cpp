// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Every GEMM the CUDA step issues, for Llama 3.1 8B, Qwen 2.5 7B and Mistral 7B at TP 1/2/4 and
// 2048/4096 tokens: backend::Gpu::gemm (cuBLASLt; its algorithm in the label) beside cublasGemmEx.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_timing.hpp"
#include "tprimat/backend/cuda/gemm_plans.hpp"
#include "tprimat/model/llama31_8b.hpp"
#include "tprimat/model/mistral_7b.hpp"
#include "tprimat/model/qwen25_7b.hpp"
#include "tprimat/parallel/validate.hpp"

namespace tprimat::gpu_bench {
namespace {

/// One row-major GEMM as Gpu::gemm takes it: C[m, n] = op(A) op(B) + beta C (+ bias[n]).
struct Gemm {
  bool trans_a = false, trans_b = false;
  std::int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  bool fp32_out = false;
  float beta = 0;
  bool add = false;   ///< Gpu::gemm_add: D = op(A) op(B) + C, C (the residual) another buffer
  bool bias = false;  ///< bf16 bias epilogue (Qwen's q, k and v projections)

  std::size_t a_bytes() const { return std::size_t(m) * k * sizeof(bf16); }
  std::size_t b_bytes() const { return std::size_t(k) * n * sizeof(bf16); }
  std::size_t out_bytes() const { return std::size_t(m) * n * (fp32_out ? 4 : 2); }
  /// The least a GEMM moves: A and B read once, D written once, C read once when beta != 0.
  Work work() const {
    const double c_read = (add || beta != 0) ? double(out_bytes()) : 0;
    return {double(a_bytes() + b_bytes() + out_bytes()) + c_read, 2.0 * double(m) * n * k};
  }
};

/// A weight W[in, out], row-major as the engine stores it (src/gpu/device_transformer.cpp),
/// already split by TP: column-parallel (q, kv, gate_up, the vocab-parallel lm_head) split `out`,
/// row-parallel (o, down) split `in`.
struct Projection {
  const char* name;
  std::int64_t in, out;
  bool residual;     ///< forward adds into the fp32 residual stream (Gpu::gemm_add)
  bool bias;         ///< forward has a bias epilogue
  bool dgrad_fp32;   ///< data gradient into the fp32 dxn that RMSNorm's backward reads
  float dgrad_beta;  ///< 1 where the data gradient adds into the previous projection's
};

template <model::ModelSpec M>
std::vector<Projection> projections(int tp) {
  const std::int64_t h = M::hidden;
  const std::int64_t q = std::int64_t(M::heads) * M::head_dim / tp;
  const std::int64_t kv = std::int64_t(M::kv_heads) * M::head_dim / tp;
  const std::int64_t f = M::ffn / tp;
  const std::int64_t v = (M::vocab + tp - 1) / tp;
  return {
      {"q", h, q, false, M::qkv_bias, true, 0.0f},
      {"kv", h, kv, false, M::qkv_bias, true, 1.0f},  // K and V: two of this shape per layer
      {"o", q, h, true, false, false, 0.0f},
      {"gate_up", h, f, false, false, true, 1.0f},  // gate and up: two (gate's dgrad: beta 0)
      {"down", f, h, true, false, false, 0.0f},
      {"lm_head", h, v, false, false, true, 0.0f},  // once per step
  };
}

// The orientations, as the engine issues them, with x [t, in] and dy [t, out]:
// forward y = x W (bf16 out, or fp32 into the residual); data gradient dx = dy W^T (fp32 where
// dx is RMSNorm's input gradient, bf16 into attention's and SwiGLU's backward);
// weight gradient dW = x^T dy into fp32: beta 0 in a step's first micro-batch (wgrad), beta 1
// in every later one (wgrad_acc: 31 of 32 at gbs 64, mbs 2).
enum class Pass { fwd, dgrad, wgrad, wgrad_acc };
constexpr const char* pass_name(Pass p) {
  switch (p) {
    case Pass::fwd:
      return "fwd";
    case Pass::dgrad:
      return "dgrad";
    case Pass::wgrad:
      return "wgrad";
    case Pass::wgrad_acc:
      return "wgrad_acc";
  }
  return "?";
}

Gemm step_gemm(const Projection& p, Pass pass, std::int64_t t) {
  Gemm g;
  switch (pass) {
    case Pass::fwd:
      g = {.m = t, .n = p.out, .k = p.in, .lda = p.in, .ldb = p.out, .ldc = p.out};
      g.fp32_out = g.add = p.residual;
      g.beta = p.residual ? 1.0f : 0.0f;
      g.bias = p.bias;
      break;
    case Pass::dgrad:
      g = {.trans_b = true, .m = t, .n = p.in, .k = p.out, .lda = p.out, .ldb = p.out, .ldc = p.in};
      g.fp32_out = p.dgrad_fp32;
      g.beta = p.dgrad_beta;
      break;
    case Pass::wgrad:
    case Pass::wgrad_acc:
      g = {.trans_a = true, .m = p.in, .n = p.out, .k = t, .lda = p.in, .ldb = p.out, .ldc = p.out};
      g.fp32_out = true;
      g.beta = pass == Pass::wgrad_acc ? 1.0f : 0.0f;
      break;
  }
  return g;
}

/// Operand buffers shared by every GEMM benchmark, grown to the largest need and filled with bf16
/// unit normals (read as fp32, each float's high half is one of them: finite, never zero).
/// Leaked on purpose, as gemm.cpp's plan cache: nothing is freed after the CUDA runtime shut down.
class Operands {
 public:
  static Operands& get() {
    static Operands* o = new Operands;
    return *o;
  }
  cudaStream_t stream() const { return stream_; }

  /// Set `s` of `sets` copies of g's operands, each 256-byte aligned, so every set gets the same
  /// cuBLASLt plan.
  struct View {
    const bf16* a;
    const bf16* b;
    void* c;  // the residual read by gemm_add (else unused: C is D)
    void* d;
    const bf16* bias;
  };
  View view(const Gemm& g, int sets, int s) {
    const std::size_t a = round(g.a_bytes()), b = round(g.b_bytes()), o = round(g.out_bytes());
    return {
        reinterpret_cast<const bf16*>(grow(a_, a * sets) + a * s),
        reinterpret_cast<const bf16*>(grow(b_, b * sets) + b * s),
        g.add ? grow(c_, o * sets) + o * s : nullptr, grow(d_, o * sets) + o * s,
        g.bias ? reinterpret_cast<const bf16*>(grow(bias_, round(g.n * sizeof(bf16)))) : nullptr};
  }

 private:
  Operands() { gpu_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream"); }
  static std::size_t round(std::size_t bytes) { return (bytes + 255) / 256 * 256; }
  std::byte* grow(DeviceBuffer<std::byte>& buf, std::size_t bytes) {
    if (bytes > buf.size()) {
      buf = DeviceBuffer<std::byte>();  // free first: the largest buffers are 2 GiB
      buf = DeviceBuffer<std::byte>(bytes, stream_);
      fill_normal(reinterpret_cast<bf16*>(buf.data()), bytes / sizeof(bf16), ++seed_, stream_);
      gpu_check(cudaStreamSynchronize(stream_), "operand fill");
    }
    return buf.data();
  }
  cudaStream_t stream_ = nullptr;
  std::uint64_t seed_ = 100;
  DeviceBuffer<std::byte> a_, b_, c_, d_, bias_;
};

void add_shape_counters(benchmark::State& state, const Gemm& g) {
  state.counters["m"] = double(g.m);
  state.counters["n"] = double(g.n);
  state.counters["k"] = double(g.k);
}

void BM_CudaGemm(benchmark::State& state, Gemm g) {
  if (skip_without_gpu(state)) return;
  try {
    Operands& ops = Operands::get();
    const cudaStream_t stream = ops.stream();
    Gpu::gemm_prepare(stream);
    const int sets = rotation_sets(g.work().bytes);
    const Timing t = time_calls(state, stream, sets, [&](int i) {
      const Operands::View v = ops.view(g, sets, i % sets);
      if (g.add)
        Gpu::gemm_add<float>(g.trans_a, g.trans_b, g.m, g.n, g.k, v.a, g.lda, v.b, g.ldb,
                              static_cast<const float*>(v.c), static_cast<float*>(v.d), g.ldc,
                              stream);
      else if (g.fp32_out)
        Gpu::gemm<float>(g.trans_a, g.trans_b, g.m, g.n, g.k, v.a, g.lda, v.b, g.ldb, g.beta,
                          static_cast<float*>(v.d), g.ldc, v.bias, stream);
      else
        Gpu::gemm<bf16>(g.trans_a, g.trans_b, g.m, g.n, g.k, v.a, g.lda, v.b, g.ldb, g.beta,
                         static_cast<bf16*>(v.d), g.ldc, v.bias, stream);
    });
    report(state, t, g.work());
    add_shape_counters(state, g);
    state.SetLabel(backend::gemm_algorithm({.trans_a = g.trans_a,
                                            .trans_b = g.trans_b,
                                            .m = g.m,
                                            .n = g.n,
                                            .k = g.k,
                                            .lda = g.lda,
                                            .ldb = g.ldb,
                                            .ldc = g.ldc,
                                            .fp32_out = g.fp32_out,
                                            .accumulate = g.add || g.beta != 0,
                                            .bias = g.bias}));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(status));
}

/// The baseline's handle on the operands' stream, with a workspace of its own set (graph capture
/// needs one; cublasSetStream resets it, hence after).
cublasHandle_t cublas_handle() {
  static const cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    check(cublasCreate(&h), "cublasCreate");
    const cudaStream_t stream = Operands::get().stream();
    check(cublasSetStream(h, stream), "cublasSetStream");
    auto* workspace = new DeviceBuffer<std::byte>(Gpu::gemm_workspace_bytes, stream);  // kept
    check(cublasSetWorkspace(h, workspace->data(), workspace->bytes()), "cublasSetWorkspace");
    return h;
  }();
  return handle;
}

// Baseline: the same product through plain cublasGemmEx (bf16 in, fp32 compute, default
// algorithm selection), row-major by the same operand swap as gemm.cpp. It has no bias epilogue
// (Qwen's q/kv forward run without) and no separate C: gemm_add's residual add is beta 1 in place.
void BM_CublasGemmEx(benchmark::State& state, Gemm g) {
  if (skip_without_gpu(state)) return;
  try {
    Operands& ops = Operands::get();
    const cublasHandle_t handle = cublas_handle();
    const float alpha = 1.0f;
    const int sets = rotation_sets(g.work().bytes);
    const Timing t = time_calls(state, ops.stream(), sets, [&](int i) {
      const Operands::View v = ops.view(g, sets, i % sets);
      check(cublasGemmEx(handle, g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                         g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, int(g.n), int(g.m), int(g.k),
                         &alpha, v.b, CUDA_R_16BF, int(g.ldb), v.a, CUDA_R_16BF, int(g.lda),
                         &g.beta, v.d, g.fp32_out ? CUDA_R_32F : CUDA_R_16BF, int(g.ldc),
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx");
    });
    report(state, t, g.work());
    add_shape_counters(state, g);
    state.SetLabel("cublasGemmEx, CUBLAS_GEMM_DEFAULT");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// Ten replays of >= 0.5 ms of GEMMs each: ~10 ms per benchmark after its warm-up.
constexpr int iterations = 10;

void add(const std::string& tail, const Gemm& g) {
  benchmark::RegisterBenchmark(("Gemm/" + tail).c_str(), BM_CudaGemm, g)
      ->UseManualTime()
      ->Iterations(iterations)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark(("CublasGemmEx/" + tail).c_str(), BM_CublasGemmEx, g)
      ->UseManualTime()
      ->Iterations(iterations)
      ->Unit(benchmark::kMicrosecond);
}

/// Names filter by model, TP, projection, pass and tokens: Gemm/llama/tp2/q/fwd/tokens:4096.
template <model::ModelSpec M>
void add_model() {
  for (int tp : {1, 2, 4}) {
    if (!parallel::tp_valid(model::dims<M>(), tp)) continue;
    for (std::int64_t tokens : {2048, 4096})
      for (const Projection& p : projections<M>(tp))
        for (Pass pass : {Pass::fwd, Pass::dgrad, Pass::wgrad, Pass::wgrad_acc})
          add(std::string(M::cli_name) + "/tp" + std::to_string(tp) + "/" + p.name + "/" +
                  pass_name(pass) + "/tokens:" + std::to_string(tokens),
              step_gemm(p, pass, tokens));
  }
}

const bool registered = [] {
  // cuBLAS on the ceiling's square GEMM (Ceiling/gemm_bf16/8192 is Gpu::gemm's).
  benchmark::RegisterBenchmark(
      "CublasGemmEx/square/8192", BM_CublasGemmEx,
      Gemm{.m = 8192, .n = 8192, .k = 8192, .lda = 8192, .ldb = 8192, .ldc = 8192})
      ->UseManualTime()
      ->Iterations(iterations)
      ->Unit(benchmark::kMicrosecond);
  add_model<model::Llama31_8B>();
  add_model<model::Qwen25_7B>();
  add_model<model::Mistral7B>();
  return true;
}();

}  // namespace
}  // namespace tprimat::gpu_bench
