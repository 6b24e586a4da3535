// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Every element-wise GPU op against backend::Cpu on the same (bf16-rounded where read as bf16)
// inputs, plus the host-side embedding grouping (which runs without a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "tprimat/backend/cpu.hpp"
#include "tprimat/backend/gpu.hpp"
#include "tprimat/backend/gpu/embedding_groups.hpp"
#include "tprimat/kernels/split_float.hpp"
#include "tprimat/model/llama31_8b.hpp"
#include "tprimat/model/spec.hpp"

// Inside tprimat::testing so that `testing::` names the GPU test helpers, not GoogleTest.
namespace tprimat::testing {
namespace {

using backend::Cpu;
using backend::Gpu;
using backend::DeviceBuffer;

/// Output bounds, named once: a bf16 output carries one rounding (2^-9 relative) on top of fp32
/// math; an fp32 output of fp32 math differs from the reference by accumulation order only.
constexpr double bf16_bound = 1e-2;
constexpr double fp32_bound = 1e-4;

std::string seed_trace(std::uint64_t seed) { return "seed " + std::to_string(seed); }

template <class T>
DeviceBuffer<T> device(const std::vector<T>& host, gpuStream_t s) {
  return testing::upload<T>(host, s);
}
/// A device buffer every byte of which is 0xFF (NaN in fp32 and bf16): an output the op should
/// write but does not then fails relative_error.
template <class T>
DeviceBuffer<T> poisoned(std::size_t n, gpuStream_t s) {
  DeviceBuffer<T> d(n, s);
  d.fill_bytes(0xFF);
  return d;
}
std::vector<float> as_float(const DeviceBuffer<bf16>& d) { return testing::to_float(d.download()); }

/// Weights as the engine holds them (Gpu::split_master): the bf16 half and the remainders, split
/// on the host with the kernels' own split_float.
struct SplitWeights {
  DeviceBuffer<bf16> hi;
  DeviceBuffer<std::uint16_t> lo;
};
SplitWeights device_split(const std::vector<float>& w, gpuStream_t s) {
  std::vector<bf16> hi(w.size());
  std::vector<std::uint16_t> lo(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    std::uint16_t hi_bits = 0;
    kernels::split_float(w[i], hi_bits, lo[i]);
    std::memcpy(&hi[i], &hi_bits, sizeof hi_bits);
  }
  return {device(hi, s), device(lo, s)};
}
/// What a kernel reads of split weights without their remainders: the bf16 halves, as fp32.
std::vector<float> high_halves(const std::vector<float>& w) {
  std::vector<float> out(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    std::uint16_t hi_bits = 0, lo_bits = 0;
    kernels::split_float(w[i], hi_bits, lo_bits);
    out[i] = kernels::join_float(hi_bits, 0);
  }
  return out;
}
/// The fp32 values of a split master on the device (exact: split_float.hpp).
std::vector<float> joined(const DeviceBuffer<bf16>& hi, const DeviceBuffer<std::uint16_t>& lo) {
  const auto h = hi.download();
  const auto l = lo.download();
  return kernels::join_floats(std::span<const bf16>(h), std::span<const std::uint16_t>(l));
}

std::vector<double> widen(std::span<const float> x) { return {x.begin(), x.end()}; }
std::vector<float> narrow(std::span<const double> x) {
  std::vector<float> out(x.size());
  std::transform(x.begin(), x.end(), out.begin(), [](double v) { return static_cast<float>(v); });
  return out;
}

std::vector<std::int32_t> random_ids(std::size_t n, int vocab, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int32_t> dist(0, vocab - 1);
  std::vector<std::int32_t> ids(n);
  for (auto& id : ids) id = dist(rng);
  return ids;
}

template <class T>
bool bit_identical(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// ---- embedding_groups (host, no GPU) ---------------------------------------------------------

TEST(EmbeddingGroups, GroupsPositionsByIdInOrder) {
  const std::vector<std::int32_t> ids = {5, 3, 5, 0, 3, 5};
  const auto g = backend::embedding_groups(ids);
  ASSERT_EQ(g.count, 3);
  EXPECT_EQ(std::vector<std::int32_t>(g.group_ids.begin(), g.group_ids.begin() + 3),
            (std::vector<std::int32_t>{0, 3, 5}));
  EXPECT_EQ(std::vector<std::int32_t>(g.offsets.begin(), g.offsets.begin() + 4),
            (std::vector<std::int32_t>{0, 1, 3, 6}));
  EXPECT_EQ(g.positions, (std::vector<std::int32_t>{3, 1, 4, 0, 2, 5}));
  // Sized for n groups whatever the count, so fixed-size (graph-captured) buffers hold them.
  EXPECT_EQ(g.group_ids.size(), ids.size());
  EXPECT_EQ(g.offsets.size(), ids.size() + 1);
  EXPECT_EQ(g.offsets.back(), 6);
}

// Tensor parallelism shifts ids into this rank's vocabulary slice and marks the others -1.
TEST(EmbeddingGroups, NegativeIdsFormNoGroup) {
  const std::vector<std::int32_t> ids = {-1, 2, -1, 0, 2};
  const auto g = backend::embedding_groups(ids);
  ASSERT_EQ(g.count, 2);
  EXPECT_EQ(g.group_ids[0], 0);
  EXPECT_EQ(g.group_ids[1], 2);
  EXPECT_EQ(g.group_ids[2], -1);
  EXPECT_EQ(std::vector<std::int32_t>(g.offsets.begin(), g.offsets.begin() + 3),
            (std::vector<std::int32_t>{2, 3, 5}));
  EXPECT_EQ(std::vector<std::int32_t>(g.positions.begin() + 2, g.positions.end()),
            (std::vector<std::int32_t>{3, 1, 4}));
  const std::vector<std::int32_t> none = {-1, -1};
  EXPECT_EQ(backend::embedding_groups(none).count, 0);
}

TEST(EmbeddingGroups, EmptyBatchHasNoGroups) {
  const auto g = backend::embedding_groups({});
  EXPECT_EQ(g.count, 0);
  ASSERT_EQ(g.offsets.size(), 1u);
  EXPECT_EQ(g.offsets[0], 0);
}

TEST(EmbeddingGroups, IntoSpansMatchesAMapAndRejectsShortSpans) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::size_t n = 5000;
  const auto ids = random_ids(n, 700, seed);
  std::map<std::int32_t, std::vector<std::int32_t>> want;
  for (std::size_t t = 0; t < n; ++t) want[ids[t]].push_back(static_cast<std::int32_t>(t));

  // Larger than needed, as a reused staging buffer would be.
  std::vector<std::int32_t> group_ids(n + 7, 42), offsets(n + 8, 42), positions(n + 7, 42);
  const int count = backend::embedding_groups_into(ids, group_ids, offsets, positions);
  ASSERT_EQ(count, static_cast<int>(want.size()));
  int u = 0;
  for (const auto& [id, pos] : want) {
    EXPECT_EQ(group_ids[u], id);
    ASSERT_EQ(offsets[u + 1] - offsets[u], static_cast<std::int32_t>(pos.size()));
    EXPECT_TRUE(std::equal(pos.begin(), pos.end(), positions.begin() + offsets[u]));
    ++u;
  }
  EXPECT_EQ(offsets[count], static_cast<std::int32_t>(n));

  std::vector<std::int32_t> short_offsets(n);
  EXPECT_THROW(backend::embedding_groups_into(ids, group_ids, short_offsets, positions),
               std::invalid_argument);
}

// ---- embedding ---------------------------------------------------------------------------

TEST(GpuElementwise, EmbeddingForwardGathersRows) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  const int vocab = 97;
  const std::int64_t n = 777;
  for (int hidden : {4096, 130}) {  // 130: rows not 16-byte aligned, the scalar path
    SCOPED_TRACE("hidden " + std::to_string(hidden));
    const auto ids = random_ids(n, vocab, seed);
    const auto table = testing::random_normal(std::size_t(vocab) * hidden, seed + 1);
    auto d_ids = device(ids, s);
    auto d_table = device_split(table, s);
    auto d_out = poisoned<float>(n * hidden, s);
    Gpu::embedding_forward(d_ids.data(), n, d_table.hi.data(), d_table.lo.data(), hidden,
                            d_out.data(), s);
    std::vector<float> want(n * hidden);
    Cpu::embedding_forward(ids.data(), n, table.data(), hidden, want.data());
    EXPECT_EQ(relative_error(d_out.download(), want), 0.0)
        << "a gather of joined split weights: exact";
    // Without the remainders (as the engine reads it): the bf16 halves, exactly.
    Gpu::embedding_forward(d_ids.data(), n, d_table.hi.data(), nullptr, hidden, d_out.data(), s);
    Cpu::embedding_forward(ids.data(), n, high_halves(table).data(), hidden, want.data());
    EXPECT_EQ(relative_error(d_out.download(), want), 0.0) << "a gather of the bf16 halves";
    // A vocabulary slice (TP): ids outside it are negative and give rows of zeros.
    std::vector<std::int32_t> sliced(ids);
    for (std::size_t t = 0; t < sliced.size(); t += 3) sliced[t] = -1;
    auto d_sliced = device(sliced, s);
    Gpu::embedding_forward(d_sliced.data(), n, d_table.hi.data(), d_table.lo.data(), hidden,
                            d_out.data(), s);
    Cpu::embedding_forward(ids.data(), n, table.data(), hidden, want.data());
    for (std::size_t t = 0; t < sliced.size(); t += 3)
      std::fill_n(want.begin() + t * hidden, hidden, 0.0f);
    EXPECT_EQ(relative_error(d_out.download(), want), 0.0) << "negative ids: zero rows";
  }
}

TEST(GpuElementwise, EmbeddingBackwardIsDeterministicWithRepeatedIds) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  const int vocab = 50;  // 2000 tokens over 50 ids: every id repeats ~40 times
  const std::int64_t n = 2000;
  for (int hidden : {4096, 130}) {
    SCOPED_TRACE("hidden " + std::to_string(hidden));
    const auto ids = random_ids(n, vocab, seed);
    const auto dout = testing::random_normal(n * hidden, seed + 1);
    const auto dtable0 = testing::random_normal(std::size_t(vocab) * hidden, seed + 2);
    // Buffers of the worst-case size n with max_groups = n, as the engine allocates them; the
    // entries past the count (group id -1) must never be read.
    const auto groups = backend::embedding_groups(ids);
    auto d_group_ids = device(groups.group_ids, s);
    auto d_offsets = device(groups.offsets, s);
    auto d_positions = device(groups.positions, s);
    auto d_count = device(std::vector<std::int32_t>{groups.count}, s);
    auto d_dout = device(dout, s);

    auto run = [&] {
      auto d_dtable = device(dtable0, s);
      Gpu::embedding_backward(d_group_ids.data(), d_offsets.data(), d_positions.data(),
                               d_count.data(), n, d_dout.data(), hidden, d_dtable.data(), s);
      return d_dtable.download();
    };
    const auto first = run();
    const auto second = run();

    auto want = dtable0;  // the op accumulates into dtable
    Cpu::embedding_backward(ids.data(), n, dout.data(), hidden, want.data());
    EXPECT_LE(relative_error(first, want), fp32_bound) << "fp32 sums of fp32 rows";
    EXPECT_TRUE(bit_identical(first, second)) << "two backward runs must agree bit for bit";
  }
}

/// The grid is sized by max_groups, never by the data: one captured graph serves batches with
/// different group counts once the host refreshes the group buffers in place.
TEST(GpuElementwise, EmbeddingBackwardReplaysFromACapturedGraph) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  const int vocab = 300, hidden = 256;
  const std::int64_t n = 1000;
  DeviceBuffer<std::int32_t> d_group_ids(n, s), d_offsets(n + 1, s), d_positions(n, s),
      d_count(1, s);
  DeviceBuffer<float> d_dout(n * hidden, s), d_dtable(std::size_t(vocab) * hidden, s);

  gpuGraph_t graph = nullptr;
  gpuGraphExec_t exec = nullptr;
  backend::gpu_check(gpuStreamBeginCapture(s, gpuStreamCaptureModeThreadLocal), "capture");
  Gpu::embedding_backward(d_group_ids.data(), d_offsets.data(), d_positions.data(), d_count.data(),
                           n, d_dout.data(), hidden, d_dtable.data(), s);
  backend::gpu_check(gpuStreamEndCapture(s, &graph), "end capture");
  backend::gpu_check(gpuGraphInstantiateWithFlags(&exec, graph, 0), "instantiate");

  for (int ids_in_use : {vocab, 7}) {  // ~290 groups, then 7
    SCOPED_TRACE("ids in use " + std::to_string(ids_in_use));
    const auto ids = random_ids(n, ids_in_use, seed + ids_in_use);
    const auto groups = backend::embedding_groups(ids);
    const auto dout = testing::random_normal(n * hidden, seed + 1);
    const auto dtable0 = testing::random_normal(std::size_t(vocab) * hidden, seed + 2);
    d_group_ids.upload(groups.group_ids);
    d_offsets.upload(groups.offsets);
    d_positions.upload(groups.positions);
    d_count.upload(std::vector<std::int32_t>{groups.count});
    d_dout.upload(dout);
    d_dtable.upload(dtable0);
    backend::gpu_check(gpuGraphLaunch(exec, s), "graph launch");
    auto want = dtable0;
    Cpu::embedding_backward(ids.data(), n, dout.data(), hidden, want.data());
    EXPECT_LE(relative_error(d_dtable.download(), want), fp32_bound) << "fp32 sums of fp32 rows";
  }
  (void)gpuGraphExecDestroy(exec);
  (void)gpuGraphDestroy(graph);
}

// ---- RMSNorm -----------------------------------------------------------------------------

struct NormCase {
  std::int64_t n;
  int h;
};
// Llama/Qwen/Tiny widths (the backward holds their rows in registers); 1500 rows > the 1024 row
// chunks of the backward; 130: scalar path; 5120: the backward's streaming kernel, dg in shared
// memory; 16384: dg accumulated in the partial rows (past rmsnorm_shared_columns).
const NormCase norm_cases[] = {{300, 4096}, {64, 3584}, {1500, 128}, {33, 130}, {40, 5120},
                               {20, 16384}};

TEST(GpuElementwise, RmsnormForward) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  const float eps = 1e-5f;
  for (const auto [n, h] : norm_cases) {
    SCOPED_TRACE("n " + std::to_string(n) + " h " + std::to_string(h));
    const auto x = testing::random_normal(n * h, seed, 3.0f);
    auto g = testing::random_normal(h, seed + 1, 0.1f);
    for (auto& v : g) v += 1.0f;
    auto d_x = device(x, s);
    auto d_g = device_split(g, s);
    auto d_y = poisoned<bf16>(n * h, s);
    auto d_rstd = poisoned<float>(n, s);
    Gpu::rmsnorm_forward(d_x.data(), d_g.hi.data(), d_g.lo.data(), n, h, eps, d_y.data(),
                          d_rstd.data(), s);

    std::vector<double> y(n * h), rstd(n);
    Cpu::rmsnorm_forward(widen(x).data(), widen(g).data(), n, h, double{eps}, y.data(),
                         rstd.data());
    EXPECT_LE(relative_error(as_float(d_y), narrow(y)), bf16_bound) << "bf16 y";
    EXPECT_LE(relative_error(d_rstd.download(), narrow(rstd)), fp32_bound) << "fp32 rstd";
    // Without the remainders (as the engine reads it): the bf16 gain, same bound.
    Gpu::rmsnorm_forward(d_x.data(), d_g.hi.data(), nullptr, n, h, eps, d_y.data(),
                          d_rstd.data(), s);
    Cpu::rmsnorm_forward(widen(x).data(), widen(high_halves(g)).data(), n, h, double{eps},
                         y.data(), rstd.data());
    EXPECT_LE(relative_error(as_float(d_y), narrow(y)), bf16_bound) << "bf16 y, bf16 gain";
  }
}

TEST(GpuElementwise, RmsnormBackwardAccumulatesDxAndDg) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  for (const auto [n, h] : norm_cases) {
    SCOPED_TRACE("n " + std::to_string(n) + " h " + std::to_string(h));
    const auto x = testing::random_normal(n * h, seed, 3.0f);
    auto g = testing::random_normal(h, seed + 1, 0.1f);
    for (auto& v : g) v += 1.0f;
    const auto dy = testing::random_normal(n * h, seed + 2);
    const auto dx0 = testing::random_normal(n * h, seed + 3);  // the residual's gradient so far
    const auto dg0 = testing::random_normal(h, seed + 4);
    std::vector<float> y(n * h), rstd(n);
    Cpu::rmsnorm_forward(x.data(), g.data(), n, h, 1e-5, y.data(), rstd.data());

    auto d_x = device(x, s);
    auto d_g = device_split(g, s);
    auto d_rstd = device(rstd, s);
    auto d_dy = device(dy, s);
    auto d_dx = device(dx0, s);
    auto d_dg = device(dg0, s);
    auto d_dx_bf16 = poisoned<bf16>(n * h, s);
    auto d_partials = poisoned<float>(Gpu::rmsnorm_partials(n, h), s);
    Gpu::rmsnorm_backward(d_x.data(), d_g.hi.data(), d_g.lo.data(), d_rstd.data(), d_dy.data(),
                           n, h, d_dx.data(), d_dx_bf16.data(), d_dg.data(), d_partials.data(), s);

    // Reference in fp64 on the same inputs: both sums (u . x per row, dg over n rows) then have
    // a negligible error of their own.
    auto dx = widen(dx0), dg = widen(dg0);
    Cpu::rmsnorm_backward(widen(x).data(), widen(g).data(), widen(rstd).data(), widen(dy).data(), n,
                          h, dx.data(), dg.data());
    EXPECT_LE(relative_error(d_dx.download(), narrow(dx)), fp32_bound) << "fp32 dx";
    EXPECT_LE(relative_error(as_float(d_dx_bf16), narrow(dx)), bf16_bound) << "bf16 copy of dx";
    EXPECT_LE(relative_error(d_dg.download(), narrow(dg)), fp32_bound)
        << "fp32 dg: sum over n rows in fp32, fixed order";
  }
}

// ---- RoPE --------------------------------------------------------------------------------

TEST(GpuElementwise, RopeForwardAndBackwardWithLlama3Scaling) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  const int seq = 512, batch = 2, heads = 3;
  const std::int64_t rows = std::int64_t{batch} * seq;
  // 128: Llama 3.1's own head; 16: the llama3 rule's kept, smoothed and scaled wavelengths all
  // present in 8 frequencies (both packs of 8); 24: half = 12, packs of 4; 12: half = 6, the
  // unvectorised path.
  for (int head_dim : {128, 16, 24, 12}) {
    SCOPED_TRACE("head_dim " + std::to_string(head_dim));
    model::Dims d = model::dims<model::Llama31_8B>();
    ASSERT_TRUE(d.rope_scaling.enabled());
    d.head_dim = head_dim;
    std::vector<float> cos_t(std::size_t(seq) * head_dim / 2), sin_t(cos_t.size());
    Cpu::rope_tables(d, seq, cos_t.data(), sin_t.data());
    auto d_cos = device(cos_t, s);
    auto d_sin = device(sin_t, s);
    const std::int64_t count = rows * heads * head_dim;

    for (bool backward : {false, true}) {
      SCOPED_TRACE(backward ? "backward" : "forward");
      const auto x = round_bf16(testing::random_normal(count, seed + backward));
      auto d_x = device(testing::to_bf16(x), s);
      auto want = x;
      if (backward) {
        Gpu::rope_backward(d_x.data(), rows, seq, heads, head_dim, d_cos.data(), d_sin.data(), s);
        Cpu::rope_backward(want.data(), rows, seq, heads, head_dim, cos_t.data(), sin_t.data());
      } else {
        Gpu::rope_forward(d_x.data(), rows, seq, heads, head_dim, d_cos.data(), d_sin.data(), s);
        Cpu::rope_forward(want.data(), rows, seq, heads, head_dim, cos_t.data(), sin_t.data());
      }
      EXPECT_LE(relative_error(as_float(d_x), want), bf16_bound) << "bf16 in place";
    }
  }
}

// ---- SwiGLU ------------------------------------------------------------------------------

TEST(GpuElementwise, SwigluForwardAndBackward) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  const std::int64_t n = 3 * 14336 + 5;  // a tail that does not fill a pack of 8
  const auto gate = round_bf16(testing::random_normal(n, seed, 3.0f));
  const auto up = round_bf16(testing::random_normal(n, seed + 1));
  const auto dh = round_bf16(testing::random_normal(n, seed + 2));
  std::vector<float> h(n), dgate(n), dup(n);
  Cpu::swiglu_forward(gate.data(), up.data(), h.data(), n);
  Cpu::swiglu_backward(gate.data(), up.data(), dh.data(), dgate.data(), dup.data(), n);

  // offset 1: every pointer 2 bytes past a 16-byte boundary, the scalar path.
  for (int offset : {0, 1}) {
    SCOPED_TRACE("offset " + std::to_string(offset));
    auto padded = [&](const std::vector<float>& v) {
      std::vector<bf16> out(offset);
      const auto b = testing::to_bf16(v);
      out.insert(out.end(), b.begin(), b.end());
      return device(out, s);
    };
    auto d_gate = padded(gate), d_up = padded(up), d_dh = padded(dh);
    auto d_h = poisoned<bf16>(n + offset, s);
    auto d_dgate = poisoned<bf16>(n + offset, s);
    auto d_dup = poisoned<bf16>(n + offset, s);
    auto d_h_again = poisoned<bf16>(n + offset, s);
    auto d_dgate_again = poisoned<bf16>(n + offset, s);
    auto d_dup_again = poisoned<bf16>(n + offset, s);
    Gpu::swiglu_forward(d_gate.data() + offset, d_up.data() + offset, d_h.data() + offset, n, s);
    Gpu::swiglu_backward(d_gate.data() + offset, d_up.data() + offset, d_dh.data() + offset,
                          d_dgate.data() + offset, d_dup.data() + offset, nullptr, n, s);
    // The engine's call: the backward also recomputes h, which must be the forward's exactly.
    Gpu::swiglu_backward(d_gate.data() + offset, d_up.data() + offset, d_dh.data() + offset,
                          d_dgate_again.data() + offset, d_dup_again.data() + offset,
                          d_h_again.data() + offset, n, s);
    auto tail = [&](const DeviceBuffer<bf16>& d) {
      auto v = as_float(d);
      return std::vector<float>(v.begin() + offset, v.end());
    };
    EXPECT_LE(relative_error(tail(d_h), h), bf16_bound) << "bf16 h";
    EXPECT_LE(relative_error(tail(d_dgate), dgate), bf16_bound) << "bf16 dgate";
    EXPECT_LE(relative_error(tail(d_dup), dup), bf16_bound) << "bf16 dup";
    EXPECT_TRUE(bit_identical(tail(d_h_again), tail(d_h))) << "h from the backward";
    EXPECT_TRUE(bit_identical(tail(d_dgate_again), tail(d_dgate))) << "dgate with h";
    EXPECT_TRUE(bit_identical(tail(d_dup_again), tail(d_dup))) << "dup with h";
  }
}

// ---- bias --------------------------------------------------------------------------------

TEST(GpuElementwise, BiasBackwardAccumulatesColumnSums) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  struct Case {
    std::int64_t rows, cols;
    std::int64_t offset = 0;  ///< elements dy starts past its buffer's (aligned) start
  };
  // Qwen 2.5 7B's q (3584: two rows a block) and k/v (512: 16 rows a block) at 4096 tokens, more
  // rows than the 128 row chunks; the fused q/k/v width; a row over three blocks; packs of 2
  // (36 columns), of 1 (odd widths, or a dy that starts mid-pack); fewer rows than a block reads.
  for (const auto [rows, cols, offset] :
       {Case{4096, 3584}, Case{4096, 512}, Case{2048, 4608}, Case{64, 20000}, Case{300, 36},
        Case{1000, 35}, Case{37, 512}, Case{513, 512, 1}, Case{3, 40}}) {
    SCOPED_TRACE("rows " + std::to_string(rows) + " cols " + std::to_string(cols) + " offset " +
                 std::to_string(offset));
    const auto dy = round_bf16(testing::random_normal(rows * cols, seed));
    const auto dbias0 = testing::random_normal(cols, seed + 1);
    std::vector<float> padded(static_cast<std::size_t>(offset), 0.0f);
    padded.insert(padded.end(), dy.begin(), dy.end());
    auto d_dy = device(testing::to_bf16(padded), s);
    auto d_dbias = device(dbias0, s);
    auto d_partials = poisoned<float>(Gpu::bias_partials(rows, cols), s);
    Gpu::bias_backward(d_dy.data() + offset, rows, cols, d_dbias.data(), d_partials.data(), s);
    auto want = widen(dbias0);
    Cpu::bias_backward(widen(dy).data(), rows, cols, want.data());
    const std::vector<float> got = d_dbias.download();
    EXPECT_LE(relative_error(got, narrow(want)), fp32_bound)
        << "fp32 sums of bf16 values vs an fp64 reference";
    auto d_again = device(dbias0, s);
    Gpu::bias_backward(d_dy.data() + offset, rows, cols, d_again.data(), d_partials.data(), s);
    EXPECT_TRUE(bit_identical(d_again.download(), got)) << "the same sums run to run";
  }
}

// ---- cross-entropy -----------------------------------------------------------------------

/// A cross-entropy case: n rows of bf16-representable logits (stddev 3: softmaxes far from
/// uniform, so the gradient is not all -grad_scale spikes), targets, grad_scale = 1 / n, and the
/// fp64 reference one row at a time (per-row losses, the gradient in place of the logits).
struct CrossEntropyCase {
  std::vector<float> logits;
  std::vector<std::int32_t> targets;
  float grad_scale;
  std::vector<double> grad, loss;
};
CrossEntropyCase cross_entropy_case(std::int64_t n, int vocab, std::uint64_t seed) {
  CrossEntropyCase c;
  c.logits = round_bf16(testing::random_normal(n * vocab, seed, 3.0f));
  c.targets = random_ids(n, vocab, seed + 1);
  c.grad_scale = 1.0f / static_cast<float>(n);
  c.grad = widen(c.logits);
  c.loss.resize(n);
  for (std::int64_t t = 0; t < n; ++t)
    c.loss[t] = Cpu::cross_entropy(c.grad.data() + t * vocab, c.targets.data() + t, 1, vocab,
                                   double{c.grad_scale}, true);
  return c;
}

TEST(GpuElementwise, CrossEntropyLossAndGradient) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  struct Case {
    std::int64_t n;
    int vocab;
  };
  // Llama 3's vocabulary; a small one (fewer packs than threads); an odd one (scalar path).
  for (const auto [n, vocab] : {Case{24, 128256}, Case{700, 256}, Case{100, 1001}}) {
    SCOPED_TRACE("n " + std::to_string(n) + " vocab " + std::to_string(vocab));
    const CrossEntropyCase c = cross_entropy_case(n, vocab, seed);
    const auto& [logits, targets, grad_scale, grad, loss] = c;

    auto d_targets = device(targets, s);
    for (bool with_grad : {true, false}) {
      SCOPED_TRACE(with_grad ? "with_grad" : "loss only");
      const auto logits_bf16 = testing::to_bf16(logits);
      auto d_logits = device(logits_bf16, s);
      auto d_loss = poisoned<float>(n, s);
      Gpu::cross_entropy(d_logits.data(), d_targets.data(), n, vocab, grad_scale, with_grad,
                          d_loss.data(), s);
      const auto got_loss = d_loss.download();
      EXPECT_LE(relative_error(got_loss, narrow(loss)), fp32_bound)
          << "fp32 per-row logsumexp of bf16 logits vs fp64";
      // The step's loss: the rows' sum (in fp64 on the host) against the reference's own sum.
      double got_sum = 0;
      for (float l : got_loss) got_sum += l;
      auto rows = widen(logits);
      const double want_sum =
          Cpu::cross_entropy(rows.data(), targets.data(), n, vocab, double{grad_scale}, false);
      EXPECT_LE(std::abs(got_sum - want_sum) / std::abs(want_sum), fp32_bound)
          << "loss sum, fp32 rows vs fp64";
      if (with_grad) {
        EXPECT_LE(relative_error(as_float(d_logits), narrow(grad)), bf16_bound) << "bf16 gradient";
      } else {
        EXPECT_TRUE(bit_identical(d_logits.download(), logits_bf16))
            << "without with_grad the logits stay untouched";
      }
    }
  }
}

/// Vocab-parallel: the vocabulary split into `ranks` slices, each slice's logits in its own
/// buffer as a TP rank holds them; part 1 on every slice, the statistics gathered rank after rank
/// (the all-gather's layout), part 2 on every slice. Bounds: every slice's row losses identical
/// (each combines the same statistics in the same order), each against fp64 like the fused
/// kernel (fp32_bound), the gradient slices together against fp64 (bf16_bound); one slice is the
/// fused kernel exactly.
TEST(GpuElementwise, VocabParallelCrossEntropyMatchesTheWholeVocabulary) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  constexpr int per_row = Gpu::cross_entropy_stats_per_row;
  struct Case {
    std::int64_t n;
    int vocab, ranks;
  };
  // Llama 3's vocabulary over TP 2 and 8; Qwen's over 4; an odd slice (scalar path); one slice.
  for (const auto [n, vocab, ranks] : {Case{24, 128256, 2}, Case{16, 128256, 8},
                                       Case{20, 152064, 4}, Case{50, 1002, 2}, Case{40, 256, 1}}) {
    SCOPED_TRACE("n " + std::to_string(n) + " vocab " + std::to_string(vocab) + " over " +
                 std::to_string(ranks));
    const CrossEntropyCase c = cross_entropy_case(n, vocab, seed);
    const auto& [logits, targets, grad_scale, grad, loss] = c;

    const int slice = vocab / ranks;
    auto d_targets = device(targets, s);
    auto d_stats = poisoned<float>(std::int64_t{ranks} * n * per_row, s);
    std::vector<DeviceBuffer<bf16>> d_slices;
    for (int r = 0; r < ranks; ++r) {
      std::vector<float> part(n * slice);
      for (std::int64_t t = 0; t < n; ++t)
        std::copy_n(logits.begin() + t * vocab + r * slice, slice, part.begin() + t * slice);
      d_slices.push_back(device(testing::to_bf16(part), s));
      Gpu::cross_entropy_stats(d_slices[r].data(), d_targets.data(), n, slice, r * slice,
                                d_stats.data() + std::int64_t{r} * n * per_row, s);
    }
    std::vector<float> first_loss;
    std::vector<float> got_grad(n * vocab);
    for (int r = 0; r < ranks; ++r) {
      auto d_loss = poisoned<float>(n, s);
      Gpu::cross_entropy_combine(d_slices[r].data(), d_targets.data(), n, slice, r * slice,
                                  d_stats.data(), ranks, grad_scale, true, d_loss.data(), s);
      const auto got_loss = d_loss.download();
      if (r == 0) first_loss = got_loss;
      EXPECT_TRUE(bit_identical(got_loss, first_loss)) << "rank " << r << "'s losses";
      EXPECT_LE(relative_error(got_loss, narrow(loss)), fp32_bound) << "rank " << r;
      const auto g = as_float(d_slices[r]);
      for (std::int64_t t = 0; t < n; ++t)
        std::copy_n(g.begin() + t * slice, slice, got_grad.begin() + t * vocab + r * slice);
    }
    EXPECT_LE(relative_error(got_grad, narrow(grad)), bf16_bound) << "bf16 gradient";
    if (ranks == 1) {  // one slice is the fused kernel, bit for bit
      auto d_whole = device(testing::to_bf16(logits), s);
      auto d_loss = poisoned<float>(n, s);
      Gpu::cross_entropy(d_whole.data(), d_targets.data(), n, vocab, grad_scale, true,
                          d_loss.data(), s);
      EXPECT_TRUE(bit_identical(d_loss.download(), first_loss));
      EXPECT_TRUE(bit_identical(d_whole.download(), d_slices[0].download()));
    }
  }
}

// ---- reduce_sum --------------------------------------------------------------------------

TEST(GpuElementwise, ReduceSumPlainAndSquaresDeterministic) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  const std::int64_t n = 1'000'003;
  const auto x = testing::random_normal(n + 1, seed);
  auto d_x = device(x, s);
  auto d_partials = poisoned<double>(Gpu::reduce_partials, s);

  for (int offset : {0, 1}) {  // 1: not 16-byte aligned, the scalar loads
    for (bool squares : {false, true}) {
      SCOPED_TRACE(std::string(squares ? "squares" : "plain") + " offset " +
                   std::to_string(offset));
      const float* xs = x.data() + offset;
      double want = 0, magnitude = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const double v = squares ? double{xs[i]} * xs[i] : double{xs[i]};
        want += v;
        magnitude += std::abs(v);
      }
      if (squares) {
        EXPECT_EQ(want, Cpu::sum_squares(xs, n));
      }

      auto run = [&](bool accumulate, double start) {
        auto d_out = device(std::vector<double>{start}, s);
        Gpu::reduce_sum(d_x.data() + offset, n, squares, accumulate, d_out.data(),
                         d_partials.data(), s);
        return d_out.download()[0];
      };
      // Both sums in fp64 of the same n values in different orders: at most n * 2^-53 of the
      // sum of magnitudes apart (~1e-10), far less in practice.
      const double bound = 1e-10 * magnitude;
      const double overwritten = run(false, NAN);  // NaN start: the result must not read it
      EXPECT_LE(std::abs(overwritten - want), bound) << "fp64 sum, overwrite";
      const double accumulated = run(true, 12.5);
      EXPECT_LE(std::abs(accumulated - (12.5 + want)), bound) << "fp64 sum, accumulate";
      const double again = run(false, NAN);
      EXPECT_EQ(std::memcmp(&overwritten, &again, sizeof(double)), 0)
          << "the fixed grid makes the sum bit-identical run to run";
    }
  }
}

TEST(GpuElementwise, SegmentedSumOfSquaresOverTwoStreams) {
  // The gradient norm's form: segments of uneven length (one empty, one unaligned) reduced into
  // their own partials on a second stream, then summed in order on the first.
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s, side;
  const std::vector<std::int64_t> bounds{0, 1, 1, 70'001, 1'000'003};  // segment starts, end
  const std::int64_t n = bounds.back();
  const auto x = testing::random_normal(n, seed);
  auto d_x = device(x, s);
  const int segments = static_cast<int>(bounds.size()) - 1;
  auto d_partials = poisoned<double>(std::int64_t{segments} * Gpu::reduce_partials, s);
  double want = 0, magnitude = 0;
  for (const float v : x) {
    want += double{v} * v;
    magnitude += double{v} * v;
  }
  auto run = [&] {
    auto d_out = device(std::vector<double>{NAN}, s);
    backend::gpu_check(gpuStreamSynchronize(s), "sync");  // inputs on `s`, read on `side`
    for (int k = segments - 1; k >= 0; --k)  // last first, as the backward pass finishes them
      Gpu::reduce_sum_partials(d_x.data() + bounds[k], bounds[k + 1] - bounds[k], true,
                                d_partials.data() + std::int64_t{k} * Gpu::reduce_partials, side);
    backend::gpu_check(gpuStreamSynchronize(side), "sync");
    Gpu::sum_partials(d_partials.data(), segments * Gpu::reduce_partials, d_out.data(), s);
    return d_out.download()[0];
  };
  const double got = run();
  // fp64 sums of the same n squares in different orders: n * 2^-53 of the magnitude (~1e-10).
  EXPECT_LE(std::abs(got - want), 1e-10 * magnitude);
  const double again = run();
  EXPECT_EQ(std::memcmp(&got, &again, sizeof(double)), 0) << "fixed segments and grids";
}

// ---- to_bf16 -----------------------------------------------------------------------------

TEST(GpuElementwise, ToBf16RoundsToNearestEven) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  const std::int64_t n = 1'000'003;
  const auto src = testing::random_normal(n + 1, seed, 10.0f);
  auto d_src = device(src, s);
  for (int offset : {0, 1}) {
    SCOPED_TRACE("offset " + std::to_string(offset));
    auto d_dst = poisoned<bf16>(n, s);
    Gpu::to_bf16(d_src.data() + offset, d_dst.data(), n, s);
    const auto want =
        testing::to_bf16(std::span<const float>(src).subspan(offset, static_cast<std::size_t>(n)));
    EXPECT_TRUE(bit_identical(d_dst.download(), want))
        << "the device and the host both round to nearest even: exact";
  }
}

// ---- add_bf16 (sequence parallelism's residual add) -----------------------------------------

TEST(GpuElementwise, AddBf16AddsTheWidenedSumToTheResidualInPlaceOrNot) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  const std::int64_t n = 100'003;  // odd: the vector path's tail
  const auto residual = testing::random_normal(n + 1, seed, 1.0f);
  const auto y = testing::to_bf16(testing::random_normal(n + 1, seed + 1, 0.1f));
  auto d_y = device(y, s);
  for (int offset : {0, 1}) {  // 1: misaligned, the scalar kernel
    SCOPED_TRACE("offset " + std::to_string(offset));
    auto d_res = device(residual, s);
    auto d_out = poisoned<float>(n, s);
    Gpu::add_bf16(d_res.data() + offset, d_y.data() + offset, d_out.data(), n, s);
    Gpu::add_bf16(d_res.data() + offset, d_y.data() + offset, d_res.data() + offset, n, s);
    const auto out = d_out.download(), in_place = d_res.download();
    const auto widened = testing::to_float(std::span<const bf16>(y));
    for (std::int64_t i = 0; i < n; ++i) {
      // One fp32 addition of the exact widening of a bf16: bit for bit the host's.
      const float want = residual[offset + i] + widened[offset + i];
      ASSERT_EQ(out[i], want) << "element " << i;
      ASSERT_EQ(in_place[offset + i], want) << "element " << i << " in place";
    }
  }
}

// ---- accumulate (ZeRO-2's gradient shard sums) ------------------------------------------------

TEST(GpuElementwise, AccumulateAddsInFp32BitForBit) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  const std::int64_t n = 100'003;  // odd: the vector path's tail
  const auto x = testing::random_normal(n + 1, seed, 1.0f);
  const auto y = testing::random_normal(n + 1, seed + 1, 0.1f);
  auto d_y = device(y, s);
  for (int offset : {0, 1}) {  // 1: misaligned, the scalar kernel
    SCOPED_TRACE("offset " + std::to_string(offset));
    auto d_x = device(x, s);
    Gpu::accumulate(d_x.data() + offset, d_y.data() + offset, n, s);
    const auto out = d_x.download();
    const std::int64_t outside = offset == 0 ? n : 0;  // the one element past the range
    ASSERT_EQ(out[outside], x[outside]) << "outside the range: untouched";
    for (std::int64_t i = 0; i < n; ++i)  // one fp32 addition: the host's, bit for bit
      ASSERT_EQ(out[offset + i], x[offset + i] + y[offset + i]) << "element " << i;
  }
}

// ---- init ----------------------------------------------------------------------------------

// A tensor-parallel shard draws its block of a tensor by the element's place in the whole one.
TEST(GpuElementwise, InitNormalBlockIsTheWholeTensorsBlock) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  const std::int64_t rows = 300, cols = 1000, first = 12345;
  auto d_whole = poisoned<float>(rows * cols, s);
  Gpu::init_normal(d_whole.data(), rows * cols, 0.02f, seed, first, s);
  const auto whole = d_whole.download();
  double sum = 0, squares = 0;
  for (float x : whole) {
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    squares += double(x) * x;
  }
  const double mean = sum / whole.size(), sd = std::sqrt(squares / whole.size() - mean * mean);
  EXPECT_LE(std::abs(mean), 5 * 0.02 / std::sqrt(double(whole.size()))) << "N(0, 0.02^2) draws";
  EXPECT_NEAR(sd, 0.02, 0.02 * 0.01);
  // Columns [400, 650): a column-parallel shard; rows [100, 200): a row-parallel one.
  const std::int64_t c0 = 400, block_cols = 250, r0 = 100, block_rows = 100;
  auto d_block = poisoned<float>(rows * block_cols, s);
  Gpu::init_normal_block(d_block.data(), rows, block_cols, cols, 0.02f, seed, first + c0, s);
  const auto block = d_block.download();
  std::int64_t differ = 0;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < block_cols; ++c)
      differ += block[r * block_cols + c] != whole[r * cols + c0 + c];
  EXPECT_EQ(differ, 0) << "the block of columns is the whole tensor's, exactly";
  auto d_rows = poisoned<float>(block_rows * cols, s);
  Gpu::init_normal_block(d_rows.data(), block_rows, cols, cols, 0.02f, seed,
                          first + r0 * cols, s);
  const auto some_rows = d_rows.download();
  EXPECT_TRUE(std::equal(some_rows.begin(), some_rows.end(), whole.begin() + r0 * cols))
      << "the block of rows is the whole tensor's, exactly";
}

// ---- split master --------------------------------------------------------------------------

TEST(GpuElementwise, SplitMasterMatchesTheHostSplitAndJoinsBackExactly) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  const std::int64_t n = 1'000'003;
  auto src = testing::random_normal(n, seed, 0.02f);
  // Exact ties (low half 0x8000), zeros, a denormal and large values among the random ones.
  const std::uint32_t specials[] = {0x3F808000u, 0xBF808000u, 0x00000000u, 0x80000000u,
                                    0x00000001u, 0x7F7FFFFFu, 0x3C23D70Au};
  for (std::size_t i = 0; i < std::size(specials); ++i)
    std::memcpy(&src[i * 1000], &specials[i], sizeof(float));
  auto d_src = device(src, s);
  auto d_hi = poisoned<bf16>(n, s);
  auto d_lo = poisoned<std::uint16_t>(n, s);
  Gpu::split_master(d_src.data(), d_hi.data(), d_lo.data(), n, s);
  const auto want = device_split(src, s);
  EXPECT_TRUE(bit_identical(d_hi.download(), want.hi.download())) << "bf16 halves";
  EXPECT_TRUE(bit_identical(d_lo.download(), want.lo.download())) << "remainders";
  EXPECT_TRUE(bit_identical(joined(d_hi, d_lo), src)) << "join(split(w)) == w, bit for bit";
}

// ---- AdamW -------------------------------------------------------------------------------

TEST(GpuElementwise, AdamwMatchesCpuWithClippingAndMixedDecay) {
  TPRIMAT_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  TestStream s;
  // Sizes that put tensor boundaries inside the kernel's packs of 4; decay mixed as for
  // matrices (1) and norm gains (0).
  const std::vector<std::int64_t> sizes = {1000, 4097, 3, 2050, 513, 4096};
  const std::vector<std::uint8_t> decay = {1, 0, 1, 0, 1, 0};
  std::vector<std::int64_t> ends(sizes.size());
  std::int64_t n = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) ends[k] = n += sizes[k];

  const auto master0 = testing::random_normal(n, seed, 0.05f);
  const auto grads = testing::random_normal(n, seed + 1);
  const auto m0 = testing::random_normal(n, seed + 2, 0.01f);
  auto v0 = testing::random_normal(n, seed + 3, 1e-4f);
  for (auto& v : v0) v = std::abs(v);
  const double grad_sum_squares = Cpu::sum_squares(grads.data(), n);  // norm ~ 107

  const int step = 10;
  backend::OptimizerScalars sc;
  sc.lr = 1e-3f;
  sc.weight_decay = 0.5f;  // large, so a decay flag read from the wrong tensor shows
  sc.bias_correction1 = static_cast<float>(1.0 - std::pow(double{sc.beta1}, step));
  sc.bias_correction2 = static_cast<float>(1.0 - std::pow(double{sc.beta2}, step));

  auto d_ends = device(ends, s);
  auto d_decay = device(decay, s);
  auto d_grads = device(grads, s);
  auto d_sum_squares = device(std::vector<double>{grad_sum_squares}, s);
  // Clipping active (norm ~ 107 > 1), disabled (<= 0), and above the norm (no scaling).
  for (float clip : {1.0f, 0.0f, 1000.0f}) {
    SCOPED_TRACE("clip_norm " + std::to_string(clip));
    sc.clip_norm = clip;
    auto d_scalars = device(std::vector<backend::OptimizerScalars>{sc}, s);
    auto d_master = device_split(master0, s);
    auto d_m = device(m0, s);
    auto d_v = device(v0, s);
    Gpu::adamw(d_master.hi.data(), d_master.lo.data(), d_grads.data(), d_m.data(), d_v.data(), n,
                d_ends.data(), d_decay.data(), static_cast<int>(sizes.size()), d_scalars.data(),
                d_sum_squares.data(), s);

    // The reference: clip by scaling the gradients, then Cpu::adamw tensor by tensor with the
    // same fp32 hyper-parameters (and weight_decay 0 where the flag is off).
    const double norm = std::sqrt(grad_sum_squares);
    const float factor = clip > 0 && norm > clip ? static_cast<float>(clip / norm) : 1.0f;
    auto g = grads;
    Cpu::scale(g.data(), n, factor);
    auto p = master0, m = m0, v = v0;
    std::int64_t lo = 0;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      backend::AdamWArgs a{sc.lr, sc.beta1, sc.beta2, sc.eps, decay[k] ? sc.weight_decay : 0.0,
                           step};
      Cpu::adamw(p.data() + lo, g.data() + lo, m.data() + lo, v.data() + lo, ends[k] - lo, a);
      lo = ends[k];
    }

    const auto got_p = joined(d_master.hi, d_master.lo);
    EXPECT_LE(relative_error(got_p, p), fp32_bound) << "fp32 master";
    EXPECT_LE(relative_error(d_m.download(), m), fp32_bound) << "fp32 m";
    EXPECT_LE(relative_error(d_v.download(), v), fp32_bound) << "fp32 v";
    // The update alone (~lr) against |p| ~ 0.2: fp32 rounding of p is ~1e-8, 1e-5 of the update,
    // so 1e-3 catches a wrong decay flag (lr * wd * p ~ 2.5e-5) or clip factor.
    std::vector<float> got_delta(n), want_delta(n);
    for (std::int64_t i = 0; i < n; ++i) {
      got_delta[i] = got_p[i] - master0[i];
      want_delta[i] = p[i] - master0[i];
    }
    EXPECT_LE(relative_error(got_delta, want_delta), 1e-3) << "fp32 update p - p0";
    // The bf16 half is the master rounded to nearest (ties away from zero: RNE but on exact
    // ties), so it is within half a bf16 ulp of it.
    const auto got_w = as_float(d_master.hi);
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_LE(std::abs(double(got_w[i]) - got_p[i]), std::ldexp(std::abs(got_p[i]), -8))
          << "weight " << i << ": bf16 half " << got_w[i] << " of master " << got_p[i];
  }
}

}  // namespace
}  // namespace tprimat::testing
