// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Layout<1, 0>: a pipeline-parallel size below 1 must not compile.
// EXPECT: tprimat: pipeline-parallel size \(PP\) must be at least 1
#include "tprimat/parallel/layout.hpp"

static_assert(tprimat::parallel::Layout<1, 0>::pp == 0);
