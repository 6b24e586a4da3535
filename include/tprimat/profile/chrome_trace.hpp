// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Writes TraceEvents as a Chrome trace (JSON object format): chrome://tracing, Perfetto,
// TensorBoard's profile plugin and tprimat profile-summary read it.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <utility>

#include "tprimat/profile/trace_event.hpp"

namespace tprimat::profile {

/// Names of the trace's rows: processes (a GPU, the host process) and threads (a stream, a host
/// thread). Written as the format's "M" metadata events.
struct TrackNames {
  std::map<std::int64_t, std::string> processes;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> threads;
};

namespace detail {

/// Nanoseconds as the format's microseconds, exactly: "12345.678", no floating-point rounding.
inline std::string microseconds(std::int64_t ns) {
  const bool negative = ns < 0;
  const std::uint64_t a =
      negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  std::string frac = std::to_string(a % 1000);
  return (negative ? "-" : "") + std::to_string(a / 1000) + "." +
         std::string(3 - frac.size(), '0') + frac;
}

/// A JSON string literal; bytes that are not UTF-8 become U+FFFD instead of throwing.
inline std::string quoted(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

inline nlohmann::json event_args(const TraceEvent& e) {
  nlohmann::json args = nlohmann::json::object();
  if (e.on_gpu()) {
    args["device"] = e.pid;
    args["stream"] = e.tid;
    if (e.correlation != 0) args["correlation"] = e.correlation;
  }
  if (e.kind == Kind::kernel) {
    args["grid"] = e.grid;
    args["block"] = e.block;
  }
  if (e.bytes >= 0) args["bytes"] = e.bytes;
  if (e.external_id != 0) args["External id"] = e.external_id;
  if (e.flops > 0) args["flops"] = e.flops;
  return args;
}

}  // namespace detail

/// The trace text: one "X" (complete) event per record, ts/dur in microseconds, pid/tid as the
/// track; "M" rows naming the tracks; `metadata` (when an object) under the top-level key
/// "tprimat", which the format allows and viewers ignore.
inline std::string chrome_trace_json(std::span<const TraceEvent> events, const TrackNames& names,
                                     const nlohmann::json& metadata = nullptr) {
  std::string out = "{\n  \"displayTimeUnit\": \"ms\",\n";
  if (metadata.is_object()) out += "  \"tprimat\": " + metadata.dump() + ",\n";
  out += "  \"traceEvents\": [";
  bool first = true;
  const auto row = [&](const std::string& text) {
    out += first ? "\n    " : ",\n    ";
    out += text;
    first = false;
  };
  for (const auto& [pid, name] : names.processes)
    row("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + std::to_string(pid) +
        ", \"tid\": 0, \"args\": {\"name\": " + detail::quoted(name) + "}}");
  for (const auto& [track, name] : names.threads)
    row("{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " + std::to_string(track.first) +
        ", \"tid\": " + std::to_string(track.second) +
        ", \"args\": {\"name\": " + detail::quoted(name) + "}}");
  for (const auto& e : events) {
    // Hand-assembled so that ts/dur keep nanosecond digits (json would print doubles).
    row("{\"ph\": \"X\", \"cat\": " + detail::quoted(e.category) +
        ", \"name\": " + detail::quoted(e.name) + ", \"pid\": " + std::to_string(e.pid) +
        ", \"tid\": " + std::to_string(e.tid) + ", \"ts\": " + detail::microseconds(e.start_ns) +
        ", \"dur\": " + detail::microseconds(e.duration_ns()) +
        ", \"args\": " + detail::event_args(e).dump() + "}");
  }
  out += "\n  ]\n}\n";
  return out;
}

}  // namespace tprimat::profile
