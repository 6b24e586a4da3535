// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Hugging Face safetensors files: a checked reader (one file or an index of shards), a writer.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tprimat/core/ascii_case.hpp"
#include "tprimat/core/bf16_bits.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/input_file.hpp"
#include "tprimat/core/json_input.hpp"
#include "tprimat/core/output_file.hpp"
#include "tprimat/data/megatron_indexed.hpp"  // detail::MappedFile, detail::load

namespace tprimat::data {

// The format is little-endian; values are read by plain copies.
static_assert(std::endian::native == std::endian::little,
              "tprimat: the safetensors reader assumes a little-endian host");

/// The layout (huggingface/safetensors README, "Format"): 8 bytes N, an unsigned little-endian
/// 64-bit header length; N bytes of UTF-8 JSON that must begin with '{' and may be padded at
/// the end with spaces (0x20); then the byte buffer. The header maps each tensor name to
/// {"dtype", "shape", "data_offsets": [BEGIN, END)} with offsets relative to the buffer, row-major
/// ('C' order); the optional "__metadata__" key holds a string-to-string map. The buffer must
/// be indexed entirely, without holes or overlaps.
inline constexpr std::uint64_t safetensors_max_header = 100'000'000;  ///< the reference limit

/// How messages name a safetensors file; the file is mapped, never read whole, so no cap.
inline constexpr core::InputKind safetensors_input{"safetensors file", core::no_size_cap,
                                                   "pass the path of a .safetensors file"};

/// Element types: the three tprimat reads and writes as weights, and the others the format names
/// (listed, sized and checked, never converted).
enum class WeightType { f32, f16, bf16, other };

inline std::string_view weight_type_name(WeightType t) {
  switch (t) {
    case WeightType::f32:
      return "F32";
    case WeightType::f16:
      return "F16";
    case WeightType::bf16:
      return "BF16";
    case WeightType::other:
      break;
  }
  return "other";
}

/// "F32", "BF16", "f16", "bf16", "fp32" ... (case-insensitive) to a weight type, else nothing.
inline std::optional<WeightType> weight_type_from_name(std::string_view name) {
  const std::string s = core::ascii_lower(name);
  if (s == "f32" || s == "fp32" || s == "float32") return WeightType::f32;
  if (s == "f16" || s == "fp16" || s == "float16") return WeightType::f16;
  if (s == "bf16" || s == "bfloat16") return WeightType::bf16;
  return std::nullopt;
}

/// Bytes per element of a safetensors dtype name, 0 when the format does not know it.
inline std::size_t safetensors_dtype_bytes(std::string_view dtype) {
  for (std::string_view d : {"F64", "I64", "U64"})
    if (dtype == d) return 8;
  for (std::string_view d : {"F32", "I32", "U32"})
    if (dtype == d) return 4;
  for (std::string_view d : {"F16", "BF16", "I16", "U16"})
    if (dtype == d) return 2;
  for (std::string_view d : {"I8", "U8", "BOOL", "F8_E4M3", "F8_E5M2"})
    if (dtype == d) return 1;
  return 0;
}

// ---- element conversions (round to nearest even, NaN stays NaN) ----------------------------

using core::bf16_bits_to_float;
using core::float_to_bf16_bits;

inline float f16_bits_to_float(std::uint16_t h) {
  const float sign = (h & 0x8000u) ? -1.0f : 1.0f;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -24);  // zero, subnormal
  if (exp == 31)
    return mant == 0 ? sign * std::numeric_limits<float>::infinity()
                     : std::numeric_limits<float>::quiet_NaN();
  return sign * std::ldexp(static_cast<float>(1024 + mant), exp - 25);
}

inline std::uint16_t float_to_f16_bits(float f) {
  const auto x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u);  // NaN, Inf
  if (ax >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds past 65504 to Inf
  if (ax < 0x38800000u) {  // below 2^-14: a subnormal half (or zero), in units of 2^-24
    const float units = std::nearbyint(std::bit_cast<float>(ax) * 16777216.0f);
    return sign | static_cast<std::uint16_t>(units);  // 1024 units is the smallest normal
  }
  std::uint32_t h = ((((ax >> 23) - 127 + 15)) << 10) | ((ax & 0x7fffffu) >> 13);
  const std::uint32_t rest = ax & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry moves into the exponent
  return sign | static_cast<std::uint16_t>(h);
}

/// The value `f` takes once stored as `t` and read back (identity for F32).
inline float round_to(WeightType t, float f) {
  if (t == WeightType::bf16) return bf16_bits_to_float(float_to_bf16_bits(f));
  if (t == WeightType::f16) return f16_bits_to_float(float_to_f16_bits(f));
  return f;
}

/// One tensor of a safetensors file, checked against the file when the file was opened.
struct SafetensorsTensor {
  std::string name;
  std::string dtype;  ///< as the header spells it, e.g. "BF16"
  WeightType type = WeightType::other;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0;  ///< byte range in the buffer
  const std::byte* data = nullptr;   ///< first byte, inside the file's mapping
  std::string file;                  ///< the file it lives in

  std::int64_t elements() const {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
  /// Converts elements [first, first + out.size()) (row-major) to float.
  void read(std::int64_t first, std::span<float> out) const {
    if (first < 0 || first + static_cast<std::int64_t>(out.size()) > elements())
      throw core::RunError(file + ": element range past the end of tensor " + name);
    // Nothing to read: an empty `out` may hold a null pointer, which memcpy must never see.
    if (out.empty()) return;
    const std::byte* p = data;
    switch (type) {
      case WeightType::f32:
        std::memcpy(out.data(), p + first * 4, out.size() * 4);
        return;
      case WeightType::bf16:
        for (std::size_t i = 0; i < out.size(); ++i)
          out[i] = bf16_bits_to_float(detail::load<std::uint16_t>(p + (first + i) * 2));
        return;
      case WeightType::f16:
        for (std::size_t i = 0; i < out.size(); ++i)
          out[i] = f16_bits_to_float(detail::load<std::uint16_t>(p + (first + i) * 2));
        return;
      case WeightType::other:
        break;
    }
    throw core::InputError(file + ": tensor " + name + " has dtype " + dtype +
                               ", which tprimat does not read as weights",
                           "convert the checkpoint to BF16, F16 or F32");
  }
  std::vector<float> values() const {
    std::vector<float> v(static_cast<std::size_t>(elements()));
    read(0, v);
    return v;
  }
};

/// "[4096, 128]"
inline std::string shape_text(std::span<const std::int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// One safetensors file, mapped read-only. The constructor checks the header length, the JSON,
/// every entry's dtype and shape against its byte range, and the ranges against the buffer (in
/// range, no holes, no overlaps), so a truncated or foreign file fails here naming the file and
/// the tensor, never mid-read.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path) {
    // Absent is said plainly; a path that cannot be examined (too long, a loop of links, no
    // permission) is named with its reason when the mapping opens it.
    std::error_code ec;
    if (!std::filesystem::exists(path, ec) && !ec)
      throw core::InputError("safetensors file " + path + " not found",
                             "pass the path of a .safetensors file");
    file_ = std::make_shared<detail::MappedFile>(path, safetensors_input);
    parse();
  }

  const std::string& path() const { return file_->path(); }
  std::size_t file_bytes() const { return file_->size(); }
  /// Tensors in header key order (sorted by name).
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const SafetensorsTensor* find(std::string_view name) const {
    auto it = index_.find(std::string(name));
    return it == index_.end() ? nullptr : &tensors_[it->second];
  }

 private:
  [[noreturn]] void bad(const std::string& problem) const {
    throw core::InputError(path() + ": " + problem,
                           "re-download or re-save the checkpoint (safetensors format: 8-byte "
                           "header length, JSON header, data)");
  }

  void parse() {
    const std::byte* p = file_->data();
    const std::uint64_t size = file_->size();
    if (size < 8)
      bad("not a safetensors file: " + std::to_string(size) +
          " bytes, fewer than the 8-byte header length");
    const auto n = detail::load<std::uint64_t>(p);
    if (n > size - 8)
      bad("header length " + std::to_string(n) + " runs past the end of the file (" +
          std::to_string(size) + " bytes): truncated, or not a safetensors file");
    if (n > safetensors_max_header)
      bad("header length " + std::to_string(n) + " exceeds the format's limit of " +
          std::to_string(safetensors_max_header) + " bytes");
    const std::string_view text(reinterpret_cast<const char*>(p + 8), n);
    if (text.empty() || text.front() != '{')
      bad("not a safetensors file: the header does not start with '{'");
    if (const auto problem = core::json_text_problem(text); !problem.empty())
      bad("the header " + problem);
    nlohmann::json header;
    try {
      header = nlohmann::json::parse(text, core::KeysOnce("header"), /*allow_exceptions=*/false);
    } catch (const core::RepeatedKey& e) {
      bad("the header's " + e.problem());
    }
    if (header.is_discarded() || !header.is_object()) bad("the header is not a JSON object");
    const std::byte* buffer = p + 8 + n;
    const std::uint64_t buffer_bytes = size - 8 - n;
    for (const auto& [key, entry] : header.items()) {
      if (key == "__metadata__") {
        if (!entry.is_object()) bad("__metadata__ is not an object of strings");
        for (const auto& [k, v] : entry.items()) {
          if (!v.is_string()) bad("__metadata__ value of \"" + k + "\" is not a string");
          metadata_[k] = v.get<std::string>();
        }
        continue;
      }
      tensors_.push_back(parse_entry(key, entry, buffer, buffer_bytes));
    }
    // Every byte of the buffer belongs to exactly one tensor (empty tensors take none).
    std::vector<const SafetensorsTensor*> by_offset;
    for (const auto& t : tensors_)
      if (t.end > t.begin) by_offset.push_back(&t);
    std::sort(by_offset.begin(), by_offset.end(),
              [](auto* a, auto* b) { return a->begin < b->begin; });
    std::uint64_t at = 0;
    const SafetensorsTensor* prev = nullptr;
    for (const auto* t : by_offset) {
      if (t->begin < at)
        bad("tensors " + prev->name + " and " + t->name + " overlap (bytes " +
            std::to_string(t->begin) + " to " + std::to_string(at) + " of the data)");
      if (t->begin > at)
        bad("bytes " + std::to_string(at) + " to " + std::to_string(t->begin) +
            " of the data belong to no tensor (the format allows no holes)");
      at = t->end;
      prev = t;
    }
    if (at != buffer_bytes)
      bad(std::to_string(buffer_bytes - at) + " bytes after the last tensor's data (the data " +
          "holds " + std::to_string(buffer_bytes) + " bytes, the tensors " + std::to_string(at) +
          ")");
    for (std::size_t i = 0; i < tensors_.size(); ++i) index_[tensors_[i].name] = i;
  }

  SafetensorsTensor parse_entry(const std::string& key, const nlohmann::json& e,
                                const std::byte* buffer, std::uint64_t buffer_bytes) const {
    const std::string what = "tensor " + key;
    if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") ||
        !e.contains("data_offsets"))
      bad(what + " lacks dtype, shape or data_offsets");
    SafetensorsTensor t;
    t.name = key;
    t.file = path();
    if (!e["dtype"].is_string()) bad(what + ": dtype is not a string");
    t.dtype = e["dtype"].get<std::string>();
    const std::size_t width = safetensors_dtype_bytes(t.dtype);
    if (width == 0) bad(what + " has unknown dtype \"" + t.dtype + "\"");
    t.type = t.dtype == "F32"    ? WeightType::f32
             : t.dtype == "F16"  ? WeightType::f16
             : t.dtype == "BF16" ? WeightType::bf16
                                 : WeightType::other;
    if (!e["shape"].is_array()) bad(what + ": shape is not an array");
    // Guard the element count against overflow before multiplying by the width.
    std::uint64_t count = 1;
    for (const auto& d : e["shape"]) {
      if (!d.is_number_unsigned()) bad(what + ": shape " + e["shape"].dump() + " is not sizes");
      const auto v = d.get<std::uint64_t>();
      if (v != 0 && count > (std::uint64_t{1} << 62) / v)
        bad(what + ": shape " + e["shape"].dump() + " is too large");
      count *= v;
      t.shape.push_back(static_cast<std::int64_t>(v));
    }
    const auto& off = e["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned())
      bad(what + ": data_offsets " + off.dump() + " is not [BEGIN, END]");
    t.begin = off[0].get<std::uint64_t>();
    t.end = off[1].get<std::uint64_t>();
    if (t.end < t.begin)
      bad(what + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
          "] end before they begin");
    if (t.end > buffer_bytes)
      bad(what + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
          "] run past the end of the data (" + std::to_string(buffer_bytes) +
          " bytes): the file is truncated or the header is wrong");
    if (t.end - t.begin != count * width)
      bad(what + ": shape " + shape_text(t.shape) + " of " + t.dtype + " needs " +
          std::to_string(count * width) + " bytes, its data_offsets [" + std::to_string(t.begin) +
          ", " + std::to_string(t.end) + "] hold " + std::to_string(t.end - t.begin));
    t.data = buffer + t.begin;
    return t;
  }

  std::shared_ptr<detail::MappedFile> file_;
  std::vector<SafetensorsTensor> tensors_;
  std::map<std::string, std::size_t> index_;
  std::map<std::string, std::string> metadata_;
};

/// The names HF gives a single-file and a sharded checkpoint inside a model directory.
inline constexpr std::string_view safetensors_single_name = "model.safetensors";
inline constexpr std::string_view safetensors_index_name = "model.safetensors.index.json";

/// A whole checkpoint: one .safetensors file, or the shards a model.safetensors.index.json
/// ({"metadata": {...}, "weight_map": {tensor: shard file}}) names, relative to its directory.
/// `path` may also be a directory holding either (a Hugging Face snapshot).
class SafetensorsCheckpoint {
 public:
  explicit SafetensorsCheckpoint(const std::string& path) : path_(path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const std::string fix =
        "pass --init random, or a .safetensors file, a model.safetensors.index.json, or a "
        "directory holding one";
    if (!fs::exists(path, ec) && !ec)  // one that cannot be examined: its reader says why
      throw core::InputError("checkpoint " + path + " not found", fix);
    std::string file = path;
    if (fs::is_directory(path, ec)) {
      const fs::path dir(path);
      if (fs::exists(dir / safetensors_index_name, ec)) {
        file = (dir / safetensors_index_name).string();
      } else if (fs::exists(dir / safetensors_single_name, ec)) {
        file = (dir / safetensors_single_name).string();
      } else {
        throw core::InputError("directory " + path + " holds neither " +
                                   std::string(safetensors_single_name) + " nor " +
                                   std::string(safetensors_index_name),
                               fix);
      }
    }
    if (file.ends_with(".json"))
      open_index(file);
    else
      add_file(file, nullptr);
  }

  // by_name_ points into files_: a copy would point into the original.
  SafetensorsCheckpoint(const SafetensorsCheckpoint&) = delete;
  SafetensorsCheckpoint& operator=(const SafetensorsCheckpoint&) = delete;
  SafetensorsCheckpoint(SafetensorsCheckpoint&&) = default;
  SafetensorsCheckpoint& operator=(SafetensorsCheckpoint&&) = default;

  /// The path given (file, index or directory).
  const std::string& path() const { return path_; }
  /// The index file when sharded, else "".
  const std::string& index_path() const { return index_; }
  const std::vector<SafetensorsFile>& files() const { return files_; }
  /// Every tensor of the checkpoint, sorted by name.
  std::vector<const SafetensorsTensor*> tensors() const {
    std::vector<const SafetensorsTensor*> out;
    for (const auto& [name, t] : by_name_) out.push_back(t);
    return out;
  }
  const SafetensorsTensor* find(std::string_view name) const {
    auto it = by_name_.find(std::string(name));
    return it == by_name_.end() ? nullptr : it->second;
  }

 private:
  void open_index(const std::string& index) {
    index_ = index;
    const std::string fix = "an index is {\"weight_map\": {\"tensor name\": \"shard file\", ...}}";
    const std::string text = core::read_input_file(
        index, core::InputKind{"safetensors index", core::max_index_bytes, fix});
    core::check_json_text(text, index, fix);
    const auto j = nlohmann::json::parse(text, core::KeysOnce(index), /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object())
      throw core::InputError(index + " is not a JSON object", fix);
    if (!j.contains("weight_map") || !j["weight_map"].is_object())
      throw core::InputError(index + " has no \"weight_map\" object", fix);
    const std::filesystem::path dir = std::filesystem::path(index).parent_path();
    std::map<std::string, std::vector<std::string>> shards;  // shard file -> its tensors
    for (const auto& [name, file] : j["weight_map"].items()) {
      if (!file.is_string())
        throw core::InputError(index + ": weight_map entry " + name + " is not a file name", fix);
      shards[file.get<std::string>()].push_back(name);
    }
    files_.reserve(shards.size());  // by_name_ points into files_
    for (const auto& [file, names] : shards) {
      const std::string shard = (dir / file).string();
      std::error_code ec;  // the throwing exists() let a 300-character name escape as a crash
      if (!std::filesystem::exists(shard, ec) && !ec)
        throw core::InputError(index + " names shard " + file + " (for " + names.front() +
                                   "), but " + shard + " does not exist",
                               "download every shard the index lists");
      add_file(shard, &names);
    }
  }

  /// Adds one file's tensors; with `names` (from an index) only those, each of which it must hold.
  void add_file(const std::string& file, const std::vector<std::string>* names) {
    files_.emplace_back(file);
    const SafetensorsFile& f = files_.back();
    if (names == nullptr) {
      for (const auto& t : f.tensors()) by_name_[t.name] = &t;
      return;
    }
    for (const auto& name : *names) {
      const auto* t = f.find(name);
      if (t == nullptr)
        throw core::InputError(
            index_ + " maps tensor " + name + " to " + file + ", which does not hold it",
            "re-download the checkpoint: index and shards disagree");
      by_name_[name] = t;
    }
  }

  std::string path_, index_;
  std::vector<SafetensorsFile> files_;
  std::map<std::string, const SafetensorsTensor*> by_name_;
};

/// Writes one safetensors file: header keys sorted (the JSON object's order), the data laid out
/// in that order, and the header padded with spaces so the data starts on an 8-byte boundary
/// (the format allows trailing spaces). Values are produced tensor by tensor at finish(), so a
/// model is never held twice in memory.
class SafetensorsWriter {
 public:
  /// Fills the tensor's values (row-major, elements() floats).
  using Fill = std::function<void(std::span<float>)>;

  SafetensorsWriter(std::string path, WeightType type) : path_(std::move(path)), type_(type) {
    if (type == WeightType::other)
      throw core::InputError("safetensors writer: pick F32, BF16 or F16", "");
  }

  void metadata(std::string key, std::string value) {
    metadata_[std::move(key)] = std::move(value);
  }
  void add(std::string name, std::vector<std::int64_t> shape, Fill fill) {
    if (name == "__metadata__" || !names_.insert(name).second)
      throw core::InputError("safetensors writer: tensor name " + name + " is taken", "");
    entries_.push_back({std::move(name), std::move(shape), std::move(fill)});
  }
  /// `values` must stay alive until finish().
  void add(std::string name, std::vector<std::int64_t> shape, std::span<const float> values) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    if (n != static_cast<std::int64_t>(values.size()))
      throw core::InputError("safetensors writer: " + name + " has " +
                                 std::to_string(values.size()) + " values for shape " +
                                 shape_text(shape),
                             "");
    add(std::move(name), std::move(shape),
        [values](std::span<float> out) { std::copy(values.begin(), values.end(), out.begin()); });
  }

  /// Writes the file (a new file beside it, renamed at the end: core/output_file.hpp).
  void finish() {
    const std::size_t width = type_ == WeightType::f32 ? 4 : 2;
    nlohmann::json header = nlohmann::json::object();
    if (!metadata_.empty()) header["__metadata__"] = metadata_;
    // Sorted by name, as the JSON object's keys are.
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry& a, const Entry& b) { return a.name < b.name; });
    std::uint64_t at = 0;
    for (const Entry& e : entries_) {
      std::uint64_t n = 1;
      for (auto d : e.shape) n *= static_cast<std::uint64_t>(d);
      header[e.name] = {{"dtype", std::string(weight_type_name(type_))},
                        {"shape", e.shape},
                        {"data_offsets", {at, at + n * width}}};
      at += n * width;
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    core::NewFile f(path_, "pass another --save path");
    const std::uint64_t n = text.size();
    char len[8];
    std::memcpy(len, &n, 8);
    f.write(std::string_view(len, 8));
    f.write(text);
    std::vector<float> values;
    std::vector<std::uint16_t> half;
    for (const Entry& e : entries_) {
      std::size_t count = 1;
      for (auto d : e.shape) count *= static_cast<std::size_t>(d);
      values.assign(count, 0.0f);
      e.fill(values);
      if (type_ == WeightType::f32) {
        f.write(std::string_view(reinterpret_cast<const char*>(values.data()), count * 4));
        continue;
      }
      half.resize(count);
      for (std::size_t i = 0; i < count; ++i)
        half[i] = type_ == WeightType::bf16 ? float_to_bf16_bits(values[i])
                                            : float_to_f16_bits(values[i]);
      f.write(std::string_view(reinterpret_cast<const char*>(half.data()), count * 2));
    }
    f.publish();
    f.close();
  }

 private:
  // A vector, not a map of name to Entry: hipcc's clang 15 crashes compiling a std::map whose
  // values hold a std::function (the GPU backend's umbrella brings this header to hipcc).
  struct Entry {
    std::string name;
    std::vector<std::int64_t> shape;
    Fill fill;
  };
  std::string path_;
  WeightType type_;
  std::map<std::string, std::string> metadata_;
  std::vector<Entry> entries_;
  std::set<std::string> names_;
};

}  // namespace tprimat::data
