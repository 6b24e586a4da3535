// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Positive control: the layouts the strategies use compile, through the same harness as *_fail.
#include "tprimat/model/all.hpp"
#include "tprimat/parallel/layout.hpp"

namespace tp = tprimat::parallel;
namespace md = tprimat::model;
static_assert(tp::LayoutFits<md::Qwen25_7B, tp::Layout<4, 2>>::value);
static_assert(tp::LayoutFits<md::Qwen25_7B, tp::Layout<1, 7>>::value);
static_assert(tp::LayoutFits<md::Llama31_8B, tp::Layout<8, 1>>::value);
static_assert(tp::LayoutFits<md::Mistral7B, tp::Layout<4, 2>>::value);
static_assert(tp::LayoutFits<md::Tiny, tp::Layout<4, 4>>::value);
