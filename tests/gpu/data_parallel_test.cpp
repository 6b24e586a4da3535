// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Data parallelism on the device engine against one GPU on the same global batch (mpirun -np N):
// NCCL with one GPU per rank, host-staged MPI collectives with the ranks sharing one GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "../support/test_models.hpp"
#include "mpi_gpu_test.hpp"
#include "one_gpu_comparison.hpp"
#include "tprimat/bench/memory_plan.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/parallel/mpi.hpp"
#include "tprimat/train/training_step.hpp"

namespace {

using namespace tprimat;
using backend::Gpu;
using One = parallel::Layout<1, 1>;
using tprimat::testing::compare_with_one_gpu;
using tprimat::testing::fp8_recast;
using tprimat::testing::fsdp;
using tprimat::testing::LlamaNarrow;
using tprimat::testing::mpi_world;
using tprimat::testing::nccl_world;
using tprimat::testing::no_shard;
using tprimat::testing::random_tokens;
using tprimat::testing::Sharding;
using tprimat::testing::shared_seed;
using tprimat::testing::TinyTied;
using tprimat::testing::zero1;
using tprimat::testing::zero2;

/// Tied embeddings: the one-GPU step interleaves the head's and the embedding's gradient terms
/// micro-batch by micro-batch while DP ranks add up their own first, so DP and one GPU sum in
/// different orders (OneGpuBounds would only bound the drift). ZeRO-1 against
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
  sharded.sharding = train::ShardingStrategy::optim;
  const train::DeviceOptions eager{train::AttentionChoice::automatic, false};
  train::TrainingStep<Gpu, M, One, World> plain(shape, opt, seed, world, eager);
  train::TrainingStep<Gpu, M, One, World> zero(shape, sharded, seed, world, eager);
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
  compare_with_one_gpu<LlamaNarrow, One>(mpi_world(), no_shard, {1, 128, 1, 0}, 5, true);
}

TEST(DataParallelHostStaged, LlamaNarrowZero1) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrow, One>(mpi_world(), zero1, {1, 128, 1, 0}, 5, true);
}

TEST(DataParallelHostStaged, LlamaNarrowZero1InLine) {  // --no-overlap
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrow, One>(mpi_world(), zero1, {1, 128, 1, 0}, 3, true, false);
}

/// FP8 (docs/fp8.md) under DP against one GPU on the same global batch: weights (and their
/// scales) identical on every replica; the activations' and gradients' scales each replica's own
/// (OneGpuBounds names the bounds).
constexpr auto fp8 = train::PrecisionConfig::fp8_hybrid;

TEST(DataParallelHostStaged, Fp8DelayedZero1) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<tprimat::testing::LlamaNarrow4, One>(
      mpi_world(), zero1, {1, 128, 2, 0}, 4, true, true, fp8(train::Fp8Recipe::delayed));
}

TEST(DataParallelHostStaged, Fp8CurrentAllReduce) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<tprimat::testing::LlamaNarrow4, One>(
      mpi_world(), no_shard, {1, 128, 2, 0}, 4, true, true, fp8(train::Fp8Recipe::current));
}

/// ZeRO-1 holds the remainders (2 B) and both moments (8 B) of its 1/DP slice only: the engine
/// saves what the memory plan says it does, to the rounding of the slices.
TEST(DataParallelHostStaged, Zero1HoldsOneSliceOfTheOptimizerState) {
  TPRIMAT_REQUIRE_GPU();
  parallel::comm::Mpi world;
  const int dp = world.size();
  if (dp == 1) GTEST_SKIP() << "one rank has nothing to shard (run under mpirun -np 2 or 3)";
  train::OptimizerConfig opt, sharded;
  sharded.sharding = train::ShardingStrategy::optim;
  const train::StepShape shape{1, 128, 1, 0};
  train::TrainingStep<Gpu, LlamaNarrow, One, parallel::comm::Mpi> plain(shape, opt, 7, world);
  train::TrainingStep<Gpu, LlamaNarrow, One, parallel::comm::Mpi> zero(shape, sharded, 7, world);
  const double saved = double(plain.engine().held_bytes()) - double(zero.engine().held_bytes());
  bench::MemoryPlanInput in;
  in.dims = model::dims<LlamaNarrow>();
  in.dp = dp;
  in.compute_bytes = 2;
  const bench::MemoryPlan full = bench::plan_memory(in);
  in.sharding = train::ShardingStrategy::optim;
  const bench::MemoryPlan shard = bench::plan_memory(in);
  const double planned = (full.master + full.adam_moments) - (shard.master + shard.adam_moments);
  EXPECT_GT(planned, 0.0);
  EXPECT_NEAR(saved, planned, 1e-3 * planned)
      << "engine saves " << saved << " bytes, the plan " << planned << " (dp " << dp << ")";
}

// ZeRO-2: each micro-batch's gradients reduce-scattered from their staging buffers into this
// rank's sums (2 micro-batches: the first copied, the second added), against one GPU.
TEST(DataParallelHostStaged, LlamaNarrowZero2) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrow, One>(mpi_world(), zero2, {1, 128, 2, 0}, 4, true);
}

TEST(DataParallelHostStaged, LlamaNarrowZero2InLine) {  // --no-overlap
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrow, One>(mpi_world(), zero2, {1, 128, 3, 0}, 3, true, false);
}

// Tiny's segments do not split into whole chunks over 2 or 3 ranks: padded staging buffers, and
// the weights gathered through them. A tied head writes the embedding's gradient in the forward.
TEST(DataParallelHostStaged, TiedEmbeddingsPaddedZero2) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<TinyTied, One>(mpi_world(), zero2, {2, 64, 2, 0}, 4, false);
}

TEST(DataParallelHostStaged, Fp8DelayedZero2) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<tprimat::testing::LlamaNarrow4, One>(
      mpi_world(), zero2, {1, 128, 2, 0}, 4, true, true, fp8(train::Fp8Recipe::delayed));
}

using NarrowStep = train::TrainingStep<Gpu, LlamaNarrow, One, parallel::comm::Mpi>;

/// LlamaNarrow under sharding strategies `less` and `more` over the same ranks: `more` holds
/// fewer bytes by what the plan says (DP rank 0's plan: another rank's slices cross a few more or
/// fewer tensors, whose ends and decay flags AdamW reads, 9 bytes each). `then(a, b, tokens)`
/// goes on with the two steps and this rank's tokens.
template <class Then>
void holds_what_the_plan_says(Sharding less, Sharding more, Then&& then) {
  parallel::comm::Mpi world;
  const int dp = world.size();
  if (dp == 1) GTEST_SKIP() << "one rank has nothing to shard (run under mpirun -np 2 or 3)";
  const train::OptimizerConfig less_opt = less.applied_to({}), more_opt = more.applied_to({});
  const train::StepShape shape{1, 128, 2, 0};
  NarrowStep a(shape, less_opt, 7, world), b(shape, more_opt, 7, world);
  const double saved = double(a.engine().held_bytes()) - double(b.engine().held_bytes());
  bench::MemoryPlanInput in;
  in.dims = model::dims<LlamaNarrow>();
  in.dp = dp;
  in.shape.grad_accum = shape.grad_accum;
  in.shape.seq = shape.seq;
  in.sharding = less.strategy;
  in.optimizer_instances = less.instances;
  const bench::MemoryPlan plan_less = bench::plan_memory(in);
  in.sharding = more.strategy;
  in.optimizer_instances = more.instances;
  const bench::MemoryPlan plan_more = bench::plan_memory(in);
  EXPECT_NEAR(saved, plan_less.total - plan_more.total, 1024)
      << "dp " << dp << ", rank " << world.rank();
  const auto tokens = random_tokens(std::size_t(shape.grad_accum) * (shape.seq + 1),
                                    LlamaNarrow::vocab, 100 + world.rank());
  then(a, b, tokens, plan_less, plan_more);
}

/// ZeRO-2 holds the sums of its 1/DP slices of the gradients and a few segments' staging
/// buffers instead of the whole gradient: what the plan says, against ZeRO-1. (LlamaNarrow's
/// embedding and head outweigh its layers, so here ZeRO-2 holds more; bench::plan_memory's unit
/// tests show Llama 3.1 8B's saving.)
TEST(DataParallelHostStaged, Zero2HoldsWhatThePlanSays) {
  TPRIMAT_REQUIRE_GPU();
  holds_what_the_plan_says(
      train::ShardingStrategy::optim, train::ShardingStrategy::optim_grads,
      [](NarrowStep& one, NarrowStep& two, const auto& tokens, const auto& plan1,
         const auto& plan2) {
        EXPECT_NE(plan1.gradients, plan2.gradients);
        const auto a = one.run(tokens), b = two.run(tokens);
        EXPECT_NEAR(b.loss, a.loss, 1e-6 * a.loss);
        EXPECT_NEAR(b.grad_norm, a.grad_norm, 1e-5 * a.grad_norm);
      });
}

// FSDP: each segment's weights gathered before use (the next prefetched), the slices updated
// alone; the gradients as ZeRO-2's.
TEST(DataParallelHostStaged, LlamaNarrowFsdp) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrow, One>(mpi_world(), fsdp, {1, 128, 2, 0}, 4, true);
}

TEST(DataParallelHostStaged, LlamaNarrowFsdpInLine) {  // --no-overlap: the gathers in line
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrow, One>(mpi_world(), fsdp, {1, 128, 2, 0}, 3, true, false);
}

// A group of both layers recomputed: its forward gathers each layer's weights again, through
// the two staging buffers, before the backward's.
TEST(DataParallelHostStaged, LlamaNarrowFsdpFullRecomputation) {
  TPRIMAT_REQUIRE_GPU();
  train::StepShape shape{1, 128, 2, 0};
  shape.recompute = {train::RecomputeGranularity::full, train::RecomputeMethod::uniform, 2};
  compare_with_one_gpu<LlamaNarrow, One>(mpi_world(), fsdp, shape, 3, true);
}

// A tied head reads the embedding's weights, gathered into their own staging buffer.
TEST(DataParallelHostStaged, TiedEmbeddingsPaddedFsdp) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<TinyTied, One>(mpi_world(), fsdp, {2, 64, 2, 0}, 4, false);
}

/// FSDP holds its slices of the bf16 weights and a weight staging buffer a slot instead of every
/// weight: what the plan says, against ZeRO-2; and runs the same numbers, bit for bit (its
/// gathered weights are the ones ZeRO-2 keeps whole).
TEST(DataParallelHostStaged, FsdpHoldsWhatThePlanSays) {
  TPRIMAT_REQUIRE_GPU();
  holds_what_the_plan_says(
      train::ShardingStrategy::optim_grads, train::ShardingStrategy::optim_grads_params,
      [](NarrowStep& two, NarrowStep& three, const auto& tokens, const auto& plan2,
         const auto& plan3) {
        EXPECT_EQ(plan3.gradients, plan2.gradients);
        for (int s = 0; s < 2; ++s) {
          const auto a = two.run(tokens), b = three.run(tokens);
          EXPECT_EQ(b.loss, a.loss) << "step " << s + 1;
          EXPECT_EQ(b.grad_norm, a.grad_norm) << "step " << s + 1;
        }
        EXPECT_EQ(three.engine().parameters(), two.engine().parameters());
      });
}

// FP8 under FSDP: each weight cast after its gather (recast copies), scaled from the max over
// the sharding group of each rank's slices' amaxes (the whole weight's).

TEST(DataParallelHostStaged, Fp8DelayedFsdp) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<tprimat::testing::LlamaNarrow4, One>(
      mpi_world(), fsdp, {1, 128, 2, 0}, 4, true, true, fp8_recast(train::Fp8Recipe::delayed));
}

TEST(DataParallelHostStaged, Fp8CurrentFsdpTwoInstances) {  // np 4: 2 instances of 2
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<tprimat::testing::LlamaNarrow4, One>(mpi_world(), Sharding{fsdp, 2},
                                                            {1, 128, 2, 0}, 3, true, true,
                                                            fp8_recast(train::Fp8Recipe::current));
}

/// FP8 under FSDP runs ZeRO-2's numbers bit for bit: the gathered weights are the ones ZeRO-2
/// keeps whole, and the slices' amaxes maxed over the group are the whole weights'.
TEST(DataParallelHostStaged, Fp8FsdpEqualsZero2) {
  TPRIMAT_REQUIRE_GPU();
  parallel::comm::Mpi world;
  if (world.size() == 1) GTEST_SKIP() << "one rank has nothing to shard (run under mpirun -np 2)";
  using Narrow4Step =
      train::TrainingStep<Gpu, tprimat::testing::LlamaNarrow4, One, parallel::comm::Mpi>;
  for (const auto recipe : {train::Fp8Recipe::delayed, train::Fp8Recipe::current}) {
    SCOPED_TRACE(recipe == train::Fp8Recipe::delayed ? "delayed" : "current");
    train::DeviceOptions options{train::AttentionChoice::automatic, false};
    options.precision = fp8_recast(recipe);
    const train::StepShape shape{1, 128, 2, 0};
    Narrow4Step two(shape, Sharding{zero2}.applied_to({}), 7, world, options);
    Narrow4Step three(shape, Sharding{fsdp}.applied_to({}), 7, world, options);
    const auto tokens = random_tokens(std::size_t(shape.grad_accum) * (shape.seq + 1),
                                      tprimat::testing::LlamaNarrow4::vocab, 100 + world.rank());
    for (int s = 0; s < 3; ++s) {  // the delayed recipe's first step scales alone, later ones not
      const auto a = two.run(tokens), b = three.run(tokens);
      ASSERT_TRUE(std::isfinite(a.loss) && std::isfinite(a.grad_norm));
      EXPECT_EQ(b.loss, a.loss) << "step " << s + 1;
      EXPECT_EQ(b.grad_norm, a.grad_norm) << "step " << s + 1;
    }
    EXPECT_EQ(three.engine().parameters(), two.engine().parameters());
    EXPECT_EQ(three.engine().fp8_scales(), two.engine().fp8_scales());
  }
}

// Hybrid sharding (DP 4 in 2 instances of 2, at np 4): each instance shards over its own 2
// ranks, each shard's gradients summed over the instances once a step (after the last
// micro-batch), the second instance's slices left out of the norm.
TEST(DataParallelHostStaged, LlamaNarrowZero1TwoInstances) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrow, One>(mpi_world(), Sharding{zero1, 2}, {1, 128, 2, 0}, 3, true);
}

TEST(DataParallelHostStaged, LlamaNarrowZero2TwoInstances) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrow, One>(mpi_world(), Sharding{zero2, 2}, {1, 128, 2, 0}, 3, true);
}

TEST(DataParallelHostStaged, LlamaNarrowFsdpTwoInstancesInLine) {  // --no-overlap
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrow, One>(mpi_world(), Sharding{fsdp, 2}, {1, 128, 2, 0}, 3, true,
                                         false);
}

/// Hybrid sharding holds one instance's shards, not DP 4's: what the plan says, against one
/// instance; and runs the same numbers within fp32 sums in another order.
TEST(DataParallelHostStaged, HybridShardingHoldsWhatThePlanSays) {
  TPRIMAT_REQUIRE_GPU();
  if (parallel::comm::Mpi{}.size() != 4) GTEST_SKIP() << "2 instances of 2: run under mpirun -np 4";
  for (const auto strategy : {zero1, zero2, fsdp}) {
    SCOPED_TRACE(std::string(train::name_of(strategy)));
    holds_what_the_plan_says(Sharding{strategy}, Sharding{strategy, 2},
                             [](NarrowStep& one, NarrowStep& two, const auto& tokens,
                                const auto& plan1, const auto& plan2) {
                               EXPECT_LT(plan1.adam_moments, plan2.adam_moments);
                               const auto a = one.run(tokens), b = two.run(tokens);
                               EXPECT_NEAR(b.loss, a.loss, 1e-6 * a.loss);
                               EXPECT_NEAR(b.grad_norm, a.grad_norm, 1e-5 * a.grad_norm);
                             });
  }
}

TEST(DataParallelHostStaged, TiedEmbeddingsZero1MatchesAllReduce) {
  TPRIMAT_REQUIRE_GPU();
  compare_zero_with_all_reduce<TinyTied>(mpi_world(), {2, 64, 2, 0}, 4);
}

TEST(DataParallelNccl, LlamaNarrowAllReduce) {
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  compare_with_one_gpu<LlamaNarrow, One>(nccl_world(), no_shard, {1, 128, 1, 0}, 5, true);
}

TEST(DataParallelNccl, LlamaNarrowZero1) {
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  compare_with_one_gpu<LlamaNarrow, One>(nccl_world(), zero1, {1, 128, 1, 0}, 5, true);
}

TEST(DataParallelNccl, LlamaNarrowZero1Eager) {
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  compare_with_one_gpu<LlamaNarrow, One>(nccl_world(), zero1, {1, 128, 2, 0}, 3, false);
}

TEST(DataParallelNccl, LlamaNarrowZero2) {  // captured: the staging buffers' events in a graph
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  compare_with_one_gpu<LlamaNarrow, One>(nccl_world(), zero2, {1, 128, 2, 0}, 4, true);
}

TEST(DataParallelNccl, LlamaNarrowFsdp) {  // captured: the prefetches' side stream in a graph
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  compare_with_one_gpu<LlamaNarrow, One>(nccl_world(), fsdp, {1, 128, 2, 0}, 4, true);
}

TEST(DataParallelNccl, LlamaNarrowFsdpTwoInstances) {  // 4 GPUs: 2 instances of 2
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  compare_with_one_gpu<LlamaNarrow, One>(nccl_world(), Sharding{fsdp, 2}, {1, 128, 2, 0}, 4, true);
}

TEST(DataParallelNccl, TiedEmbeddingsZero1MatchesAllReduce) {
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  compare_zero_with_all_reduce<TinyTied>(nccl_world(), {2, 64, 2, 0}, 4);
}

}  // namespace
