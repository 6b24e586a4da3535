// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// JSON text as every reader parses it: nesting capped before nlohmann builds a tree.
#pragma once

#include <algorithm>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tprimat/core/error.hpp"

namespace tprimat::core {

/// The deepest nesting of arrays and objects tprimat reads (a top-level `[]` is 1). Its own
/// files nest 4 levels, Kineto traces and Hugging Face files about as many, so 64 leaves foreign
/// files room; while nlohmann's copies, dumps and lookups of a 100,000-deep document recurse past
/// the end of the stack.
inline constexpr int max_json_depth = 64;

/// A place in a text: byte offset (0-based), line and column (1-based, in bytes).
struct TextPosition {
  std::size_t byte = 0, line = 1, column = 1;
};

/// Where `text` first opens an array or object deeper than `limit`; nullopt when it never does.
/// It scans as nlohmann tokenises (brackets inside strings do not count), so nlohmann's parser
/// never nests deeper in a text it passes: where the two could part, the text has a syntax error
/// and nlohmann stops there first.
inline std::optional<TextPosition> json_nesting_past(std::string_view text,
                                                     int limit = max_json_depth) {
  int depth = 0;
  bool in_string = false;
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
    }
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character, a quote included
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return TextPosition{i, line, i - line_start + 1};
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

/// "nests arrays and objects deeper than the 64 levels tprimat reads (line 3, column 65)" when
/// `text` does, else "". A text of one line gives the column alone.
inline std::string json_depth_problem(std::string_view text) {
  const auto at = json_nesting_past(text);
  if (!at) return "";
  const bool one_line = text.find('\n') == std::string_view::npos;
  return "nests arrays and objects deeper than the " + std::to_string(max_json_depth) +
         " levels tprimat reads (" + (one_line ? "" : "line " + std::to_string(at->line) + ", ") +
         "column " + std::to_string(at->column) + ")";
}

/// Throws InputError "SOURCE: nests arrays and objects deeper than ...; FIX" when `text` does.
inline void check_json_depth(std::string_view text, const std::string& source,
                             std::string_view fix) {
  if (const auto problem = json_depth_problem(text); !problem.empty())
    throw InputError(source + ": " + problem, std::string(fix));
}

/// The fix to print for a text nested too deeply: no real input is.
inline constexpr std::string_view json_depth_fix =
    "no real input nests that deep: check what wrote the file";

/// nlohmann's parse error `e` as tprimat tells it: "SOURCE is not valid JSON (parse error at
/// line 2, column 3: ...); FIX".
inline InputError json_syntax_error(const nlohmann::json::exception& e, const std::string& source,
                                    std::string_view fix) {
  // nlohmann's what() opens with "[json.exception.parse_error.101] ": the rest names the place.
  std::string what = e.what();
  for (std::string_view kind : {"parse error", "number overflow"})
    if (auto p = what.find(kind); p != std::string::npos) {
      what = what.substr(p);
      break;
    }
  return InputError(source + " is not valid JSON (" + what + ")", std::string(fix));
}

/// nlohmann's parse of `text` from `source` after check_json_depth. A syntax error, or a number
/// past double's range (1e400), is an InputError "SOURCE is not valid JSON (parse error at line
/// 2, column 3: ...); FIX".
inline nlohmann::json parse_json(std::string_view text, const std::string& source,
                                 std::string_view fix) {
  check_json_depth(text, source, json_depth_fix);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw json_syntax_error(e, source, fix);
  }
}

/// parse_json for a file a person writes (a config): a key given twice in one object, which
/// nlohmann would read as its last value, is an InputError naming the key and where it sits.
inline nlohmann::json parse_json_keys_once(std::string_view text, const std::string& source,
                                           std::string_view fix) {
  check_json_depth(text, source, json_depth_fix);
  struct Frame {
    bool object = false;
    std::string key;  ///< the key whose value is being read
    std::vector<std::string> keys;
  };
  std::vector<Frame> open;
  const auto callback = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start || event == E::array_start) {
      open.push_back({event == E::object_start, {}, {}});
    } else if ((event == E::object_end || event == E::array_end) && !open.empty()) {
      open.pop_back();
    } else if (event == E::key && !open.empty()) {
      Frame& f = open.back();
      const std::string key = parsed.get<std::string>();
      if (std::find(f.keys.begin(), f.keys.end(), key) != f.keys.end()) {
        std::string in;
        for (std::size_t i = 0; i + 1 < open.size(); ++i)
          if (open[i].object) in += (in.empty() ? "" : ".") + open[i].key;
        throw InputError(source + ": key \"" + key + "\"" + (in.empty() ? "" : " under " + in) +
                             " is given twice",
                         "give each key once: tprimat does not pick one of several values");
      }
      f.keys.push_back(key);
      f.key = key;
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, callback);
  } catch (const nlohmann::json::exception& e) {
    throw json_syntax_error(e, source, fix);
  }
}

}  // namespace tprimat::core
