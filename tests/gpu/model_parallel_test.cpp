// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Tensor and pipeline parallelism (TP=2, PP=2, both; DP over the other ranks) on the device engine
// against one GPU on the same global batch (mpirun -np 2 or 4): NCCL with one GPU per rank,
// host-staged MPI collectives with the ranks sharing one GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../support/test_models.hpp"
#include "mpi_gpu_test.hpp"
#include "tprimat/bench/memory_plan.hpp"
#include "tprimat/model/llama31_8b.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/parallel/mpi.hpp"
#include "tprimat/train/training_step.hpp"

namespace {

using namespace tprimat;
using backend::Cuda;
using One = parallel::Layout<1, 1>;
using Tp2 = parallel::Layout<2, 1>;
using Pp2 = parallel::Layout<1, 2>;
using Tp2Pp2 = parallel::Layout<2, 2>;
using tprimat::testing::LlamaNarrow;
using tprimat::testing::LlamaNarrowKv2;
using tprimat::testing::random_tokens;
using tprimat::testing::TinyBias;
using tprimat::testing::TinyTied;
using tprimat::testing::mpi_world;
using tprimat::testing::nccl_world;
using tprimat::testing::shared_seed;

/// Each tensor of this rank's shard (`mine`, in `shard`'s order; another stage's tensors are
/// skipped) with the same block of the whole model's buffer (`whole`, in `one`'s order):
/// f(tensor, its values here, the block there).
template <class F>
void for_each_tensor(const train::ParameterTable& shard, const std::vector<float>& mine,
                     const train::ParameterTable& one, const std::vector<float>& whole, F f) {
  ASSERT_EQ(shard.all_tensors.size(), one.tensors.size());
  for (std::size_t k = 0; k < shard.all_tensors.size(); ++k) {
    if (shard.local_index[k] < 0) continue;
    const train::ParamTensor& t = shard.tensors[shard.local_index[k]];
    const train::ParamTensor& w = one.tensors[k];
    ASSERT_EQ(t.name, w.name);
    std::vector<float> block(static_cast<std::size_t>(t.size()));
    for (std::int64_t r = 0; r < t.rows; ++r)
      std::copy_n(whole.begin() + w.offset + (t.row_begin + r) * w.cols + t.col_begin, t.cols,
                  block.begin() + r * t.cols);
    f(t, std::span<const float>(mine).subspan(t.offset, t.size()),
      std::span<const float>(block));
  }
}

double l2(std::span<const float> a) {
  double s = 0;
  for (float x : a) s += double(x) * x;
  return std::sqrt(s);
}

/// `steps` steps of M under layout L (DP over the rest of the ranks) and on one GPU (the whole
/// global batch as DP x grad_accum micro-batches), from the same seed and tokens. TP changes the
/// order of fp32 sums (row-parallel partial products; the split dot products of the input
/// gradients) and so the bf16 roundings of some activations; nothing else. PP changes nothing
/// a gradient sees (each stage runs the same kernels on the same data; the fp32 activations
/// travel exactly; micro-batches accumulate in the same order): without TP (and DP) the losses
/// and every gradient must equal one GPU's bit for bit (the norm's partial sums alone are grouped
/// by stage).
/// - Start: every rank's shard holds one GPU's weights exactly (draws keyed by place).
/// - Each step: loss within 2e-3 relative (the issue asks 2e-2), gradient norm within 2e-2;
///   without ZeRO-1, every tensor's gradient within 5e-2 of one GPU's in L2 (relative, with a
///   floor of 1e-3 of the whole gradient's norm for tensors whose gradient is ~0, such as the
///   key bias): the step tests' bound for bf16 pipelines against fp32 (measured: at most 2e-2
///   on the matrices, H100); a missing or misplaced term would be off by O(1). A mismatch names
///   the tensor.
/// - End: every fp32 master weight within one bf16 rounding (2^-8 relative) + 2 x steps x
///   lr_peak (AdamW's early steps are ~lr x sign(g), so an element whose gradient is near zero
///   may step the other way), and at most 10% of the model beyond one bf16 rounding.
template <class M, class L, class World>
void compare_with_one_gpu(World world, bool zero, train::StepShape shape, int steps, bool graph,
                          bool overlap = true) {
  const int size = world.size(), rank = world.rank(), mp = L::tp * L::pp;
  if (size % mp != 0) GTEST_SKIP() << "TP x PP = " << mp << " does not divide " << size << " ranks";
  if (zero && size < 2 * mp) GTEST_SKIP() << "ZeRO-1 needs DP=2: run under mpirun -np " << 2 * mp;
  const std::uint64_t seed = shared_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + ", rank " + std::to_string(rank) + " of " +
               std::to_string(size) + (zero ? ", ZeRO-1" : ""));
  train::OptimizerConfig opt;
  opt.warmup_steps = 2;
  opt.distributed_optimizer = zero;
  const train::DeviceOptions options{train::AttentionChoice::automatic, graph, false, overlap};
  train::TrainingStep<Cuda, M, L, World> ranks(shape, opt, seed, std::move(world), options);
  const int dp = ranks.groups().shape.dp, dp_rank = ranks.groups().at.dp;
  // Under DP the gradient sums run in another order (each replica's micro-batches, then the
  // reduction): exact only without it.
  const bool exact = L::tp == 1 && dp == 1;
  train::StepShape whole = shape;
  whole.grad_accum = shape.grad_accum * dp;
  train::TrainingStep<Cuda, M, One> one(whole, opt, seed, {}, options);
  const train::ParameterTable& shard_table = ranks.engine().table();
  const train::ParameterTable& one_table = one.engine().table();

  for_each_tensor(shard_table, ranks.engine().parameters(), one_table, one.engine().parameters(),
                  [&](const train::ParamTensor& t, auto got, auto want) {
                    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin()))
                        << "initial weights of " << t.name << " differ from one GPU's block";
                  });

  const std::size_t per_rank = std::size_t(shape.grad_accum) * shape.mbs * (shape.seq + 1);
  double worst_loss = 0, worst_norm = 0, worst_grad = 0;
  std::string worst_grad_tensor;
  for (int s = 0; s < steps; ++s) {
    SCOPED_TRACE("step " + std::to_string(s + 1));
    const auto tokens = random_tokens(per_rank * dp, M::vocab, seed + 1000 + s);
    const train::StepStats a = one.run(tokens);
    const train::StepStats b =
        ranks.run(std::span<const std::int32_t>(tokens).subspan(dp_rank * per_rank, per_rank));
    ASSERT_TRUE(std::isfinite(b.loss) && std::isfinite(b.grad_norm));
    const double dl = std::abs(b.loss - a.loss) / std::abs(a.loss);
    const double dn = std::abs(b.grad_norm - a.grad_norm) / a.grad_norm;
    worst_loss = std::max(worst_loss, dl);
    worst_norm = std::max(worst_norm, dn);
    EXPECT_LE(dl, exact ? 0.0 : 2e-3) << "TP/PP " << b.loss << " one GPU " << a.loss;
    EXPECT_LE(dn, exact ? 1e-12 : 2e-2) << "TP/PP " << b.grad_norm << " one GPU " << a.grad_norm;
    if (zero) continue;  // each rank holds its slices' reduced gradients only
    for_each_tensor(shard_table, ranks.engine().gradients(), one_table, one.engine().gradients(),
                    [&](const train::ParamTensor& t, auto got, auto want) {
                      double err = 0;
                      for (std::size_t i = 0; i < got.size(); ++i) {
                        ASSERT_TRUE(std::isfinite(got[i])) << t.name << " gradient " << i;
                        err += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
                      }
                      err = std::sqrt(err);
                      const double norm = l2(want);
                      EXPECT_LE(err, exact ? 0.0 : 5e-2 * norm + 1e-3 * a.grad_norm)
                          << "gradient of " << t.name << ": L2 error " << err << ", norm "
                          << norm;
                      if (norm > 0 && err / norm > worst_grad) {
                        worst_grad = err / norm;
                        worst_grad_tensor = t.name;
                      }
                    });
  }

  const double step_bound = 2.0 * steps * opt.lr_peak;
  double worst_weight = 0;
  std::int64_t beyond = 0, total = 0;
  for_each_tensor(
      shard_table, ranks.engine().parameters(), one_table, one.engine().parameters(),
      [&](const train::ParamTensor& t, auto got, auto want) {
        for (std::size_t i = 0; i < got.size(); ++i) {
          const double err = std::abs(double(got[i]) - want[i]);
          const double rounding = std::ldexp(std::abs(double(want[i])), -8);
          ASSERT_TRUE(std::isfinite(got[i]) && err <= rounding + step_bound)
              << "tensor " << t.name << " element " << i << ": TP/PP " << got[i] << " one GPU "
              << want[i];
          beyond += err > rounding + 1e-7;
          worst_weight = std::max(worst_weight, err);
        }
        total += t.size();
      });
  EXPECT_LE(beyond, total / 10) << beyond << " of " << total
                                << " weights differ by more than one bf16 rounding";
  std::printf("[rank %d] tp %d pp %d dp %d%s: worst relative loss %.2e, norm %.2e, tensor gradient "
              "%.2e (%s); worst weight error %.2e, %lld of %lld weights beyond one bf16 "
              "rounding\n",
              rank, L::tp, L::pp, dp, zero ? " ZeRO-1" : "", worst_loss, worst_norm, worst_grad,
              worst_grad_tensor.c_str(), worst_weight, static_cast<long long>(beyond),
              static_cast<long long>(total));
}

/// The memory plan (bench::plan_memory, what `tprimat plan` and `--layers auto` use) against the
/// busiest rank's measured peak (the device pool's high-water mark over construction and one
/// step; every rank of one GPU has its own pool), at Llama 3.1 8B's width with 4 layers and seq
/// 1024 (so that 2-4 ranks fit on one GPU): within 10%, the bound for the full model.
template <class L>
void plan_predicts_the_peak(bool zero) {
  parallel::comm::Mpi world;
  const int size = world.size(), mp = L::tp * L::pp;
  if (size % mp != 0) GTEST_SKIP() << "TP x PP = " << mp << " does not divide " << size << " ranks";
  if (zero && size < 2 * mp) GTEST_SKIP() << "ZeRO-1 needs DP=2: run under mpirun -np " << 2 * mp;
  using M = model::Llama31_8B;
  const train::StepShape shape{1, 1024, 2 * L::pp, 4};
  train::OptimizerConfig opt;
  opt.distributed_optimizer = zero;
  const train::DeviceOptions eager{train::AttentionChoice::automatic, false};
  train::TrainingStep<Cuda, M, L, parallel::comm::Mpi> step(shape, opt, 7, world, eager);
  const int dp = step.groups().shape.dp;
  const auto tokens =
      random_tokens(std::size_t(shape.grad_accum) * shape.mbs * (shape.seq + 1), M::vocab,
                    100 + step.groups().at.dp);
  step.run(tokens);
  double peak = static_cast<double>(step.peak_bytes()), busiest = peak;
  MPI_Allreduce(&peak, &busiest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  bench::MemoryPlanInput in;
  in.dims = model::dims<M>().with_layers(shape.layers);
  in.tp = L::tp;
  in.pp = L::pp;
  in.dp = dp;
  in.mbs = shape.mbs;
  in.seq = shape.seq;
  in.grad_accum = shape.grad_accum;
  in.distributed_optimizer = zero;
  const double planned = bench::plan_memory(in).total;
  std::printf("[rank %d] tp %d pp %d dp %d%s: peak %.3f GB (busiest rank %.3f GB), plan %.3f GB, "
              "plan / busiest %.3f\n",
              world.rank(), L::tp, L::pp, dp, zero ? " ZeRO-1" : "", peak / 1e9, busiest / 1e9,
              planned / 1e9, planned / busiest);
  EXPECT_NEAR(planned, busiest, 0.10 * busiest);
}

TEST(ModelParallelMemory, TensorParallelPlanPredictsThePeak) {
  TPRIMAT_REQUIRE_GPU();
  plan_predicts_the_peak<Tp2>(false);
}

TEST(ModelParallelMemory, PipelinePlanPredictsThePeak) {
  TPRIMAT_REQUIRE_GPU();
  plan_predicts_the_peak<Pp2>(false);
}

TEST(ModelParallelMemory, TensorParallelZero1PlanPredictsThePeak) {  // 4 ranks
  TPRIMAT_REQUIRE_GPU();
  plan_predicts_the_peak<Tp2>(true);
}

TEST(TensorParallelHostStaged, LlamaNarrow) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrowKv2, Tp2>(mpi_world(), false, {1, 128, 1, 0}, 5, true);
}

TEST(TensorParallelHostStaged, LlamaNarrowInLine) {  // --no-overlap: the all-reduces in line
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrowKv2, Tp2>(mpi_world(), false, {1, 128, 2, 0}, 3, true, false);
}

TEST(TensorParallelHostStaged, LlamaNarrowZero1) {  // TP 2 x DP 2 at 4 ranks
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrowKv2, Tp2>(mpi_world(), true, {1, 128, 1, 0}, 5, true);
}

TEST(TensorParallelHostStaged, TiedEmbeddings) {  // vocab-parallel embedding and head in one
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<TinyTied, Tp2>(mpi_world(), false, {2, 64, 2, 0}, 5, false);
}

TEST(TensorParallelHostStaged, QkvBias) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<TinyBias, Tp2>(mpi_world(), false, {2, 64, 2, 0}, 5, false);
}

// 4 micro-batches on 2 stages: warm-up, steady 1F1B and cool-down all run.
TEST(PipelineHostStaged, LlamaNarrow) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrow, Pp2>(mpi_world(), false, {1, 128, 4, 0}, 4, true);
}

TEST(PipelineHostStaged, LlamaNarrowZero1) {  // PP 2 x DP 2 at 4 ranks
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrow, Pp2>(mpi_world(), true, {1, 128, 3, 0}, 4, true);
}

TEST(PipelineHostStaged, QkvBiasTwoLayersAStageOneMicroBatch) {
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<TinyBias, Pp2>(mpi_world(), false, {2, 64, 1, 0}, 4, false);
}

TEST(PipelineHostStaged, TiedEmbeddingsAreRefused) {
  TPRIMAT_REQUIRE_GPU();
  if (tprimat::testing::world_size() % 2 != 0) GTEST_SKIP() << "PP=2 needs an even world";
  try {
    train::TrainingStep<Cuda, TinyTied, Pp2, parallel::comm::Mpi> step({1, 16, 2, 0}, {}, 1,
                                                                       mpi_world());
    ADD_FAILURE() << "PP=2 with tied embeddings must be refused";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tied embeddings"), std::string::npos) << e.what();
  }
}

TEST(TensorAndPipelineHostStaged, LlamaNarrow) {  // TP 2 x PP 2 at 4 ranks
  TPRIMAT_REQUIRE_GPU();
  compare_with_one_gpu<LlamaNarrowKv2, Tp2Pp2>(mpi_world(), false, {1, 128, 4, 0}, 4, true);
}

TEST(TensorParallelNccl, LlamaNarrow) {
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  compare_with_one_gpu<LlamaNarrowKv2, Tp2>(nccl_world(), false, {1, 128, 1, 0}, 5, true);
}

TEST(TensorParallelNccl, TiedEmbeddings) {
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  compare_with_one_gpu<TinyTied, Tp2>(nccl_world(), false, {2, 64, 2, 0}, 5, true);
}

TEST(PipelineNccl, LlamaNarrow) {
  TPRIMAT_REQUIRE_GPU_PER_RANK();
  compare_with_one_gpu<LlamaNarrow, Pp2>(nccl_world(), false, {1, 128, 4, 0}, 4, true);
}

}  // namespace
