// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Umbrella header: every public header that needs nothing beyond Eigen and nlohmann-json.
#pragma once

// parallel/mpi.hpp is left out on purpose: it needs MPI (link tprimat::mpi and include it).
// Headers that land in later issues are picked up as they appear, so this list is the one place
// that names the public surface.

#include "tprimat/config.hpp"

#include "tprimat/core/error.hpp"

#include "tprimat/model/all.hpp"
#include "tprimat/model/counts.hpp"

#include "tprimat/parallel/communicator.hpp"
#include "tprimat/parallel/layout.hpp"
#include "tprimat/parallel/strategy.hpp"
#include "tprimat/parallel/validate.hpp"

#include "tprimat/backend/device_info.hpp"
#if __has_include("tprimat/backend/cpu.hpp")
#include "tprimat/backend/cpu.hpp"
#endif

#include "tprimat/train/config.hpp"
#if __has_include("tprimat/train/training_step.hpp")
#include "tprimat/train/training_step.hpp"
#endif

#if __has_include("tprimat/data/synthetic.hpp")
#include "tprimat/data/synthetic.hpp"
#endif

#if __has_include("tprimat/bench/memory_plan.hpp")
#include "tprimat/bench/memory_plan.hpp"
#endif
#if __has_include("tprimat/bench/result.hpp")
#include "tprimat/bench/result.hpp"
#endif
