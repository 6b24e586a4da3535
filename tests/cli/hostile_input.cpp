// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Test helper: writes an input nested DEPTH levels deep where each reader looks, so the CLI's
// refusal of each is checked without committing 100 kB files.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

std::string arrays(long depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string objects(long depth) {
  std::string s;
  for (long i = 0; i < depth; ++i) s += "{\"a\":";
  return s + "1" + std::string(depth, '}');
}

/// A safetensors file whose one tensor's shape is `shape` (8-byte little-endian header length,
/// then the header).
std::string safetensors(const std::string& shape) {
  const std::string header =
      "{\"w\":{\"dtype\":\"F32\",\"shape\":" + shape + ",\"data_offsets\":[0,0]}}";
  std::string out(8, '\0');
  std::uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);  // the test machines are little-endian, as the reader asserts
  return out + header;
}

}  // namespace

// usage: tprimat_hostile_input KIND DEPTH FILE
//   array, object: the bare nesting; config: a --parallel config whose "profiling" block nests;
//   result: a result whose "platform" nests; trace: a Chrome trace whose one event's "args"
//   nest; jsonl: a good first line, a nested "ids" on line 2; safetensors: a tensor's "shape";
//   index: a safetensors index's "weight_map".
int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s KIND DEPTH FILE\n", argv[0]);
    return 2;
  }
  const std::string kind = argv[1];
  const long depth = std::strtol(argv[2], nullptr, 10);
  std::string text;
  if (kind == "array") {
    text = arrays(depth);
  } else if (kind == "object") {
    text = objects(depth);
  } else if (kind == "config") {
    text =
        "{\"tensor_model_parallel_size\": 1, \"pipeline_model_parallel_size\": 1, "
        "\"profiling\": " +
        arrays(depth) + "}\n";
  } else if (kind == "result") {
    text = "{\"platform\": " + arrays(depth) + "}\n";
  } else if (kind == "trace") {
    text =
        "{\"traceEvents\": [{\"name\": \"k\", \"ph\": \"X\", \"ts\": 0, \"dur\": 1, "
        "\"pid\": 0, \"tid\": 0, \"args\": " +
        objects(depth) + "}]}\n";
  } else if (kind == "jsonl") {
    text = "{\"ids\": [1, 2, 3]}\n{\"ids\": " + arrays(depth) + "}\n";
  } else if (kind == "safetensors") {
    text = safetensors(arrays(depth));
  } else if (kind == "index") {
    text = "{\"weight_map\": " + objects(depth) + "}\n";
  } else {
    std::fprintf(stderr, "unknown kind %s\n", kind.c_str());
    return 2;
  }
  std::ofstream f(argv[3], std::ios::binary | std::ios::trunc);
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  return f ? 0 : 1;
}
