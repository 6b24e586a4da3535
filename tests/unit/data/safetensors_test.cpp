// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// safetensors: a file built byte by byte, round trips, shards, and a named error per damage.
#include "tprimat/data/safetensors.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../../support/fifo.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/core/input_file.hpp"
#include "tprimat/core/json_input.hpp"

namespace fs = std::filesystem;
using namespace tprimat;
using data::WeightType;

namespace {

class Safetensors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tprimat_safetensors_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static std::vector<unsigned char> bytes(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }
  static void put(const std::string& p, const std::vector<unsigned char>& b) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  /// The documented layout, by hand: 8-byte little-endian length, the header text, the data.
  static std::vector<unsigned char> file_of(const std::string& header,
                                            const std::vector<unsigned char>& data) {
    std::vector<unsigned char> b;
    const std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<unsigned char>(n >> (8 * i)));
    b.insert(b.end(), header.begin(), header.end());
    b.insert(b.end(), data.begin(), data.end());
    return b;
  }
  static void append_f32(std::vector<unsigned char>& b, float v) {
    unsigned char c[4];
    std::memcpy(c, &v, 4);
    b.insert(b.end(), c, c + 4);
  }
  static void append_u16(std::vector<unsigned char>& b, std::uint16_t v) {
    b.push_back(static_cast<unsigned char>(v & 0xff));
    b.push_back(static_cast<unsigned char>(v >> 8));
  }

  /// The error opening `p` gives (or "no error").
  static std::string error_of(const std::string& p) {
    try {
      data::SafetensorsCheckpoint c(p);
    } catch (const core::InputError& e) {
      return e.what();
    }
    return "no error";
  }

  fs::path dir_;
};

std::vector<float> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// ---- element conversions ----------------------------------------------------------------

TEST(SafetensorsConvert, Bf16RoundsToNearestEven) {
  EXPECT_EQ(data::float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(data::float_to_bf16_bits(-2.0f), 0xc000);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1.0).
  EXPECT_EQ(data::float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6: up.
  EXPECT_EQ(data::float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(
      data::bf16_bits_to_float(data::float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(data::bf16_bits_to_float(0x3f80), 1.0f);
  EXPECT_EQ(data::bf16_bits_to_float(0xff80), -std::numeric_limits<float>::infinity());
}

TEST(SafetensorsConvert, F16CoversNormalsSubnormalsAndOverflow) {
  EXPECT_EQ(data::float_to_f16_bits(1.0f), 0x3c00);
  EXPECT_EQ(data::float_to_f16_bits(-2.0f), 0xc000);
  EXPECT_EQ(data::float_to_f16_bits(65504.0f), 0x7bff);                      // largest half
  EXPECT_EQ(data::float_to_f16_bits(65519.0f), 0x7bff);                      // rounds down
  EXPECT_EQ(data::float_to_f16_bits(65520.0f), 0x7c00);                      // rounds to Inf
  EXPECT_EQ(data::float_to_f16_bits(std::ldexp(1.0f, -14)), 0x0400);         // smallest normal
  EXPECT_EQ(data::float_to_f16_bits(std::ldexp(1.0f, -24)), 0x0001);         // smallest subnormal
  EXPECT_EQ(data::float_to_f16_bits(std::ldexp(1.0f, -25)), 0x0000);         // tie to even: 0
  EXPECT_EQ(data::float_to_f16_bits(3 * std::ldexp(1.0f, -25)), 0x0002);     // tie to even: 2
  EXPECT_EQ(data::float_to_f16_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie to even
  EXPECT_EQ(data::float_to_f16_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(data::f16_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(data::f16_bits_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(data::f16_bits_to_float(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(data::f16_bits_to_float(0x7e00)));
  // Every half value survives half -> float -> half.
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue;  // NaNs: payloads may differ
    ASSERT_EQ(data::float_to_f16_bits(data::f16_bits_to_float(static_cast<std::uint16_t>(h))), h);
  }
}

// ---- a file written byte by byte in the documented layout --------------------------------

TEST_F(Safetensors, HandBuiltFileLoadsExactly) {
  std::vector<unsigned char> d;
  for (float v : {1.5f, -2.25f, 0.0f, 1e-3f}) append_f32(d, v);       // a: F32 [2, 2], bytes 0-16
  for (std::uint16_t v : {0x3f80, 0xc040, 0x0000}) append_u16(d, v);  // b: BF16 [3], 16-22
  for (std::uint16_t v : {0x3c00, 0x0001}) append_u16(d, v);          // c: F16 [1, 2], 22-26
  // Keys out of order and a trailing space pad, both of which the format allows.
  const std::string header = R"({"c":{"dtype":"F16","shape":[1,2],"data_offsets":[22,26]},)"
                             R"("__metadata__":{"format":"pt"},)"
                             R"("a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
                             R"("b":{"dtype":"BF16","shape":[3],"data_offsets":[16,22]}}   )";
  put(path("hand.safetensors"), file_of(header, d));

  data::SafetensorsFile f(path("hand.safetensors"));
  ASSERT_EQ(f.tensors().size(), 3u);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  const auto* a = f.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, "F32");
  EXPECT_EQ(a->shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(a->values(), (std::vector<float>{1.5f, -2.25f, 0.0f, 1e-3f}));
  EXPECT_EQ(f.find("b")->values(), (std::vector<float>{1.0f, -3.0f, 0.0f}));
  EXPECT_EQ(f.find("c")->values(), (std::vector<float>{1.0f, std::ldexp(1.0f, -24)}));
  EXPECT_EQ(f.find("c")->shape, (std::vector<std::int64_t>{1, 2}));
  // A slice reads from the middle.
  std::vector<float> two(2);
  a->read(1, two);
  EXPECT_EQ(two, (std::vector<float>{-2.25f, 0.0f}));
}

TEST_F(Safetensors, EmptyAndScalarTensorsAreAllowed) {
  std::vector<unsigned char> d;
  append_f32(d, 7.0f);
  const std::string header = R"({"e":{"dtype":"F32","shape":[0,4],"data_offsets":[0,0]},)"
                             R"("s":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})";
  put(path("x.safetensors"), file_of(header, d));
  data::SafetensorsFile f(path("x.safetensors"));
  EXPECT_EQ(f.find("e")->elements(), 0);
  // Found by fuzzing (UBSan): an empty tensor's values() passed a null pointer to memcpy.
  EXPECT_TRUE(f.find("e")->values().empty());
  EXPECT_EQ(f.find("s")->values(), std::vector<float>{7.0f});
}

// ---- writer -> reader ---------------------------------------------------------------------

TEST_F(Safetensors, RoundTripEveryWeightType) {
  const auto a = random_values(6 * 5, 1), b = random_values(7, 2);
  for (WeightType t : {WeightType::f32, WeightType::bf16, WeightType::f16}) {
    SCOPED_TRACE(std::string(data::weight_type_name(t)));
    const std::string p = path("rt.safetensors");
    {
      data::SafetensorsWriter w(p, t);
      w.metadata("format", "pt");
      w.add("layer.weight", {6, 5}, a);
      w.add("bias", {7}, b);
      w.finish();
    }
    data::SafetensorsFile f(p);
    ASSERT_EQ(f.tensors().size(), 2u);
    EXPECT_EQ(f.find("layer.weight")->dtype, data::weight_type_name(t));
    EXPECT_EQ(f.find("layer.weight")->shape, (std::vector<std::int64_t>{6, 5}));
    EXPECT_EQ(f.find("bias")->shape, (std::vector<std::int64_t>{7}));
    // Exact where representable: F32 always; BF16/F16 the value rounded to nearest even.
    const auto ga = f.find("layer.weight")->values(), gb = f.find("bias")->values();
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(ga[i], data::round_to(t, a[i])) << i;
    for (std::size_t i = 0; i < b.size(); ++i) ASSERT_EQ(gb[i], data::round_to(t, b[i])) << i;
    // Values already representable come back bit for bit.
    if (t != WeightType::f32) {
      std::vector<float> rounded(a.size());
      for (std::size_t i = 0; i < a.size(); ++i) rounded[i] = data::round_to(t, a[i]);
      data::SafetensorsWriter w(p, t);
      w.add("x", {6, 5}, rounded);
      w.finish();
      EXPECT_EQ(data::SafetensorsFile(p).find("x")->values(), rounded);
    }
  }
}

TEST_F(Safetensors, WriterSortsKeysAndPadsTheHeaderWithSpaces) {
  const std::vector<float> v{1, 2, 3};
  data::SafetensorsWriter w(path("w.safetensors"), WeightType::f32);
  w.add("zeta", {3}, v);
  w.add("alpha", {1, 3}, v);
  w.add("model.layers.0.mlp", {3}, v);
  w.metadata("format", "pt");
  w.finish();
  const auto b = bytes(path("w.safetensors"));
  std::uint64_t n = 0;
  std::memcpy(&n, b.data(), 8);
  EXPECT_EQ((8 + n) % 8, 0u) << "the data starts on an 8-byte boundary";
  const std::string header(b.begin() + 8, b.begin() + 8 + static_cast<std::ptrdiff_t>(n));
  EXPECT_EQ(header.front(), '{');
  const auto close = header.rfind('}');
  EXPECT_EQ(header.find_first_not_of(' ', close + 1), std::string::npos) << header;
  const auto at = [&](const char* k) { return header.find(std::string("\"") + k + "\""); };
  EXPECT_LT(at("__metadata__"), at("alpha"));
  EXPECT_LT(at("alpha"), at("model.layers.0.mlp"));
  EXPECT_LT(at("model.layers.0.mlp"), at("zeta"));
  // Data in key order: alpha [0, 12), model.layers.0.mlp [12, 24), zeta [24, 36).
  EXPECT_NE(header.find(R"("alpha":{"data_offsets":[0,12])"), std::string::npos) << header;
  EXPECT_NE(header.find(R"("zeta":{"data_offsets":[24,36])"), std::string::npos) << header;
  EXPECT_EQ(b.size(), 8 + n + 36);
}

// ---- sharded checkpoints ----------------------------------------------------------------

TEST_F(Safetensors, ShardedIndexLoadsEveryTensorFromItsShard) {
  const auto a = random_values(12, 3), b = random_values(4, 4), c = random_values(9, 5);
  fs::create_directories(dir_ / "snap");
  {
    data::SafetensorsWriter w(path("snap/model-00001-of-00002.safetensors"), WeightType::bf16);
    w.add("a", {3, 4}, a);
    w.add("b", {4}, b);
    w.finish();
  }
  {
    data::SafetensorsWriter w(path("snap/model-00002-of-00002.safetensors"), WeightType::f32);
    w.add("c", {9}, c);
    w.finish();
  }
  std::ofstream(path("snap/model.safetensors.index.json"))
      << R"({"metadata": {"total_size": 68}, "weight_map": {)"
      << R"("a": "model-00001-of-00002.safetensors", "b": "model-00001-of-00002.safetensors", )"
      << R"("c": "model-00002-of-00002.safetensors"}})";
  for (const std::string p : {path("snap/model.safetensors.index.json"), path("snap")}) {
    SCOPED_TRACE(p);
    data::SafetensorsCheckpoint ck(p);
    EXPECT_EQ(ck.files().size(), 2u);
    ASSERT_EQ(ck.tensors().size(), 3u);
    ASSERT_NE(ck.find("c"), nullptr);
    EXPECT_EQ(ck.find("c")->values(), c);
    EXPECT_EQ(ck.find("c")->file, path("snap/model-00002-of-00002.safetensors"));
    const auto got = ck.find("a")->values();
    for (std::size_t i = 0; i < a.size(); ++i)
      EXPECT_EQ(got[i], data::round_to(WeightType::bf16, a[i]));
  }
  // A checkpoint moved (not copied) keeps its tensors.
  data::SafetensorsCheckpoint moved(data::SafetensorsCheckpoint(path("snap")));
  EXPECT_EQ(moved.find("b")->elements(), 4);

  // The index names a shard that is not there.
  std::ofstream(path("snap/model.safetensors.index.json"))
      << R"({"weight_map": {"a": "model-00001-of-00002.safetensors", "d": "gone.safetensors"}})";
  EXPECT_NE(error_of(path("snap")).find("names shard gone.safetensors (for d)"), std::string::npos)
      << error_of(path("snap"));
  // The index maps a tensor to a shard that does not hold it.
  std::ofstream(path("snap/model.safetensors.index.json"))
      << R"({"weight_map": {"c": "model-00001-of-00002.safetensors"}})";
  EXPECT_NE(error_of(path("snap"))
                .find("maps tensor c to " + path("snap/model-00001-of-00002.safetensors") +
                      ", which does not hold it"),
            std::string::npos)
      << error_of(path("snap"));
  std::ofstream(path("snap/model.safetensors.index.json")) << R"({"metadata": {}})";
  EXPECT_NE(error_of(path("snap")).find("has no \"weight_map\" object"), std::string::npos);
}

TEST_F(Safetensors, DirectoryWithOneFileAndMissingPaths) {
  fs::create_directories(dir_ / "one");
  const std::vector<float> v{1, 2};
  data::SafetensorsWriter w(path("one/model.safetensors"), WeightType::f32);
  w.add("t", {2}, v);
  w.finish();
  EXPECT_EQ(data::SafetensorsCheckpoint(path("one")).find("t")->values(), v);
  EXPECT_NE(error_of(path("none.safetensors"))
                .find("checkpoint " + path("none.safetensors") + " not found; pass --init random"),
            std::string::npos)
      << error_of(path("none.safetensors"));
  fs::create_directories(dir_ / "empty");
  EXPECT_NE(error_of(path("empty"))
                .find("holds neither model.safetensors nor "
                      "model.safetensors.index.json"),
            std::string::npos);
}

// ---- damaged files: each a clear error naming the file (and the tensor) ------------------

TEST_F(Safetensors, DamagedFilesNameTheFileAndTheProblem) {
  const std::string p = path("bad.safetensors");
  std::vector<unsigned char> d16;
  for (float v : {1.0f, 2.0f, 3.0f, 4.0f}) append_f32(d16, v);
  const std::string ok = R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
  struct Case {
    const char* what;
    std::vector<unsigned char> file;
    std::string message;
  };
  auto header_len_only = file_of(ok, d16);
  header_len_only.resize(5);
  auto past_end = file_of(ok, d16);
  past_end[0] = 0xff;
  past_end[1] = 0xff;  // 65535-byte header in a 80-byte file
  auto truncated = file_of(ok, d16);
  truncated.resize(truncated.size() - 3);
  const std::vector<Case> cases = {
      {"too small", header_len_only,
       p + ": not a safetensors file: 5 bytes, fewer than the 8-byte"},
      {"header past end", past_end,
       p + ": header length 65535 runs past the end of the file (" +
           std::to_string(file_of(ok, d16).size()) + " bytes)"},
      {"truncated data", truncated,
       p + ": tensor w: data_offsets [0, 16] run past the end of the data (13 bytes): the file "
           "is truncated"},
      {"offsets out of range",
       file_of(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[16,32]}})", d16),
       p + ": tensor w: data_offsets [16, 32] run past the end of the data (16 bytes)"},
      {"wrong shape", file_of(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,16]}})", d16),
       p + ": tensor w: shape [2, 3] of F32 needs 24 bytes, its data_offsets [0, 16] hold 16"},
      {"dtype size", file_of(R"({"w":{"dtype":"F16","shape":[2,2],"data_offsets":[0,16]}})", d16),
       p + ": tensor w: shape [2, 2] of F16 needs 8 bytes"},
      {"hole",
       file_of(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
               R"("x":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})",
               d16),
       p + ": bytes 8 to 12 of the data belong to no tensor"},
      {"overlap",
       file_of(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
               R"("x":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
               d16),
       p + ": tensors w and x overlap"},
      {"trailing bytes", file_of(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", d16),
       p + ": 8 bytes after the last tensor's data"},
      {"unknown dtype", file_of(R"({"w":{"dtype":"F12","shape":[4],"data_offsets":[0,16]}})", d16),
       p + ": tensor w has unknown dtype \"F12\""},
      {"not json", file_of("{\"w\": [1, 2", d16), p + ": the header is not a JSON object"},
      {"no brace", file_of("[1]", d16), p + ": not a safetensors file: the header does not start"},
      {"missing field", file_of(R"({"w":{"dtype":"F32","shape":[4]}})", d16),
       p + ": tensor w lacks dtype, shape or data_offsets"},
      {"negative size", file_of(R"({"w":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})", d16),
       p + ": tensor w: shape [-4] is not sizes"},
      {"metadata",
       file_of(R"({"__metadata__":{"n":1},"w":{"dtype":"F32","shape":[4],)"
               R"("data_offsets":[0,16]}})",
               d16),
       p + ": __metadata__ value of \"n\" is not a string"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    put(p, c.file);
    const std::string e = error_of(p);
    EXPECT_EQ(e.rfind("tprimat: ", 0), 0u) << e;
    EXPECT_NE(e.find(c.message), std::string::npos) << e;
  }
  // The undamaged file loads.
  put(p, file_of(ok, d16));
  EXPECT_EQ(error_of(p), "no error");
}

TEST_F(Safetensors, NonWeightDtypesAreListedButNotConverted) {
  std::vector<unsigned char> d;
  for (int i = 0; i < 16; ++i) d.push_back(static_cast<unsigned char>(i));
  put(path("i.safetensors"),
      file_of(R"({"ids":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}})", d));
  data::SafetensorsFile f(path("i.safetensors"));
  EXPECT_EQ(f.find("ids")->type, WeightType::other);
  try {
    (void)f.find("ids")->values();
    FAIL() << "I64 must not read as weights";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor ids has dtype I64"), std::string::npos);
  }
}

TEST_F(Safetensors, HeaderNestingIsCappedAtTheJsonDepthLimit) {
  // "shape" opens at level 3 (the header object, the tensor's object): 62 more reach the limit.
  const auto with_shape_depth = [&](int levels) {
    const std::string shape = std::string(levels - 2, '[') + std::string(levels - 2, ']');
    put(path("d.safetensors"),
        file_of(R"({"w":{"dtype":"F32","shape":)" + shape + R"(,"data_offsets":[0,0]}})", {}));
    return error_of(path("d.safetensors"));
  };
  // At the limit the header parses; the nested shape is then refused as not sizes.
  EXPECT_NE(with_shape_depth(core::max_json_depth).find("tensor w: shape [[["), std::string::npos);
  EXPECT_EQ(with_shape_depth(core::max_json_depth + 1),
            "tprimat: " + path("d.safetensors") +
                ": the header nests arrays and objects deeper than the 64 levels tprimat reads "
                "(column 91); re-download or re-save the checkpoint (safetensors format: 8-byte "
                "header length, JSON header, data)");
  EXPECT_NE(with_shape_depth(100'000).find("the header nests arrays and objects deeper"),
            std::string::npos);
}

TEST_F(Safetensors, IndexIsReadAsEveryInputIs) {
  const auto index = path("model.safetensors.index.json");
  {
    std::ofstream f(index);
    f << R"({"weight_map": )";
    for (int i = 0; i < 100'000; ++i) f << R"({"a": )";
    f << 1 << std::string(100'000, '}') << "}";
  }
  EXPECT_NE(error_of(index).find(index + ": nests arrays and objects deeper than the 64 levels"),
            std::string::npos);
  fs::remove(index);
  tprimat::testing::make_fifo(index);
  EXPECT_EQ(tprimat::testing::error_reading_fifo(
                index, [&] { data::SafetensorsCheckpoint c(dir_.string()); }),
            "tprimat: " + index +
                ": is a FIFO (named pipe), not a safetensors index; an index is {\"weight_map\": "
                "{\"tensor name\": \"shard file\", ...}}");
  fs::remove(index);
  std::ofstream(index) << R"({"weight_map": {"w": "/dev/zero"}})";  // a shard that is a device
  EXPECT_EQ(error_of(index), "tprimat: /dev/zero: is a character device, not a safetensors file; "
                             "pass the path of a .safetensors file");
  std::ofstream(index) << R"({"weight_map": {}})" << std::string(core::max_index_bytes, ' ');
  EXPECT_NE(error_of(index).find(" bytes, more than the 16 MiB tprimat reads from a safetensors "
                                 "index"),
            std::string::npos);
}

TEST_F(Safetensors, FifoOrDeviceIsRefusedWithoutReadingIt) {
  const auto fifo = path("w.safetensors");
  tprimat::testing::make_fifo(fifo);
  EXPECT_EQ(tprimat::testing::error_reading_fifo(fifo, [&] { data::SafetensorsFile f(fifo); }),
            "tprimat: " + fifo +
                ": is a FIFO (named pipe), not a safetensors file; pass the path of a "
                ".safetensors file");
  EXPECT_NE(error_of("/dev/zero").find("/dev/zero: is a character device, not a safetensors file"),
            std::string::npos);
}

TEST_F(Safetensors, PathsThatCannotBeExaminedAreBadInput) {
  // Found by fuzzing: an index naming a shard of 300 characters made the throwing
  // std::filesystem::exists() escape as filesystem_error ("File name too long").
  const auto index = path("model.safetensors.index.json");
  const std::string name(300, 'G');
  std::ofstream(index) << R"({"weight_map": {"w": ")" << name << R"("}})";
  EXPECT_EQ(error_of(index), "tprimat: " + path(name) +
                                 ": cannot read the safetensors file: File name too long; pass "
                                 "the path of a .safetensors file");
  EXPECT_EQ(error_of(path(name)), "tprimat: " + path(name) +
                                      ": cannot read the safetensors file: File name too long; "
                                      "pass the path of a .safetensors file");
  EXPECT_EQ(error_of(path(name + ".json")),
            "tprimat: " + path(name + ".json") +
                ": cannot read the safetensors index: File name too long; an index is "
                "{\"weight_map\": {\"tensor name\": \"shard file\", ...}}");
}

}  // namespace
