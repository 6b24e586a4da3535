// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Dense bf16 and FP8 peaks per device, the denominators of every utilisation figure a report
// prints, and the memory of the devices measured.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "tprimat/core/ascii_case.hpp"

namespace tprimat::backend {

struct DevicePeak {
  std::string_view match;  ///< substring of gpu_info.device_name, tried in table order
  std::string_view name;
  double dense_bf16_tflops;  ///< vendor data sheet, dense (no 2:4 sparsity)
  /// Dense FP8 (E4M3/E5M2), half the data sheets' "with sparsity" figure; 0 where the device
  /// has no FP8 tensor cores (A100, MI250X). NVIDIA H100/H200 data sheets: SXM 3,958 and PCIe
  /// 3,026 TFLOPS sparse; AMD MI300X/MI325X data sheets: 2,614.9 dense.
  double dense_fp8_tflops;
};

/// Longer matches first: "H100 PCIe" must win over "H100". Names as the runtimes report them:
/// "NVIDIA H100 80GB HBM3" (SXM), "NVIDIA H100 PCIe", "NVIDIA H200", "NVIDIA A100-SXM4-80GB",
/// "AMD Instinct MI300X", "AMD Instinct MI250X" (ROCm may print "MI250X/MI250").
inline constexpr std::array<DevicePeak, 7> dense_peaks{{
    {"H200", "NVIDIA H200", 989.4, 1978.9},
    {"H100 PCIe", "NVIDIA H100 PCIe", 756.5, 1513.0},
    {"H100", "NVIDIA H100 SXM", 989.4, 1978.9},
    {"A100", "NVIDIA A100", 312.0, 0},  // SXM and PCIe alike
    {"MI325X", "AMD Instinct MI325X", 1307.4, 2614.9},
    {"MI300X", "AMD Instinct MI300X", 1307.4, 2614.9},
    {"MI250X", "AMD Instinct MI250X", 383.0, 0},
}};

/// What no device reaches in the precisions training uses (dense bf16 or FP8; the fastest
/// announced are near 5,000 FP8): the bound for a rate whose device has no peak in the table.
inline constexpr double implausible_tflops_per_device = 10'000;

/// Memory of one device as its runtime reports it (cudaDeviceProp::totalGlobalMem, in GiB),
/// measured on the lent machines: what `tprimat plan --device` takes when --device-memory is
/// not given. Only devices measured are listed; others need --device-memory.
struct DeviceMemory {
  std::string_view match;  ///< substring of the device name, tried in table order
  std::string_view name;
  double gib;
};
inline constexpr std::array<DeviceMemory, 2> known_memory{{
    {"H200", "NVIDIA H200", 139.8},
    {"H100", "NVIDIA H100 80GB HBM3", 79.1},  // the SXM part; "H100 PCIe" is not measured
}};

/// GiB of one device named `device_name` from known_memory; 0 when not measured. Names match
/// case aside: runtimes write "NVIDIA H200", a person passing --device may write "h200".
inline double known_memory_gib(std::string_view device_name) {
  if (core::contains_ignoring_case(device_name, "PCIe")) return 0;
  for (const auto& m : known_memory)
    if (core::contains_ignoring_case(device_name, m.match)) return m.gib;
  return 0;
}

/// What the seeds divided by for H100: the 2:4-sparse figure, which halves every utilisation.
inline constexpr double seeds_sparse_h100_tflops = 1979.0;

/// Dense bf16 peak of one device named `device_name`; 0 when unknown (utilisation then n/a).
inline double dense_peak_tflops(std::string_view device_name) {
  for (const auto& p : dense_peaks)
    if (core::contains_ignoring_case(device_name, p.match)) return p.dense_bf16_tflops;
  return 0;
}

/// Dense FP8 peak of one device named `device_name`; 0 when unknown or without FP8.
inline double dense_fp8_peak_tflops(std::string_view device_name) {
  for (const auto& p : dense_peaks)
    if (core::contains_ignoring_case(device_name, p.match)) return p.dense_fp8_tflops;
  return 0;
}

}  // namespace tprimat::backend
