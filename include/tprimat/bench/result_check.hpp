// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// A result's rules, checked in code before any result is written: schema/result.schema.json read
// as it is (its copy in bench/result_schema.hpp), and the few rules between fields it cannot say.
#pragma once

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "tprimat/bench/result_schema.hpp"
#include "tprimat/train/precision.hpp"

namespace tprimat::bench {

namespace detail {

// The schema's two patterns, written out: <regex> crashes hipcc 15's device pass, and a header
// the umbrella includes must compile under every GPU compiler.

/// ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$
inline bool is_utc_timestamp(std::string_view s) {
  constexpr std::string_view shape = "0000-00-00T00:00:00Z";
  if (s.size() != shape.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (shape[i] == '0' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i]) return false;
  return true;
}

/// ^[0-9]+\.[0-9]+\.[0-9]+
inline bool starts_with_version(std::string_view s) {
  std::size_t at = 0;
  for (int part = 0; part < 3; ++part) {
    if (part > 0 && (at >= s.size() || s[at++] != '.')) return false;
    const std::size_t first = at;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
    if (at == first) return false;
  }
  return true;
}

/// A `pattern` of the schema, its matcher and how a message names it. A pattern the schema
/// gains needs a row here (the check names it as unknown until then, and the tests fail).
struct SchemaPattern {
  std::string_view pattern;
  bool (*matches)(std::string_view);
  std::string_view what;
};
inline constexpr SchemaPattern schema_patterns[] = {
    {"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$", is_utc_timestamp,
     "an ISO 8601 UTC time, 2026-01-31T12:00:00Z"},
    {"^[0-9]+\\.[0-9]+\\.[0-9]+", starts_with_version, "a version, MAJOR.MINOR.PATCH"},
};

/// The schema, parsed once, its keys in the file's order (the order rules are judged in).
inline const nlohmann::ordered_json& result_schema() {
  static const nlohmann::ordered_json schema = nlohmann::ordered_json::parse(result_schema_text);
  return schema;
}

/// The bound on a number (outside ResultRules: its default arguments need it complete).
struct NumberBound {
  enum { none, at_least, above } kind = none;
  double value = 0;
};

/// One document's walk through the schema's rules; the first rule broken is kept.
class ResultRules {
 public:
  using json = nlohmann::json;

  /// What the value at a key may be. A number that is not finite is written as null (nlohmann
  /// dumps NaN and infinities so), and is judged as null.
  enum Kind : unsigned {
    integer = 1,  ///< a JSON integer, or a float with no fractional part (as JSON Schema counts)
    number = 2,
    string = 4,
    boolean = 8,
    null = 16,
    object = 32,
    array = 64,
  };
  using Bound = NumberBound;

  /// `keys_required` false: only the keys present are judged (a reader of older results).
  explicit ResultRules(const json& doc, bool keys_required = true)
      : doc_(doc), keys_required_(keys_required) {}

  const std::optional<std::string>& error() const { return error_; }

  /// The value at `key` ("/a/b") must exist (when `required`) and be of `kinds`, within `bound`.
  const json* expect(const std::string& key, unsigned kinds, Bound bound = {},
                     bool required = true) {
    const json* v = find(key);
    if (v == nullptr) {
      if (required && keys_required_) fail(key, nullptr, "is required");
      return nullptr;
    }
    const unsigned k = kind_of(*v);
    if ((k & kinds) == 0) {
      fail(key, v, "must be " + kinds_text(kinds));
      return nullptr;
    }
    if ((k & (integer | number)) != 0 && bound.kind != Bound::none) {
      const double x = v->get<double>();
      if (bound.kind == Bound::at_least && !(x >= bound.value))
        fail(key, v, "must be at least " + number_text(bound.value));
      if (bound.kind == Bound::above && !(x > bound.value))
        fail(key, v, "must be above " + number_text(bound.value));
    }
    return v;
  }

  /// An array whose every item is of `kinds` within `bound`; the size of the array or nullopt.
  std::optional<std::size_t> array_of(const std::string& key, unsigned kinds, Bound bound = {},
                                      bool required = true) {
    const json* v = expect(key, array, {}, required);
    if (v == nullptr) return std::nullopt;
    for (std::size_t i = 0; i < v->size(); ++i) expect(key + "/" + std::to_string(i), kinds, bound);
    return v->size();
  }

  /// Judges the document by the JSON Schema `schema` (the keywords schema/result.schema.json
  /// uses: type, const, enum, minimum, exclusiveMinimum, maximum, minLength, pattern, minItems,
  /// properties, required, additionalProperties, items, $ref, if/then).
  void follow(const nlohmann::ordered_json& schema) {
    schema_ = &schema;
    apply(schema, doc_, "");
  }

  void fail(const std::string& key, const json* value, const std::string& rule) {
    if (error_) return;
    std::string shown = value == nullptr ? "absent" : value->dump();
    if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
    std::string dotted = key.empty() ? key : key.substr(1);
    for (char& c : dotted)
      if (c == '/') c = '.';
    error_ = (dotted.empty() ? "the result" : dotted) + " is " + shown + ", and " + rule;
  }

 private:
  using schema_node = nlohmann::ordered_json;

  const schema_node& resolve(const schema_node& node) const {
    if (!node.contains("$ref")) return node;
    // "#/$defs/x": a pointer into the schema itself.
    return schema_->at(nlohmann::ordered_json::json_pointer(
        node["$ref"].get<std::string>().substr(1)));
  }

  static unsigned kinds_of_type(const schema_node& type) {
    static constexpr std::pair<std::string_view, unsigned> names[] = {
        {"integer", integer}, {"number", integer | number}, {"string", string},
        {"boolean", boolean}, {"null", null},               {"object", object},
        {"array", array}};
    unsigned kinds = 0;
    for (const auto& t : type.is_array() ? type : schema_node::array({type}))
      for (const auto& [name, k] : names)
        if (t == name) kinds |= k;
    return kinds;
  }

  /// Whether `v` keeps `node`, judged apart (an `if`), leaving this walk's error alone.
  bool keeps(const schema_node& node, const json& v) const {
    ResultRules apart(doc_, keys_required_);
    apart.schema_ = schema_;
    apart.apply(node, v, "");
    return !apart.error_;
  }

  /// `node`'s rules on the value `v` at `key`; the first broken is kept.
  void apply(const schema_node& node_in, const json& v, const std::string& key) {
    const schema_node& node = resolve(node_in);
    const unsigned k = kind_of(v);
    if (node.contains("type")) {
      const unsigned kinds = kinds_of_type(node["type"]);
      if ((k & kinds) == 0) return fail(key, &v, "must be " + kinds_text(kinds));
    }
    const auto equal = [&](const schema_node& c) { return k == null ? c.is_null() : json(c) == v; };
    if (node.contains("const") && !equal(node["const"]))
      return fail(key, &v, "must be " + (node["const"].is_string()
                                             ? node["const"].get<std::string>()
                                             : node["const"].dump()));
    if (node.contains("enum")) {
      std::string list;
      bool found = false;
      for (const auto& c : node["enum"]) {
        found = found || equal(c);
        if (!c.is_null())
          list += (list.empty() ? "" : ", ") + (c.is_string() ? c.get<std::string>() : c.dump());
      }
      if (!found) return fail(key, &v, "must be one of " + list);
    }
    if ((k & number) != 0) {
      const double x = v.get<double>();
      if (node.contains("minimum") && !(x >= node["minimum"].get<double>()))
        return fail(key, &v, "must be at least " + number_text(node["minimum"].get<double>()));
      if (node.contains("exclusiveMinimum") && !(x > node["exclusiveMinimum"].get<double>()))
        return fail(key, &v,
                    "must be above " + number_text(node["exclusiveMinimum"].get<double>()));
      if (node.contains("maximum") && !(x <= node["maximum"].get<double>()))
        return fail(key, &v, "must be at most " + number_text(node["maximum"].get<double>()));
    }
    if (k == string) {
      const std::string s = v.get<std::string>();
      if (node.contains("minLength") && s.size() < node["minLength"].get<std::size_t>())
        return fail(key, &v,
                    node["minLength"] == 1
                        ? std::string("must not be empty")
                        : "must hold at least " + node["minLength"].dump() + " characters");
      if (node.contains("pattern")) {
        const std::string pattern = node["pattern"].get<std::string>();
        const SchemaPattern* known = nullptr;
        for (const auto& p : schema_patterns)
          if (p.pattern == pattern) known = &p;
        if (known == nullptr) return fail(key, &v, "must match " + pattern + ", a pattern "
                                                   "bench/result_check.hpp cannot check yet");
        if (!known->matches(s)) return fail(key, &v, "must be " + std::string(known->what));
      }
    }
    if (k == array) {
      if (node.contains("minItems") && v.size() < node["minItems"].get<std::size_t>())
        return fail(key, &v, "must hold at least " + node["minItems"].dump() + " item" +
                                 (node["minItems"] == 1 ? "" : "s"));
      if (node.contains("items"))
        for (std::size_t i = 0; i < v.size() && !error_; ++i)
          apply(node["items"], v[i], key + "/" + std::to_string(i));
    }
    if (k == object) {
      const auto required = [&](const std::string& name) {
        if (!node.contains("required")) return false;
        for (const auto& r : node["required"])
          if (r == name) return true;
        return false;
      };
      if (node.contains("properties"))
        for (const auto& [name, child] : node["properties"].items()) {
          if (error_) return;
          if (v.contains(name))
            apply(child, v.at(name), key + "/" + name);
          else if (required(name) && keys_required_)
            fail(key + "/" + name, nullptr, "is required");
        }
      if (node.contains("required") && keys_required_)
        for (const auto& r : node["required"])
          if (!v.contains(r.get<std::string>()))
            fail(key + "/" + r.get<std::string>(), nullptr, "is required");
      if (node.contains("additionalProperties") && node["additionalProperties"].is_object())
        for (const auto& [name, child] : v.items())
          if (!node.contains("properties") || !node["properties"].contains(name))
            apply(node["additionalProperties"], child, key + "/" + name);
      if (node.contains("if") && node.contains("then") && keeps(node["if"], v))
        apply(node["then"], v, key);
    }
  }

  const json* find(const std::string& key) const {
    try {
      const json::json_pointer p(key);
      return doc_.contains(p) ? &doc_.at(p) : nullptr;
    } catch (const json::exception&) {  // a key under a value that is no object or array
      return nullptr;
    }
  }

  static unsigned kind_of(const json& v) {
    if (v.is_number_integer()) return integer | number;
    if (v.is_number_float()) {
      const double x = v.get<double>();
      if (!std::isfinite(x)) return null;
      return x == std::floor(x) ? integer | number : number;
    }
    if (v.is_string()) return string;
    if (v.is_boolean()) return boolean;
    if (v.is_null()) return null;
    if (v.is_object()) return object;
    return array;
  }

  static std::string kinds_text(unsigned kinds) {
    static constexpr std::pair<unsigned, const char*> names[] = {
        {integer, "an integer"},    {number, "a number"}, {string, "a string"},
        {boolean, "true or false"}, {null, "null"},       {object, "an object"},
        {array, "an array"}};
    std::string out;
    for (const auto& [k, name] : names)
      if ((kinds & k) != 0 && !(k == integer && (kinds & number) != 0))
        out += (out.empty() ? "" : " or ") + std::string(name);
    return out;
  }

  static std::string number_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }

  const json& doc_;
  bool keys_required_;
  const schema_node* schema_ = nullptr;
  std::optional<std::string> error_;
};

/// training_config.fp8 against training_config.precision, the rules between fields the schema
/// cannot state (it has judged each value already): an FP8 run records its recipe's settings
/// (bench/fp8_record.hpp), and they must be the recipe the precision names and add up to the
/// layers run; any other run records none (null or absent).
inline void check_fp8(ResultRules& r, const nlohmann::json& doc) {
  using R = ResultRules;
  const std::string t = "/training_config/", f = t + "fp8";
  const nlohmann::json* block = r.expect(f, R::object | R::null, {}, false);
  const nlohmann::json::json_pointer precision_at{t + "precision"};
  if (r.error() || !doc.contains(precision_at) || !doc.at(precision_at).is_string()) return;
  const std::string precision = doc.at(precision_at).get<std::string>();
  constexpr std::string_view fp8_prefix = "fp8-hybrid-";
  if (!precision.starts_with(fp8_prefix)) {
    if (block != nullptr && !block->is_null())
      r.fail(f, block, "must be null: training_config.precision is " + precision);
    return;
  }
  if (block == nullptr || block->is_null()) {
    r.fail(f, block,
           "must be an object recording the FP8 settings: training_config.precision is " +
               precision);
    return;
  }
  const auto at = [&](const char* key) -> const nlohmann::json* {
    return r.expect(f + "/" + key, ~0u, {}, false);
  };
  // OCP on NVIDIA and gfx950, fnuz on gfx942: one pair, never one of each.
  if (const auto *fw = at("forward"), *bw = at("backward");
      fw != nullptr && bw != nullptr &&
      fw->get<std::string>().ends_with("_fnuz") != bw->get<std::string>().ends_with("_fnuz"))
    return r.fail(f + "/backward", bw,
                  "must be of forward's family (" + fw->get<std::string>() +
                      "): e4m3 with e5m2, or e4m3_fnuz with e5m2_fnuz");
  const std::string recipe = precision.substr(fp8_prefix.size());
  if (const auto* v = at("recipe"); v != nullptr && *v != recipe)
    return r.fail(f + "/recipe", v, "must be " + recipe + ", as training_config.precision says");
  const bool delayed = recipe == "delayed";
  // The amax history and its reduction are the delayed recipe's; current scaling has none. (A
  // delayed run's null is a setting its imported log does not print.)
  for (const char* key : {"amax_history_len", "amax_compute_algo"})
    if (const auto* v = at(key); v != nullptr && !delayed && !v->is_null())
      return r.fail(f + "/" + key, v, "must be null: current scaling keeps no amax history");
  const auto* bf16 = at("bf16_layers");
  const auto* fp8 = at("fp8_layers");
  const nlohmann::json::json_pointer layers_at{t + "num_layers"};
  if (bf16 == nullptr || fp8 == nullptr || bf16->is_null() || fp8->is_null() ||
      !doc.contains(layers_at) ||
      !doc.at(layers_at).is_number())
    return;
  const double layers = doc.at(layers_at).get<double>();
  for (std::size_t i = 0; i < bf16->size(); ++i)
    if ((*bf16)[i].get<double>() >= layers)
      return r.fail(f + "/bf16_layers/" + std::to_string(i), &(*bf16)[i],
                    "must be below training_config.num_layers");
  if (static_cast<double>(bf16->size()) + fp8->get<double>() != layers)
    r.fail(f + "/fp8_layers", fp8,
           "must be training_config.num_layers less the bf16_layers (" +
               std::to_string(static_cast<long long>(layers) -
                              static_cast<long long>(bf16->size())) +
               ")");
}

/// parallelism_config.pipeline_layers (results before it lack it: they ran the even split): one
/// count of at least 1 per pipeline stage, summing to training_config.num_layers.
inline void check_pipeline_layers(ResultRules& r, const nlohmann::json& doc) {
  using R = ResultRules;
  const std::string key = "/parallelism_config/pipeline_layers";
  const auto stages = r.array_of(key, R::integer, {R::Bound::at_least, 1}, false);
  const nlohmann::json::json_pointer pp_at{"/parallelism_config/pipeline_model_parallel_size"},
      layers_at{"/training_config/num_layers"};
  if (r.error() || !stages || !doc.contains(pp_at) || !doc.contains(layers_at)) return;
  const nlohmann::json& split = doc.at(nlohmann::json::json_pointer(key));
  if (static_cast<double>(*stages) != doc.at(pp_at).get<double>())
    return r.fail(key, &split,
                  "must hold one count per pipeline stage (pipeline_model_parallel_size)");
  double sum = 0;
  for (const auto& n : split) sum += n.get<double>();
  if (sum != doc.at(layers_at).get<double>())
    r.fail(key, &split, "must sum to training_config.num_layers");
}

}  // namespace detail

/// Why `doc` would fail schema/result.schema.json, as "key is value, and rule" naming the first
/// key that breaks a rule; nullopt when it keeps them all. The rules are the schema file's own,
/// read by a small interpreter of the keywords it uses (no writer needs a JSON Schema validator),
/// and after them the rules between fields that JSON Schema cannot state (check_fp8,
/// check_pipeline_layers, sequence parallelism's TP): one source, nothing to keep in step.
/// `keys_required` false judges only the keys present: what a report asks of a result an older
/// tprimat wrote (a section added since may be absent; a value present must keep its rule).
inline std::optional<std::string> result_error(const nlohmann::json& doc,
                                               bool keys_required = true) {
  using R = detail::ResultRules;
  R r(doc, keys_required);
  r.follow(detail::result_schema());
  if (r.error()) return r.error();
  // Sequence parallelism splits the residual stream over TP ranks: there are none at TP 1.
  if (const auto* sp = r.expect("/parallelism_config/sequence_parallel", ~0u, {}, false);
      sp != nullptr && sp->is_boolean() && sp->get<bool>()) {
    const auto* tp = r.expect("/parallelism_config/tensor_model_parallel_size", R::integer,
                              {R::Bound::at_least, 1});
    if (tp != nullptr && tp->get<double>() <= 1)
      r.fail("/parallelism_config/sequence_parallel", sp,
             "must be false where tensor_model_parallel_size is 1");
  }
  detail::check_fp8(r, doc);
  detail::check_pipeline_layers(r, doc);
  return r.error();
}

}  // namespace tprimat::bench
