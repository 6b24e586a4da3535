// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// A profile Summary for people: plain text for the terminal, or a markdown section for a report.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tprimat/core/printable.hpp"
#include "tprimat/profile/summary.hpp"

namespace tprimat::profile {

namespace detail {

inline std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}
inline std::string ms(std::int64_t ns) { return format("%.3f ms", double(ns) * 1e-6); }
inline std::string percent(double part, double whole) {
  return whole > 0 ? format("%.1f%%", 100.0 * part / whole) : std::string("n/a");
}
/// Kernel names run to hundreds of characters of template arguments: cut for a table cell.
inline std::string shortened(const std::string& s, std::size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}
inline std::string pad_left(std::string s, std::size_t w) {
  return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}

struct Table {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
};

inline std::string kernel_table(const Summary& s, const std::vector<const KernelStats*>& ks,
                                bool with_flops, bool markdown, std::size_t name_width) {
  Table t;
  t.head = {"time ms", "% busy", "% step", "count", "mean us"};
  if (with_flops) t.head.push_back("TFLOP/s");
  t.head.push_back("kernel");
  for (const auto* k : ks) {
    std::vector<std::string> r = {
        format("%.3f", double(k->total_ns) * 1e-6),
        // Shares by wall time: a kernel on several streams at once holds the GPU once.
        s.busy_ns > 0 ? format("%.1f", 100.0 * k->wall_ns / s.busy_ns) : "n/a",
        // A kernel longer than all the steps ran outside them: no share of the step.
        s.device_step_ns() > 0 && k->wall_ns <= s.device_step_ns()
            ? format("%.1f", 100.0 * k->wall_ns / s.device_step_ns())
            : "n/a",
        std::to_string(k->count), format("%.1f", k->mean_ns() * 1e-3)};
    if (const auto rate = k->tflops(); with_flops)
      r.push_back(!rate                     ? std::string("-")
                  : plausible_tflops(*rate) ? format("%.1f", *rate)
                                            : std::string("impossible"));
    // A name from the trace, printed as every report prints names (core::printable): a newline
    // or an escape sequence in it cannot break the table or drive the terminal.
    const std::string shown = core::printable(k->name);
    std::string name = markdown ? shown : shortened(shown, name_width);
    if (markdown) {  // a '|' inside a cell would end it; a backtick, the code span
      std::string escaped;
      for (char c : name) escaped += c == '|' ? std::string("\\|") : std::string(1, c);
      name = escaped.find('`') == std::string::npos ? "`" + escaped + "`"
                                                    : "`` " + escaped + " ``";
    }
    r.push_back(name);
    t.rows.push_back(std::move(r));
  }
  std::string out;
  if (markdown) {
    out += "|";
    for (const auto& h : t.head) out += " " + h + " |";
    out += "\n|";
    for (std::size_t i = 0; i < t.head.size(); ++i) out += i + 1 < t.head.size() ? "---:|" : "---|";
    out += "\n";
    for (const auto& r : t.rows) {
      out += "|";
      for (const auto& c : r) out += " " + c + " |";
      out += "\n";
    }
    return out;
  }
  std::vector<std::size_t> w(t.head.size());
  for (std::size_t i = 0; i + 1 < t.head.size(); ++i) {
    w[i] = t.head[i].size();
    for (const auto& r : t.rows) w[i] = std::max(w[i], r[i].size());
  }
  auto line = [&](const std::vector<std::string>& r) {
    std::string l = " ";
    for (std::size_t i = 0; i + 1 < r.size(); ++i) l += " " + pad_left(r[i], w[i]);
    return l + "  " + r.back() + "\n";
  };
  out += line(t.head);
  for (const auto& r : t.rows) out += line(r);
  return out;
}

}  // namespace detail

/// The summary: `top` kernels by GPU time, then GEMMs, idle gaps, communication, overhead.
/// `markdown` writes headings and tables instead of aligned text.
inline std::string summary_text(const Summary& s, const std::string& source, int top = 10,
                                bool markdown = false) {
  using detail::ms;
  using detail::percent;
  const std::string bullet = markdown ? "- " : "  ";
  auto heading = [&](const std::string& h) {
    return markdown ? "\n### " + h + "\n\n" : "\n" + h + "\n";
  };
  const char* format_name = s.format == "tprimat"  ? "tprimat"
                            : s.format == "kineto" ? "PyTorch profiler (Kineto)"
                                                   : "Chrome trace";
  const std::string shown_source = core::printable(source);
  std::string out = markdown ? "## Profile: `" + shown_source + "`\n\n"
                             : "profile: " + shown_source + "\n";
  out += bullet + "format: " + format_name + "\n";
  out += bullet + "steps: " + std::to_string(s.steps) +
         (s.steps > 0 ? " (ProfilerStep ranges), " + ms(s.step_ns) + " in all, " +
                            ms(s.step_ns / s.steps) + " each on average"
                      : " (no ProfilerStep ranges: shares of the step are n/a)") +
         "\n";
  if (s.unfinished > 0)
    out += bullet + std::to_string(s.unfinished) +
           " event(s) left out for a negative duration (an op still open when the profiler "
           "stopped: PyTorch writes dur -1)\n";
  if (s.reversed > 0)
    out += bullet + std::to_string(s.reversed) +
           " range(s) whose end (E) comes before their begin (B), counted as zero-length\n";
  if (s.devices == 0) {
    out += bullet + "GPU: no device activity in this trace (host ranges only)\n";
  } else {
    out += bullet + "GPU: " + std::to_string(s.devices) + " device(s), " +
           std::to_string(s.streams) + " stream(s); busy " + ms(s.busy_ns) + " of a " +
           ms(s.span_ns) + " span (" + percent(double(s.busy_ns), double(s.span_ns)) + ")\n";
    out += bullet + "idle gaps: " + ms(s.idle_ns) + " in " + std::to_string(s.gaps) +
           " gaps, largest " + ms(s.largest_gap_ns) + "\n";
    out += bullet + "kernels " + ms(s.kernel_ns) + " (" + std::to_string(s.kernel_count) +
           " launches), memcpy " + ms(s.memcpy_ns) + " (" + std::to_string(s.memcpy_count) + ", " +
           detail::format("%.3f MB", double(s.memcpy_bytes) * 1e-6) + "), memset " +
           ms(s.memset_ns) + " (" + std::to_string(s.memset_count) + ")\n";
  }

  const int n = std::min<int>(top, static_cast<int>(s.kernels.size()));
  std::vector<const KernelStats*> top_k;
  for (int i = 0; i < n; ++i) top_k.push_back(&s.kernels[i]);
  out += heading("top " + std::to_string(n) + " of " + std::to_string(s.kernels.size()) +
                 " kernels by GPU time (% of GPU-busy time, % of step time)");
  out += top_k.empty() ? bullet + "no kernels in this trace\n"
                       : detail::kernel_table(s, top_k, false, markdown, 90);
  if (s.device_step_ns() > 0 && std::any_of(top_k.begin(), top_k.end(), [&](const KernelStats* k) {
        return k->wall_ns > s.device_step_ns();
      }))
    out += (markdown ? "\n" : "") + bullet +
           "% step n/a: a kernel ran longer than the trace's steps together (work outside its "
           "ProfilerStep ranges)\n";

  std::vector<const KernelStats*> gemms;
  for (const auto& k : s.kernels)
    if (k.gemm) gemms.push_back(&k);
  out += heading("GEMM kernels");
  if (gemms.empty()) {
    out += bullet + "none found by name (gemm, cutlass, xmma, nvjet, cublas)\n";
  } else {
    const auto rate = s.gemm_tflops();
    out += bullet + ms(s.gemm_ns) + " in " + std::to_string(s.gemm_count) + " launches, " +
           percent(double(s.gemm_ns), double(s.busy_ns)) + " of GPU-busy time";
    const char* flops_source = rate && rate->second == "trace"
                                   ? "FLOPs recorded with the launches"
                                   : "the model's GEMM FLOPs per step over GEMM time";
    if (rate && plausible_tflops(rate->first))
      out +=
          "; achieved " + detail::format("%.1f", rate->first) + " TFLOP/s (" + flops_source + ")";
    else if (rate)
      out += "; " + detail::format("%.3g", rate->first) +
             " TFLOP/s, impossible: past any device's peak, so the trace's FLOPs (" + flops_source +
             ") are not these kernels'";
    else
      out += "; no FLOPs in the trace: time only";
    out += "\n";
    if (rate && rate->second == "model" && s.cuda_graph)
      out += bullet + "per-kernel TFLOP/s needs eager steps: profile with --no-graph\n";
    gemms.resize(std::min<std::size_t>(gemms.size(), static_cast<std::size_t>(std::max(top, 0))));
    if (markdown) out += "\n";  // a table right after a list item would belong to it
    out += detail::kernel_table(s, gemms, true, markdown, 80);
  }

  out += heading("communication");
  if (s.comm_count == 0)
    out += bullet + "no NCCL kernels in the trace\n";
  else
    out += bullet + ms(s.comm_ns) + " in " + std::to_string(s.comm_count) + " NCCL kernels; " +
           ms(s.comm_overlap_ns) + " (" + percent(double(s.comm_overlap_ns), double(s.comm_ns)) +
           ") overlapped by compute kernels on other streams\n";

  out += heading("profiling overhead");
  if (auto f = s.overhead_fraction())
    out += bullet + "profiled steps " + detail::format("%.4f s", *s.profiled_step_seconds) +
           " vs unprofiled " + detail::format("%.4f s", *s.unprofiled_step_seconds) + " (" +
           detail::format("%+.1f%%", 100.0 * *f) + ")\n";
  else
    out += bullet +
           (s.format == "tprimat"
                ? std::string("not measured: the run had no unprofiled measured step to "
                              "compare with")
                : std::string("not recorded in this trace")) +
           "\n";
  return out;
}

}  // namespace tprimat::profile
