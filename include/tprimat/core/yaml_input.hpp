// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// YAML text (the seeds' config.yaml) read into the JSON tree every config reader walks, with the
// JSON reader's guarantees: nesting capped, no key read twice, no number out of range.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tprimat/core/error.hpp"
#include "tprimat/core/json_input.hpp"

#if defined(TPRIMAT_HAVE_YAML) && TPRIMAT_HAVE_YAML
#include <yaml.h>
#endif

namespace tprimat::core {

/// Whether this build reads YAML (libyaml was found when it was configured).
inline constexpr bool yaml_supported =
#if defined(TPRIMAT_HAVE_YAML) && TPRIMAT_HAVE_YAML
    true;
#else
    false;
#endif

/// The value of an unquoted YAML scalar, resolved as PyYAML (which the seeds' Python used) and
/// YAML 1.2 agree: null, booleans (true/false, and YAML 1.1's yes/no/on/off), decimal integers
/// and decimal floats (`3.0e-4`, `1e-4`). Anything else, quoted text included, is a string.
/// `.inf` and `.nan` are refused by the caller (`finite` false): no setting takes them.
struct YamlScalar {
  nlohmann::json value;
  bool finite = true;
};

inline YamlScalar resolve_plain_scalar(std::string_view s) {
  for (std::string_view n : {"", "~", "null", "Null", "NULL"})
    if (s == n) return {nullptr};
  for (std::string_view t : {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"})
    if (s == t) return {true};
  for (std::string_view f : {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"})
    if (s == f) return {false};
  for (std::string_view x : {".inf", ".Inf", ".INF", "+.inf", "-.inf", ".nan", ".NaN", ".NAN"})
    if (s == x) return {s, false};
  // A number: an optional sign, digits, an optional fraction and exponent, nothing else.
  std::size_t i = (s.starts_with('-') || s.starts_with('+')) ? 1 : 0;
  const std::size_t digits_from = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  bool integral = i > digits_from && i == s.size();
  if (!integral) {
    bool any_digit = i > digits_from;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        ++i;
        any_digit = true;
      }
    }
    if (any_digit && i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
      const std::size_t exp_from = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      if (i == exp_from) return {std::string(s)};
    }
    if (!any_digit || i != s.size()) return {std::string(s)};
  }
  const std::string text(s.starts_with('+') ? s.substr(1) : s);
  if (integral) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc() && end == text.data() + text.size()) return {v};
  }
  const double d = std::strtod(text.c_str(), nullptr);  // an integer past 64 bits lands here
  if (!std::isfinite(d)) return {std::string(s), false};
  return {d};
}

#if defined(TPRIMAT_HAVE_YAML) && TPRIMAT_HAVE_YAML

namespace detail {

/// One open mapping or sequence while the events are read.
struct YamlFrame {
  nlohmann::json value;
  std::string key;             ///< a mapping's key awaiting its value
  bool awaiting_value = false;  ///< a mapping has read a key
  std::set<std::string> keys;  ///< a mapping's keys so far
};

/// "at line 3, column 5" of a libyaml mark (0-based inside).
inline std::string yaml_place(const yaml_mark_t& mark) {
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

/// The keys from the document's top to the frame being read: "training.data".
inline std::string yaml_path(const std::vector<YamlFrame>& stack) {
  std::string out;
  for (const auto& f : stack)
    if (f.value.is_object() && f.awaiting_value) out += (out.empty() ? "" : ".") + f.key;
  return out;
}

}  // namespace detail

/// Parses the YAML `text` from `source` into JSON. One document; mappings with scalar keys, each
/// key once; sequences; scalars resolved by resolve_plain_scalar (quoted ones stay strings).
/// Refused, each an InputError naming the place and `fix` or the particular fix: a syntax error,
/// nesting deeper than max_json_depth, a key given twice, an alias (`*name`: expanded it could
/// grow a small file into a huge tree), a tag beyond YAML's core types, several documents, and
/// `.inf`/`.nan`.
inline nlohmann::json parse_yaml(std::string_view text, const std::string& source,
                                 std::string_view fix) {
  struct Parser {
    yaml_parser_t p;
    Parser() { yaml_parser_initialize(&p); }
    ~Parser() { yaml_parser_delete(&p); }
  } parser;
  struct Event {
    yaml_event_t e{};
    ~Event() { yaml_event_delete(&e); }
  };
  yaml_parser_set_input_string(&parser.p, reinterpret_cast<const unsigned char*>(text.data()),
                               text.size());
  const auto refuse = [&](const std::string& what, const yaml_mark_t& at, std::string_view how) {
    throw InputError(source + ": " + what + " at " + detail::yaml_place(at), std::string(how));
  };
  std::vector<detail::YamlFrame> stack;
  nlohmann::json root;
  bool have_root = false;
  int documents = 0;
  // Puts a finished value where it belongs: the document, a sequence, or a mapping's key.
  const auto place = [&](nlohmann::json value, const yaml_mark_t& at) {
    if (stack.empty()) {
      root = std::move(value);
      have_root = true;
      return;
    }
    auto& top = stack.back();
    if (top.value.is_array()) {
      top.value.push_back(std::move(value));
    } else if (!top.awaiting_value) {  // a key: a scalar's text as written (see below)
      const std::string key = value.get<std::string>();
      if (!top.keys.insert(key).second) {
        const std::string in = detail::yaml_path(stack);
        refuse("key \"" + key + "\"" + (in.empty() ? "" : " under " + in) + " is given twice", at,
               "give each key once: tprimat does not pick one of several values");
      }
      top.key = key;
      top.awaiting_value = true;
    } else {
      top.value[top.key] = std::move(value);
      top.awaiting_value = false;
    }
  };
  for (;;) {
    Event ev;
    if (!yaml_parser_parse(&parser.p, &ev.e))
      throw InputError(source + " is not valid YAML (" +
                           std::string(parser.p.problem ? parser.p.problem : "syntax error") +
                           " at " + detail::yaml_place(parser.p.problem_mark) +
                           (parser.p.context ? std::string(", ") + parser.p.context : "") + ")",
                       std::string(fix));
    const yaml_mark_t at = ev.e.start_mark;
    switch (ev.e.type) {
      case YAML_STREAM_END_EVENT:
        return have_root ? root : nlohmann::json();
      case YAML_DOCUMENT_START_EVENT:
        if (++documents > 1)
          refuse("a second YAML document (---)", at,
                 "keep one document in the file: tprimat reads one configuration");
        break;
      case YAML_ALIAS_EVENT:
        refuse("an alias (*" +
                   std::string(reinterpret_cast<const char*>(ev.e.data.alias.anchor)) + ")",
               at, "write the value out where the alias stands: tprimat does not expand aliases");
        break;
      case YAML_MAPPING_START_EVENT:
      case YAML_SEQUENCE_START_EVENT: {
        const bool mapping = ev.e.type == YAML_MAPPING_START_EVENT;
        const auto* tag = mapping ? ev.e.data.mapping_start.tag : ev.e.data.sequence_start.tag;
        const std::string_view want = mapping ? "tag:yaml.org,2002:map" : "tag:yaml.org,2002:seq";
        if (tag != nullptr && reinterpret_cast<const char*>(tag) != want)
          refuse("a tag " + std::string(reinterpret_cast<const char*>(tag)), at,
                 "drop the tag: tprimat reads plain mappings, lists and values");
        if (static_cast<int>(stack.size()) + 1 > max_json_depth)
          refuse("nests mappings and lists deeper than the " + std::to_string(max_json_depth) +
                     " levels tprimat reads",
                 at, json_text_fix);
        if (!stack.empty() && stack.back().value.is_object() && !stack.back().awaiting_value)
          refuse("a mapping key that is a mapping or list", at, "write each key as a plain name");
        detail::YamlFrame frame;
        frame.value = mapping ? nlohmann::json::object() : nlohmann::json::array();
        stack.push_back(std::move(frame));
        break;
      }
      case YAML_MAPPING_END_EVENT:
      case YAML_SEQUENCE_END_EVENT: {
        nlohmann::json done = std::move(stack.back().value);
        stack.pop_back();
        place(std::move(done), at);
        break;
      }
      case YAML_SCALAR_EVENT: {
        const auto& s = ev.e.data.scalar;
        const std::string_view value(reinterpret_cast<const char*>(s.value), s.length);
        const std::string tag = s.tag ? reinterpret_cast<const char*>(s.tag) : "";
        nlohmann::json j;
        const bool key = !stack.empty() && stack.back().value.is_object() &&
                         !stack.back().awaiting_value;
        if (key) {  // `1:` or `true:` name a key, as written
          j = std::string(value);
        } else if (tag == "tag:yaml.org,2002:str" ||
            (tag.empty() && s.style != YAML_PLAIN_SCALAR_STYLE) || tag == "!") {
          j = std::string(value);
        } else if (tag.empty() || tag == "tag:yaml.org,2002:int" ||
                   tag == "tag:yaml.org,2002:float" || tag == "tag:yaml.org,2002:bool" ||
                   tag == "tag:yaml.org,2002:null") {
          auto r = resolve_plain_scalar(value);
          if (!r.finite)
            refuse(std::string(value) + ", not a finite number", at,
                   "write a finite number (every setting tprimat reads is one)");
          j = std::move(r.value);
        } else {
          refuse("a tag " + tag, at,
                 "drop the tag: tprimat reads plain mappings, lists and values");
        }
        place(std::move(j), at);
        break;
      }
      default:
        break;
    }
  }
}

#else

/// This build was configured without libyaml: every YAML config is refused, naming the two ways
/// on (a build with libyaml-dev, or the same keys in JSON).
inline nlohmann::json parse_yaml(std::string_view, const std::string& source, std::string_view) {
  throw InputError(source + " is YAML, and this tprimat was built without a YAML reader (libyaml "
                            "was not found when it was configured)",
                   "install libyaml-dev (scripts/install-deps.sh) and build again, or write the "
                   "same keys as JSON in a .json file");
}

#endif

}  // namespace tprimat::core
