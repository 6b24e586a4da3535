// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Run under mpirun -np 2 and -np 4: groups, collectives, and TP / PP (even and uneven splits) /
// DP / ZeRO-1 / CP == one process.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "../support/sharding.hpp"
#include "tprimat/backend/cpu.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/data/synthetic.hpp"
#include "tprimat/model/tiny.hpp"
#include "tprimat/parallel/groups.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/parallel/mpi.hpp"
#include "tprimat/parallel/pipeline_split.hpp"
#include "tprimat/train/training_step.hpp"

namespace {

using namespace tprimat;
using parallel::comm::Mpi;

/// The second tiny spec: QKV bias and KV heads = heads / 4 (Tiny has heads / 2).
struct TinyQkvBias : model::Tiny {
  static constexpr std::string_view name = "Tiny QKV-bias";
  static constexpr std::string_view cli_name = "tiny-qkv-bias";
  static constexpr int kv_heads = 2;
  static constexpr bool qkv_bias = true;
};
static_assert(model::ModelSpec<TinyQkvBias>);

/// And tied embeddings: the head is the vocab-parallel embedding read transposed (PP = 1 only).
struct TinyTied : TinyQkvBias {
  static constexpr std::string_view name = "Tiny QKV-bias tied";
  static constexpr std::string_view cli_name = "tiny-tied";
  static constexpr bool tied_embeddings = true;
};
static_assert(model::ModelSpec<TinyTied>);

/// QKV bias and tied embeddings with Tiny's 4 KV heads, which TP=4 splits.
struct TinyTiedKv4 : TinyTied {
  static constexpr std::string_view name = "Tiny QKV-bias tied 4 KV heads";
  static constexpr std::string_view cli_name = "tiny-tied-kv4";
  static constexpr int kv_heads = 4;
};
static_assert(model::ModelSpec<TinyTiedKv4>);

TEST(MpiGroups, MegatronOrderAndGroupSizes) {
  Mpi world;
  const int n = world.size();
  const int tp = n >= 2 ? 2 : 1;
  auto g = parallel::make_groups(world, tp, 1);
  EXPECT_EQ(g.shape.world(), n);
  EXPECT_EQ(g.tp.size(), tp);
  EXPECT_EQ(g.dp.size(), n / tp);
  EXPECT_EQ(g.pp.size(), 1);
  EXPECT_EQ(g.at.tp, world.rank() % tp);  // TP fastest
  EXPECT_EQ(g.at.dp, world.rank() / tp);
  EXPECT_EQ(g.tp.rank(), g.at.tp);
  EXPECT_EQ(g.dp.rank(), g.at.dp);
  // A TP group sums over its own ranks only.
  std::vector<float> x{static_cast<float>(world.rank())};
  g.tp.all_reduce_sum(x);
  const int base = world.rank() - g.at.tp;
  EXPECT_EQ(x[0], static_cast<float>(tp * base + tp * (tp - 1) / 2));
}

// Hybrid sharding's groups: instances of consecutive replicas, and across them the ranks that
// hold the same shard; each sums over its own ranks only.
TEST(MpiGroups, ShardGroupsSplitTheReplicasIntoInstances) {
  Mpi world;
  if (world.size() != 4) GTEST_SKIP() << "needs 4 ranks";
  const auto g = parallel::make_groups(world, 1, 1);
  auto s = parallel::split_shard_groups(g.dp_cp, 2);
  const int r = world.rank();
  EXPECT_EQ(s.shard.size(), 2);
  EXPECT_EQ(s.replicate.size(), 2);
  EXPECT_EQ(s.shard.rank(), r % 2);
  EXPECT_EQ(s.replicate.rank(), r / 2);
  std::vector<float> x{static_cast<float>(r)};
  s.shard.all_reduce_sum(x);
  EXPECT_EQ(x[0], static_cast<float>(r / 2 == 0 ? 0 + 1 : 2 + 3));
  std::vector<float> y{static_cast<float>(r)};
  s.replicate.all_reduce_sum(y);
  EXPECT_EQ(y[0], static_cast<float>(r % 2 == 0 ? 0 + 2 : 1 + 3));
}

TEST(MpiGroups, WrongWorldSizeFailsBeforeAnyWork) {
  Mpi world;
  if (world.size() != 2) GTEST_SKIP() << "needs exactly 2 ranks";
  using Step = train::TrainingStep<backend::Cpu, model::Tiny, parallel::Layout<4, 1>, Mpi>;
  try {
    Step step(train::StepShape{1, 8, 1, 1}, {}, 42, world);
    FAIL() << "expected InputError";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("needs a multiple of 4 ranks, but this run has 2"),
              std::string::npos)
        << e.what();
  }
}

TEST(MpiComm, ReduceScatterAllGatherMaxSendRecv) {
  Mpi world;
  const int n = world.size(), r = world.rank();
  std::vector<float> in(2 * n), out(2);
  for (int i = 0; i < 2 * n; ++i) in[i] = static_cast<float>(i + r);
  world.reduce_scatter_sum(in, out);
  const float rank_sum = static_cast<float>(n * (n - 1) / 2);
  EXPECT_EQ(out[0], n * static_cast<float>(2 * r) + rank_sum);
  EXPECT_EQ(out[1], n * static_cast<float>(2 * r + 1) + rank_sum);
  std::vector<float> gathered(2 * n);
  world.all_gather(out, gathered);
  for (int i = 0; i < 2 * n; ++i) EXPECT_EQ(gathered[i], n * static_cast<float>(i) + rank_sum);
  std::vector<float> m{static_cast<float>(r), -static_cast<float>(r)};
  world.all_reduce_max(m);
  EXPECT_EQ(m[0], static_cast<float>(n - 1));
  EXPECT_EQ(m[1], 0.0f);
  if (n >= 2 && r < 2) {  // ranks 0 and 1 swap a buffer
    std::vector<float> buf{static_cast<float>(r + 10)};
    if (r == 0) {
      world.send(buf, 1);
      world.recv(buf, 1);
      EXPECT_EQ(buf[0], 11.0f);
    } else {
      std::vector<float> got(1);
      world.recv(got, 0);
      world.send(buf, 0);
      EXPECT_EQ(got[0], 10.0f);
    }
  }
}

/// Adam's eps in an equivalence run. `smooth` (1e-4) keeps each update a smooth function of its
/// gradient, so every weight is held to 1e-5; `standard` is the 1e-8 that real runs use, whose
/// weights are held to what a sign flip of a normalised update can cost (see the checks below).
enum class AdamEps { smooth, standard };
/// Megatron's sequence parallelism under TP (StepShape::sequence_parallel), or plain TP.
enum class SeqPar { off, on };

// What DP shards (train::ShardingStrategy): nothing, ZeRO-1, ZeRO-2.
constexpr auto no_shard = train::ShardingStrategy::no_shard;
constexpr auto zero1 = train::ShardingStrategy::optim;
constexpr auto zero2 = train::ShardingStrategy::optim_grads;
constexpr auto fsdp = train::ShardingStrategy::optim_grads_params;  // the reference runs ZeRO-2

using tprimat::testing::Sharding;

struct Observed {
  double loss = 0, norm = 0, weight = 0;  // largest relative differences seen
  double weight_in_lr = 0;  // largest |w_par - w_one| over the sum of the learning rates applied
  double off_tight = 0;     // fraction of this rank's weights beyond 1e-5 of their tensor's scale
};

/// 3 optimizer steps of model M under Layout<Tp, Pp> on the world (DP = world / (Tp x Pp),
/// `accum` micro-batches of 1 sequence per DP rank) against one process running the same
/// global batch; every rank checks its shard against the matching block of the reference, and a
/// mismatch names the tensor (layer and name). Tolerances, fp32 (each argued below): losses
/// and gradient norms 1e-5 relative; weights 1e-5 of their tensor's scale with Adam eps 1e-4,
/// with the default 1e-8 what a sign flip of a normalised update can cost.
template <class M, int Tp, int Pp>
Observed compare_with_one_process(Sharding sharding, int accum, AdamEps eps,
                                  const std::vector<int>& stage_layers = {},
                                  SeqPar sp = SeqPar::off, int cp = 1) {
  Mpi world;
  const int dp = world.size() / (Tp * Pp * cp);
  // 2 layers, or the uneven split's sum (each stage's counts; one process runs them all).
  int layers = 0;
  for (const int n : stage_layers) layers += n;
  if (layers == 0) layers = 2;
  const int seq = 32, gbs = accum * dp;
  train::OptimizerConfig opt;
  opt.lr_peak = 1e-3;
  opt.warmup_steps = 1;
  opt.decay_steps = 10;
  opt = sharding.applied_to(opt);
  // Adam divides each gradient by its own running magnitude: with eps 1e-8 a gradient of 1e-9
  // (pure summation-order noise, of either sign; the key bias's exact gradient is 0) becomes a
  // full lr-sized step, so two correct runs may differ by 2 lr per step in such weights. eps 1e-4
  // keeps the update a smooth function of the gradient: the weights then test the parallel
  // machinery element by element (measured <= 3e-6 relative), not Adam's conditioning.
  opt.eps = eps == AdamEps::smooth ? 1e-4 : train::OptimizerConfig{}.eps;
  train::StepShape shape{1, seq, accum, layers, stage_layers, sp == SeqPar::on};
  shape.context_parallel = cp;
  train::TrainingStep<backend::Cpu, M, parallel::Layout<Tp, Pp>, Mpi> par(shape, opt, 42, world);
  EXPECT_EQ(par.shape().sequence_parallel, sp == SeqPar::on && Tp > 1);
  // Each CP rank holds seq / CP tokens of each sequence; under SP each TP rank keeps 1 / TP of
  // those rows of the residual stream: the stage's output.
  EXPECT_EQ(par.model().residual_rows(), sp == SeqPar::on ? seq / cp / Tp : seq / cp);
  EXPECT_EQ(par.groups().shape.cp, cp);
  train::OptimizerConfig one_opt = opt;
  one_opt.optimizer_instances = 1;  // one process: one replica, nothing to split
  train::TrainingStep<backend::Cpu, M, parallel::Layout<1, 1>> one(
      train::StepShape{1, seq, gbs, layers}, one_opt, 42);
  const int dp_rank = par.groups().at.dp;
  data::SyntheticTokens data(M::vocab, 42);
  std::vector<std::int32_t> rank_tokens(accum * (seq + 1)), all_tokens(gbs * (seq + 1));
  Observed seen;
  double lr_sum = 0;
  for (int step = 0; step < 3; ++step) {
    data::fill_rank_batch(data, step, gbs, dp_rank, dp, seq, rank_tokens);
    data::fill_rank_batch(data, step, gbs, 0, 1, seq, all_tokens);
    const auto a = par.run(rank_tokens);
    const auto b = one.run(all_tokens);
    // fp32 sums in another order (TP partial products, DP replicas): loss and norm agree to
    // 1e-5 relative; NaN fails (the comparisons are false). With eps 1e-8 too: the only weights
    // that may differ by O(lr) are those whose gradient is ~0, where the loss is flat to first
    // order (measured <= 5e-8 loss, 1.4e-6 norm with either eps).
    const double dl = std::abs(a.loss - b.loss) / std::abs(b.loss);
    const double dn = std::abs(a.grad_norm - b.grad_norm) / std::abs(b.grad_norm);
    EXPECT_LE(dl, 1e-5) << "loss at step " << step << ": " << a.loss << " vs " << b.loss;
    EXPECT_LE(dn, 1e-5) << "grad norm at step " << step << ": " << a.grad_norm << " vs "
                        << b.grad_norm;
    EXPECT_EQ(a.lr, b.lr);
    lr_sum += b.lr;
    seen.loss = std::max(seen.loss, dl);
    seen.norm = std::max(seen.norm, dn);
  }
  const auto& mine = par.model().tensors();
  const auto& ref = one.model().tensors();
  // The stages of one pipeline hold every tensor of the model between them, each once.
  std::vector<double> count{static_cast<double>(mine.size())};
  Mpi pipeline = par.groups().pp;
  pipeline.all_reduce_sum(std::span<double>(count));
  EXPECT_EQ(count[0], static_cast<double>(ref.size()));
  const auto wa = par.model().params();
  const auto wb = one.model().params();
  std::int64_t elements = 0, off_tight = 0;
  for (const auto& t : mine) {
    const auto it = std::find_if(ref.begin(), ref.end(),
                                 [&](const train::ParamTensor& r) { return r.name == t.name; });
    if (it == ref.end() || t.full_rows != it->rows || t.full_cols != it->cols) {
      ADD_FAILURE() << "tensor " << t.name << " [" << t.full_rows << ", " << t.full_cols
                    << "] has no match in one process";
      return seen;
    }
    const auto& r = *it;
    auto mine_at = [&](std::int64_t row, std::int64_t col) {
      return double(wa[t.offset + row * t.cols + col]);
    };
    auto ref_at = [&](std::int64_t row, std::int64_t col) {
      return double(wb[r.offset + (row + t.row_begin) * r.cols + col + t.col_begin]);
    };
    // The tensor's scale: its largest weight (an element-wise relative test would divide by
    // weights that three updates moved through zero), at least the init std, since biases start
    // at 0 and after 3 steps of ~lr are ~30x smaller than the weights fp32 works on elsewhere.
    double max_diff = 0, max_ref = 0;
    for (std::int64_t row = 0; row < t.rows; ++row)
      for (std::int64_t col = 0; col < t.cols; ++col)
        max_ref = std::max(max_ref, std::abs(ref_at(row, col)));
    const double scale = std::max(max_ref, opt.init_std);
    for (std::int64_t row = 0; row < t.rows; ++row)
      for (std::int64_t col = 0; col < t.cols; ++col) {
        const double diff = std::abs(mine_at(row, col) - ref_at(row, col));
        max_diff = std::isnan(diff) ? INFINITY : std::max(max_diff, diff);
        off_tight += !(diff <= 1e-5 * scale);
      }
    elements += t.rows * t.cols;
    const std::string where = "tensor " + t.name + " (rank " + std::to_string(world.rank()) +
                              ", stage " + std::to_string(par.groups().at.pp) + ", TP block rows " +
                              std::to_string(t.row_begin) + "+" + std::to_string(t.rows) +
                              ", cols " + std::to_string(t.col_begin) + "+" +
                              std::to_string(t.cols) + ")";
    const double rel = max_diff / scale;
    if (eps == AdamEps::smooth)
      EXPECT_LE(rel, 1e-5) << where << ": max |w_par - w_one| = " << max_diff
                           << ", largest |w| = " << max_ref;
    // eps 1e-8, per element: AdamW moves a weight by lr x |m_hat| / sqrt(v_hat) per step, and
    // with betas 0.9 / 0.95 that ratio is at most 1.001 in the first 3 steps whatever the
    // gradients (Cauchy-Schwarz: (1 - b1) / sqrt(1 - b2) x sqrt(sum_k<t (b1^2 / b2)^k) x
    // sqrt(1 - b2^t) / (1 - b1^t)). Two runs whose tiny gradients differ in sign thus differ by
    // at most 2.002 x the sum of the lrs; 2.5 leaves room for weight decay and fp32 rounding
    // (measured <= 0.006). The bound cannot see a wrong gradient, since Adam's step is ~lr
    // whatever the gradient: it catches a wrong shard or init, a lost update, NaN; the losses,
    // norms and the count below see gradients.
    if (eps == AdamEps::standard)
      EXPECT_LE(max_diff, 2.5 * lr_sum) << where << ": max |w_par - w_one| = " << max_diff
                                        << " > 2.5 x " << lr_sum << " (the lrs applied)";
    seen.weight = std::max(seen.weight, rel);
    seen.weight_in_lr = std::max(seen.weight_in_lr, max_diff / lr_sum);
  }
  seen.off_tight = double(off_tight) / double(elements);
  // eps 1e-8, whole rank: only a weight whose gradient was at noise level in some step can leave
  // the 1e-5 band, and such weights are rare (measured <= 1.1e-4 of a rank's weights); a wrong
  // gradient in any matrix would move most of its elements out. A uniformly scaled gradient
  // leaves Adam's step unchanged: the gradient norm check above sees that one.
  if (eps == AdamEps::standard)
    EXPECT_LE(seen.off_tight, 1e-3) << off_tight << " of " << elements << " weights on rank "
                                    << world.rank() << " differ by more than 1e-5 of their "
                                    << "tensor's scale";
  return seen;
}

template <class M, int Tp, int Pp = 1>
void check_layout(const char* what, Sharding sharding, int accum = 2, AdamEps eps = AdamEps::smooth,
                  const std::vector<int>& stage_layers = {}, SeqPar sp = SeqPar::off, int cp = 1) {
  Mpi world;
  const Observed o =
      compare_with_one_process<M, Tp, Pp>(sharding, accum, eps, stage_layers, sp, cp);
  double worst[5] = {o.loss, o.norm, o.weight, o.weight_in_lr, o.off_tight};
  MPI_Allreduce(MPI_IN_PLACE, worst, 5, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (world.rank() == 0)
    std::printf(
        "%s (%s, %d ranks, Adam eps %s) vs one process, 3 steps: max rel diff loss %.3g, grad "
        "norm %.3g, weights %.3g (max |dw| %.3g x sum of lrs; %.2g of weights beyond 1e-5)\n",
        what, std::string(M::name).c_str(), world.size(), eps == AdamEps::smooth ? "1e-4" : "1e-8",
        worst[0], worst[1], worst[2], worst[3], worst[4]);
}

// -np 2: TP=2, PP=2, DP=2, DP=2 with ZeRO-1. -np 4: TP=4, TP=2 x PP=2, TP=2 x DP=2 (plain and
// ZeRO-1), PP=2 x DP=2 with ZeRO-1, DP=4 with ZeRO-1. Gradient accumulation 2 unless said
// otherwise; Adam eps 1e-4 unless the test's name says the default.
TEST(ParallelEquivalence, TensorParallel2) {
  if (Mpi{}.size() != 2) GTEST_SKIP() << "TP=2 alone needs 2 ranks";
  check_layout<model::Tiny, 2>("TP=2", no_shard);
  check_layout<TinyQkvBias, 2>("TP=2", no_shard);
  check_layout<TinyTied, 2>("TP=2", no_shard);
}

// Sequence parallelism changes which rank sums which rows (reduce-scatter, all-gather instead
// of all-reduces, norm gains' gradients summed over TP once per step), not what is computed:
// the same fp32 tolerances as plain TP hold (1e-5 relative loss and norm, weights 1e-5 of their
// tensor's scale with Adam eps 1e-4).
TEST(ParallelEquivalence, SequenceParallelTensorParallel2) {
  if (Mpi{}.size() != 2) GTEST_SKIP() << "TP=2 alone needs 2 ranks";
  const auto sp = SeqPar::on;
  check_layout<model::Tiny, 2>("TP=2 SP", no_shard, 2, AdamEps::smooth, {}, sp);
  check_layout<TinyQkvBias, 2>("TP=2 SP", no_shard, 2, AdamEps::smooth, {}, sp);
  check_layout<TinyTied, 2>("TP=2 SP", no_shard, 2, AdamEps::smooth, {}, sp);
  check_layout<TinyQkvBias, 2>("TP=2 SP", no_shard, 2, AdamEps::standard, {}, sp);
  // At TP=1 the flag means nothing: the step turns it off and runs plain DP.
  check_layout<model::Tiny, 1>("DP=2 SP asked", no_shard, 2, AdamEps::smooth, {}, sp);
}

TEST(ParallelEquivalence, SequenceParallelRowsMustSplitOverTp) {
  if (Mpi{}.size() != 2) GTEST_SKIP() << "TP=2 alone needs 2 ranks";
  Mpi world;
  // mbs 1 x seq 33 token rows do not split over TP=2: refused before anything is allocated.
  try {
    train::TrainingStep<backend::Cpu, model::Tiny, parallel::Layout<2, 1>, Mpi> step(
        train::StepShape{1, 33, 1, 2, {}, true}, {}, 42, world);
    ADD_FAILURE() << "seq 33 under TP=2 with sequence parallelism was accepted";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("mbs x seq = 1 x 33 = 33"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("run without sequence parallelism"), std::string::npos)
        << e.what();
  }
}

TEST(ParallelEquivalence, PipelineParallel2) {
  if (Mpi{}.size() != 2) GTEST_SKIP() << "PP=2 alone needs 2 ranks";
  check_layout<model::Tiny, 1, 2>("PP=2", no_shard);
  check_layout<TinyQkvBias, 1, 2>("PP=2", no_shard);
  // 4 micro-batches: 1F1B's steady phase runs 3 times on stage 0 and reuses its 2 slots.
  check_layout<TinyQkvBias, 1, 2>("PP=2 accum 4", no_shard, 4);
}

// An uneven split (Megatron's --decoder-first/last-pipeline-num-layers) of 4 layers: 3+1 and
// 1+3 hold every tensor once between the stages and match one process as the even split does.
// Each stage also checks that it holds exactly its own layers.
TEST(ParallelEquivalence, PipelineParallel2UnevenSplit) {
  if (Mpi{}.size() != 2) GTEST_SKIP() << "PP=2 alone needs 2 ranks";
  for (const std::vector<int> split : {std::vector<int>{3, 1}, std::vector<int>{1, 3}}) {
    const std::string what = "PP=2 split " + parallel::stage_layers_text(split);
    check_layout<model::Tiny, 1, 2>(what.c_str(), no_shard, 2, AdamEps::smooth, split);
    check_layout<TinyQkvBias, 1, 2>((what + " accum 4").c_str(), no_shard, 4, AdamEps::smooth, split);
  }
}

TEST(ParallelEquivalence, PipelineStagesHoldTheirSplitsLayers) {
  Mpi world;
  if (world.size() != 2) GTEST_SKIP() << "PP=2 alone needs 2 ranks";
  train::TrainingStep<backend::Cpu, model::Tiny, parallel::Layout<1, 2>, Mpi> step(
      train::StepShape{1, 16, 2, 4, {3, 1}}, {}, 42, world);
  const int stage = step.groups().at.pp;
  std::vector<std::string> layers;
  for (const auto& t : step.model().tensors())
    if (t.name.starts_with("layers.")) {  // "layers.<l>.attn.wq"
      const std::string index = t.name.substr(7, t.name.find('.', 7) - 7);
      if (std::find(layers.begin(), layers.end(), index) == layers.end()) layers.push_back(index);
    }
  EXPECT_EQ(layers, stage == 0 ? (std::vector<std::string>{"0", "1", "2"})
                               : (std::vector<std::string>{"3"}));
  // A split that does not sum to the layers run is refused before anything is built.
  try {
    train::TrainingStep<backend::Cpu, model::Tiny, parallel::Layout<1, 2>, Mpi> bad(
        train::StepShape{1, 16, 2, 4, {3, 2}}, {}, 42, world);
    FAIL() << "expected InputError";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("3+2 = 5 layers, Tiny runs 4"), std::string::npos)
        << e.what();
  }
}

// PP with tied embeddings does not compile (tests/compile_fail/pp_tied_fail.cpp); with run-time
// dims the engine refuses it (TransformerShard.PipelineRejectsTiedEmbeddingsAndEmptyStages).

TEST(ParallelEquivalence, DataParallel2) {
  if (Mpi{}.size() != 2) GTEST_SKIP() << "DP=2 needs 2 ranks";
  check_layout<model::Tiny, 1>("DP=2", no_shard);
  check_layout<TinyTied, 1>("DP=2", no_shard);
}

TEST(ParallelEquivalence, DataParallel2DistributedOptimizer) {
  if (Mpi{}.size() != 2) GTEST_SKIP() << "DP=2 needs 2 ranks";
  check_layout<model::Tiny, 1>("DP=2 ZeRO-1", zero1);
  check_layout<TinyTied, 1>("DP=2 ZeRO-1", zero1);
}

// The default eps 1e-8 on the layouts that sum in another order (TP and DP; PP is bit-exact):
// the key bias's gradient is 0 exactly, so its Adam steps are pure noise.
TEST(ParallelEquivalence, DefaultAdamEpsTensorParallel2DataParallel2) {
  if (Mpi{}.size() != 2) GTEST_SKIP() << "TP=2 and DP=2 alone need 2 ranks";
  check_layout<TinyQkvBias, 2>("TP=2", no_shard, 2, AdamEps::standard);
  check_layout<TinyTied, 1>("DP=2 ZeRO-1", zero1, 2, AdamEps::standard);
}

TEST(ParallelEquivalence, TensorParallel4) {
  if (Mpi{}.size() != 4) GTEST_SKIP() << "TP=4 needs 4 ranks";
  check_layout<model::Tiny, 4>("TP=4", no_shard);
  check_layout<TinyTiedKv4, 4>("TP=4", no_shard);
}

TEST(ParallelEquivalence, DefaultAdamEpsTensorParallel4AndTensorParallel2DataParallel2) {
  if (Mpi{}.size() != 4) GTEST_SKIP() << "TP=4 and TP=2 x DP=2 need 4 ranks";
  check_layout<TinyTiedKv4, 4>("TP=4", no_shard, 2, AdamEps::standard);
  check_layout<TinyQkvBias, 2>("TP=2 x DP=2 ZeRO-1", zero1, 2, AdamEps::standard);
}

TEST(ParallelEquivalence, TensorParallel2PipelineParallel2) {
  if (Mpi{}.size() != 4) GTEST_SKIP() << "TP=2 x PP=2 needs 4 ranks";
  check_layout<model::Tiny, 2, 2>("TP=2 x PP=2", no_shard);
  check_layout<TinyQkvBias, 2, 2>("TP=2 x PP=2", no_shard);
}

TEST(ParallelEquivalence, TensorParallel2PipelineParallel2UnevenSplit) {
  if (Mpi{}.size() != 4) GTEST_SKIP() << "TP=2 x PP=2 needs 4 ranks";
  check_layout<TinyQkvBias, 2, 2>("TP=2 x PP=2 split 3+1", no_shard, 2, AdamEps::smooth, {3, 1});
}

TEST(ParallelEquivalence, PipelineParallel2DataParallel2UnevenSplitDistributedOptimizer) {
  if (Mpi{}.size() != 4) GTEST_SKIP() << "PP=2 x DP=2 needs 4 ranks";
  check_layout<TinyQkvBias, 1, 2>("PP=2 x DP=2 ZeRO-1 split 1+3", zero1, 2, AdamEps::smooth, {1, 3});
}

TEST(ParallelEquivalence, SequenceParallelTensorParallel4AndTensorParallel2PipelineParallel2) {
  if (Mpi{}.size() != 4) GTEST_SKIP() << "TP=4 and TP=2 x PP=2 need 4 ranks";
  const auto sp = SeqPar::on;
  check_layout<TinyTiedKv4, 4>("TP=4 SP", no_shard, 2, AdamEps::smooth, {}, sp);
  // The stage boundary carries each TP rank's seq / TP rows; 4 micro-batches reuse the slots.
  check_layout<TinyQkvBias, 2, 2>("TP=2 x PP=2 SP", no_shard, 2, AdamEps::smooth, {}, sp);
  check_layout<TinyQkvBias, 2, 2>("TP=2 x PP=2 SP accum 4", no_shard, 4, AdamEps::smooth, {}, sp);
  // Both of issue 26's layouts at once: SP's slices over an uneven 3+1 pipeline.
  check_layout<TinyQkvBias, 2, 2>("TP=2 x PP=2 SP split 3+1", no_shard, 2, AdamEps::smooth, {3, 1},
                                  sp);
  check_layout<model::Tiny, 2>("TP=2 x DP=2 SP ZeRO-1", zero1, 2, AdamEps::smooth, {}, sp);
}

TEST(ParallelEquivalence, TensorParallel2DataParallel2) {
  if (Mpi{}.size() != 4) GTEST_SKIP() << "TP=2 x DP=2 needs 4 ranks";
  check_layout<model::Tiny, 2>("TP=2 x DP=2", no_shard);
  check_layout<TinyTied, 2>("TP=2 x DP=2", no_shard);
  check_layout<model::Tiny, 2>("TP=2 x DP=2 ZeRO-1", zero1);
}

TEST(ParallelEquivalence, PipelineParallel2DataParallel2DistributedOptimizer) {
  if (Mpi{}.size() != 4) GTEST_SKIP() << "PP=2 x DP=2 needs 4 ranks";
  check_layout<TinyQkvBias, 1, 2>("PP=2 x DP=2 ZeRO-1", zero1);
}

TEST(ParallelEquivalence, DataParallel4DistributedOptimizer) {
  if (Mpi{}.size() != 4) GTEST_SKIP() << "DP=4 needs 4 ranks";
  check_layout<TinyTied, 1>("DP=4 ZeRO-1", zero1);
}

// ZeRO-2 reduce-scatters each micro-batch's gradients (after its backward, under 1F1B too) and
// sums this rank's shard of them: the sums run in another order than plain DP's, within the same
// fp32 bounds.
TEST(ParallelEquivalence, DataParallel2ShardedGradients) {
  if (Mpi{}.size() != 2) GTEST_SKIP() << "DP=2 needs 2 ranks";
  check_layout<model::Tiny, 1>("DP=2 ZeRO-2", zero2);
  check_layout<TinyTied, 1>("DP=2 ZeRO-2 accum 3", zero2, 3);
  check_layout<TinyQkvBias, 1>("DP=2 ZeRO-2", zero2, 2, AdamEps::standard);
  check_layout<model::Tiny, 1>("CP=2 ZeRO-2", zero2, 2, AdamEps::smooth, {}, SeqPar::off, 2);
  check_layout<TinyTied, 1>("DP=2 FSDP", fsdp);
}

TEST(ParallelEquivalence, ShardedGradientsWithTpSpPpCpAtFourRanks) {
  if (Mpi{}.size() != 4) GTEST_SKIP() << "DP=4, TP=2 x DP=2, PP=2 x DP=2 and CP=2 x DP=2 need 4 ranks";
  check_layout<TinyTied, 1>("DP=4 ZeRO-2", zero2);
  check_layout<model::Tiny, 2>("TP=2 x DP=2 SP ZeRO-2", zero2, 2, AdamEps::smooth, {}, SeqPar::on);
  check_layout<TinyQkvBias, 1, 2>("PP=2 x DP=2 ZeRO-2 accum 4", zero2, 4);
  check_layout<model::Tiny, 1>("CP=2 x DP=2 ZeRO-2", zero2, 2, AdamEps::smooth, {}, SeqPar::off,
                               2);
}

// Hybrid sharding: each instance of the replicas shards over its own ranks, and each shard's
// gradients are summed over the instances once a step: sums in another order again, the same
// fp32 bounds. At np 2 the instances are single ranks (nothing sharded: an all-reduce).
TEST(ParallelEquivalence, HybridShardingOverInstances) {
  const int np = Mpi{}.size();
  if (np != 2 && np != 4) GTEST_SKIP() << "runs at np 2 and 4";
  if (np == 2) {
    check_layout<model::Tiny, 1>("DP=2 ZeRO-1 over 2 instances", Sharding{zero1, 2});
    return;
  }
  check_layout<TinyTied, 1>("DP=4 ZeRO-1 over 2 instances", Sharding{zero1, 2});
  check_layout<TinyQkvBias, 1>("DP=4 ZeRO-2 over 2 instances", Sharding{zero2, 2}, 3,
                               AdamEps::standard);
  check_layout<model::Tiny, 1>("DP=4 FSDP over 2 instances", Sharding{fsdp, 2});
  check_layout<model::Tiny, 1>("DP=4 ZeRO-2 over 4 instances", Sharding{zero2, 4});
  check_layout<model::Tiny, 1>("CP=2 x DP=2 ZeRO-2 over 2 instances", Sharding{zero2, 2}, 2,
                               AdamEps::smooth, {}, SeqPar::off, 2);
  check_layout<TinyQkvBias, 1, 2>("PP=2 x DP=2 ZeRO-1 over 2 instances", Sharding{zero1, 2});
  // The shards are an instance's: the optimizer state a rank holds grows from DP 4's quarter to
  // half with 2 instances; with 4 (groups of one) nothing is sharded, as without ZeRO.
  const auto held = [](train::ShardingStrategy sharding, int instances) {
    train::OptimizerConfig opt;
    opt.sharding = sharding;
    opt.optimizer_instances = instances;
    train::TrainingStep<backend::Cpu, model::Tiny, parallel::Layout<1, 1>, Mpi> step(
        train::StepShape{1, 32, 1, 2}, opt, 42, Mpi{});
    return step.peak_bytes();
  };
  EXPECT_LT(held(zero1, 1), held(zero1, 2));
  EXPECT_EQ(held(zero1, 4), held(no_shard, 1));
}

// An instance count that does not divide the replicas, or beside no_shard, is refused before
// any work, naming both numbers.
TEST(ParallelEquivalence, HybridShardingInstancesMustDivideTheReplicas) {
  Mpi world;
  if (world.size() != 4) GTEST_SKIP() << "needs 4 ranks";
  train::StepShape shape{1, 32, 1, 2};
  train::OptimizerConfig opt;
  opt.sharding = zero1;
  opt.optimizer_instances = 3;
  try {
    train::TrainingStep<backend::Cpu, model::Tiny, parallel::Layout<1, 1>, Mpi> step(shape, opt, 42,
                                                                                     world);
    ADD_FAILURE() << "3 instances over 4 replicas was accepted";
  } catch (const core::InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("3 distributed optimizer instances"), std::string::npos) << m;
    EXPECT_NE(m.find("do not divide DP x CP = 4"), std::string::npos) << m;
  }
  opt.sharding = no_shard;
  opt.optimizer_instances = 2;
  EXPECT_THROW((train::TrainingStep<backend::Cpu, model::Tiny, parallel::Layout<1, 1>, Mpi>(
                   shape, opt, 42, world)),
               core::InputError);
}

// ---- context parallelism ----------------------------------------------------------------------
// CP splits each sequence over the ranks (Megatron's load-balanced chunks); attention's softmax
// is merged over the ring's K/V blocks and every weight's gradient summed over the ranks' tokens,
// sums in another order only: the same fp32 tolerances as TP and DP hold (1e-5 relative loss and
// norm, weights 1e-5 of their tensor's scale with Adam eps 1e-4; the default eps's bounds).

TEST(ContextParallelEquivalence, ContextParallel2) {
  if (Mpi{}.size() != 2) GTEST_SKIP() << "CP=2 alone needs 2 ranks";
  check_layout<model::Tiny, 1>("CP=2", no_shard, 2, AdamEps::smooth, {}, SeqPar::off, 2);
  check_layout<TinyQkvBias, 1>("CP=2", no_shard, 2, AdamEps::smooth, {}, SeqPar::off, 2);
  check_layout<TinyTied, 1>("CP=2 ZeRO-1", zero1, 2, AdamEps::standard, {}, SeqPar::off, 2);
}

TEST(ContextParallelEquivalence, ContextParallel4AndWithTpSpPpAndDp) {
  if (Mpi{}.size() != 4)
    GTEST_SKIP() << "CP=4, CP=2 x TP=2, CP=2 x PP=2 and CP=2 x DP=2 need 4 ranks";
  check_layout<model::Tiny, 1>("CP=4", no_shard, 2, AdamEps::smooth, {}, SeqPar::off, 4);
  check_layout<TinyQkvBias, 2>("CP=2 x TP=2 SP", no_shard, 2, AdamEps::smooth, {}, SeqPar::on, 2);
  check_layout<TinyQkvBias, 1, 2>("CP=2 x PP=2", no_shard, 2, AdamEps::smooth, {}, SeqPar::off,
                                  2);
  check_layout<model::Tiny, 1>("CP=2 x DP=2 ZeRO-1", zero1, 2, AdamEps::smooth, {}, SeqPar::off,
                               2);
}

// A sequence that 2 x CP does not divide is refused before any work, naming the rule and both
// numbers.
TEST(ContextParallelEquivalence, SequenceMustSplitIntoTwiceCpChunks) {
  Mpi world;
  if (world.size() != 2) GTEST_SKIP() << "CP=2 alone needs 2 ranks";
  train::StepShape shape{1, 30, 1, 2};
  shape.context_parallel = 2;
  try {
    train::TrainingStep<backend::Cpu, model::Tiny, parallel::Layout<1, 1>, Mpi> step(
        shape, train::OptimizerConfig{}, 42, world);
    ADD_FAILURE() << "seq 30 over CP=2 was accepted";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("seq 30 is not a multiple of 4"), std::string::npos)
        << e.what();
  }
}

// ---- activation recomputation under a layout -------------------------------------------------
// A recomputed step reruns the same kernels (and the same TP collectives) on the same inputs:
// under TP (with SP), PP (1F1B's slots, an uneven split) and DP it equals the same layout's step
// without recomputation bit for bit: losses, gradient norms, every weight after 3 AdamW steps.

train::Recompute full_recompute(train::RecomputeMethod method, int layers) {
  return train::Recompute{.granularity = train::RecomputeGranularity::full, .method = method,
                          .num_layers = layers};
}

template <class M, int Tp, int Pp>
void check_recompute_bitwise(const std::string& what, train::Recompute recompute,
                             SeqPar sp = SeqPar::off, const std::vector<int>& split = {},
                             int cp = 1) {
  SCOPED_TRACE(what);
  Mpi world;
  const int dp = world.size() / (Tp * Pp * cp), accum = 4, seq = 32;
  train::OptimizerConfig opt;
  opt.lr_peak = 1e-3;
  opt.warmup_steps = 1;
  opt.decay_steps = 10;
  struct Seen {
    std::vector<double> losses, norms;
    std::vector<float> params;
  };
  auto three_steps = [&](train::Recompute r) {
    train::StepShape shape{1, seq, accum, 4, split, sp == SeqPar::on};
    shape.recompute = r;
    shape.context_parallel = cp;
    train::TrainingStep<backend::Cpu, M, parallel::Layout<Tp, Pp>, Mpi> step(shape, opt, 42,
                                                                              world);
    data::SyntheticTokens data(M::vocab, 42);
    std::vector<std::int32_t> tokens(accum * (seq + 1));
    Seen seen;
    for (int s = 0; s < 3; ++s) {
      data::fill_rank_batch(data, s, accum * dp, step.groups().at.dp, dp, seq, tokens);
      const auto st = step.run(tokens);
      seen.losses.push_back(st.loss);
      seen.norms.push_back(st.grad_norm);
    }
    seen.params.assign(step.model().params().begin(), step.model().params().end());
    return seen;
  };
  const Seen plain = three_steps({}), recomputed = three_steps(recompute);
  for (std::size_t s = 0; s < plain.losses.size(); ++s) {
    EXPECT_TRUE(std::isfinite(plain.losses[s]));
    EXPECT_EQ(plain.losses[s], recomputed.losses[s]) << "loss of step " << s;
    EXPECT_EQ(plain.norms[s], recomputed.norms[s]) << "gradient norm of step " << s;
  }
  ASSERT_EQ(plain.params.size(), recomputed.params.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < plain.params.size(); ++i)
    differ += plain.params[i] != recomputed.params[i];
  EXPECT_EQ(differ, 0u) << "weights of rank " << world.rank() << " that differ";
}

TEST(ParallelEquivalence, RecomputationIsBitwiseUnderTpSpAndPp) {
  using train::RecomputeMethod;
  const int np = Mpi{}.size();
  if (np != 2 && np != 4) GTEST_SKIP() << "runs at np 2 and 4";
  const auto uniform1 = full_recompute(RecomputeMethod::uniform, 1);
  const auto uniform2 = full_recompute(RecomputeMethod::uniform, 2);
  const auto block1 = full_recompute(RecomputeMethod::block, 1);
  if (np == 2) {
    check_recompute_bitwise<TinyQkvBias, 2, 1>("TP=2 SP uniform 1", uniform1, SeqPar::on);
    check_recompute_bitwise<TinyQkvBias, 1, 2>("PP=2 uniform 2", uniform2);
    check_recompute_bitwise<TinyQkvBias, 1, 2>("PP=2 split 3+1 block 1", block1, SeqPar::off,
                                               {3, 1});
    check_recompute_bitwise<model::Tiny, 1, 1>("DP=2 uniform 1", uniform1);
    // The recomputed forward runs the K/V ring again, in the same order on every CP rank.
    check_recompute_bitwise<model::Tiny, 1, 1>("CP=2 uniform 2", uniform2, SeqPar::off, {}, 2);
  } else {
    check_recompute_bitwise<TinyQkvBias, 2, 2>("TP=2 x PP=2 SP uniform 1", uniform1, SeqPar::on);
    check_recompute_bitwise<TinyTied, 2, 1>("TP=2 x DP=2 block 1", block1);
    check_recompute_bitwise<TinyQkvBias, 2, 1>("CP=2 x TP=2 SP block 1", block1, SeqPar::on, {},
                                               2);
  }
}

}  // namespace
