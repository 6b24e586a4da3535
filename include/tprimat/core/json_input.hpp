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
#include <unordered_set>
#include <utility>
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

/// Where `text` holds its first NUL byte; nullopt when it holds none. JSON text never does (a
/// string writes it \u0000), and nlohmann stops at one as at the end of the input, so the bytes
/// after it would go unread.
inline std::optional<TextPosition> json_nul_at(std::string_view text) {
  const std::size_t at = text.find('\0');
  if (at == std::string_view::npos) return std::nullopt;
  const std::size_t line_start = text.rfind('\n', at);
  const auto line = static_cast<std::size_t>(std::count(text.begin(), text.begin() + at, '\n'));
  return TextPosition{at, line + 1,
                      line_start == std::string_view::npos ? at + 1 : at - line_start};
}

/// What keeps `text` from being JSON tprimat parses, before nlohmann sees it: "nests arrays and
/// objects deeper than the 64 levels tprimat reads (line 3, column 65)", or "holds a NUL byte
/// (column 40), which JSON text never does"; "" when neither. A text of one line gives the column
/// alone.
inline std::string json_text_problem(std::string_view text) {
  const bool one_line = text.find('\n') == std::string_view::npos;
  const auto place = [&](const TextPosition& at) {
    return "(" + (one_line ? "" : "line " + std::to_string(at.line) + ", ") + "column " +
           std::to_string(at.column) + ")";
  };
  if (const auto at = json_nesting_past(text))
    return "nests arrays and objects deeper than the " + std::to_string(max_json_depth) +
           " levels tprimat reads " + place(*at);
  if (const auto at = json_nul_at(text))
    return "holds a NUL byte " + place(*at) + ", which JSON text never does";
  return "";
}

/// Throws InputError "SOURCE: nests arrays and objects deeper than ...; FIX" (or "holds a NUL
/// byte ...") when json_text_problem finds one.
inline void check_json_text(std::string_view text, const std::string& source,
                            std::string_view fix) {
  if (const auto problem = json_text_problem(text); !problem.empty())
    throw InputError(source + ": " + problem, std::string(fix));
}

/// The fix to print for a text nested too deeply or holding a NUL byte: no real input does.
inline constexpr std::string_view json_text_fix =
    "no real input nests that deep or holds a NUL byte: check what wrote the file";

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

/// A key given twice in one object: nlohmann would keep its last value, and tprimat does not pick
/// one of several. problem() reads `key "x" under a.b is given twice`; what() puts the source
/// and fix KeysOnce was made with around it.
class RepeatedKey : public InputError {
 public:
  RepeatedKey(const std::string& source, std::string problem, const std::string& fix)
      : InputError(source + ": " + problem, fix), problem_(std::move(problem)) {}
  const std::string& problem() const { return problem_; }

 private:
  std::string problem_;
};

/// The fix KeysOnce names by default.
inline constexpr std::string_view repeated_key_fix =
    "give each key once: tprimat does not pick one of several values";

/// A parser callback (nlohmann's parse(text, callback)) that throws RepeatedKey when an object
/// gives a key twice, at any depth. Each open object's keys are hashed, so an object of a million
/// keys costs no more than its parse. The key and its path are shown as messages show what a
/// user typed (core::shown): a newline in a key cannot break the one-line message.
class KeysOnce {
 public:
  explicit KeysOnce(std::string source, std::string_view fix = repeated_key_fix)
      : source_(std::move(source)), fix_(fix) {}

  bool operator()(int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start || event == E::array_start) {
      open_.push_back({event == E::object_start, {}, {}});
    } else if ((event == E::object_end || event == E::array_end) && !open_.empty()) {
      open_.pop_back();
    } else if (event == E::key && !open_.empty()) {
      Frame& f = open_.back();
      std::string key = parsed.get<std::string>();
      if (!f.keys.insert(key).second) {
        std::string in;
        for (std::size_t i = 0; i + 1 < open_.size(); ++i)
          if (open_[i].object) in += (in.empty() ? "" : ".") + shown(open_[i].key);
        throw RepeatedKey(
            source_,
            "key \"" + shown(key) + "\"" + (in.empty() ? "" : " under " + in) + " is given twice",
            fix_);
      }
      f.key = std::move(key);
    }
    return true;
  }

 private:
  struct Frame {
    bool object = false;
    std::string key;  ///< the key whose value is being read
    std::unordered_set<std::string> keys;
  };
  std::string source_;
  std::string fix_;
  std::vector<Frame> open_;
};

/// nlohmann's parse of `text` from `source` after check_json_text. A syntax error, or a number
/// past double's range (1e400), is an InputError "SOURCE is not valid JSON (parse error at line
/// 2, column 3: ...); FIX"; a key given twice in one object, a RepeatedKey.
inline nlohmann::json parse_json(std::string_view text, const std::string& source,
                                 std::string_view fix) {
  check_json_text(text, source, json_text_fix);
  try {
    return nlohmann::json::parse(text, KeysOnce(source));
  } catch (const nlohmann::json::exception& e) {
    throw json_syntax_error(e, source, fix);
  }
}

}  // namespace tprimat::core
