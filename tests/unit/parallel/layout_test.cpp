// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Layout<TP, PP> and LayoutFits for the layouts that must compile (the failing ones live in
// tests/compile_fail).
#include <gtest/gtest.h>

#include "tprimat/model/all.hpp"
#include "tprimat/parallel/layout.hpp"

namespace tprimat::parallel {
namespace {

static_assert(Layout<4, 2>::tp == 4 && Layout<4, 2>::pp == 2);
static_assert(Layout<4, 2>::model_parallel == 8);
static_assert(LayoutSpec<Layout<2, 1>>);
static_assert(!LayoutSpec<int>);

// Every strategy layout of the seeds' table fits its model.
static_assert(LayoutFits<model::Llama31_8B, Layout<4, 1>>::value);
static_assert(LayoutFits<model::Llama31_8B, Layout<8, 1>>::value);
static_assert(LayoutFits<model::Qwen25_7B, Layout<4, 2>>::value);
static_assert(LayoutFits<model::Qwen25_7B, Layout<2, 2>>::value);
static_assert(LayoutFits<model::Qwen25_7B, Layout<1, 7>>::value);
static_assert(LayoutFits<model::Mistral7B, Layout<4, 2>>::value);
static_assert(LayoutFits<model::Tiny, Layout<4, 4>>::value);

TEST(ParallelLayout, Constants) {
  EXPECT_EQ((Layout<2, 2>::model_parallel), 4);
  EXPECT_TRUE((LayoutFits<model::Tiny, Layout<1, 1>>::value));
}

}  // namespace
}  // namespace tprimat::parallel
