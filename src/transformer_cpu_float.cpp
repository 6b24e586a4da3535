// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Explicit instantiation of the CPU reference engine for float (one TU per type: parallel builds).
#include "tprimat/backend/cpu.hpp"
#include "tprimat/train/cpu/transformer.hpp"

namespace tprimat::train {
template class Transformer<backend::Cpu, float>;
}  // namespace tprimat::train
