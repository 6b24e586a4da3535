// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Reads a Chrome trace — tprimat's, or a PyTorch profiler (Kineto) export — into TraceEvents.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/core/json_input.hpp"
#include "tprimat/profile/chrome_trace.hpp"
#include "tprimat/profile/trace_event.hpp"
#include "tprimat/profile/trace_io.hpp"

namespace tprimat::profile {

struct Trace {
  std::vector<TraceEvent> events;  ///< duration events ("X", and "B"/"E" pairs), in file order
  TrackNames names;
  nlohmann::json metadata;  ///< tprimat's "tprimat" block; null in a foreign trace
  std::string format;       ///< "tprimat", "kineto" (PyTorch profiler) or "chrome" (other)
};

namespace detail {

inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// Kineto writes "kernel", "gpu_memcpy", "gpu_memset" (older versions "Kernel", "Memcpy",
/// "Memset"); everything else with a duration is a host range (cpu_op, user_annotation,
/// cuda_runtime, python_function, gpu_user_annotation ...).
inline Kind kind_of(const std::string& category) {
  const std::string c = lower(category);
  if (c == "kernel") return Kind::kernel;
  if (c == "gpu_memcpy" || c == "memcpy") return Kind::memcpy;
  if (c == "gpu_memset" || c == "memset") return Kind::memset;
  return Kind::range;
}

/// pid and tid are numbers in our traces and Kineto's; other writers use strings, which get
/// stable ids of their own (negative, so they never meet a real number).
struct IdTable {
  std::map<std::string, std::int64_t> ids;
  std::int64_t operator()(const nlohmann::json& v) {
    if (v.is_number_integer()) return v.get<std::int64_t>();
    if (v.is_number()) {  // a whole number of int64's range is that number; others are names
      const double d = v.get<double>();
      if (d == std::trunc(d) && std::abs(d) < 9.2e18) return static_cast<std::int64_t>(d);
    }
    const std::string key = v.is_string() ? v.get<std::string>() : v.dump();
    auto [it, fresh] = ids.emplace(key, -static_cast<std::int64_t>(ids.size()) - 1);
    return it->second;
  }
};

/// The string at `key`, or "" when absent or of another type (value() would throw).
inline std::string text(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// Timestamps and durations are kept within +-2^61 ns (73 years), so that any difference of two
/// fits in 64 bits; the summary's sums saturate (summary.hpp).
inline constexpr double max_abs_ns = 2305843009213693952.0;  // 2^61

/// Microseconds (a JSON number, maybe fractional) to integer nanoseconds; 0 when absent.
inline std::int64_t nanoseconds(const nlohmann::json& us, const std::string& event) {
  if (!us.is_number()) return 0;
  const double ns = us.is_number_integer() ? double(us.get<std::int64_t>()) * 1000.0
                    : us.is_number_unsigned() ? double(us.get<std::uint64_t>()) * 1000.0
                                              : us.get<double>() * 1000.0;
  if (!(std::abs(ns) < max_abs_ns))
    throw core::InputError("trace event '" + event + "' has a time of " + us.dump() +
                               " us, beyond 73 years",
                           "pass a Chrome trace whose ts and dur are microseconds");
  if (us.is_number_integer() && !us.is_number_unsigned()) return us.get<std::int64_t>() * 1000;
  return std::llround(ns);
}

/// A number clamped into [lo, hi]; `fallback` when absent or not a number. The bounds are
/// compared in double (a value within rounding of a bound gets the bound); an integer inside
/// them converts exactly.
template <class T>
T clamped(const nlohmann::json& v, T lo, T hi, T fallback) {
  if (!v.is_number()) return fallback;
  const bool is_unsigned = v.is_number_unsigned(), is_integer = v.is_number_integer();
  const double d = is_unsigned  ? double(v.get<std::uint64_t>())
                   : is_integer ? double(v.get<std::int64_t>())
                                : v.get<double>();
  if (d <= double(lo)) return lo;
  if (d >= double(hi)) return hi;
  if constexpr (std::is_integral_v<T>) {
    if (is_unsigned) return static_cast<T>(v.get<std::uint64_t>());
    if (is_integer) return static_cast<T>(v.get<std::int64_t>());
  }
  return static_cast<T>(d);
}

inline std::uint64_t unsigned_arg(const nlohmann::json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end()) return 0;
  return clamped<std::uint64_t>(*it, 0, std::numeric_limits<std::int64_t>::max(), 0);
}

inline void read_args(const nlohmann::json& args, TraceEvent& e) {
  if (!args.is_object()) return;
  e.correlation = unsigned_arg(args, "correlation");
  e.external_id = unsigned_arg(args, "External id");
  if (auto it = args.find("bytes"); it != args.end())
    e.bytes = clamped<std::int64_t>(*it, -1, std::numeric_limits<std::int64_t>::max() / 4, -1);
  if (auto it = args.find("flops"); it != args.end())
    e.flops = clamped<double>(*it, 0.0, 1e30, 0.0);
  for (auto [key, out] : {std::pair{"grid", &e.grid}, std::pair{"block", &e.block}}) {
    auto it = args.find(key);
    if (it == args.end() || !it->is_array()) continue;
    for (std::size_t i = 0; i < 3 && i < it->size(); ++i)
      (*out)[i] = clamped<int>((*it)[i], 0, std::numeric_limits<int>::max(), 0);
  }
}

}  // namespace detail

/// The events of a parsed trace: the JSON object format ({"traceEvents": [...], ...}) or the
/// bare array format. Flow ("s"/"f"), instant, counter and async events carry no duration on a
/// track and are skipped. Throws core::InputError when it is not a trace at all.
inline Trace parse_chrome_trace(const nlohmann::json& doc, const std::string& source = "trace") {
  const nlohmann::json* list = &doc;
  Trace t;
  if (doc.is_object()) {
    auto it = doc.find("traceEvents");
    if (it == doc.end() || !it->is_array())
      throw core::InputError(source + " has no traceEvents array",
                             "pass a Chrome trace (tprimat --profile, torch.profiler)");
    list = &*it;
    if (auto m = doc.find("tprimat"); m != doc.end() && m->is_object()) t.metadata = *m;
    t.format = t.metadata.is_object()                                              ? "tprimat"
               : doc.contains("schemaVersion") || doc.contains("deviceProperties") ? "kineto"
                                                                                   : "chrome";
  } else if (doc.is_array()) {
    t.format = "chrome";
  } else {
    throw core::InputError(source + " is not a Chrome trace (neither an object nor an array)",
                           "pass a Chrome trace (tprimat --profile, torch.profiler)");
  }
  detail::IdTable ids;
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::size_t>> open;  // "B" stacks
  for (const auto& ev : *list) {
    if (!ev.is_object()) continue;
    const std::string ph = detail::text(ev, "ph");
    const auto pid = ids(ev.value("pid", nlohmann::json(0)));
    const auto tid = ids(ev.value("tid", nlohmann::json(0)));
    const auto args = ev.value("args", nlohmann::json::object());  // any type: read_args checks
    if (ph == "M") {
      const std::string what = detail::text(ev, "name");
      const std::string name = args.is_object() ? detail::text(args, "name") : "";
      if (what == "process_name") t.names.processes[pid] = name;
      if (what == "thread_name") t.names.threads[{pid, tid}] = name;
      continue;
    }
    if (ph == "E") {
      auto& stack = open[{pid, tid}];
      if (stack.empty()) continue;
      auto& begun = t.events[stack.back()];
      begun.end_ns = detail::nanoseconds(ev.value("ts", nlohmann::json()), begun.name);
      stack.pop_back();
      continue;
    }
    if (ph != "X" && ph != "B") continue;
    TraceEvent e;
    e.name = detail::text(ev, "name");
    e.category = detail::text(ev, "cat");
    e.kind = detail::kind_of(e.category);
    e.pid = pid;
    e.tid = tid;
    e.start_ns = detail::nanoseconds(ev.value("ts", nlohmann::json()), e.name);
    e.end_ns =  // both within 2^61: the sum fits
        e.start_ns + (ph == "X" ? detail::nanoseconds(ev.value("dur", nlohmann::json()), e.name) : 0);
    detail::read_args(args, e);
    if (ph == "B") open[{pid, tid}].push_back(t.events.size());
    t.events.push_back(std::move(e));
  }
  return t;
}

/// Reads `path` (.json, or gzip-compressed in a zlib build) and parses it.
inline Trace read_chrome_trace(const std::filesystem::path& path) {
  const std::string source = "trace " + path.string();
  const nlohmann::json doc =
      core::parse_json(read_trace_text(path), source, "pass a complete Chrome trace");
  return parse_chrome_trace(doc, source);
}

}  // namespace tprimat::profile
