// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Data parallelism on the device engine against one GPU on the same global batch (mpirun -np N):
// NCCL with one GPU per rank, host-staged MPI collectives with the ranks sharing one GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "../support/test_models.hpp"
#include "mpi_gpu_test.hpp"
#include "tprimat/bench/memory_plan.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/parallel/mpi.hpp"
#include "tprimat/train/training_step.hpp"

namespace {

using namespace tprimat;
using backend::Cuda;
using One = parallel::Layout<1, 1>;
using tprimat::testing::LlamaNarrow;
using tprimat::testing::random_tokens;
using tprimat::testing::TinyTied;
using tprimat::testing::mpi_world;
using tprimat::testing::nccl_world;
using tprimat::testing::shared_seed;

/// `steps` steps of M on the DP ranks of `world` (each its share of the global batch) and on one
/// GPU (the whole global batch as world.size() x grad_accum micro-batches), from the same
/// device-drawn weights and the same tokens. Bounds: each micro-batch's forward and backward
/// are the same kernels on the same data on both sides; only the order of the fp32 sums across
/// micro-batches (GEMM accumulation vs the DP reduction) and of the norm's partial sums
/// differ. So the losses and gradient norms agree to 1e-3 relative (the issue asks 2e-2); the
/// final fp32 master weights as stated below.
template <class M, class World>
void compare_with_one_gpu(World world, bool zero, train::StepShape shape, int steps, bool graph,
                          bool overlap = true) {
  const int dp = world.size(), rank = world.rank();
  const std::uint64_t seed = shared_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + ", rank " + std::to_string(rank) + " of " +
               std::to_string(dp) + (zero ? ", ZeRO-1" : ", all-reduce"));
  train::OptimizerConfig opt;
  opt.warmup_steps = 2;  // a real learning rate from step 2 on, so the updates matter
  opt.distributed_optimizer = zero;
  train::StepShape whole = shape;
  whole.grad_accum = shape.grad_accum * dp;
  const train::DeviceOptions options{train::AttentionChoice::automatic, graph, false, overlap};
  train::TrainingStep<Cuda, M, One> one(whole, opt, seed, {}, options);
  train::TrainingStep<Cuda, M, One, World> ranks(shape, opt, seed, world, options);

  const std::size_t per_rank = std::size_t(shape.grad_accum) * shape.mbs * (shape.seq + 1);
  double worst_loss = 0, worst_norm = 0;
  for (int s = 0; s < steps; ++s) {
    SCOPED_TRACE("step " + std::to_string(s + 1));
    const auto tokens = random_tokens(per_rank * dp, M::vocab, seed + 1000 + s);
    const train::StepStats a = one.run(tokens);
    const train::StepStats b =
        ranks.run(std::span<const std::int32_t>(tokens).subspan(rank * per_rank, per_rank));
    ASSERT_TRUE(std::isfinite(b.loss) && std::isfinite(b.grad_norm));
    worst_loss = std::max(worst_loss, std::abs(b.loss - a.loss) / std::abs(a.loss));
    worst_norm = std::max(worst_norm, std::abs(b.grad_norm - a.grad_norm) / a.grad_norm);
    EXPECT_LE(std::abs(b.loss - a.loss) / std::abs(a.loss), 1e-3)
        << "DP " << b.loss << " one GPU " << a.loss;
    EXPECT_LE(std::abs(b.grad_norm - a.grad_norm) / a.grad_norm, 1e-3)
        << "DP " << b.grad_norm << " one GPU " << a.grad_norm;
  }
  EXPECT_EQ(ranks.engine().graph_captured(), graph && world.size() > 1 &&
                                                 train::device_collectives_of(world)->capturable());

  const std::vector<float> got = ranks.engine().parameters();  // collective under ZeRO-1
  const std::vector<float> want = one.engine().parameters();
  ASSERT_EQ(got.size(), want.size());
  // Two ranks of an untied model: each gradient element is the sum of two micro-batch terms on
  // both sides (a + b == b + a exactly), so the weights must come out identical. Otherwise the
  // sums of three or more terms differ in order (the GEMM's accumulation vs the collective's),
  // the weights drift by ulps, and an element whose gradient is near zero may take a different
  // AdamW step (its first steps are nearly sign(g) x lr). Bounds then: every element within one
  // bf16 rounding (2^-8 relative) + two steps of lr_peak; at most 1% of any tensor, and 0.1% of
  // the model, beyond one bf16 rounding + 1e-7 (a wrong slice or bucket would exceed both).
  const bool identical = dp == 2 && !M::tied_embeddings;
  double worst_weight = 0;
  std::int64_t beyond = 0;
  for (const auto& t : one.engine().table().tensors) {
    std::int64_t off = 0;
    for (std::int64_t i = t.offset; i < t.offset + t.size(); ++i) {
      ASSERT_TRUE(std::isfinite(got[i])) << t.name << " element " << i - t.offset;
      const double err = std::abs(double(got[i]) - want[i]);
      const double bound = identical ? 0.0 : std::ldexp(std::abs(double(want[i])), -8) +
                                                 2 * opt.lr_peak;
      ASSERT_LE(err, bound) << "tensor " << t.name << " element " << i - t.offset << ": DP "
                            << got[i] << " one GPU " << want[i];
      if (err > std::ldexp(std::abs(double(want[i])), -8) + 1e-7) ++off;
      worst_weight = std::max(worst_weight, err);
    }
    EXPECT_LE(off, std::max<std::int64_t>(1, t.size() / 100))
        << "tensor " << t.name << ": " << off << " of " << t.size()
        << " elements differ by more than one bf16 rounding";
    beyond += off;
  }
  EXPECT_LE(beyond, std::max<std::int64_t>(1, static_cast<std::int64_t>(want.size()) / 1000));
  std::printf("[rank %d] dp %d%s: worst relative loss %.2e, norm %.2e; worst weight error %.2e, "
              "%lld elements beyond one bf16 rounding\n",
              rank, dp, zero ? " ZeRO-1" : "", worst_loss, worst_norm, worst_weight,
              static_cast<long long>(beyond));
}

/// Tied embeddings: the one-GPU step interleaves the head's and the embedding's gradient terms
/// micro-batch by micro-batch while DP ranks add up their own first, so DP and one GPU sum in
/// different orders (compare_with_one_gpu's bounds would only bound the drift). ZeRO-1 against
/// the DP all-reduce path over the same ranks sums in the same order (two ranks: a + b; the
/// host-staged reduce-scatter goes through the host all-reduce), so it must be identical.
template <class M, class World>
void compare_zero_with_all_reduce(World world, train::StepShape shape, int steps) {
  const int dp = world.size(), rank = world.rank();
  const std::uint64_t seed = shared_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + ", rank " + std::to_string(rank));
  train::OptimizerConfig opt;
  opt.warmup_steps = 2;
  train::OptimizerConfig sharded = opt;
  sharded.distributed_optimizer = true;
  const train::DeviceOptions eager{train::AttentionChoice::automatic, false};
  train::TrainingStep<Cuda, M, One, World> plain(shape, opt, seed, world, eager);
  train::TrainingStep<Cuda, M, One, World> zero(shape, sharded, seed, world, eager);
  const std::size_t per_rank = std::size_t(shape.grad_accum) * shape.mbs * (shape.seq + 1);
  for (int s = 0; s < steps; ++s) {
    const auto tokens = random_tokens(per_rank * dp, M::vocab, seed + 1000 + s);
    const auto share = std::span<const std::int32_t>(tokens).subspan(rank * per_rank, per_rank);
    const train::StepStats a = plain.run(share), b = zero.run(share);
    EXPECT_EQ(a.loss, b.loss) << "step " << s + 1;
    EXPECT_EQ(a.grad_norm, b.grad_norm) << "step " << s + 1;
  }
  const std::vector<float> got = zero.engine().parameters(), want = plain.engine().parameters();
  ASSERT_EQ(got.size(), want.size());
  for (const auto& t : plain.engine().table().tensors)
    for (std::int64_t i = t.offset; i < t.offset + t.size(); ++i)
      ASSERT_EQ(got[i], want[i]) << "tensor " << t.name << " element " << i - t.offset;
}

TEST(DataParallelHostStaged, LlamaNarrowAllReduce) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrow>(mpi_world(), false, {1, 128, 1, 0}, 5, true);
}

TEST(DataParallelHostStaged, LlamaNarrowZero1) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrow>(mpi_world(), true, {1, 128, 1, 0}, 5, true);
}

TEST(DataParallelHostStaged, LlamaNarrowZero1InLine) {  // --no-overlap
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrow>(mpi_world(), true, {1, 128, 1, 0}, 3, true, false);
}

/// ZeRO-1 holds the remainders (2 B) and both moments (8 B) of its 1/DP slice only: the engine
/// saves what the memory plan says it does, to the rounding of the slices.
TEST(DataParallelHostStaged, Zero1HoldsOneSliceOfTheOptimizerState) {
  TPRIMAT_REQUIRE_GPU();
  parallel::comm::Mpi world;
  const int dp = world.size();
  if (dp == 1) GTEST_SKIP() << "one rank has nothing to shard (run under mpirun -np 2 or 3)";
  train::OptimizerConfig opt, sharded;
  sharded.distributed_optimizer = true;
  const train::StepShape shape{1, 128, 1, 0};
  train::TrainingStep<Cuda, LlamaNarrow, One, parallel::comm::Mpi> plain(shape, opt, 7, world);
  train::TrainingStep<Cuda, LlamaNarrow, One, parallel::comm::Mpi> zero(shape, sharded, 7, world);
  const double saved = double(plain.engine().held_bytes()) - double(zero.engine().held_bytes());
  bench::MemoryPlanInput in;
  in.dims = model::dims<LlamaNarrow>();
  in.dp = dp;
  in.compute_bytes = 2;
  const bench::MemoryPlan full = bench::plan_memory(in);
  in.distributed_optimizer = true;
  const bench::MemoryPlan shard = bench::plan_memory(in);
  const double planned = (full.master + full.adam_moments) - (shard.master + shard.adam_moments);
  EXPECT_GT(planned, 0.0);
  EXPECT_NEAR(saved, planned, 1e-3 * planned)
      << "engine saves " << saved << " bytes, the plan " << planned << " (dp " << dp << ")";
}

TEST(DataParallelHostStaged, TiedEmbeddingsZero1MatchesAllReduce) {
  TPRIMAT_REQUIRE_GPU();
  compare_zero_with_all_reduce<TinyTied>(mpi_world(), {2, 64, 2, 0}, 4);
}

TEST(DataParallelNccl, LlamaNarrowAllReduce) {
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  compare_with_one_gpu<LlamaNarrow>(nccl_world(), false, {1, 128, 1, 0}, 5, true);
}

TEST(DataParallelNccl, LlamaNarrowZero1) {
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  compare_with_one_gpu<LlamaNarrow>(nccl_world(), true, {1, 128, 1, 0}, 5, true);
}

TEST(DataParallelNccl, LlamaNarrowZero1Eager) {
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  compare_with_one_gpu<LlamaNarrow>(nccl_world(), true, {1, 128, 2, 0}, 3, false);
}

TEST(DataParallelNccl, TiedEmbeddingsZero1MatchesAllReduce) {
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  compare_zero_with_all_reduce<TinyTied>(nccl_world(), {2, 64, 2, 0}, 4);
}

}  // namespace
