// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// What --profile asks for: the --profile-* flags over a config file's `profiling` block (the
// seeds' keys), checked against the run, resolved to the library's profile::Settings.
#pragma once

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/profile/schedule.hpp"
#include "tprimat/profile/settings.hpp"
#include "tprimat/profile/trace_io.hpp"

namespace tprimat::cli {

/// The --profile flags as parsed; -1 and "" mean "not given" (the config block, then the seeds'
/// defaults apply).
struct ProfileFlags {
  bool enabled = false;  ///< --profile
  int wait = -1;
  int warmup = -1;
  int active = -1;
  int repeat = -1;
  std::string ranks;  ///< "0", "0,3" or "all"
  bool gzip = false;
};

namespace detail {

inline std::vector<int> parse_profile_ranks(const std::string_view given, bool& all) {
  all = given == "all";
  std::vector<int> out;
  if (all) return out;
  std::string_view text = given;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    int r = -1;
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), r);
    if (ec != std::errc{} || p != item.data() + item.size() || r < 0)
      throw core::InputError("--profile-ranks takes all or a comma-separated list of ranks, got '" +
                                 std::string(given) + "'",
                             "pass e.g. --profile-ranks 0 or --profile-ranks 0,4");
    out.push_back(r);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  if (out.empty())
    throw core::InputError("--profile-ranks is empty", "pass e.g. --profile-ranks 0");
  return out;
}

/// The config file's `profiling` block: the seeds' config.yaml keys (Kineto options tprimat does
/// not have are accepted and ignored), plus `ranks` and `gzip`.
inline void read_profiling_block(const nlohmann::json& block, const std::string& file,
                                 bool& enabled, profile::Schedule& s, std::vector<int>& ranks,
                                 bool& all, bool& gzip) {
  const std::string at = "config " + file + ": profiling";
  if (!block.is_object())
    throw core::InputError(at + " must be an object, got " + block.dump(),
                           "write {\"profiling\": {\"enabled\": true, \"schedule\": {...}}}");
  auto flag = [&](const nlohmann::json& v, const std::string& key) {
    if (!v.is_boolean())
      throw core::InputError(at + "." + key + " must be true or false, got " + v.dump(),
                             "write it without quotes");
    return v.get<bool>();
  };
  for (const auto& [key, v] : block.items()) {
    if (key == "enabled") {
      enabled = flag(v, key);
    } else if (key == "gzip") {
      gzip = flag(v, key);
    } else if (key == "export_chrome_trace" || key == "profile_memory" || key == "with_stack" ||
               key == "with_flops" || key == "record_shapes") {
      (void)flag(v, key);  // Kineto's switches: tprimat always writes a Chrome trace
    } else if (key == "ranks" || key == "profile_ranks") {
      ranks.clear();
      all = v.is_string() && v.get<std::string>() == "all";
      if (!all) {
        if (!v.is_array() || v.empty())
          throw core::InputError(
              at + "." + key + " must be \"all\" or a list of ranks, got " + v.dump(),
              "write e.g. \"ranks\": [0]");
        for (const auto& r : v) {
          if (!r.is_number_integer() || r.get<long long>() < 0)
            throw core::InputError(at + "." + key + " holds " + r.dump() + ", not a rank",
                                   "write non-negative integers, e.g. [0, 4]");
          ranks.push_back(r.get<int>());
        }
      }
    } else if (key == "schedule") {
      if (!v.is_object())
        throw core::InputError(at + ".schedule must be an object, got " + v.dump(),
                               "write {\"wait\": 1, \"warmup\": 1, \"active\": 5, \"repeat\": 1}");
      for (const auto& [k, n] : v.items()) {
        int* field = k == "wait"     ? &s.wait
                     : k == "warmup" ? &s.warmup
                     : k == "active" ? &s.active
                     : k == "repeat" ? &s.repeat
                                     : nullptr;
        if (field == nullptr)
          throw core::InputError(at + ".schedule has unknown key " + k,
                                 "use wait, warmup, active, repeat");
        if (!n.is_number_integer())
          throw core::InputError(at + ".schedule." + k + " must be an integer, got " + n.dump(),
                                 "write it as a number without quotes");
        // Counted in steps of a run, whose longest is 2,000,000 (cli/options.hpp's limits):
        // checked before the int conversion, which would wrap a larger value.
        if (n.get<long long>() < 0 || n.get<long long>() > 2'000'000 ||
            (n.is_number_unsigned() && n.get<unsigned long long>() > 2'000'000))
          throw core::InputError(at + ".schedule." + k + " is " + n.dump() + ", out of range",
                                 "write from 0 to 2000000 steps");
        *field = n.get<int>();
      }
    } else {
      throw core::InputError(at + " has unknown key " + key,
                             "use enabled, schedule, ranks, gzip (or the seeds' Kineto switches)");
    }
  }
}

}  // namespace detail

/// The settings a run profiles with. `block` is the config file's `profiling` block (null when
/// there is none; `file` names it in messages); flags win over it, it wins over the seeds'
/// defaults. `total_steps` (warm-up + measured) and `world` (ranks) bound the request.
/// Throws core::InputError for anything that cannot run, naming the flag and the fix.
inline profile::Settings resolve_profile(const ProfileFlags& f, const nlohmann::json& block,
                                         const std::string& file, int total_steps, int world) {
  profile::Settings s;
  bool gzip = false;
  if (!block.is_null())
    detail::read_profiling_block(block, file, s.enabled, s.schedule, s.ranks, s.all_ranks, gzip);
  s.enabled = s.enabled || f.enabled;
  s.gzip = gzip || f.gzip;
  const std::pair<const char*, int> given[] = {{"--profile-wait", f.wait},
                                               {"--profile-warmup", f.warmup},
                                               {"--profile-active", f.active},
                                               {"--profile-repeat", f.repeat}};
  if (!s.enabled) {
    for (const auto& [flag, v] : given)
      if (v >= 0)
        throw core::InputError(std::string(flag) + " has no effect without --profile",
                               "add --profile");
    if (!f.ranks.empty())
      throw core::InputError("--profile-ranks has no effect without --profile", "add --profile");
    if (f.gzip)
      throw core::InputError("--profile-gzip has no effect without --profile", "add --profile");
    return s;
  }
  if (f.wait >= 0) s.schedule.wait = f.wait;
  if (f.warmup >= 0) s.schedule.warmup = f.warmup;
  if (f.active >= 0) s.schedule.active = f.active;
  if (f.repeat >= 0) s.schedule.repeat = f.repeat;
  if (f.wait < -1 || f.warmup < -1 || f.active < -1 || f.repeat < -1)
    throw core::InputError(
        "--profile-wait, --profile-warmup, --profile-active and "
        "--profile-repeat take 0 or more",
        "pass e.g. --profile-active 5");
  if (auto err = profile::schedule_error(s.schedule))
    throw core::InputError("profiling schedule: " + *err,
                           "fix --profile-* (or the config's profiling.schedule)");
  if (!f.ranks.empty()) s.ranks = detail::parse_profile_ranks(f.ranks, s.all_ranks);
  for (int r : s.ranks)
    if (r >= world)
      throw core::InputError("--profile-ranks names rank " + std::to_string(r) +
                                 " but the run has " + std::to_string(world) + " rank(s)",
                             "pass ranks below " + std::to_string(world) + ", or all");
  const int first = s.schedule.first_recorded();
  if (first >= total_steps)
    throw core::InputError("the profiling schedule records from step " + std::to_string(first + 1) +
                               " (wait " + std::to_string(s.schedule.wait) + " + warmup " +
                               std::to_string(s.schedule.warmup) + ") but the run has " +
                               std::to_string(total_steps) + " steps (--warmup-steps + --steps)",
                           "lower --profile-wait/--profile-warmup, or raise --steps");
  if (s.gzip && !profile::gzip_available)
    throw core::InputError("--profile-gzip needs a tprimat built with zlib",
                           "install zlib1g-dev and rebuild, or drop --profile-gzip");
  return s;
}

}  // namespace tprimat::cli
