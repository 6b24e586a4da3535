// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// AlignedVector<T>: the host buffers of the CPU engine, on Eigen's vector alignment.
#pragma once

#include <Eigen/Core>
#include <vector>

namespace tprimat::train {

/// Buffers start on Eigen's vector alignment: Eigen peels unaligned heads off its vectorised
/// reductions, so a base address that varied from run to run would vary the summation order and
/// break bit-for-bit reproducibility between two identical runs.
template <class T>
using AlignedVector = std::vector<T, Eigen::aligned_allocator<T>>;

}  // namespace tprimat::train
