// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Reads a Chrome trace — tprimat's, or a PyTorch profiler (Kineto) export — into TraceEvents.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tprimat/core/error.hpp"
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
    if (v.is_number()) return static_cast<std::int64_t>(v.get<double>());
    const std::string key = v.is_string() ? v.get<std::string>() : v.dump();
    auto [it, fresh] = ids.emplace(key, -static_cast<std::int64_t>(ids.size()) - 1);
    return it->second;
  }
};

/// Microseconds (a JSON number, maybe fractional) to integer nanoseconds.
inline std::int64_t nanoseconds(const nlohmann::json& us) {
  if (!us.is_number()) return 0;
  if (us.is_number_integer()) return us.get<std::int64_t>() * 1000;
  return std::llround(us.get<double>() * 1000.0);
}

inline std::uint64_t unsigned_arg(const nlohmann::json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end() || !it->is_number()) return 0;
  if (it->is_number_integer()) {
    const auto v = it->get<std::int64_t>();
    return v > 0 ? static_cast<std::uint64_t>(v) : 0;
  }
  const double v = it->get<double>();
  return v > 0 ? static_cast<std::uint64_t>(v) : 0;
}

inline void read_args(const nlohmann::json& args, TraceEvent& e) {
  if (!args.is_object()) return;
  e.correlation = unsigned_arg(args, "correlation");
  e.external_id = unsigned_arg(args, "External id");
  if (auto it = args.find("bytes"); it != args.end() && it->is_number())
    e.bytes = it->get<std::int64_t>();
  if (auto it = args.find("flops"); it != args.end() && it->is_number())
    e.flops = it->get<double>();
  for (auto [key, out] : {std::pair{"grid", &e.grid}, std::pair{"block", &e.block}}) {
    auto it = args.find(key);
    if (it == args.end() || !it->is_array()) continue;
    for (std::size_t i = 0; i < 3 && i < it->size(); ++i)
      if ((*it)[i].is_number()) (*out)[i] = (*it)[i].get<int>();
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
    const std::string ph = ev.value("ph", std::string());
    const auto pid = ids(ev.value("pid", nlohmann::json(0)));
    const auto tid = ids(ev.value("tid", nlohmann::json(0)));
    const auto args = ev.value("args", nlohmann::json::object());
    if (ph == "M") {
      const std::string what = ev.value("name", std::string());
      const std::string name = args.is_object() ? args.value("name", std::string()) : "";
      if (what == "process_name") t.names.processes[pid] = name;
      if (what == "thread_name") t.names.threads[{pid, tid}] = name;
      continue;
    }
    if (ph == "E") {
      auto& stack = open[{pid, tid}];
      if (stack.empty()) continue;
      t.events[stack.back()].end_ns = detail::nanoseconds(ev.value("ts", nlohmann::json()));
      stack.pop_back();
      continue;
    }
    if (ph != "X" && ph != "B") continue;
    TraceEvent e;
    e.name = ev.value("name", std::string());
    e.category = ev.value("cat", std::string());
    e.kind = detail::kind_of(e.category);
    e.pid = pid;
    e.tid = tid;
    e.start_ns = detail::nanoseconds(ev.value("ts", nlohmann::json()));
    e.end_ns =
        e.start_ns + (ph == "X" ? detail::nanoseconds(ev.value("dur", nlohmann::json())) : 0);
    detail::read_args(args, e);
    if (ph == "B") open[{pid, tid}].push_back(t.events.size());
    t.events.push_back(std::move(e));
  }
  return t;
}

/// Reads `path` (.json, or gzip-compressed in a zlib build) and parses it.
inline Trace read_chrome_trace(const std::filesystem::path& path) {
  const std::string text = read_trace_text(path);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    if (auto p = what.find("parse error"); p != std::string::npos) what = what.substr(p);
    throw core::InputError("trace " + path.string() + " is not valid JSON (" + what + ")",
                           "pass a complete Chrome trace");
  }
  return parse_chrome_trace(doc, "trace " + path.string());
}

}  // namespace tprimat::profile
