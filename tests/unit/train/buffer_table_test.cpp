// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// train/buffer_table.hpp: the device engine's buffers by hand (one layer, selective and full
// recomputation, FP8 layers and copies, the last stage's head, the context- and tensor-parallel
// exchanges, the step's small buffers, the attention backward's workspace), and the memory plan
// summing that table for every model x layout x precision x recomputation x CP.
#include "tprimat/train/buffer_table.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tprimat/bench/memory_plan.hpp"
#include "tprimat/train/attention_workspace.hpp"
#include "tprimat/train/gradient_buckets.hpp"
#include "tprimat/model/all.hpp"
#include "tprimat/model/counts.hpp"

namespace {

using namespace tprimat;
using train::BufferHolder;
using train::BufferId;
using train::BufferTable;
using train::BufferTerm;

train::RankPlan llama_rank(int layers, int tp = 1, train::Recompute recompute = {},
                           bool sequence_parallel = false, int cp = 1) {
  train::StepShape shape;
  shape.mbs = 1;
  shape.seq = 2048;
  shape.layers = layers;
  shape.recompute = recompute;
  shape.sequence_parallel = sequence_parallel;
  shape.context_parallel = cp;
  const model::Dims dims = model::dims<model::Llama31_8B>().with_layers(layers);
  return train::plan_rank(dims, shape, {}, {tp, 0}, {1, 0}, {1, 0}, {cp, 0});
}

/// Bytes of the buffers `holder` [index] holds.
std::int64_t holder_bytes(const BufferTable& t, BufferHolder holder, int index) {
  std::int64_t sum = 0;
  for (const auto& e : t)
    if (e.holder == holder && e.index == index) sum += e.bytes();
  return sum;
}

std::int64_t stage_bytes(const BufferTable& t, BufferId b) {
  for (const auto& e : t)
    if (e.holder == BufferHolder::stage && e.buffer == b) return e.bytes();
  return 0;
}

constexpr std::int64_t h = 4096, q = 4096, kv = 1024, f = 14336, heads = 32, tokens = 2048;
// A bf16 layer a token: x and x_mid fp32, both norms' bf16 outputs, their fp32 rstd, q k v and the
// attention output in bf16, the fp32 log-sum-exp of each head, gate and up in bf16.
constexpr std::int64_t layer_token =
    4 * 2 * h + 2 * 2 * h + 4 * 2 + 2 * (2 * q + 2 * kv) + 4 * heads + 2 * 2 * f;

TEST(BufferTable, OneLayerByHand) {
  const auto p = llama_rank(1);
  const BufferTable t = train::activation_buffers(p, {}, 1 << 20);
  EXPECT_EQ(holder_bytes(t, BufferHolder::kept_layer, 0), tokens * layer_token);
  EXPECT_EQ(stage_bytes(t, BufferId::x_final), tokens * 4 * h);
  // The head: one chunk of bf16 logits (loss_chunk_rows >= 2048 rows here) and the fp32 gradient
  // of its input; the final norm's output, its rstd and each row's loss.
  EXPECT_EQ(train::table_bytes(t, BufferTerm::logits), tokens * 128256 * 2 + tokens * h * 4);
  EXPECT_EQ(train::table_bytes(t, BufferTerm::activations),
            tokens * (layer_token + 4 * h + 2 * h + 4 + 4));
  // Scratch: the MLP's four bf16 [ffn] tensors, dres (fp32), dxn (fp32) and dres's bf16 copy,
  // dattn and dq, dk and dv in bf16, the norm's 256 partial rows, a 1-float bias partial (no
  // bias); the attention workspace as given, in the workspace term.
  EXPECT_EQ(train::table_bytes(t, BufferTerm::scratch),
            tokens * (2 * 4 * f + 4 * h + 4 * h + 2 * h + 2 * 2 * q + 2 * 2 * kv) + 4 * 256 * h +
                4);
  EXPECT_EQ(train::table_bytes(t, BufferTerm::workspace), 1 << 20);
  EXPECT_EQ(train::table_bytes(t, BufferTerm::fp8), 0);
}

TEST(BufferTable, SequenceParallelSplitsTheResidualRowsOnly) {
  const auto plain = train::activation_buffers(llama_rank(1, 2), {}, 0);
  const auto sp = train::activation_buffers(llama_rank(1, 2, {}, true), {}, 0);
  // TP 2: x, x_mid and both rstd over 1024 rows; the gathered norm outputs stay whole.
  EXPECT_EQ(holder_bytes(plain, BufferHolder::kept_layer, 0) -
                holder_bytes(sp, BufferHolder::kept_layer, 0),
            (tokens / 2) * (4 * 2 * h + 4 * 2));
  EXPECT_EQ(holder_bytes(plain, BufferHolder::kept_layer, 0),
            tokens * (4 * 2 * h + 2 * 2 * h + 4 * 2 + 2 * (2 * q + 2 * kv) / 2 + 4 * heads / 2 +
                      2 * 2 * f / 2));
}

TEST(BufferTable, SelectiveRecomputationSharesWhatItReruns) {
  constexpr auto norms = static_cast<unsigned>(train::RecomputeModule::layernorm),
                 mlp = static_cast<unsigned>(train::RecomputeModule::mlp);
  const auto p = llama_rank(4, 1, train::selective_recompute(norms | mlp));
  const BufferTable t = train::activation_buffers(p, {}, 0);
  // Each layer drops both norm outputs, gate and up; the stage holds one set of them.
  for (int l = 0; l < 4; ++l)
    EXPECT_EQ(holder_bytes(t, BufferHolder::kept_layer, l),
              tokens * (layer_token - 2 * 2 * h - 2 * 2 * f));
  EXPECT_EQ(stage_bytes(t, BufferId::rerun_xn1), tokens * 2 * h);
  EXPECT_EQ(stage_bytes(t, BufferId::rerun_xn2), tokens * 2 * h);
  EXPECT_EQ(stage_bytes(t, BufferId::rerun_gate), tokens * 2 * f);
  EXPECT_EQ(stage_bytes(t, BufferId::rerun_up), tokens * 2 * f);
  for (const auto& e : t)
    if (e.storage != e.buffer) {
      EXPECT_EQ(e.count, 0) << train::name_of(e.buffer);
      EXPECT_GT(stage_bytes(t, e.storage), 0) << train::name_of(e.storage);
    }
}

TEST(BufferTable, FullRecomputationKeepsGroupInputsAndOneGroup) {
  const train::Recompute uniform2{train::RecomputeGranularity::full,
                                  train::RecomputeMethod::uniform, 2};
  const auto p = llama_rank(4, 1, uniform2);
  const BufferTable t = train::activation_buffers(p, {}, 0);
  // Layers 0 and 2 keep their group's fp32 input; 1 and 3 nothing; one group of 2 runs again.
  EXPECT_EQ(holder_bytes(t, BufferHolder::kept_layer, 0), tokens * 4 * h);
  EXPECT_EQ(holder_bytes(t, BufferHolder::kept_layer, 1), 0);
  EXPECT_EQ(holder_bytes(t, BufferHolder::kept_layer, 2), tokens * 4 * h);
  EXPECT_EQ(holder_bytes(t, BufferHolder::recomputed_layer, 0), tokens * layer_token);
  EXPECT_EQ(holder_bytes(t, BufferHolder::recomputed_layer, 1), tokens * layer_token);
  EXPECT_EQ(holder_bytes(t, BufferHolder::recomputed_layer, 2), 0);
  EXPECT_EQ(stage_bytes(t, BufferId::recomputed_output), tokens * 4 * h);
}

TEST(BufferTable, Fp8LayersKeepNoBf16NormOutputs) {
  const auto p = llama_rank(4);
  const auto fp8 = train::PrecisionConfig::fp8_hybrid(train::Fp8Recipe::current);
  const BufferTable t = train::activation_buffers(p, fp8, 0);
  for (int l = 0; l < 4; ++l)
    EXPECT_EQ(holder_bytes(t, BufferHolder::kept_layer, l),
              tokens * (layer_token - (fp8.layer_in_fp8(l, 4) ? 2 * 2 * h : 0)))
        << "layer " << l;
  // A norm's bf16 output waits in cast_input for its FP8 cast: the plan's fp8 term.
  EXPECT_EQ(train::table_bytes(t, BufferTerm::fp8), tokens * 2 * h);
}

TEST(BufferTable, SwigluScratchOnlyWhereALayerRunsInBf16) {
  const auto p = llama_rank(4);
  // Delayed: every layer in FP8, SwiGLU's output and gradients computed where they are cast.
  // Current: the first and last layers in bf16, which write them.
  const BufferTable all_fp8 = train::activation_buffers(
      p, train::PrecisionConfig::fp8_hybrid(train::Fp8Recipe::delayed), 0);
  const BufferTable edges_bf16 = train::activation_buffers(
      p, train::PrecisionConfig::fp8_hybrid(train::Fp8Recipe::current), 0);
  for (const BufferId b : {BufferId::hidden, BufferId::dgate, BufferId::dup}) {
    EXPECT_EQ(stage_bytes(all_fp8, b), 0) << train::name_of(b);
    EXPECT_EQ(stage_bytes(edges_bf16, b), tokens * f * 2) << train::name_of(b);
  }
  // The down projection's input gradient is SwiGLU backward's input in either kind of layer.
  EXPECT_EQ(stage_bytes(all_fp8, BufferId::dhidden), tokens * f * 2);
  EXPECT_EQ(train::table_bytes(edges_bf16, BufferTerm::scratch) -
                train::table_bytes(all_fp8, BufferTerm::scratch),
            3 * tokens * f * 2);
}

TEST(BufferTable, ParametersAndOptimizerStateByHand) {
  train::StepShape shape;
  shape.layers = 1;
  const model::Dims dims = model::dims<model::Llama31_8B>().with_layers(1);
  const std::int64_t params = model::total_params(dims);
  const auto term = [](const BufferTable& t, BufferTerm x) { return table_bytes(t, x); };
  // One replica: bf16 weights, fp32 gradients, the master's 16-bit remainders, two fp32 moments.
  const auto buffers = [](const train::RankPlan& p) {
    return train::parameter_buffers(p, train::plan_gradient_sync(p).buckets);
  };
  const auto one = buffers(train::plan_rank(dims, shape, {}, {1, 0}, {1, 0}, {1, 0}));
  EXPECT_EQ(term(one, BufferTerm::weights), 2 * params);
  EXPECT_EQ(term(one, BufferTerm::gradients), 4 * params);
  EXPECT_EQ(term(one, BufferTerm::master), 2 * params);
  EXPECT_EQ(term(one, BufferTerm::adam_moments), 8 * params);
  // ZeRO-1 over 3 ranks: the segments do not split in 3 x 4-element slices, so one bucket over the
  // whole buffer, padded to 3 equal chunks of whole slices; each rank updates its chunk.
  train::OptimizerConfig zero;
  zero.sharding = train::ShardingStrategy::optim;
  const auto three = buffers(train::plan_rank(dims, shape, zero, {1, 0}, {1, 0}, {3, 1}));
  const std::int64_t chunk = ((params + 2) / 3 + 3) / 4 * 4;
  EXPECT_EQ(term(three, BufferTerm::weights), 2 * 3 * chunk);
  EXPECT_EQ(term(three, BufferTerm::gradients), 4 * 3 * chunk);
  EXPECT_EQ(term(three, BufferTerm::master), 2 * chunk);
  EXPECT_EQ(term(three, BufferTerm::adam_moments), 8 * chunk);
}

TEST(BufferTable, Fp8BuffersByHandKeptAndRecast) {
  const auto p = llama_rank(4);
  auto fp8 = train::PrecisionConfig::fp8_hybrid(train::Fp8Recipe::current);  // layers 1 and 2
  const std::int64_t projections = 2 * h * q + 2 * h * kv + 3 * h * f;
  // Scales, fp32, a history of 1: amax, amax_now, scale, history and a 4-float scale_inv slot per
  // tensor; E4M3's 4 layers x (7 weights + 4 inputs), E5M2's 4 x 7 gradients.
  const std::int64_t scales = 4 * 8 * (4 * 11 + 4 * 7);
  // An input's rows and two gradient pairs, each [tokens, ffn] (the widest), a byte each.
  const std::int64_t scratch = 5 * tokens * f;
  const BufferTable kept = train::fp8_buffers(p, fp8);
  // Kept copies: both FP8 layers' weights, rows and transposed; their four inputs' transposes.
  EXPECT_EQ(table_bytes(kept, BufferTerm::fp8),
            2 * (2 * projections + tokens * (h + q + h + f)) + scratch + scales);
  fp8.fp8.copies = train::Fp8Copies::recast;
  const BufferTable recast = train::fp8_buffers(p, fp8);
  // Recast: the largest weight's one copy (h x ffn) and x_qkv's and x_mlp's transposes.
  EXPECT_EQ(table_bytes(recast, BufferTerm::fp8), h * f + 2 * tokens * 2 * h + scratch + scales);
  // Delayed scaling keeps 1,024 amaxes of each history tensor (every tensor here: one slot).
  fp8 = train::PrecisionConfig::fp8_hybrid(train::Fp8Recipe::delayed);
  const BufferTable delayed = train::fp8_buffers(p, fp8);
  std::int64_t history = 0;
  for (const auto& e : delayed)
    if (e.buffer == BufferId::fp8_history) history += e.bytes();
  EXPECT_EQ(history, 4 * 1024 * (4 * 11 + 4 * 7));
  EXPECT_TRUE(train::fp8_buffers(p, {}).empty());  // bf16: none
}

TEST(BufferTable, OnlyTheLastStageHoldsTheHead) {
  train::StepShape shape;
  shape.layers = 4;
  shape.grad_accum = 4;
  const model::Dims dims = model::dims<model::Llama31_8B>().with_layers(4);
  const auto first = train::plan_rank(dims, shape, {}, {1, 0}, {2, 0}, {1, 0});
  const auto last = train::plan_rank(dims, shape, {}, {1, 0}, {2, 1}, {1, 0});
  EXPECT_EQ(train::table_bytes(train::activation_buffers(first, {}, 0), BufferTerm::logits), 0);
  EXPECT_GT(train::table_bytes(train::activation_buffers(last, {}, 0), BufferTerm::logits), 0);
  // 1F1B: the first stage keeps 2 micro-batches in flight, each its layers and its output.
  const auto t = train::activation_buffers(first, {}, 0);
  EXPECT_EQ(stage_bytes(t, BufferId::x_final), 2 * tokens * 4 * h);
  EXPECT_EQ(holder_bytes(t, BufferHolder::kept_layer, 2), tokens * layer_token);  // slot 1
}

TEST(BufferTable, ContextParallelBuffersByHand) {
  EXPECT_TRUE(train::context_parallel_buffers(llama_rank(1)).empty());
  // CP 2 at seq 2048: 1,024 tokens a rank, chunks of 512. Gathered K and V of both ranks, K and V
  // of the whole sequence in order (bf16), their fp32 gradients by owner; a chunk's partial
  // output (bf16) and log-sum-exp (fp32, per head); one call's dK and dV over all 2,048 keys.
  const BufferTable t = train::context_parallel_buffers(llama_rank(1, 1, {}, false, 2));
  const std::int64_t local = tokens / 2, chunk = tokens / 4;
  EXPECT_EQ(train::table_bytes(t, BufferTerm::scratch),
            2 * (2 * local * kv * 2) + 2 * (2 * 2 * local * kv) + 4 * (2 * local * kv * 2) +
                2 * chunk * q + 4 * chunk * heads + 2 * (2 * tokens * kv));
  EXPECT_EQ(stage_bytes(t, BufferId::cp_key_grads), 4 * 2 * tokens * kv);
}

TEST(BufferTable, TensorParallelBuffersByHand) {
  EXPECT_TRUE(train::tensor_parallel_buffers(llama_rank(1)).empty());
  // TP 2, last stage: three fp32 loss statistics a row from each rank's vocabulary slice.
  const BufferTable plain = train::tensor_parallel_buffers(llama_rank(1, 2));
  EXPECT_EQ(train::table_bytes(plain, BufferTerm::scratch), 4 * 2 * tokens * 3);
  // Sequence parallelism adds the row-parallel GEMMs' bf16 partial products, whole rows.
  const BufferTable sp = train::tensor_parallel_buffers(llama_rank(1, 2, {}, true));
  EXPECT_EQ(stage_bytes(sp, BufferId::tp_partial), 2 * tokens * h);
}

TEST(BufferTable, StepBuffersByHand) {
  train::StepShape shape;
  shape.mbs = 2;
  shape.seq = 1024;
  shape.layers = 1;
  shape.grad_accum = 3;
  const model::Dims dims = model::dims<model::Llama31_8B>().with_layers(1);
  const auto p = train::plan_rank(dims, shape, {}, {1, 0}, {1, 0}, {1, 0});
  const auto sync = train::plan_gradient_sync(p);
  const BufferTable t = train::step_buffers(p, sync);
  const std::int64_t n = 2 * 1024, ga = 3, tensors = std::int64_t(p.table.tensors.size());
  // Per micro-batch: inputs, targets, group ids, positions, touched rows (n each), offsets
  // (n + 1), the group and touched counts, int32; the loss and norm results and the loss's 1,024
  // partials in double; RoPE's cos and sin [1024, 64] fp32; 1,024 norm partials a norm range; the
  // optimizer's 32-byte scalars, each tensor's end (int64) and decay flag (a byte).
  EXPECT_EQ(train::table_bytes(t, BufferTerm::workspace),
            4 * ga * (5 * n + (n + 1) + 2) + 8 * (2 + 1024) + 2 * 4 * 1024 * 64 +
                8 * 1024 * std::int64_t(sync.norm_ranges.size()) + 32 + 9 * tensors);
  EXPECT_EQ(stage_bytes(t, BufferId::opt_bucket_tensor_ends), 0);  // no ZeRO-1
  EXPECT_EQ(sync.norm_ranges.size(), sync.buckets.buckets.size());  // TP rank 0: whole slices
}

// cuDNN's backward workspace as cuDNN 9 stated it on H200 (tests/gpu/attention_test.cpp asks it
// again), and the flash kernels'.
TEST(AttentionWorkspace, CudnnAndFlashByHand) {
  using train::AttentionCall;
  EXPECT_EQ(train::cudnn_backward_workspace({1, 8192, 8192, 32, 128}), 269484288);
  EXPECT_EQ(train::cudnn_backward_workspace({2, 32768, 32768, 28, 128}), 1886388480);
  EXPECT_EQ(train::cudnn_backward_workspace({1, 4096, 12288, 32, 128}), 268960000);
  EXPECT_EQ(train::flash_backward_workspace({2, 2048, 2048, 32, 128}), 2 * 32 * 2048 * 4);
  // A rank of CP 2 at seq 2048 (chunks of 512): rank 0 holds chunks 0 and 3, whose prefix of 3
  // chunks (1,536 keys) asks the most.
  const auto p = llama_rank(1, 1, {}, false, 2);
  EXPECT_EQ(train::attention_workspace_bytes(p, train::AttentionKernel::cudnn),
            train::cudnn_backward_workspace({1, 512, 1536, 32, 128}));
  EXPECT_EQ(train::attention_workspace_bytes(llama_rank(1), train::AttentionKernel::flash),
            train::flash_backward_workspace({1, 2048, 2048, 32, 128}));
}

/// Every term of the plan of `in` against the sums of the table of each stage's rank 0.
void expect_plan_sums_table(const bench::MemoryPlanInput& in) {
  const auto stages = bench::plan_stages(in);
  for (int s = 0; s < in.pp; ++s) {
    const auto rank = bench::detail::stage_rank_plan(in, s);
    const auto t =
        train::engine_buffers(rank, in.precision, train::plan_gradient_sync(rank),
                              train::attention_workspace_bytes(rank, in.attention_kernel));
    const auto& m = stages[static_cast<std::size_t>(s)];
    for (const auto& [term, planned] :
         {std::pair{BufferTerm::weights, m.weights}, std::pair{BufferTerm::gradients, m.gradients},
          std::pair{BufferTerm::master, m.master},
          std::pair{BufferTerm::adam_moments, m.adam_moments},
          std::pair{BufferTerm::activations, m.activations},
          std::pair{BufferTerm::logits, m.logits}, std::pair{BufferTerm::scratch, m.scratch},
          std::pair{BufferTerm::fp8, m.fp8}})
      EXPECT_EQ(planned, double(table_bytes(t, term)));
    EXPECT_EQ(m.workspace, in.workspace_bytes + double(table_bytes(t, BufferTerm::workspace)));
    EXPECT_GT(m.activations, 0);
    // Every layer buffer belongs to a slot's layer that exists, and every shared one names a
    // stage buffer the table allocates.
    for (const auto& e : t) {
      if (e.holder == BufferHolder::kept_layer) EXPECT_LT(e.index, rank.slots * rank.local_layers);
      if (e.storage != e.buffer) EXPECT_GT(stage_bytes(t, e.storage), 0);
    }
  }
}

// The plan's terms are the table's sums, on every stage of every setting the GPU engine runs:
// each model, TP, PP, CP, sequence parallelism, precision, recomputation, with and without
// ZeRO-1 over DP 2.
TEST(BufferTable, ThePlanSumsTheTableForEverySetting) {
  constexpr auto norms = static_cast<unsigned>(train::RecomputeModule::layernorm),
                 mlp = static_cast<unsigned>(train::RecomputeModule::mlp);
  const std::vector<train::Recompute> recomputes = {
      {},
      train::selective_recompute(norms),
      train::selective_recompute(mlp),
      train::selective_recompute(norms | mlp),
      train::full_recompute_every_layer,
      {train::RecomputeGranularity::full, train::RecomputeMethod::uniform, 2},
      {train::RecomputeGranularity::full, train::RecomputeMethod::block, 3}};
  const std::vector<train::PrecisionConfig> precisions = {
      {},
      train::PrecisionConfig::fp8_hybrid(train::Fp8Recipe::delayed),
      train::PrecisionConfig::fp8_hybrid(train::Fp8Recipe::current)};
  const std::vector<model::Dims> models = {model::dims<model::Llama31_8B>(),
                                           model::dims<model::Qwen25_7B>(),
                                           model::dims<model::Mistral7B>()};
  int planned = 0;
  for (int setting = 0; setting < 3 * 2 * 2 * 2 * 2 * 3 * 7 * 2; ++setting) {
    int rest = setting;
    const auto next = [&](int n) {
      const int v = rest % n;
      rest /= n;
      return v;
    };
    bench::MemoryPlanInput in;
    in.dims = models[static_cast<std::size_t>(next(3))].with_layers(8);
    in.tp = 1 << next(2);
    in.pp = 1 << next(2);
    in.shape.context_parallel = 1 << next(2);
    in.shape.sequence_parallel = next(2) == 1;
    in.precision = precisions[static_cast<std::size_t>(next(3))];
    in.shape.recompute = recomputes[static_cast<std::size_t>(next(7))];
    in.sharding = static_cast<train::ShardingStrategy>(next(3));
    // The flash kernels' workspace where they could run (no CP), on half the settings.
    if (in.shape.context_parallel == 1 && in.tp == 2)
      in.attention_kernel = train::AttentionKernel::flash;
    in.dp = 2;
    in.shape.grad_accum = 4;
    SCOPED_TRACE("setting " + std::to_string(setting));
    expect_plan_sums_table(in);
    ++planned;
  }
  EXPECT_EQ(planned, 2016);
}

}  // namespace
