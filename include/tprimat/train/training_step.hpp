// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// TrainingStep<Backend, Model, Layout, Comm>: one optimizer step, the whole benchmark, on the CPU
// engine (train/cpu/) or a device engine (train/device/), one interface for both.
#pragma once

#include "tprimat/train/cpu/training_step.hpp"
#include "tprimat/train/device/training_step.hpp"
