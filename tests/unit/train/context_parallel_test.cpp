// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Ring attention (train/cpu/context_parallel.hpp): CP ranks as threads, each holding its
// load-balanced share of the tokens, give the whole sequence's causal attention and its
// gradients, row for row.
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <thread>
#include <vector>

#include "tprimat/backend/cpu.hpp"
#include "tprimat/model/tiny.hpp"
#include "tprimat/parallel/context_parallel.hpp"
#include "tprimat/train/cpu/context_parallel.hpp"

namespace tprimat::train {
namespace {

using backend::Cpu;
using T = double;

/// CP threads passing blocks around a ring: each writes its block into the next one's mailbox,
/// all wait, each reads its own, all wait again before any mailbox is reused.
class ThreadRing {
 public:
  explicit ThreadRing(int cp) : cp_(cp), mailbox_(cp), sync_(cp) {}
  ContextParallelOps<T> ops(int rank) {
    return {[this, rank](std::span<const T> to_next, std::span<T> from_previous) {
              mailbox_[(rank + 1) % cp_].assign(to_next.begin(), to_next.end());
              sync_.arrive_and_wait();
              std::copy(mailbox_[rank].begin(), mailbox_[rank].end(), from_previous.begin());
              sync_.arrive_and_wait();
            },
            [](std::span<T>) {}};
  }

 private:
  int cp_;
  std::vector<std::vector<T>> mailbox_;
  std::barrier<> sync_;
};

struct Sequences {
  int mbs, seq;
  model::Dims d;
  std::int64_t qw() const { return d.q_dim(); }
  std::int64_t kw() const { return d.kv_dim(); }
};

/// Rows of `full` [mbs * seq, width] at `split`'s positions, [mbs * local_seq, width].
std::vector<T> local_rows(const std::vector<T>& full, const Sequences& s, std::int64_t width,
                          const parallel::ContextSplit& split) {
  const auto positions = split.positions();
  std::vector<T> out;
  for (int b = 0; b < s.mbs; ++b)
    for (const int p : positions) {
      const auto row = full.begin() + (std::int64_t{b} * s.seq + p) * width;
      out.insert(out.end(), row, row + width);
    }
  return out;
}

std::vector<T> random_values(std::int64_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<T> dist(0.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

void expect_near_all(const std::vector<T>& got, const std::vector<T>& want, const char* what,
                     int cp) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double diff = std::abs(got[i] - want[i]);
    worst = std::isnan(diff) ? INFINITY : std::max(worst, diff);
  }
  // Doubles; the ring sums the softmax in another order (log-sum-exp merges): 1e-12.
  EXPECT_LE(worst, 1e-12) << what << " at CP " << cp;
}

void check_ring(int cp) {
  model::Dims d = model::dims<model::Tiny>();  // 8 heads over 4 KV heads (GQA), head_dim 16
  const Sequences s{2, 32, d};
  const std::int64_t rows = std::int64_t{s.mbs} * s.seq;
  const auto q = random_values(rows * s.qw(), 1), k = random_values(rows * s.kw(), 2),
             v = random_values(rows * s.kw(), 3), dout = random_values(rows * s.qw(), 4);
  // The whole sequence in one process.
  std::vector<T> o(rows * s.qw()), lse(std::int64_t{s.mbs} * d.heads * s.seq), dq(q.size()),
      dk(k.size()), dv(v.size()), ws(Cpu::attention_workspace(s.seq));
  Cpu::attention_forward(q.data(), k.data(), v.data(), o.data(), lse.data(), s.mbs, s.seq, d.heads,
                         d.kv_heads, d.head_dim, ws.data());
  Cpu::attention_backward(q.data(), k.data(), v.data(), o.data(), lse.data(), dout.data(),
                          dq.data(), dk.data(), dv.data(), s.mbs, s.seq, d.heads, d.kv_heads,
                          d.head_dim, ws.data());
  // Each CP rank a thread with its share; lse rows [mbs, heads, seq] -> per-row layout first.
  ThreadRing ring(cp);
  std::vector<std::thread> ranks;
  struct Seen {
    std::vector<T> o, lse, dq, dk, dv;
  };
  std::vector<Seen> seen(cp);
  for (int r = 0; r < cp; ++r)
    ranks.emplace_back([&, r] {
      const parallel::ContextSplit split{s.seq, cp, r};
      cpu::ContextParallel<Cpu, T> ctx(ring.ops(r), split, s.mbs, d);
      const auto lq = local_rows(q, s, s.qw(), split), lk = local_rows(k, s, s.kw(), split),
                 lv = local_rows(v, s, s.kw(), split), ldout = local_rows(dout, s, s.qw(), split);
      Seen& mine = seen[r];
      mine.o.resize(lq.size());
      mine.lse.resize(std::int64_t{s.mbs} * d.heads * split.local_seq());
      mine.dq.resize(lq.size());
      mine.dk.resize(lk.size());
      mine.dv.resize(lv.size());
      ctx.attention_forward(lq.data(), lk.data(), lv.data(), mine.o.data(), mine.lse.data());
      ctx.attention_backward(lq.data(), lk.data(), lv.data(), mine.o.data(), mine.lse.data(),
                             ldout.data(), mine.dq.data(), mine.dk.data(), mine.dv.data());
    });
  for (auto& t : ranks) t.join();
  for (int r = 0; r < cp; ++r) {
    const parallel::ContextSplit split{s.seq, cp, r};
    SCOPED_TRACE("CP rank " + std::to_string(r));
    expect_near_all(seen[r].o, local_rows(o, s, s.qw(), split), "o", cp);
    expect_near_all(seen[r].dq, local_rows(dq, s, s.qw(), split), "dq", cp);
    expect_near_all(seen[r].dk, local_rows(dk, s, s.kw(), split), "dk", cp);
    expect_near_all(seen[r].dv, local_rows(dv, s, s.kw(), split), "dv", cp);
    // lse [mbs, heads, local_seq] against the whole sequence's [mbs, heads, seq].
    std::vector<T> want;
    for (int b = 0; b < s.mbs; ++b)
      for (int h = 0; h < d.heads; ++h)
        for (const int p : split.positions())
          want.push_back(lse[(std::int64_t{b} * d.heads + h) * s.seq + p]);
    expect_near_all(seen[r].lse, want, "lse", cp);
  }
}

TEST(RingAttention, TwoRanksEqualTheWholeSequence) { check_ring(2); }
TEST(RingAttention, FourRanksEqualTheWholeSequence) { check_ring(4); }

// A block whose keys all lie after a query row (rank 0's first chunk against the last rank's
// block) leaves that row untouched: o 0 and lse -inf from the block, the merge keeps the rest.
TEST(RingAttention, AFullyMaskedBlockLeavesItsRowsAlone) {
  const int heads = 1, kv_heads = 1, head_dim = 2;
  const std::vector<T> q{1, 0}, k{0, 1}, v{3, 4};
  const std::vector<int> q_pos{0}, k_pos{5};
  std::vector<T> o(2, 7), lse(1, 7), tiles(Cpu::attention_block_workspace(1, 1));
  Cpu::attention_block_forward(q.data(), k.data(), v.data(), o.data(), lse.data(), 1, 1,
                               q_pos.data(), 1, k_pos.data(), heads, kv_heads, head_dim,
                               tiles.data());
  EXPECT_EQ(o[0], 0);
  EXPECT_EQ(o[1], 0);
  EXPECT_TRUE(std::isinf(lse[0]) && lse[0] < 0);
  std::vector<T> acc{1, 2}, acc_lse{0.5};
  Cpu::merge_attention(acc.data(), acc_lse.data(), o.data(), lse.data(), 1, 1, heads, head_dim);
  EXPECT_EQ(acc, (std::vector<T>{1, 2}));
  EXPECT_EQ(acc_lse[0], 0.5);
}

}  // namespace
}  // namespace tprimat::train
