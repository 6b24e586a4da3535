// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// A parallel layout on the device engine against one GPU on the same global batch: the check every
// DP, TP and PP test under mpirun makes (data_parallel_test.cpp, model_parallel_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../support/sharding.hpp"
#include "../support/test_models.hpp"
#include "mpi_gpu_test.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/train/training_step.hpp"

namespace tprimat::testing {

/// What DP shards in a comparison (train::ShardingStrategy): nothing, ZeRO-1, ZeRO-2, FSDP.
inline constexpr auto no_shard = train::ShardingStrategy::no_shard;
inline constexpr auto zero1 = train::ShardingStrategy::optim;
inline constexpr auto zero2 = train::ShardingStrategy::optim_grads;
inline constexpr auto fsdp = train::ShardingStrategy::optim_grads_params;


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

inline double l2(std::span<const float> a) {
  double s = 0;
  for (float x : a) s += double(x) * x;
  return std::sqrt(s);
}

/// FP8 with its weights cast at each use (recast copies): what FSDP runs, each weight cast after
/// its gather (train::fp8_copies_under).
inline train::PrecisionConfig fp8_recast(train::Fp8Recipe recipe) {
  auto p = train::PrecisionConfig::fp8_hybrid(recipe);
  p.fp8.copies = train::Fp8Copies::recast;
  return p;
}

/// How close a layout must come to one GPU. Each micro-batch's forward and backward are the same
/// kernels on the same data on both sides, except that TP changes the order of fp32 sums
/// (row-parallel partial products, the split dot products of the input gradients) and so the bf16
/// roundings of some activations. DP changes only the order of the fp32 sums across micro-batches
/// (each replica's accumulation, then the reduction). PP changes nothing a gradient sees (the fp32
/// activations travel exactly, micro-batches accumulate in the same order); only the norm's partial
/// sums are grouped by stage. Sequence parallelism (shape.sequence_parallel under TP) also
/// rounds each row-parallel sublayer's output to bf16 twice (the partial product, then its
/// reduce-scatter's sum) where one GPU adds it to the fp32 residual unrounded.
struct OneGpuBounds {
  bool exact = false;       ///< PP alone: losses, gradients, weights bit for bit
  bool same_sums = false;   ///< weights identical: every gradient sum the same on both sides
  double loss = 0, norm = 0, gradient = 0;
  double tensor_beyond = 1, model_beyond = 1;  ///< fractions beyond one bf16 rounding at the end

  static OneGpuBounds of(int tp, int pp, int dp, const train::StepShape& shape, bool tied,
                         int vocab, const train::PrecisionConfig& precision = {}) {
    OneGpuBounds b;
    // Context parallelism merges two blocks' bf16 outputs and adds their bf16 query gradients
    // (one more rounding each) and sums the key/value gradients in another order: TP's drift.
    const bool cp = shape.context_parallel > 1;
    b.exact = tp == 1 && dp == 1 && !cp;
    if (precision.is_fp8() && !b.exact) {
      // FP8 under DP: each replica's activation and gradient scales come from its own
      // micro-batches (one GPU's from all of them), so from step 2 the delayed recipe quantises
      // on other grids; under TP (one scale for the group) the other sum order moves values. Any
      // weight an ulp apart can put a value on the other side of an FP8 rounding. Measured (H100,
      // host-staged, 4 steps): DP loss <= 3.8e-4, norm <= 3.5e-3; TP loss <= 2.3e-4, norm
      // <= 5.8e-3; worst tensor gradient 1.95e-1 (a query weight, TP delayed).
      // Bounds 5e-3, 5e-2, 3e-1 a tensor; any weight may differ.
      b.loss = 5e-3;
      b.norm = 5e-2;
      b.gradient = 3e-1;
      return b;
    }
    // Two replicas of one micro-batch each: every gradient element is a + b on both sides, except
    // an embedding row that tokens of both micro-batches share, one of them more than once (one
    // GPU adds the second micro-batch's tokens to the row one by one, a replica sums them first):
    // about 1e-4 of a step's draws at 128k tokens of vocabulary and 128 a micro-batch (the test
    // draws again then: replica_tokens), but certain at a vocabulary of 256. Tied embeddings
    // interleave the head's and the embedding's terms on one GPU. Under PP the stages' norms add
    // up in another order.
    b.same_sums = b.exact || (tp == 1 && !cp && pp == 1 && dp == 2 && shape.grad_accum == 1 && !tied &&
                              std::int64_t{vocab} >= 1000LL * shape.mbs * shape.seq);
    // From step 2 on the weights differ by ulps wherever a sum ran in another order over more
    // than one micro-batch a replica, or under TP: bf16 roundings of activations then differ too.
    // Three replicas or more: the reduction adds them in its own order (MPI's, NCCL's ring), one
    // GPU micro-batch by micro-batch (seen at DP 3: 4% of a tensor's weights beyond one rounding).
    const bool drift = tp > 1 || cp || shape.grad_accum > 1 || dp > 2;
    b.loss = tp > 1 || cp ? 2e-3 : 1e-3;  // the issue asks 2e-2
    b.norm = tp > 1 || cp ? 2e-2 : 1e-3;
    // Sequence parallelism: two more bf16 roundings (2^-9 relative each) of every O and down
    // output, the same size as the roundings TP already moves (q, k, v, gate, up and the
    // gradients' bf16 copies are rounded on both sides, from inputs that differ by ulps), so the
    // drift about doubles: TP's bounds times 1.5 for loss and norm, and 8e-2 a tensor's gradient
    // (TP measured 4.3e-2 at most). Measured (two H200s, NCCL and host-staged, np 2 and 4,
    // 2026-11-27): bf16 loss 4.1e-5, norm 9.9e-4, tensor gradient 3.8e-2 at most.
    const bool sp = tp > 1 && shape.sequence_parallel;
    if (sp) {
      b.loss = 3e-3;
      b.norm = 3e-2;
    }
    // Per tensor, L2, relative (with a floor of 1e-3 of the whole gradient's norm, for tensors
    // whose gradient is ~0, such as the key bias): the step tests' bound for bf16 pipelines
    // against fp32 (measured, H100 and H200: at most 4.3e-2 on the key bias and 1.4e-2 on the
    // matrices under TP, 1.2e-2 under PP x DP at 4 micro-batches); a missing or misplaced term
    // would be off by O(1).
    b.gradient = sp ? 8e-2 : drift ? 5e-2 : 1e-2;
    // An element whose gradient is near zero may take a different AdamW step (its first steps are
    // nearly lr x sign(g)). A wrong slice, bucket or shard would move far more than these
    // fractions (measured with drift: at most 3.2% of the model, under TP).
    b.tensor_beyond = drift ? 1.0 : 0.01;
    b.model_beyond = drift ? 0.10 : 0.001;
    return b;
  }
};

/// `dp` replicas' tokens (`per_rank` each) from `seed`; with `same_sums`, drawn again (from the
/// next seeds) while some token repeats within one replica's share and appears in another's too:
/// the one embedding row whose sum one GPU and the replicas would add in another order.
inline std::vector<std::int32_t> replica_tokens(std::size_t per_rank, int dp, int vocab,
                                                std::uint64_t seed, bool same_sums) {
  for (std::uint64_t draw = 0;; ++draw) {
    auto tokens = random_tokens(per_rank * std::size_t(dp), vocab, seed + draw * 7919);
    if (!same_sums) return tokens;
    std::map<std::int32_t, std::vector<int>> counts;  // token: occurrences in each replica's share
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      auto& c = counts[tokens[i]];
      c.resize(std::size_t(dp));
      ++c[i / per_rank];
    }
    const bool shared_repeat = std::any_of(counts.begin(), counts.end(), [](const auto& kv) {
      const auto& c = kv.second;
      return std::count_if(c.begin(), c.end(), [](int n) { return n > 0; }) > 1 &&
             *std::max_element(c.begin(), c.end()) > 1;
    });
    if (!shared_repeat) return tokens;
  }
}

/// `steps` steps of M under layout L (DP over the rest of the ranks of `world`, each replica its
/// share of the global batch) and on one GPU (the whole global batch as DP x grad_accum
/// micro-batches), from the same seed and tokens, under OneGpuBounds:
/// - Start: every rank's shard holds one GPU's weights exactly (draws keyed by place), and under
///   an uneven pipeline split (shape.stage_layers) its stage's own count of layers.
/// - Each step: loss and gradient norm; without sharding (where a rank holds only its slices'
///   reduced gradients) every tensor's gradient. A mismatch names the tensor.
/// - End: every fp32 master weight within one bf16 rounding (2^-8 relative) + 2 x steps x lr_peak,
///   or equal where the sums are the same; the fractions beyond one rounding bounded.
/// Both sides run the attention kernels `attention` names.
template <class M, class L, class World>
void compare_with_one_gpu(World world, Sharding sharding, train::StepShape shape, int steps,
                          bool graph, bool overlap = true,
                          const train::PrecisionConfig& precision = {},
                          train::AttentionChoice attention = train::AttentionChoice::automatic) {
  using One = parallel::Layout<1, 1>;
  const int size = world.size(), rank = world.rank();
  const int mp = L::tp * L::pp * shape.context_parallel;
  if (size % mp != 0)
    GTEST_SKIP() << "TP x PP x CP = " << mp << " does not divide " << size << " ranks";
  const bool zero = sharding.strategy != train::ShardingStrategy::no_shard;
  const std::string zero_name = sharding.label();
  // The weights' replicas (DP x CP): DP 2 at least, and 2 for each hybrid sharding instance.
  const int replicas = size / (L::tp * L::pp);
  const int needed = std::max(2 * shape.context_parallel, 2 * sharding.instances);
  if (zero && (replicas < needed || replicas % sharding.instances != 0))
    GTEST_SKIP() << zero_name << " needs DP x CP = " << needed << ": run under mpirun -np "
                 << needed * L::tp * L::pp;
  const bool capturable = size == 1 || train::device_collectives_of(world)->capturable();
  const std::uint64_t seed = shared_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + ", rank " + std::to_string(rank) + " of " +
               std::to_string(size) + zero_name);
  train::OptimizerConfig opt;
  opt.warmup_steps = 2;  // a real learning rate from step 2 on, so the updates matter
  opt = sharding.applied_to(opt);
  train::DeviceOptions options{attention, graph, false, overlap};
  options.precision = precision;
  train::TrainingStep<backend::Gpu, M, L, World> ranks(shape, opt, seed, std::move(world),
                                                        options);
  const int dp = ranks.groups().shape.dp, dp_rank = ranks.groups().at.dp;
  const OneGpuBounds bound =
      OneGpuBounds::of(L::tp, L::pp, dp, shape, M::tied_embeddings, M::vocab, precision);
  train::StepShape whole = shape;
  whole.grad_accum = shape.grad_accum * dp;
  whole.stage_layers.clear();  // one GPU: one stage of every layer, every token
  whole.context_parallel = 1;
  train::OptimizerConfig one_opt = opt;
  one_opt.optimizer_instances = 1;  // one GPU: one replica, nothing to split
  train::TrainingStep<backend::Gpu, M, One> one(whole, one_opt, seed, {}, options);
  const train::ParameterTable& shard_table = ranks.engine().table();
  const train::ParameterTable& one_table = one.engine().table();
  // An uneven split (shape.stage_layers): this stage holds its own count of layers, not L / PP.
  if (!shape.stage_layers.empty())
    ASSERT_EQ(shard_table.layers.size(),
              std::size_t(shape.stage_layers.at(std::size_t(ranks.groups().at.pp))));

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
    const auto tokens = replica_tokens(per_rank, dp, M::vocab, seed + 1000 + s, bound.same_sums);
    const train::StepStats a = one.run(tokens);
    const train::StepStats b =
        ranks.run(std::span<const std::int32_t>(tokens).subspan(dp_rank * per_rank, per_rank));
    ASSERT_TRUE(std::isfinite(b.loss) && std::isfinite(b.grad_norm));
    const double dl = std::abs(b.loss - a.loss) / std::abs(a.loss);
    const double dn = std::abs(b.grad_norm - a.grad_norm) / a.grad_norm;
    worst_loss = std::max(worst_loss, dl);
    worst_norm = std::max(worst_norm, dn);
    EXPECT_LE(dl, bound.exact ? 0.0 : bound.loss) << "layout " << b.loss << " one GPU " << a.loss;
    EXPECT_LE(dn, bound.exact ? 1e-12 : bound.norm)
        << "layout " << b.grad_norm << " one GPU " << a.grad_norm;
    if (zero) continue;
    for_each_tensor(shard_table, ranks.engine().gradients(), one_table, one.engine().gradients(),
                    [&](const train::ParamTensor& t, auto got, auto want) {
                      double err = 0;
                      for (std::size_t i = 0; i < got.size(); ++i) {
                        ASSERT_TRUE(std::isfinite(got[i])) << t.name << " gradient " << i;
                        err += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
                      }
                      err = std::sqrt(err);
                      const double norm = l2(want);
                      EXPECT_LE(err, bound.exact ? 0.0
                                                 : bound.gradient * norm + 1e-3 * a.grad_norm)
                          << "gradient of " << t.name << ": L2 error " << err << ", norm "
                          << norm;
                      if (norm > 0 && err / norm > worst_grad) {
                        worst_grad = err / norm;
                        worst_grad_tensor = t.name;
                      }
                    });
  }
  EXPECT_EQ(ranks.engine().graph_captured(), graph && capturable);

  const double step_bound = 2.0 * steps * opt.lr_peak;
  double worst_weight = 0;
  std::int64_t beyond = 0, total = 0;
  for_each_tensor(
      shard_table, ranks.engine().parameters(), one_table, one.engine().parameters(),
      [&](const train::ParamTensor& t, auto got, auto want) {
        std::int64_t off = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
          const double err = std::abs(double(got[i]) - want[i]);
          const double rounding = std::ldexp(std::abs(double(want[i])), -8);
          ASSERT_TRUE(std::isfinite(got[i]) &&
                      err <= (bound.same_sums ? 0.0 : rounding + step_bound))
              << "tensor " << t.name << " element " << i << ": layout " << got[i] << " one GPU "
              << want[i];
          off += err > rounding + 1e-7;
          worst_weight = std::max(worst_weight, err);
        }
        EXPECT_LE(off, std::max<std::int64_t>(1, std::int64_t(bound.tensor_beyond * t.size())))
            << "tensor " << t.name << ": " << off << " of " << t.size()
            << " elements differ by more than one bf16 rounding";
        beyond += off;
        total += t.size();
      });
  EXPECT_LE(beyond, std::max<std::int64_t>(1, std::int64_t(bound.model_beyond * total)))
      << beyond << " of " << total << " weights differ by more than one bf16 rounding";
  std::printf(
      "[rank %d] %s tp %d pp %d cp %d dp %d%s%s: worst relative loss %.2e, norm %.2e, tensor "
      "gradient %.2e (%s); worst weight error %.2e, %lld of %lld weights beyond one bf16 "
      "rounding\n",
      rank, precision.name().c_str(), L::tp, L::pp, shape.context_parallel, dp, zero_name.c_str(),
      ranks.shape().sequence_parallel ? " SP" : "", worst_loss, worst_norm, worst_grad,
      worst_grad_tensor.c_str(), worst_weight, static_cast<long long>(beyond),
      static_cast<long long>(total));
}

}  // namespace tprimat::testing
