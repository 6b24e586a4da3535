// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// What a trace says about a step: top kernels, GEMM throughput, GPU idle gaps, communication
// overlap, profiling overhead. Works on tprimat's traces and on PyTorch (Kineto) exports.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tprimat/backend/peaks.hpp"
#include "tprimat/core/ascii_case.hpp"
#include "tprimat/profile/trace_event.hpp"
#include "tprimat/profile/trace_reader.hpp"

namespace tprimat::profile {

/// A GEMM rate some device can reach: past every peak (backend/peaks.hpp), the FLOPs a trace
/// attributes are not the kernels'.
inline bool plausible_tflops(double tflops) {
  return tflops <= backend::implausible_tflops_per_device;
}

/// One kernel name over the trace.
struct KernelStats {
  std::string name;
  std::int64_t total_ns = 0;
  /// Time at least one of its launches ran, per device, summed: launches overlapping on several
  /// streams count once, so that its share of the busy time cannot pass 100%.
  std::int64_t wall_ns = 0;
  int count = 0;
  bool gemm = false;
  bool communication = false;
  double flops = 0;           ///< FLOPs attributed from host ranges (see Summary::gemm_flops)
  std::int64_t flops_ns = 0;  ///< GPU time of the launches that carry those FLOPs
  double mean_ns() const { return count > 0 ? double(total_ns) / count : 0; }
  /// Achieved TFLOP/s of the attributed launches; nullopt when none carries FLOPs.
  std::optional<double> tflops() const {
    if (flops_ns <= 0 || flops <= 0) return std::nullopt;
    return flops / (double(flops_ns) * 1e-9) / 1e12;
  }
};

struct Summary {
  std::string format;        ///< "tprimat", "kineto", "chrome"
  int steps = 0;             ///< ProfilerStep#N host ranges
  std::int64_t step_ns = 0;  ///< their summed duration
  int step_hosts = 0;        ///< processes (pids) with ProfilerStep ranges: one a rank
  std::size_t unfinished = 0;  ///< Trace::unfinished: events left out for a negative duration
  std::size_t reversed = 0;    ///< Trace::reversed: B/E pairs ending first, read as zero-length
  int devices = 0, streams = 0;

  /// The step time the devices had between them, the base of a kernel's "% step" (its wall time
  /// summed over devices): each process's steps ran on its share of the devices, so the mean
  /// step time a process times the devices (one process driving two GPUs gives each the step).
  /// 0 where the trace has no steps.
  double device_step_ns() const {
    if (step_ns <= 0 || step_hosts <= 0) return 0;
    return double(step_ns) / step_hosts * std::max(devices, 1);
  }

  // The GPU timeline, per device then summed: the union of kernel, memcpy and memset intervals
  // (busy), from the device's first activity to its last (span); idle = span - busy, in gaps.
  std::int64_t span_ns = 0, busy_ns = 0, idle_ns = 0, largest_gap_ns = 0;
  int gaps = 0;

  std::int64_t kernel_ns = 0, memcpy_ns = 0, memset_ns = 0, memcpy_bytes = 0;
  int kernel_count = 0, memcpy_count = 0, memset_count = 0;
  std::vector<KernelStats> kernels;  ///< by total GPU time, largest first

  std::int64_t gemm_ns = 0;  ///< kernels whose names say GEMM (is_gemm_kernel)
  int gemm_count = 0;
  /// FLOPs the trace attributes to GEMM kernels: a host range or op with a "flops" arg (tprimat
  /// ranges around each GEMM, Kineto's with_flops ops) whose "External id" the kernels carry.
  double gemm_flops = 0;
  std::int64_t gemm_flops_ns = 0;
  /// tprimat traces: the GEMM FLOPs of one step from the model's shapes, which covers steps
  /// replayed from a CUDA graph, where launches cannot be attributed to host ranges.
  double gemm_flops_per_step = 0;

  std::int64_t comm_ns = 0;          ///< NCCL/RCCL kernels
  std::int64_t comm_overlap_ns = 0;  ///< of which compute kernels on other streams ran alongside
  int comm_count = 0;

  /// From tprimat's metadata: mean step seconds of profiled and unprofiled steps.
  std::optional<double> profiled_step_seconds, unprofiled_step_seconds;
  bool cuda_graph = false;  ///< tprimat metadata: the profiled steps replayed a CUDA graph

  /// Achieved GEMM TFLOP/s and where its FLOPs came from ("trace" or "model"); nullopt without
  /// FLOPs.
  std::optional<std::pair<double, std::string>> gemm_tflops() const {
    if (gemm_flops > 0 && gemm_flops_ns > 0)
      return std::pair{gemm_flops / (double(gemm_flops_ns) * 1e-9) / 1e12, std::string("trace")};
    if (gemm_flops_per_step > 0 && steps > 0 && gemm_ns > 0)
      return std::pair{gemm_flops_per_step * steps / (double(gemm_ns) * 1e-9) / 1e12,
                       std::string("model")};
    return std::nullopt;
  }
  std::optional<double> overhead_fraction() const {
    if (!profiled_step_seconds || !unprofiled_step_seconds || *unprofiled_step_seconds <= 0)
      return std::nullopt;
    return *profiled_step_seconds / *unprofiled_step_seconds - 1.0;
  }
};

namespace detail {

/// acc += v, saturating: a trace's durations each fit in 62 bits (trace_reader.hpp), their sums
/// need not.
inline void add(std::int64_t& acc, std::int64_t v) {
  if (__builtin_add_overflow(acc, v, &acc))
    acc = v > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

inline bool contains(const std::string& lowered, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (lowered.find(w) != std::string::npos) return true;
  return false;
}

}  // namespace detail

/// NCCL (and RCCL, which keeps NCCL's kernel names) collective and point-to-point kernels.
inline bool is_communication_kernel(const std::string& name) {
  return detail::contains(core::ascii_lower(name), {"nccl", "rccl"});
}

/// GEMM kernels by name: cuBLAS/cuBLASLt (gemm, sm90_xmma, nvjet, cublasLt split-K), CUTLASS,
/// hipBLASLt (Cijk_). Attention kernels whose template arguments mention CUTLASS are not GEMMs
/// here: they are named by their attention part.
inline bool is_gemm_kernel(const std::string& name) {
  const std::string n = core::ascii_lower(name);
  if (detail::contains(n, {"flash", "fmha", "attention", "sdpa", "nccl"})) return false;
  return detail::contains(n, {"gemm", "cutlass", "xmma", "nvjet", "cublas", "matmul", "cijk_"});
}

namespace detail {

using Interval = std::pair<std::int64_t, std::int64_t>;

/// Sorted, disjoint union of `v`.
inline std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& i : v) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second)
      out.back().second = std::max(out.back().second, i.second);
    else
      out.push_back(i);
  }
  return out;
}

/// Length of `x` covered by the sorted disjoint `u`.
inline std::int64_t covered(Interval x, const std::vector<Interval>& u) {
  auto it = std::upper_bound(u.begin(), u.end(),
                             Interval{x.first, std::numeric_limits<std::int64_t>::max()});
  if (it != u.begin()) --it;
  std::int64_t sum = 0;
  for (; it != u.end() && it->first < x.second; ++it)
    add(sum, std::max<std::int64_t>(0, std::min(x.second, it->second) - std::max(x.first, it->first)));
  return sum;
}

}  // namespace detail

inline Summary summarize(const Trace& trace) {
  using detail::Interval;
  Summary s;
  s.format = trace.format;
  s.unfinished = trace.unfinished;
  s.reversed = trace.reversed;
  std::map<std::int64_t, std::vector<Interval>> busy;  // per device
  std::set<std::int64_t> step_pids;
  std::set<std::pair<std::int64_t, std::int64_t>> streams;
  std::map<std::string, std::size_t> by_name;
  std::map<std::uint64_t, double> flops_of;  // external id -> FLOPs of its host range
  for (const auto& e : trace.events) {
    if (e.on_gpu()) {
      busy[e.pid].emplace_back(e.start_ns, e.end_ns);
      streams.emplace(e.pid, e.tid);
    } else if (e.name.rfind(step_range_prefix, 0) == 0 && e.category.rfind("gpu_", 0) != 0) {
      ++s.steps;  // Kineto mirrors steps onto the GPU rows as gpu_user_annotation: not counted
      detail::add(s.step_ns, e.duration_ns());
      step_pids.insert(e.pid);
    }
    if (!e.on_gpu() && e.flops > 0 && e.external_id != 0) flops_of[e.external_id] += e.flops;
    const std::int64_t d = e.duration_ns();
    if (e.kind == Kind::memcpy) {
      detail::add(s.memcpy_ns, d);
      ++s.memcpy_count;
      detail::add(s.memcpy_bytes, std::max<std::int64_t>(e.bytes, 0));
    } else if (e.kind == Kind::memset) {
      detail::add(s.memset_ns, d);
      ++s.memset_count;
    } else if (e.kind == Kind::kernel) {
      detail::add(s.kernel_ns, d);
      ++s.kernel_count;
      auto [it, fresh] = by_name.emplace(e.name, s.kernels.size());
      if (fresh) {
        KernelStats k;
        k.name = e.name;
        k.gemm = is_gemm_kernel(e.name);
        k.communication = is_communication_kernel(e.name);
        s.kernels.push_back(std::move(k));
      }
      auto& k = s.kernels[it->second];
      detail::add(k.total_ns, d);
      ++k.count;
    }
  }
  s.devices = static_cast<int>(busy.size());
  s.step_hosts = static_cast<int>(step_pids.size());
  s.streams = static_cast<int>(streams.size());

  // Busy time, span and idle gaps per device.
  std::map<std::int64_t, std::vector<Interval>> busy_union;
  for (auto& [device, v] : busy) {
    auto u = detail::merged(std::move(v));
    if (u.empty()) continue;
    detail::add(s.span_ns, u.back().second - u.front().first);
    for (std::size_t i = 0; i < u.size(); ++i) {
      detail::add(s.busy_ns, u[i].second - u[i].first);
      if (i == 0) continue;
      const std::int64_t gap = u[i].first - u[i - 1].second;
      detail::add(s.idle_ns, gap);
      ++s.gaps;
      s.largest_gap_ns = std::max(s.largest_gap_ns, gap);
    }
    busy_union[device] = std::move(u);
  }

  // Each kernel name's wall time: the union of its launches per device.
  {
    std::map<std::pair<std::size_t, std::int64_t>, std::vector<Interval>> launches;
    for (const auto& e : trace.events)
      if (e.kind == Kind::kernel)
        launches[{by_name.at(e.name), e.pid}].emplace_back(e.start_ns, e.end_ns);
    for (auto& [key, v] : launches)
      for (const auto& [from, to] : detail::merged(std::move(v)))
        detail::add(s.kernels[key.first].wall_ns, to - from);
  }

  // GEMM FLOPs: each host range's FLOPs go to the GEMM kernels launched inside it, split by
  // their GPU time (a range with a GEMM and its split-K reduction counts both, once).
  std::map<std::uint64_t, std::int64_t> gemm_ns_of;
  for (const auto& e : trace.events)
    if (e.kind == Kind::kernel && e.external_id != 0 && flops_of.count(e.external_id) &&
        is_gemm_kernel(e.name))
      detail::add(gemm_ns_of[e.external_id], e.duration_ns());
  for (const auto& e : trace.events) {
    if (e.kind != Kind::kernel) continue;
    auto& k = s.kernels[by_name.at(e.name)];
    if (k.gemm) {
      detail::add(s.gemm_ns, e.duration_ns());
      ++s.gemm_count;
      auto g = gemm_ns_of.find(e.external_id);
      if (e.external_id != 0 && g != gemm_ns_of.end() && g->second > 0) {
        const double f = flops_of.at(e.external_id) * double(e.duration_ns()) / double(g->second);
        k.flops += f;
        detail::add(k.flops_ns, e.duration_ns());
        s.gemm_flops += f;
        detail::add(s.gemm_flops_ns, e.duration_ns());
      }
    }
  }

  // Communication, and how much of it compute kernels on other streams of its device hid.
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Interval>> compute_by_stream;
  for (const auto& e : trace.events)
    if (e.kind == Kind::kernel && !is_communication_kernel(e.name))
      compute_by_stream[{e.pid, e.tid}].emplace_back(e.start_ns, e.end_ns);
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Interval>> others;  // cache
  for (const auto& e : trace.events) {
    if (e.kind != Kind::kernel || !is_communication_kernel(e.name)) continue;
    detail::add(s.comm_ns, e.duration_ns());
    ++s.comm_count;
    auto [it, fresh] = others.try_emplace({e.pid, e.tid});
    if (fresh) {
      std::vector<Interval> v;
      for (const auto& [track, iv] : compute_by_stream)
        if (track.first == e.pid && track.second != e.tid) v.insert(v.end(), iv.begin(), iv.end());
      it->second = detail::merged(std::move(v));
    }
    detail::add(s.comm_overlap_ns, detail::covered({e.start_ns, e.end_ns}, it->second));
  }

  std::stable_sort(
      s.kernels.begin(), s.kernels.end(),
      [](const KernelStats& a, const KernelStats& b) { return a.total_ns > b.total_ns; });

  const auto& m = trace.metadata;
  if (m.is_object()) {
    if (auto g = m.find("gemm_flops_per_step"); g != m.end() && g->is_number())
      s.gemm_flops_per_step = g->get<double>();
    if (auto g = m.find("cuda_graph"); g != m.end() && g->is_boolean()) s.cuda_graph = g->get<bool>();
    if (auto o = m.find("profiling_overhead"); o != m.end() && o->is_object()) {
      auto num = [&](const char* key) -> std::optional<double> {
        auto it = o->find(key);
        if (it == o->end() || !it->is_number()) return std::nullopt;
        return it->get<double>();
      };
      s.profiled_step_seconds = num("profiled_step_seconds");
      s.unprofiled_step_seconds = num("unprofiled_step_seconds");
    }
  }
  return s;
}

}  // namespace tprimat::profile
