// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// plan_gradient_buckets: every DP rank's slices tile each bucket once, owned state is compact,
// AdamW's per-slice tensor ends and decay flags match the table.
#include <gtest/gtest.h>

#include <vector>

#include "tprimat/model/llama31_8b.hpp"
#include "tprimat/model/tiny.hpp"
#include "tprimat/train/buffer_table.hpp"
#include "tprimat/train/gradient_buckets.hpp"
#include "../../support/test_models.hpp"

namespace {

using namespace tprimat;
using Segments = std::vector<std::pair<std::int64_t, std::int64_t>>;

/// The device engine's segments: [embedding], [layer 0] ... [layer L-1], [final norm, head].
Segments segments_of(const train::ParameterTable& t) {
  std::vector<std::int64_t> starts{0};
  for (const auto& lp : t.layers) starts.push_back(lp.attn_norm);
  starts.push_back(t.final_norm);
  Segments s;
  for (std::size_t i = 0; i < starts.size(); ++i)
    s.emplace_back(starts[i], (i + 1 < starts.size() ? starts[i + 1] : t.total()) - starts[i]);
  return s;
}

/// Over all ranks: each element of [0, total) is in exactly one rank's slice; each rank's owned
/// bases are compact; the decay flag a slice's tensor ends give each element is its tensor's.
void check_plan(const train::ParameterTable& table, int dp, bool expect_per_segment,
                train::BucketLayout layout = train::BucketLayout::in_place) {
  const bool padded = layout == train::BucketLayout::padded_segments;
  const Segments segs = segments_of(table);
  const std::int64_t total = table.total();
  std::vector<int> covered(static_cast<std::size_t>(total), 0);
  std::vector<std::uint8_t> decay_of(static_cast<std::size_t>(total));
  for (const auto& t : table.tensors)
    for (std::int64_t i = t.offset; i < t.offset + t.size(); ++i) decay_of[i] = t.decay;
  for (int r = 0; r < dp; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r) + " of " + std::to_string(dp));
    const train::BucketPlan plan = train::plan_gradient_buckets(segs, table, dp, r, layout);
    EXPECT_EQ(plan.buckets.size(), expect_per_segment ? segs.size() : 1u);
    std::int64_t base = 0;
    for (const auto& b : plan.buckets) {
      EXPECT_EQ(b.owned_base, base);
      base += b.chunk;
      EXPECT_LE(b.slice_count, b.chunk);
      EXPECT_EQ(b.slice_begin % train::slice_align, 0) << "AdamW's vector path on every rank";
      if (padded) {  // reduced from a staging buffer of chunk x dp
        EXPECT_GE(b.chunk * dp, b.count);
        EXPECT_LT(b.chunk * dp, b.count + dp * train::slice_align) << "no more than the padding";
        EXPECT_EQ(b.chunk % train::slice_align, 0);
      } else {
        EXPECT_LE(b.offset + b.chunk * dp, total + plan.padding) << "collectives stay in bounds";
      }
      if (expect_per_segment && !padded) EXPECT_EQ(b.chunk * dp, b.count);
      for (std::int64_t i = 0; i < b.slice_count; ++i) {
        const std::int64_t e = b.slice_begin + i;
        ++covered[e];
        int k = 0;  // the kernel's lookup: first tensor whose end lies past i (the last at most)
        while (k < b.tensors - 1 && plan.tensor_ends[b.tensors_begin + k] <= i) ++k;
        ASSERT_EQ(plan.decay[b.tensors_begin + k], decay_of[e]) << "element " << e;
      }
    }
    EXPECT_EQ(plan.owned, base);
  }
  for (std::int64_t e = 0; e < total; ++e) ASSERT_EQ(covered[e], 1) << "element " << e;
}

TEST(GradientBuckets, OneBucketPerSegmentWhenDpDividesEach) {
  const auto table = train::make_parameter_table(model::dims<model::Tiny>(), train::Shard{});
  for (int dp : {1, 2, 4}) check_plan(table, dp, true);
}

TEST(GradientBuckets, OnePaddedBucketOtherwise) {
  const auto table = train::make_parameter_table(model::dims<model::Tiny>(), train::Shard{});
  check_plan(table, 3, false);
  check_plan(table, 7, false);
}

// ZeRO-2: one bucket per segment whatever DP, each padded to whole chunks on its own.
TEST(GradientBuckets, PaddedSegmentsForAnyDp) {
  const auto table = train::make_parameter_table(model::dims<model::Tiny>(), train::Shard{});
  for (int dp : {1, 2, 3, 4, 7}) {
    SCOPED_TRACE("dp " + std::to_string(dp));
    check_plan(table, dp, true, train::BucketLayout::padded_segments);
  }
}

// ZeRO-2's staging buffers: the layers' two in turn; an untied head's and the embedding's one
// (the head's is reduced before the embedding's is written), a tied head's final norm its own;
// each as large as its segments' chunks x DP.
TEST(GradientBuckets, StagingSlotsOfShardedGradients) {
  train::OptimizerConfig opt;
  opt.sharding = train::ShardingStrategy::optim_grads;
  const train::StepShape shape{1, 16, 2, 0};
  for (const int dp : {2, 3}) {
    const train::RankPlan p = train::plan_rank(model::dims<model::Tiny>(), shape, opt, {}, {},
                                               {dp, dp - 1});
    ASSERT_TRUE(p.sharded_grads);
    const train::GradientSyncPlan sync = train::plan_gradient_sync(p);
    const auto& b = sync.buckets;
    ASSERT_EQ(b.segment_slot.size(), sync.segments.size());
    ASSERT_EQ(b.slot_elements.size(), 3u) << "embedding and head, two layers' in turn";
    const int last = static_cast<int>(b.segment_slot.size()) - 1;
    EXPECT_EQ(b.segment_slot.front(), 0);
    EXPECT_EQ(b.segment_slot.back(), 0);
    for (int s = 1; s < last; ++s) EXPECT_EQ(b.segment_slot[s], 1 + (s - 1) % 2) << "layer " << s;
    for (std::size_t s = 0; s < b.buckets.size(); ++s)
      EXPECT_GE(b.slot_elements[b.segment_slot[s]], b.buckets[s].chunk * dp);
    EXPECT_EQ(b.padding, 0) << "the weights are gathered through the staging where padded";
  }
  // Tied: the final norm's segment its own buffer.
  const train::RankPlan tied = train::plan_rank(model::dims<tprimat::testing::TinyTied>(), shape, opt, {}, {}, {2, 1});
  const train::BucketPlan tb = train::plan_gradient_sync(tied).buckets;
  EXPECT_EQ(tb.slot_elements.size(), 4u);
  EXPECT_EQ(tb.segment_slot.back(), 3);
  // ZeRO-1 and no sharding keep the gradients whole, in place.
  opt.sharding = train::ShardingStrategy::optim;
  const train::RankPlan z1 =
      train::plan_rank(model::dims<model::Tiny>(), shape, opt, {}, {}, {2, 0});
  EXPECT_FALSE(z1.sharded_grads);
  EXPECT_TRUE(train::plan_gradient_sync(z1).buckets.slot_elements.empty());
}

// Hybrid sharding: replica 3 of 4 in 2 instances is rank 1 of its instance's 2, and its buckets
// are DP 2's rank 1's; the instance count is checked against the replicas before any plan.
TEST(GradientBuckets, HybridShardingPlansOneInstancesShards) {
  train::OptimizerConfig opt;
  opt.sharding = train::ShardingStrategy::optim_grads;
  const train::StepShape shape{1, 16, 2, 0};
  const auto tiny = model::dims<model::Tiny>();
  const train::RankPlan dp2 = train::plan_rank(tiny, shape, opt, {}, {}, {2, 1});
  opt.optimizer_instances = 2;
  const train::RankPlan hybrid = train::plan_rank(tiny, shape, opt, {}, {}, {4, 3});
  EXPECT_EQ(hybrid.dp, 4);
  EXPECT_EQ(hybrid.shards, 2);
  EXPECT_EQ(hybrid.shard_rank, 1);
  EXPECT_EQ(hybrid.instances, 2);
  EXPECT_TRUE(hybrid.sharded_grads);
  const auto a = train::plan_gradient_sync(dp2).buckets,
             b = train::plan_gradient_sync(hybrid).buckets;
  ASSERT_EQ(a.buckets.size(), b.buckets.size());
  for (std::size_t i = 0; i < a.buckets.size(); ++i) {
    EXPECT_EQ(a.buckets[i].chunk, b.buckets[i].chunk);
    EXPECT_EQ(a.buckets[i].slice_begin, b.buckets[i].slice_begin);
  }
  EXPECT_EQ(a.slot_elements, b.slot_elements);
  // The second instance's slices are the first's: it counts none of them in the norm, but
  // keeps as many (empty) ranges, so it holds the buffers the first does.
  EXPECT_EQ(hybrid.instance, 1);
  const auto counted = [](const train::GradientSyncPlan& sync) {
    std::int64_t n = 0;
    for (const auto& r : sync.norm_ranges) n += r.count;
    return n;
  };
  const train::GradientSyncPlan second = train::plan_gradient_sync(hybrid);
  const train::GradientSyncPlan first =
      train::plan_gradient_sync(train::plan_rank(tiny, shape, opt, {}, {}, {4, 1}));
  EXPECT_EQ(counted(second), 0);
  EXPECT_GT(counted(first), 0);
  EXPECT_EQ(first.norm_ranges.size(), second.norm_ranges.size());
  // Groups of one shard nothing: plain data parallelism over the 4 replicas.
  opt.optimizer_instances = 4;
  const train::RankPlan ones = train::plan_rank(tiny, shape, opt, {}, {}, {4, 3});
  EXPECT_FALSE(ones.zero);
  EXPECT_EQ(ones.shards, 4);
  EXPECT_EQ(ones.shard_rank, 3);
  EXPECT_EQ(ones.instances, 1);
  EXPECT_FALSE(train::plan_gradient_sync(ones).norm_ranges.empty());
  // 3 instances of 4 replicas, any beside no_shard, or none at all: refused, naming the numbers.
  opt.optimizer_instances = 3;
  try {
    (void)train::plan_rank(tiny, shape, opt, {}, {}, {4, 0});
    ADD_FAILURE() << "3 instances of 4 replicas were planned";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("do not divide DP x CP = 4"), std::string::npos)
        << e.what();
  }
  opt.optimizer_instances = 2;
  opt.sharding = train::ShardingStrategy::no_shard;
  EXPECT_TRUE(train::optimizer_instances_error(opt, 4).has_value());
  opt.optimizer_instances = 0;
  EXPECT_TRUE(train::optimizer_instances_error(opt, 4).has_value());
  opt.optimizer_instances = 1;
  EXPECT_FALSE(train::optimizer_instances_error(opt, 4).has_value());
}

// FSDP shares ZeRO-2's slots: its weight staging buffers are the gradients' (bf16); FP8 under
// FSDP is refused by name until its weight casts gather first.
TEST(GradientBuckets, FsdpStagesWeightsInTheGradientsSlots) {
  train::OptimizerConfig opt;
  opt.sharding = train::ShardingStrategy::optim_grads_params;
  const train::StepShape shape{1, 16, 2, 0};
  const train::RankPlan p =
      train::plan_rank(model::dims<model::Tiny>(), shape, opt, {}, {}, {2, 0});
  EXPECT_TRUE(p.sharded_grads && p.sharded_weights);
  const train::GradientSyncPlan sync = train::plan_gradient_sync(p);
  const train::BufferTable table = train::parameter_buffers(p, sync.buckets);
  std::int64_t weights = 0;
  std::vector<std::int64_t> staged;
  for (const auto& e : table) {
    if (e.buffer == train::BufferId::weights) weights = e.count;
    if (e.buffer == train::BufferId::weight_staging) staged.push_back(e.count);
  }
  EXPECT_EQ(weights, sync.buckets.owned);
  EXPECT_EQ(staged, sync.buckets.slot_elements);
  // FP8 under FSDP casts each weight after its gather: recast copies, never kept ones.
  EXPECT_NO_THROW(train::check_sharding_built(opt, {}));
  auto fp8 = train::PrecisionConfig::fp8_hybrid(train::Fp8Recipe::delayed);
  EXPECT_EQ(train::fp8_copies_under(opt.sharding, train::Fp8Copies::kept),
            train::Fp8Copies::recast);
  try {
    train::check_sharding_built(opt, fp8);
    ADD_FAILURE() << "kept FP8 copies under FSDP accepted";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("FP8 under sharding strategy optim_grads_params"),
              std::string::npos)
        << e.what();
  }
  fp8.fp8.copies = train::Fp8Copies::recast;
  EXPECT_NO_THROW(train::check_sharding_built(opt, fp8));
  EXPECT_EQ(train::fp8_copies_under(train::ShardingStrategy::optim_grads, train::Fp8Copies::kept),
            train::Fp8Copies::kept);
}

TEST(GradientBuckets, DpOneIsTheWholeSegments) {
  const auto table = train::make_parameter_table(
      model::dims<model::Llama31_8B>().with_layers(2), train::Shard{});
  const auto plan = train::plan_gradient_buckets(segments_of(table), table, 1, 0);
  EXPECT_EQ(plan.padding, 0);
  EXPECT_EQ(plan.owned, table.total());
  for (const auto& b : plan.buckets) {
    EXPECT_EQ(b.slice_begin, b.offset);
    EXPECT_EQ(b.slice_count, b.count);
  }
}

TEST(GradientBuckets, LlamaSplitsEvenlyOverPowersOfTwo) {
  const auto table = train::make_parameter_table(
      model::dims<model::Llama31_8B>().with_layers(2), train::Shard{});
  for (int dp : {2, 8, 64}) {
    const auto plan = train::plan_gradient_buckets(segments_of(table), table, dp, dp - 1);
    EXPECT_EQ(plan.buckets.size(), 4u) << "dp " << dp;
    EXPECT_EQ(plan.padding, 0);
  }
}

}  // namespace
