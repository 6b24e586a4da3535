// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Reads a Chrome trace — tprimat's, or a PyTorch profiler (Kineto) export — into TraceEvents.
#pragma once

#include <algorithm>
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

#include "tprimat/core/ascii_case.hpp"
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
  /// Events left out for a negative duration: PyTorch's profiler writes dur -1 for an op still
  /// open when it stopped.
  std::size_t unfinished = 0;
  /// B/E pairs whose E comes before its B: kept, read as zero-length.
  std::size_t reversed = 0;
};

namespace detail {

/// Kineto writes "kernel", "gpu_memcpy", "gpu_memset" (older versions "Kernel", "Memcpy",
/// "Memset"); everything else with a duration is a host range (cpu_op, user_annotation,
/// cuda_runtime, python_function, gpu_user_annotation ...).
inline Kind kind_of(const std::string& category) {
  const std::string c = core::ascii_lower(category);
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

/// Most FLOPs one range or op may state: a whole step of a trillion-parameter model over a
/// million tokens is 6e18.
inline constexpr double max_event_flops = 1e21;

/// Timestamps and durations are kept within +-2^61 ns (73 years), so that any difference of two
/// fits in 64 bits; the summary's sums saturate (summary.hpp).
inline constexpr double max_abs_ns = 2305843009213693952.0;  // 2^61

/// Microseconds (a JSON number, maybe fractional) to integer nanoseconds. `field` ("ts", "dur")
/// names it when it is absent or not a number: a time the event does not give is not 0.
inline std::int64_t nanoseconds(const nlohmann::json& us, const std::string& event,
                                const char* field) {
  if (!us.is_number())
    throw core::InputError(
        "event '" + event + "' has " +
            (us.is_null() ? std::string("no ") + field : std::string(field) + " " + us.dump()) +
            ", not a number of microseconds",
        "pass a Chrome trace whose timed events (ph X, B, E) carry ts, and "
        "dur for ph X, in microseconds");
  const double ns = us.is_number_integer() ? double(us.get<std::int64_t>()) * 1000.0
                    : us.is_number_unsigned() ? double(us.get<std::uint64_t>()) * 1000.0
                                              : us.get<double>() * 1000.0;
  if (!(std::abs(ns) < max_abs_ns))
    throw core::InputError(
        "event '" + event + "' has a time of " + us.dump() + " us, beyond 73 years",
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
  if (auto it = args.find("flops"); it != args.end() && it->is_number()) {
    const double flops = it->get<double>();
    if (!(flops >= 0 && flops <= max_event_flops))
      throw core::InputError("event '" + e.name + "' states " + it->dump() +
                                 " FLOPs, not within 0 to 1e21 as a launch's can be",
                             "pass the trace as the profiler wrote it");
    e.flops = flops;
  }
  for (auto [key, out] : {std::pair{"grid", &e.grid}, std::pair{"block", &e.block}}) {
    auto it = args.find(key);
    if (it == args.end() || !it->is_array()) continue;
    for (std::size_t i = 0; i < 3 && i < it->size(); ++i)
      (*out)[i] = clamped<int>((*it)[i], 0, std::numeric_limits<int>::max(), 0);
  }
}

}  // namespace detail

namespace detail {

/// A trace's events, added one at a time: from a whole document, or streamed while it is parsed.
class TraceBuilder {
 public:
  /// `source` ("trace t.json") begins what a bad event's error says.
  explicit TraceBuilder(std::string source) : source_(std::move(source)) {}

  void add(const nlohmann::json& ev) {
    try {
      add_event(ev);
    } catch (const core::InputError& e) {  // "event '...' ...", named in its trace
      throw core::InputError(source_ + ": " + core::without_prefix(e.what()));
    }
  }

  /// The trace, its format and metadata read from `doc` (whose events were added already, or
  /// are still in it: see parse_chrome_trace). Throws core::InputError when it is no trace.
  Trace finish(const nlohmann::json& doc) {
    if (doc.is_object()) {
      auto it = doc.find("traceEvents");
      if (it == doc.end() || !it->is_array())
        throw core::InputError(source_ + " has no traceEvents array",
                               "pass a Chrome trace (tprimat --profile, torch.profiler)");
      if (auto m = doc.find("tprimat"); m != doc.end() && m->is_object()) t_.metadata = *m;
      t_.format = t_.metadata.is_object()                                             ? "tprimat"
                  : doc.contains("schemaVersion") || doc.contains("deviceProperties") ? "kineto"
                                                                                      : "chrome";
    } else if (doc.is_array()) {
      t_.format = "chrome";
    } else {
      throw core::InputError(source_ + " is not a Chrome trace (neither an object nor an array)",
                             "pass a Chrome trace (tprimat --profile, torch.profiler)");
    }
    return std::move(t_);
  }

 private:
  void add_event(const nlohmann::json& ev) {
    if (!ev.is_object()) return;
    const std::string ph = text(ev, "ph");
    const auto pid = ids_(ev.value("pid", nlohmann::json(0)));
    const auto tid = ids_(ev.value("tid", nlohmann::json(0)));
    const auto args = ev.value("args", nlohmann::json::object());  // any type: read_args checks
    if (ph == "M") {
      const std::string what = text(ev, "name");
      const std::string name = args.is_object() ? text(args, "name") : "";
      if (what == "process_name") t_.names.processes[pid] = name;
      if (what == "thread_name") t_.names.threads[{pid, tid}] = name;
      return;
    }
    if (ph == "E") {
      auto& stack = open_[{pid, tid}];
      if (stack.empty()) return;
      auto& begun = t_.events[stack.back()];
      begun.end_ns = nanoseconds(ev.value("ts", nlohmann::json()), begun.name, "ts");
      if (begun.end_ns < begun.start_ns) {  // never negative time in the sums
        begun.end_ns = begun.start_ns;
        ++t_.reversed;
      }
      stack.pop_back();
      return;
    }
    if (ph != "X" && ph != "B") return;
    TraceEvent e;
    e.name = text(ev, "name");
    e.category = text(ev, "cat");
    e.kind = kind_of(e.category);
    e.pid = pid;
    e.tid = tid;
    e.start_ns = nanoseconds(ev.value("ts", nlohmann::json()), e.name, "ts");
    e.end_ns =  // both within 2^61: the sum fits
        e.start_ns +
        (ph == "X" ? nanoseconds(ev.value("dur", nlohmann::json()), e.name, "dur") : 0);
    if (e.end_ns < e.start_ns) {  // an unfinished op's dur -1: no time to count
      ++t_.unfinished;
      return;
    }
    read_args(args, e);
    if (ph == "B") open_[{pid, tid}].push_back(t_.events.size());
    t_.events.push_back(std::move(e));
  }

  std::string source_;
  Trace t_;
  IdTable ids_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::size_t>> open_;  // "B" stacks
};

}  // namespace detail

/// The events of a parsed trace: the JSON object format ({"traceEvents": [...], ...}) or the
/// bare array format. Flow ("s"/"f"), instant, counter and async events carry no duration on a
/// track and are skipped. Throws core::InputError when it is not a trace at all.
inline Trace parse_chrome_trace(const nlohmann::json& doc, const std::string& source = "trace") {
  detail::TraceBuilder b(source);
  if (doc.is_object()) {
    if (auto it = doc.find("traceEvents"); it != doc.end() && it->is_array())
      for (const auto& ev : *it) b.add(ev);
  } else if (doc.is_array()) {
    for (const auto& ev : doc) b.add(ev);
  }
  return b.finish(doc);
}

/// Reads `path` (.json, or gzip-compressed in a zlib build) and parses it. Each event is taken
/// as the parser finishes it and then dropped from the document, so the parse costs the text and
/// the events kept, never the whole document (nlohmann's tree is ten and more times the text: a
/// 130 KB gzip file inflating to a GiB took 3.3 GB).
inline Trace read_chrome_trace(const std::filesystem::path& path) {
  const std::string source = "trace " + path.string();
  const std::string text = read_trace_text(path);
  core::check_json_text(text, source, core::json_text_fix);
  using Event = nlohmann::json::parse_event_t;
  detail::TraceBuilder b(source);
  int events_depth = -1;  // where events sit: 1 in a bare array, 2 in the traceEvents array
  std::string key;        // the last key of the top-level object
  // A key given twice keeps its last value, as the trace viewers read it (Chromium writes some
  // events' args twice): unlike tprimat's other inputs, not refused.
  const auto take = [&](int depth, Event event, nlohmann::json& parsed) {
    if (depth == 0 && event == Event::array_start) events_depth = 1;
    if (depth == 1 && event == Event::key) key = parsed.get<std::string>();
    if (depth == 1 && event == Event::array_start && key == "traceEvents") events_depth = 2;
    if (depth == 1 && event == Event::array_end && events_depth == 2) events_depth = -1;
    if (depth != events_depth) return true;
    if (event == Event::object_end) b.add(parsed);
    return event != Event::object_end && event != Event::array_end && event != Event::value;
  };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text, take);
  } catch (const nlohmann::json::exception& e) {
    throw core::json_syntax_error(e, source, "pass a complete Chrome trace");  // names the place
  }
  return b.finish(doc);
}

}  // namespace tprimat::profile
