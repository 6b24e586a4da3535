// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Layout<0, 1>: a tensor-parallel size below 1 must not compile.
// EXPECT: tprimat: tensor-parallel size \(TP\) must be at least 1
#include "tprimat/parallel/layout.hpp"

static_assert(tprimat::parallel::Layout<0, 1>::tp == 0);
