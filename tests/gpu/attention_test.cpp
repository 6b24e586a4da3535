// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// The Attention policies (FlashAttention, CudnnAttention) against the CPU reference in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "tprimat/backend/cpu.hpp"
#include "tprimat/backend/gpu/attention.hpp"
#include "tprimat/train/attention_workspace.hpp"

namespace tprimat::testing {
namespace {

using backend::AttentionShape;
#if !TPRIMAT_GPU_HIP
using backend::CudnnAttention;
#endif
using backend::FlashAttention;

// Bounds, as testing::relative_error (max abs error over max |reference|):
/// o, dq, dk, dv are bf16 outputs (rounding 2^-9 = 2e-3 relative) of fp32 sums whose operands
/// P and dS are themselves rounded to bf16 for the tensor cores; both stay well under 1e-2.
constexpr double bf16_output_bound = 1e-2;
/// lse is fp32 from exact bf16 products summed in fp32 (about 1e-6 relative); 1e-3 leaves room
/// for a library that keeps the statistics differently (e.g. max and log-sum apart).
constexpr double lse_bound = 1e-3;

std::string describe(const AttentionShape& s) {
  return "batch " + std::to_string(s.batch) + ", seq " + std::to_string(s.seq) + ", heads " +
         std::to_string(s.heads) + "/" + std::to_string(s.kv_heads) + ", head_dim " +
         std::to_string(s.head_dim);
}

std::size_t q_elements(const AttentionShape& s) {
  return std::size_t(s.batch) * s.seq * s.heads * s.head_dim;
}
std::size_t kv_elements(const AttentionShape& s) {
  return std::size_t(s.batch) * s.keys() * s.kv_heads * s.head_dim;
}
std::size_t stat_elements(const AttentionShape& s) {
  return std::size_t(s.batch) * s.heads * s.seq;
}

/// Inputs already rounded through bf16, so device and reference see the same operands.
struct Inputs {
  std::vector<float> q, k, v, dout;
};

Inputs make_inputs(const AttentionShape& s, std::uint64_t seed) {
  Inputs in;
  in.q = round_bf16(random_normal(q_elements(s), seed));
  in.k = round_bf16(random_normal(kv_elements(s), seed + 1));
  in.v = round_bf16(random_normal(kv_elements(s), seed + 2));
  in.dout = round_bf16(random_normal(q_elements(s), seed + 3));
  return in;
}

/// Cpu::attention_forward and attention_backward in double. The backward reads o rounded to
/// bf16 (o_bf16), exactly what the device backward is given.
struct Reference {
  std::vector<float> o, o_bf16, lse, dq, dk, dv;
};

std::vector<double> widen(std::span<const float> x) { return {x.begin(), x.end()}; }
std::vector<float> narrow(std::span<const double> x) { return {x.begin(), x.end()}; }

Reference reference(const AttentionShape& s, const Inputs& in) {
  using backend::Cpu;
  const std::vector<double> q = widen(in.q), k = widen(in.k), v = widen(in.v),
                            dout = widen(in.dout);
  std::vector<double> o(q.size()), lse(stat_elements(s)), ws(Cpu::attention_workspace(s.seq));
  Cpu::attention_forward<double>(q.data(), k.data(), v.data(), o.data(), lse.data(), s.batch, s.seq,
                                 s.heads, s.kv_heads, s.head_dim, ws.data());
  Reference r;
  r.o = narrow(o);
  r.o_bf16 = round_bf16(r.o);
  r.lse = narrow(lse);
  const std::vector<double> o_bf16 = widen(r.o_bf16);
  std::vector<double> dq(q.size()), dk(k.size()), dv(v.size());
  Cpu::attention_backward<double>(q.data(), k.data(), v.data(), o_bf16.data(), lse.data(),
                                  dout.data(), dq.data(), dk.data(), dv.data(), s.batch, s.seq,
                                  s.heads, s.kv_heads, s.head_dim, ws.data());
  r.dq = narrow(dq);
  r.dk = narrow(dk);
  r.dv = narrow(dv);
  return r;
}

/// cuDNN builds its plans in prepare(); FlashAttention has nothing to prepare.
template <class Policy>
void prepare(const AttentionShape& s, gpuStream_t stream) {
  if constexpr (requires { Policy::prepare(s, stream); }) Policy::prepare(s, stream);
}

/// Device buffers of one attention call; every output starts poisoned (0xFF bytes: NaN).
struct DeviceAttention {
  DeviceBuffer<bf16> q, k, v, o, dout, dq, dk, dv;
  DeviceBuffer<float> lse;
  DeviceBuffer<std::byte> workspace;

  DeviceAttention(const AttentionShape& s, const Inputs& in, std::size_t workspace_bytes,
                  gpuStream_t stream)
      : q(upload<bf16>(to_bf16(in.q), stream)),
        k(upload<bf16>(to_bf16(in.k), stream)),
        v(upload<bf16>(to_bf16(in.v), stream)),
        o(q_elements(s), stream),
        dout(upload<bf16>(to_bf16(in.dout), stream)),
        dq(q_elements(s), stream),
        dk(kv_elements(s), stream),
        dv(kv_elements(s), stream),
        lse(stat_elements(s), stream),
        workspace(std::max<std::size_t>(workspace_bytes, 1), stream) {
    poison_outputs();
  }
  void poison_outputs() {
    for (auto* b : {&o, &dq, &dk, &dv}) b->fill_bytes(0xFF);
    lse.fill_bytes(0xFF);
  }
  template <class Policy>
  void forward(const AttentionShape& s, gpuStream_t stream) {
    Policy::forward(q.data(), k.data(), v.data(), o.data(), lse.data(), s, stream);
    backend::gpu_check(gpuStreamSynchronize(stream), "attention forward");
  }
  template <class Policy>
  void backward(const AttentionShape& s, gpuStream_t stream) {
    Policy::backward(q.data(), k.data(), v.data(), o.data(), lse.data(), dout.data(), dq.data(),
                     dk.data(), dv.data(), s, workspace.data(), stream);
    backend::gpu_check(gpuStreamSynchronize(stream), "attention backward");
  }
};

std::vector<float> download_float(const DeviceBuffer<bf16>& b) {
  const std::vector<bf16> host = b.download();
  return to_float(host);
}

/// Forward against the reference; then backward, given the reference's o (bf16) and lse so the
/// check isolates the backward, against the reference gradients.
template <class Policy>
void check_against_reference(const AttentionShape& s) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + ", " + describe(s));
  const Inputs in = make_inputs(s, seed);
  const Reference ref = reference(s, in);

  TestStream stream;
  prepare<Policy>(s, stream);
  DeviceAttention dev(s, in, Policy::backward_workspace_bytes(s), stream);
  dev.forward<Policy>(s, stream);
  // Each error is also recorded (--gtest_output=xml|json) to follow the margins across runs.
  const auto check = [](const char* what, double error, double bound) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", error);
    ::testing::Test::RecordProperty(std::string(what) + "_relative_error", text);
    EXPECT_LE(error, bound) << what;
  };
  check("o", relative_error(download_float(dev.o), ref.o), bf16_output_bound);
  check("lse", relative_error(dev.lse.download(), ref.lse), lse_bound);

  dev.o.upload(to_bf16(ref.o_bf16));
  dev.lse.upload(ref.lse);
  dev.backward<Policy>(s, stream);
  check("dq", relative_error(download_float(dev.dq), ref.dq), bf16_output_bound);
  check("dk", relative_error(download_float(dev.dk), ref.dk), bf16_output_bound);
  check("dv", relative_error(download_float(dev.dv), ref.dv), bf16_output_bound);
}

struct PolicyName {
  template <class Policy>
  static std::string GetName(int) {
    return std::string(Policy::name);
  }
};

template <class Policy>
class AttentionPolicyTest : public ::testing::Test {};
#if TPRIMAT_GPU_HIP
using Policies = ::testing::Types<FlashAttention>;  // cuDNN is NVIDIA's
#else
using Policies = ::testing::Types<FlashAttention, CudnnAttention>;
#endif
TYPED_TEST_SUITE(AttentionPolicyTest, Policies, PolicyName);

/// Skips, with the reason, a shape the policy under test does not take (cuDNN without a
/// library or engine for it).
#define TPRIMAT_REQUIRE_SUPPORTED(Policy, shape)                                         \
  do {                                                                                   \
    if (!Policy::supports(shape))                                                        \
      GTEST_SKIP() << Policy::name << " attention does not support " << describe(shape); \
  } while (0)

// The Tiny model's attention: head_dim 16, 8 query heads over 4 KV heads, two sequences.
TYPED_TEST(AttentionPolicyTest, TinyShape) {
  TPRIMAT_REQUIRE_GPU();
  const AttentionShape s{.batch = 2, .seq = 256, .heads = 8, .kv_heads = 4, .head_dim = 16};
  TPRIMAT_REQUIRE_SUPPORTED(TypeParam, s);
  check_against_reference<TypeParam>(s);
}

// seq 200 is no multiple of any tile: partial query and key tiles at the end of each sequence.
TYPED_TEST(AttentionPolicyTest, SequenceNotTileMultipleHeadDim64) {
  TPRIMAT_REQUIRE_GPU();
  const AttentionShape s{.batch = 2, .seq = 200, .heads = 4, .kv_heads = 2, .head_dim = 64};
  TPRIMAT_REQUIRE_SUPPORTED(TypeParam, s);
  check_against_reference<TypeParam>(s);
}

// head_dim 128 uses other inner tiles than 64; 333 leaves 13 rows in the last 64-row tile.
TYPED_TEST(AttentionPolicyTest, SequenceNotTileMultipleHeadDim128) {
  TPRIMAT_REQUIRE_GPU();
  const AttentionShape s{.batch = 1, .seq = 333, .heads = 4, .kv_heads = 2, .head_dim = 128};
  TPRIMAT_REQUIRE_SUPPORTED(TypeParam, s);
  check_against_reference<TypeParam>(s);
}

// One partial tile and no grouping (heads == kv_heads), head_dim 32.
TYPED_TEST(AttentionPolicyTest, ShortSequenceNoGrouping) {
  TPRIMAT_REQUIRE_GPU();
  const AttentionShape s{.batch = 1, .seq = 33, .heads = 2, .kv_heads = 2, .head_dim = 32};
  TPRIMAT_REQUIRE_SUPPORTED(TypeParam, s);
  check_against_reference<TypeParam>(s);
}

// Llama 3.1 8B's head_dim and group (32/8 = 4 query heads per KV head), heads cut to 8/2 so that
// the double-precision reference stays quick.
TYPED_TEST(AttentionPolicyTest, LlamaHeadDim) {
  TPRIMAT_REQUIRE_GPU();
  const AttentionShape s{.batch = 1, .seq = 1024, .heads = 8, .kv_heads = 2, .head_dim = 128};
  TPRIMAT_REQUIRE_SUPPORTED(TypeParam, s);
  check_against_reference<TypeParam>(s);
}

// The benchmark's sequence length (2048) with one KV head serving four query heads.
TYPED_TEST(AttentionPolicyTest, LlamaSequenceLength) {
  TPRIMAT_REQUIRE_GPU();
  const AttentionShape s{.batch = 1, .seq = 2048, .heads = 4, .kv_heads = 1, .head_dim = 128};
  TPRIMAT_REQUIRE_SUPPORTED(TypeParam, s);
  check_against_reference<TypeParam>(s);
}

// FlashAttention promises determinism (no atomics, fixed sum orders): two runs on the same
// inputs give the same bits, forward and backward. cuDNN makes no such promise here.
TEST(FlashAttentionTest, BackwardIsDeterministic) {
  TPRIMAT_REQUIRE_GPU();
  const AttentionShape s{.batch = 2, .seq = 300, .heads = 8, .kv_heads = 2, .head_dim = 128};
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + ", " + describe(s));
  const Inputs in = make_inputs(s, seed);
  TestStream stream;
  DeviceAttention dev(s, in, FlashAttention::backward_workspace_bytes(s), stream);

  const auto run = [&] {
    dev.poison_outputs();
    dev.forward<FlashAttention>(s, stream);
    dev.backward<FlashAttention>(s, stream);
    return std::vector<std::vector<bf16>>{dev.o.download(), dev.dq.download(), dev.dk.download(),
                                          dev.dv.download()};
  };
  const auto first = run();
  const std::vector<float> first_lse = dev.lse.download();
  const auto second = run();
  const std::vector<float> second_lse = dev.lse.download();
  const char* names[] = {"o", "dq", "dk", "dv"};
  for (std::size_t t = 0; t < first.size(); ++t) {
    ASSERT_EQ(first[t].size(), second[t].size());
    EXPECT_EQ(std::memcmp(first[t].data(), second[t].data(), first[t].size() * sizeof(bf16)), 0)
        << names[t] << " differs between two runs";
    const std::vector<float> values = to_float(first[t]);
    EXPECT_TRUE(std::all_of(values.begin(), values.end(), [](float x) { return std::isfinite(x); }))
        << names[t] << " has NaN or Inf (an output left poisoned)";
  }
  EXPECT_EQ(std::memcmp(first_lse.data(), second_lse.data(), first_lse.size() * sizeof(float)), 0)
      << "lse differs between two runs";
}

/// Context parallelism's blocks (train/device/context_parallel_attention.hpp): `seq` query rows
/// over `kv_seq` keys, against Cpu::attention_block_forward / _backward in double with positions
/// that make the mask: unmasked, the queries after every key; causal at the keys' end, the
/// queries the keys' last `seq` positions.
template <class Policy>
void check_block(AttentionShape s) {
  TPRIMAT_REQUIRE_GPU();
  if (!Policy::supports(s)) GTEST_SKIP() << Policy::name << " does not support " << describe(s);
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + ", " + describe(s) + ", keys " +
               std::to_string(s.keys()));
  const Inputs in = make_inputs(s, seed);
  std::vector<int> q_pos(static_cast<std::size_t>(s.seq)), k_pos(static_cast<std::size_t>(s.keys()));
  const int first = s.mask == AttentionShape::Mask::none ? s.keys() : s.keys() - s.seq;
  for (int i = 0; i < s.seq; ++i) q_pos[std::size_t(i)] = first + i;
  for (int j = 0; j < s.keys(); ++j) k_pos[std::size_t(j)] = j;
  using backend::Cpu;
  const std::vector<double> q = widen(in.q), k = widen(in.k), v = widen(in.v),
                            dout = widen(in.dout);
  std::vector<double> o(q.size()), lse(stat_elements(s)),
      tiles(Cpu::attention_block_workspace(s.seq, s.keys()));
  Cpu::attention_block_forward<double>(q.data(), k.data(), v.data(), o.data(), lse.data(), s.batch,
                                       s.seq, q_pos.data(), s.keys(), k_pos.data(), s.heads,
                                       s.kv_heads, s.head_dim, tiles.data());
  const std::vector<float> o_bf16 = round_bf16(narrow(o));
  const std::vector<double> o_round = widen(o_bf16);
  std::vector<double> dq(q.size()), dk(k.size()), dv(v.size());
  Cpu::attention_block_backward<double>(q.data(), k.data(), v.data(), o_round.data(), lse.data(),
                                        dout.data(), dq.data(), dk.data(), dv.data(), s.batch,
                                        s.seq, q_pos.data(), s.keys(), k_pos.data(), s.heads,
                                        s.kv_heads, s.head_dim, tiles.data());
  TestStream stream;
  prepare<Policy>(s, stream);
  DeviceAttention dev(s, in, Policy::backward_workspace_bytes(s), stream);
  dev.forward<Policy>(s, stream);
  EXPECT_LE(relative_error(download_float(dev.o), narrow(o)), bf16_output_bound) << "o";
  EXPECT_LE(relative_error(dev.lse.download(), narrow(lse)), lse_bound) << "lse";
  dev.o.upload(to_bf16(o_bf16));
  dev.lse.upload(narrow(lse));
  dev.backward<Policy>(s, stream);
  EXPECT_LE(relative_error(download_float(dev.dq), narrow(dq)), bf16_output_bound) << "dq";
  EXPECT_LE(relative_error(download_float(dev.dk), narrow(dk)), bf16_output_bound) << "dk";
  EXPECT_LE(relative_error(download_float(dev.dv), narrow(dv)), bf16_output_bound) << "dv";
}

template <class Policy>
class AttentionBlockTest : public ::testing::Test {};
TYPED_TEST_SUITE(AttentionBlockTest, Policies, PolicyName);

using Mask = AttentionShape::Mask;

TYPED_TEST(AttentionBlockTest, QueryChunkOverThreeEarlierChunks) {  // Llama's groups of 4
  check_block<TypeParam>({.batch = 1, .seq = 128, .heads = 8, .kv_heads = 2, .head_dim = 128,
                          .kv_seq = 384, .mask = Mask::none});
}

TYPED_TEST(AttentionBlockTest, ChunkNotATileMultiple) {  // cuDNN <= 9.15's padding mask path
  check_block<TypeParam>({.batch = 1, .seq = 40, .heads = 4, .kv_heads = 1, .head_dim = 64,
                          .kv_seq = 120, .mask = Mask::none});
}

TYPED_TEST(AttentionBlockTest, QueryChunkThroughItsOwnKeys) {  // one call a chunk: chunk 3 of 4
  check_block<TypeParam>({.batch = 1, .seq = 128, .heads = 8, .kv_heads = 2, .head_dim = 128,
                          .kv_seq = 512, .mask = Mask::causal_end});
}

TYPED_TEST(AttentionBlockTest, QueryChunkThroughItsOwnKeysNotATileMultiple) {
  check_block<TypeParam>({.batch = 1, .seq = 40, .heads = 4, .kv_heads = 1, .head_dim = 64,
                          .kv_seq = 80, .mask = Mask::causal_end});
}

// The flash kernels' tiles are 64 rows (32 at D = 128 in the backward's inner loops): a band whose
// offset (kv_seq - seq = 130) is no tile multiple puts the mask inside tiles other than the
// diagonal one, over several query tiles; two sequences check the keys' own batch stride.
TYPED_TEST(AttentionBlockTest, BandOffsetNotATileMultiple) {
  check_block<TypeParam>({.batch = 2, .seq = 200, .heads = 8, .kv_heads = 2, .head_dim = 128,
                          .kv_seq = 330, .mask = Mask::causal_end});
}

TYPED_TEST(AttentionBlockTest, UnmaskedOverFewerKeysThanQueries) {
  check_block<TypeParam>({.batch = 2, .seq = 150, .heads = 4, .kv_heads = 4, .head_dim = 32,
                          .kv_seq = 70, .mask = Mask::none});
}

TYPED_TEST(AttentionBlockTest, SmallHeadDimBand) {
  check_block<TypeParam>({.batch = 1, .seq = 96, .heads = 6, .kv_heads = 3, .head_dim = 16,
                          .kv_seq = 161, .mask = Mask::causal_end});
}

TEST(AttentionBlockShapes, CausalMaskNeedsSquareBlocks) {
  TPRIMAT_REQUIRE_GPU();
  const AttentionShape s{.batch = 1, .seq = 64, .heads = 4, .kv_heads = 1, .head_dim = 64,
                         .kv_seq = 128};
#if !TPRIMAT_GPU_HIP
  EXPECT_FALSE(CudnnAttention::supports(s)) << "a causal mask over more keys than queries";
#endif
  EXPECT_FALSE(FlashAttention::supports(s)) << "a causal mask over more keys than queries";
  const AttentionShape fewer{.batch = 1, .seq = 128, .heads = 4, .kv_heads = 1, .head_dim = 64,
                             .kv_seq = 64, .mask = Mask::causal_end};
  EXPECT_FALSE(FlashAttention::supports(fewer)) << "the keys' end before the queries' start";
}

#if !TPRIMAT_GPU_HIP
/// What the memory plan counts for the attention backward's workspace
/// (train/attention_workspace.hpp) is what cuDNN asks at head_dim 128 (every model's), for the
/// causal calls at every sequence length the engine runs and for context parallelism's blocks: a
/// cuDNN whose graph asks otherwise fails here, not silently in a plan. At other head dims it
/// may ask less (64: no tensor of its own), never more.
TEST(CudnnAttentionTest, WorkspaceIsWhatThePlanCounts) {
  TPRIMAT_REQUIRE_GPU();
  using M = AttentionShape::Mask;
  std::vector<AttentionShape> shapes;
  for (int batch : {1, 2})
    for (int seq : {1000, 2048, 8192, 32768})
      for (auto [heads, kv] : {std::pair{32, 8}, std::pair{28, 4}, std::pair{14, 2}})
        shapes.push_back({.batch = batch, .seq = seq, .heads = heads, .kv_heads = kv,
                          .head_dim = 128});
  for (int chunk : {512, 4096, 16384})
    for (int before : {1, 3, 7})
      shapes.push_back({.batch = 1, .seq = chunk, .heads = 32, .kv_heads = 8, .head_dim = 128,
                        .kv_seq = chunk * before, .mask = M::none});
  shapes.push_back({.batch = 1, .seq = 64, .heads = 8, .kv_heads = 8, .head_dim = 64});
  int checked = 0;
  for (const AttentionShape& s : shapes) {
    if (!CudnnAttention::supports(s)) continue;
    const train::AttentionCall call{s.batch, s.seq, s.keys(), s.heads, s.head_dim};
    const auto asked = std::int64_t(CudnnAttention::backward_workspace_bytes(s));
    if (s.head_dim == 128)
      EXPECT_EQ(asked, train::cudnn_backward_workspace(call)) << describe(s) << ", keys " << s.keys();
    else
      EXPECT_LE(asked, train::cudnn_backward_workspace(call)) << describe(s) << ", keys " << s.keys();
    ++checked;
  }
  EXPECT_GT(checked, 0) << "cuDNN supported none of the shapes";
}
#endif

TEST(FlashAttentionTest, SupportsListedHeadDimsOnly) {
  TPRIMAT_REQUIRE_GPU();
  AttentionShape s{.batch = 1, .seq = 128, .heads = 8, .kv_heads = 2, .head_dim = 128};
  for (int d : {16, 32, 64, 128}) {
    s.head_dim = d;
    EXPECT_TRUE(FlashAttention::supports(s)) << describe(s);
  }
  s.head_dim = 96;
  EXPECT_FALSE(FlashAttention::supports(s)) << describe(s);
  s = {.batch = 1, .seq = 128, .heads = 6, .kv_heads = 4, .head_dim = 64};
  EXPECT_FALSE(FlashAttention::supports(s)) << "heads not a multiple of kv_heads: " << describe(s);
}

/// The flash kernels' workspace is what the memory plan counts (train/attention_workspace.hpp).
TEST(FlashAttentionTest, WorkspaceIsWhatThePlanCounts) {
  for (const AttentionShape& s :
       {AttentionShape{.batch = 2, .seq = 2048, .heads = 32, .kv_heads = 8, .head_dim = 128},
        AttentionShape{.batch = 1, .seq = 1000, .heads = 28, .kv_heads = 4, .head_dim = 128},
        AttentionShape{.batch = 3, .seq = 17, .heads = 2, .kv_heads = 1, .head_dim = 64}})
    EXPECT_EQ(std::int64_t(FlashAttention::backward_workspace_bytes(s)),
              train::flash_backward_workspace({s.batch, s.seq, s.keys(), s.heads, s.head_dim}))
        << describe(s);
}

}  // namespace
}  // namespace tprimat::testing
