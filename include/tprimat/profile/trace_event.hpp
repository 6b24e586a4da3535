// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// One record of a profile: a GPU kernel, memcpy or memset, or a host range.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tprimat::profile {

enum class Kind { kernel, memcpy, memset, range };

/// Chrome-trace categories ("cat"), spelled as PyTorch's Kineto spells them, so that tools
/// written for PyTorch traces (TensorBoard, Holistic Trace Analysis) read ours too.
namespace category {
inline constexpr std::string_view kernel = "kernel";
inline constexpr std::string_view memcpy = "gpu_memcpy";
inline constexpr std::string_view memset = "gpu_memset";
inline constexpr std::string_view annotation = "user_annotation";  ///< a host range
}  // namespace category

/// Host ranges that delimit one training step, named as torch.profiler names them.
inline constexpr std::string_view step_range_prefix = "ProfilerStep#";

struct TraceEvent {
  Kind kind = Kind::range;
  std::string name;      ///< demangled kernel name, "Memcpy HtoD (Pinned -> Device)", range name
  std::string category;  ///< Chrome "cat" (see category::)
  /// The track: GPU events on (device index, stream id), host events on (process, thread).
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::int64_t start_ns = 0;  ///< one clock per trace (tprimat: steady_clock)
  std::int64_t end_ns = 0;
  std::array<int, 3> grid{};      ///< kernels: blocks per grid
  std::array<int, 3> block{};     ///< kernels: threads per block
  std::uint64_t correlation = 0;  ///< CUPTI correlation id of the launch; 0 when unknown
  /// The host range the work was issued in (Kineto's "External id"): on a range, its own id; on
  /// GPU work, the innermost range open at its launch. 0: none.
  std::uint64_t external_id = 0;
  std::int64_t bytes = -1;  ///< memcpy/memset bytes; -1 for other kinds
  double flops = 0;         ///< host ranges: floating-point operations of the work inside, if known

  std::int64_t duration_ns() const { return end_ns - start_ns; }
  bool on_gpu() const { return kind != Kind::range; }
};

}  // namespace tprimat::profile
