// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// What cuBLASLt's and hipBLASLt's GEMM wrappers share, with no vendor header: the plan keys, the
// shape checks, the operand views and the epilogue a call needs.
//
// Both libraries are column-major and take the same descriptors: row-major C[m, n] = op(A) op(B)
// is, read column-major, C^T[n, m] = op(B)^T op(A)^T, so the library is handed our B as its "A"
// and our A as its "B" with the same transpose flags, and writes our C in place (no copies, no
// transposes). Its D then has n rows, so the BIAS epilogue's vector (one value per row of D) is
// our bias[n], broadcast over our rows. The FP8 GEMM is the case trans_a = false, trans_b = true
// (both operands K-major: the "TN" layout Hopper's FP8 kernels require).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>

#include "tprimat/core/error.hpp"
#include "tprimat/kernels/fp8_format.hpp"
#include "tprimat/parallel/validate.hpp"

namespace tprimat::backend::detail::blaslt {

/// The output (C/D) element type of a GEMM: bf16 or fp32 (the engine's two).
enum class OutType : std::uint8_t { bf16, fp32 };

/// The OutType of an output element type: a 2-byte Out is the backend's bf16, a 4-byte one fp32.
template <class Out>
inline constexpr OutType out_type_of = sizeof(Out) == 2 ? OutType::bf16 : OutType::fp32;
template <class Out>
inline constexpr bool is_gemm_output = sizeof(Out) == 2 || sizeof(Out) == 4;

inline const char* out_name(OutType out) { return out == OutType::bf16 ? "bf16" : "fp32"; }

/// Alignment of a pointer in bytes, capped at 256 (cuBLASLt's default assumption). Part of the
/// plan keys: an algorithm picked for 256-byte aligned operands may not run on a view that starts
/// mid-buffer (a Q slice of a fused QKV output, a layer's weights inside a flat buffer).
inline std::uint32_t alignment(const void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  if (address == 0) return 256;
  return static_cast<std::uint32_t>(std::min<std::uintptr_t>(256, address & (~address + 1)));
}

/// Folds `v` into hash `h` (boost's hash_combine): the plan keys' hashes.
inline void hash_mix(std::size_t& h, std::uint64_t v) {
  h ^= std::hash<std::uint64_t>{}(v) + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
}

/// Everything that selects a bf16 GEMM's plan. beta's value is passed at launch, only beta != 0
/// is fixed (the library then reads C).
struct GemmKey {
  std::int64_t m, n, k, lda, ldb, ldc;
  bool trans_a, trans_b, accumulate, bias;
  OutType out;
  std::uint32_t align_a, align_b, align_c;
  int device;
  bool operator==(const GemmKey&) const = default;
};

struct GemmKeyHash {
  std::size_t operator()(const GemmKey& key) const {
    std::size_t h = 0;
    for (std::int64_t v : {key.m, key.n, key.k, key.lda, key.ldb, key.ldc})
      hash_mix(h, std::uint64_t(v));
    hash_mix(h, (std::uint64_t(key.trans_a) << 0) | (std::uint64_t(key.trans_b) << 1) |
                    (std::uint64_t(key.accumulate) << 2) | (std::uint64_t(key.bias) << 3) |
                    (std::uint64_t(key.out) << 8) |
                    (std::uint64_t(std::uint32_t(key.device)) << 24));
    hash_mix(h, (std::uint64_t(key.align_a) << 0) | (std::uint64_t(key.align_b) << 16) |
                    (std::uint64_t(key.align_c) << 32));
    return h;
  }
};

inline std::string describe(const GemmKey& key) {
  std::string s = "gemm m=" + std::to_string(key.m) + " n=" + std::to_string(key.n) +
                  " k=" + std::to_string(key.k) + " trans_a=" + (key.trans_a ? "1" : "0") +
                  " trans_b=" + (key.trans_b ? "1" : "0") + " lda=" + std::to_string(key.lda) +
                  " ldb=" + std::to_string(key.ldb) + " ldc=" + std::to_string(key.ldc) +
                  " out=" + out_name(key.out);
  if (key.accumulate) s += " beta!=0";
  if (key.bias) s += " bias";
  s += " on device " + std::to_string(key.device);
  return s;
}

/// Throws core::RunError for non-positive sizes or a leading dimension below its row length
/// (a caller's bug, not a user's input: the engine sizes every GEMM).
inline void check_gemm_shape(const GemmKey& key) {
  if (key.m <= 0 || key.n <= 0 || key.k <= 0 || key.lda < (key.trans_a ? key.m : key.k) ||
      key.ldb < (key.trans_b ? key.k : key.n) || key.ldc < key.n)
    throw core::RunError("invalid " + describe(key) +
                         ": sizes must be positive and each leading dimension at least its "
                         "row length");
}

/// A column-major matrix as a library layout descriptor holds it: rows x cols, leading
/// dimension ld (elements between columns).
struct MatrixView {
  std::int64_t rows, cols, ld;
  bool operator==(const MatrixView&) const = default;
};

/// The library's side of a row-major GEMM (see the top of the file): its transpose flags, its A
/// (our B), its B (our A) and its C/D (our C, [n rows, m cols]).
struct LibraryOperands {
  bool trans_a, trans_b;
  MatrixView a, b, c;
};

inline LibraryOperands library_operands(std::int64_t m, std::int64_t n, std::int64_t k,
                                        bool trans_a, bool trans_b, std::int64_t lda,
                                        std::int64_t ldb, std::int64_t ldc) {
  LibraryOperands o{};
  // Operands swapped, transpose flags kept.
  o.trans_a = trans_b;
  o.trans_b = trans_a;
  // Our B is [k, n] row-major (= [n rows, k cols] column-major), or [n, k] when trans_b.
  o.a = trans_b ? MatrixView{k, n, ldb} : MatrixView{n, k, ldb};
  // Our A is [m, k] row-major (= [k rows, m cols] column-major), or [k, m] when trans_a.
  o.b = trans_a ? MatrixView{m, k, lda} : MatrixView{k, m, lda};
  o.c = MatrixView{n, m, ldc};
  return o;
}

inline LibraryOperands library_operands(const GemmKey& key) {
  return library_operands(key.m, key.n, key.k, key.trans_a, key.trans_b, key.lda, key.ldb, key.ldc);
}

/// The epilogue a plan's descriptor asks for. A residual C (gemm_add) and beta accumulation
/// need none: they are beta and the C pointer, fixed per call.
enum class Epilogue : std::uint8_t {
  none,  ///< the library's DEFAULT: D = alpha op(A) op(B) + beta C
  bias,  ///< its BIAS: + a bf16 vector over D's rows (our bias[n] over our rows)
};
inline Epilogue epilogue(bool bias) { return bias ? Epilogue::bias : Epilogue::none; }

// ---- FP8 --------------------------------------------------------------------------------------

inline const char* fp8_name(kernels::Fp8Format f) { return kernels::fp8_format_name(f); }

/// Everything that selects an FP8 plan; alpha and beta's values and the scale pointers are
/// passed per call, only beta != 0 is fixed (the library then reads C).
struct Fp8Key {
  std::int64_t m, n, k, lda, ldb, ldd;
  kernels::Fp8Format format_a, format_b;
  OutType out;
  bool accumulate, fast, bias;
  std::uint32_t align_a, align_b, align_d;
  int device;
  bool operator==(const Fp8Key&) const = default;
};

struct Fp8KeyHash {
  std::size_t operator()(const Fp8Key& key) const {
    std::size_t h = 0;
    for (std::int64_t v : {key.m, key.n, key.k, key.lda, key.ldb, key.ldd})
      hash_mix(h, std::uint64_t(v));
    hash_mix(h, std::uint64_t(key.format_a) | std::uint64_t(key.format_b) << 4 |
                    std::uint64_t(key.accumulate) << 8 | std::uint64_t(key.fast) << 9 |
                    std::uint64_t(key.bias) << 10 | std::uint64_t(key.out) << 16 |
                    std::uint64_t(std::uint32_t(key.device)) << 32);
    hash_mix(h, std::uint64_t(key.align_a) | std::uint64_t(key.align_b) << 16 |
                    std::uint64_t(key.align_d) << 32);
    return h;
  }
};

inline std::string describe(const Fp8Key& key) {
  std::string s = "fp8_gemm m=" + std::to_string(key.m) + " n=" + std::to_string(key.n) +
                  " k=" + std::to_string(key.k) + " a=" + fp8_name(key.format_a) +
                  " b=" + fp8_name(key.format_b) + " lda=" + std::to_string(key.lda) +
                  " ldb=" + std::to_string(key.ldb) + " ldd=" + std::to_string(key.ldd) +
                  " out=" + out_name(key.out) +
                  (key.fast ? " fast-accumulation" : " split-accumulation");
  if (key.accumulate) s += " beta!=0";
  if (key.bias) s += " bias";
  s += " on device " + std::to_string(key.device);
  return s;
}

/// The library's side of an FP8 GEMM: its A is our B [k rows, n cols] (TRANSA = T), its B our A
/// [k rows, m cols] (TRANSB = N), C and D our D [n rows, m cols].
inline LibraryOperands library_operands(const Fp8Key& key) {
  return library_operands(key.m, key.n, key.k, false, true, key.lda, key.ldb, key.ldd);
}

/// The FP8 formats a library's GEMM takes on a device: `e4m3`-like for the forward operands,
/// `e5m2`-like for the gradients, and the reason when a format is not one of them.
struct Fp8Formats {
  const char* library;      ///< "cuBLASLt", "hipBLASLt"
  kernels::Fp8Format e4m3;  ///< e4m3 or e4m3_fnuz
  kernels::Fp8Format e5m2;  ///< e5m2 or e5m2_fnuz
  const char* device;       ///< what decides them: "gfx942", "gfx950", "CUDA"
};

/// cuBLASLt's FP8 GEMM: the OCP formats.
inline constexpr Fp8Formats cublaslt_fp8_formats{"cuBLASLt", kernels::Fp8Format::e4m3,
                                                 kernels::Fp8Format::e5m2, "NVIDIA GPUs"};

/// hipBLASLt's FP8 GEMM on an AMD architecture ("gfx942:sramecc+:xnack-" or "gfx942"): the fnuz
/// formats on gfx942 (MI300X/MI325X, HIP_R_8F_E4M3_FNUZ/HIP_R_8F_E5M2_FNUZ), the OCP ones on
/// gfx950 (MI355X, HIP_R_8F_E4M3/HIP_R_8F_E5M2). Throws core::InputError for any other (no FP8
/// matrix cores, or not known to tprimat).
inline Fp8Formats hipblaslt_fp8_formats(const std::string& arch) {
  const std::string gfx = arch.substr(0, arch.find(':'));
  if (gfx == "gfx942")
    return {"hipBLASLt", kernels::Fp8Format::e4m3_fnuz, kernels::Fp8Format::e5m2_fnuz, "gfx942"};
  if (gfx == "gfx950")
    return {"hipBLASLt", kernels::Fp8Format::e4m3, kernels::Fp8Format::e5m2, "gfx950"};
  throw core::SettingError(
      "precision",
      "FP8 on AMD needs FP8 matrix cores: gfx942 (MI300X/MI325X, fnuz formats) or gfx950 "
      "(MI355X, OCP formats); this GPU is " +
          (gfx.empty() ? std::string("unnamed") : gfx),
      "bf16 on this GPU");
}

/// The FP8 GEMM's requirements, each its own message, before any library call (the libraries'
/// own answer is a bare NOT_SUPPORTED): the formats the library takes on this device, then
/// cuBLASLt's documented shape rules, kept for hipBLASLt too (the engine's shapes meet them, and
/// one rule set keeps a shape refused or taken alike on both vendors). `out_bytes`: 2 (bf16 D)
/// or 4 (fp32 D).
inline void check_fp8_shape(const Fp8Key& key, std::int64_t out_bytes, const Fp8Formats& lib) {
  auto refuse = [&](const std::string& rule) {
    throw core::InputError("tprimat: " + describe(key) + ": " + rule);
  };
  for (kernels::Fp8Format f : {key.format_a, key.format_b})
    if (f != lib.e4m3 && f != lib.e5m2)
      refuse(std::string(lib.library) + " takes " + fp8_name(lib.e4m3) + " and " +
             fp8_name(lib.e5m2) + " on " + lib.device + ", not " + fp8_name(f));
  if (key.format_a == lib.e5m2 && key.format_b == lib.e5m2)
    refuse(std::string("no ") + fp8_name(lib.e5m2) + " x " + fp8_name(lib.e5m2) +
           " FP8 GEMM (cuBLASLt has none; the hybrid recipe never asks for one)");
  if (key.m <= 0 || key.n <= 0 || key.k <= 0) refuse("m, n and k must be positive");
  // The rule the engines and the program check first, in the model's terms (parallel/validate.hpp).
  constexpr int multiple = parallel::fp8_gemm_multiple;
  if (key.m % multiple || key.n % multiple || key.k % multiple)
    refuse("the FP8 GEMM needs m, n and k multiples of 16");
  if (key.lda < key.k || key.ldb < key.k)
    refuse("both operands are K-major: lda and ldb must be at least k");
  if (key.lda % 16 || key.ldb % 16) refuse("lda and ldb must be multiples of 16 (bytes)");
  if (key.ldd < key.n) refuse("ldd must be at least n");
  if ((key.ldd * out_bytes) % 16) refuse("ldd must be a multiple of 16 bytes of the output type");
  if (key.align_a < 16 || key.align_b < 16 || key.align_d < 16)
    refuse("A, B and D (and C when given) must start on 16-byte boundaries");
  if (key.bias && out_bytes != 2) refuse("a bias needs a bf16 D (cuBLASLt's FP8 bias rule)");
}

/// cuBLASLt refuses a scale pointer off a 16-byte boundary at launch with a bare
/// CUBLAS_STATUS_NOT_SUPPORTED (H100, cuBLAS of CUDA 13.0: offsets of 4 and 8 bytes refused, 16
/// and 256 taken), so two scales packed side by side in one float array do not work. Kept for
/// hipBLASLt, whose FP8 kernels load the scale as one float and are not documented on it.
inline void check_fp8_scales(const Fp8Key& key, const void* scale_a, const void* scale_b) {
  if (!scale_a || !scale_b)
    throw core::InputError("tprimat: " + describe(key) + ": both scale_inv pointers must be set");
  if (alignment(scale_a) < 16 || alignment(scale_b) < 16)
    throw core::InputError("tprimat: " + describe(key) +
                           ": each scale_inv must start on a 16-byte boundary (cuBLASLt refuses "
                           "others); give each tensor's scale_inv its own 16-byte slot");
}

}  // namespace tprimat::backend::detail::blaslt
