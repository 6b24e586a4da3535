// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// Megatron .bin/.idx: byte layout, round trip of every dtype, and a clear error per corruption.
#include "tprimat/data/megatron_indexed.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../../support/fifo.hpp"
#include "tprimat/core/error.hpp"
#include "tprimat/data/indexed_writer.hpp"

namespace fs = std::filesystem;
using namespace tprimat;

namespace {

class Indexed : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tprimat_indexed_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, data::TokenType t,
                    const std::vector<std::vector<std::int64_t>>& docs) {
    const std::string prefix = (dir_ / name).string();
    data::IndexedWriter w(prefix, t);
    for (const auto& d : docs) w.add_document(d);
    w.finish();
    return prefix;
  }

  static std::vector<unsigned char> bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }
  static void put(const std::string& path, const std::vector<unsigned char>& b) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }

  static std::string error_of(const std::string& prefix) {
    try {
      data::IndexedDataset ds(prefix);
    } catch (const core::InputError& e) {
      return e.what();
    }
    return "no error";
  }

  fs::path dir_;
};

const std::vector<std::vector<std::int64_t>> docs = {{1, 2, 3, 4, 5}, {}, {6, 7}, {8, 9, 10, 11}};

TEST_F(Indexed, HeaderBytesMatchMegatronLayout) {
  const auto p = write("h", data::TokenType::uint16, docs);
  const auto b = bytes(p + ".idx");
  ASSERT_EQ(b.size(), 34u + 4 * 4 + 8 * 4 + 8 * 5);
  EXPECT_EQ(std::memcmp(b.data(), "MMIDIDX\0\0", 9), 0);
  auto u64 = [&](std::size_t at) {
    std::uint64_t v;
    std::memcpy(&v, b.data() + at, 8);
    return v;
  };
  EXPECT_EQ(u64(9), 1u);   // version
  EXPECT_EQ(b[17], 8);     // uint16 is Megatron's dtype code 8
  EXPECT_EQ(u64(18), 4u);  // sequences
  EXPECT_EQ(u64(26), 5u);  // document index entries: documents + 1
  std::int32_t len2;
  std::memcpy(&len2, b.data() + 34 + 2 * 4, 4);
  EXPECT_EQ(len2, 2);
  EXPECT_EQ(u64(34 + 16 + 3 * 8), 2u * (5 + 0 + 2));  // byte pointer of sequence 3
  EXPECT_EQ(u64(34 + 16 + 32 + 4 * 8), 4u);           // document index ends with S
  EXPECT_EQ(bytes(p + ".bin").size(), 2u * 11);
}

TEST_F(Indexed, EveryDtypeRoundTrips) {
  for (auto t : data::all_token_types) {
    std::vector<std::vector<std::int64_t>> d = docs;
    d.push_back({0, data::token_type_max(t) > 300 ? 300 : 100, 127});
    if (t != data::TokenType::uint8 && t != data::TokenType::uint16) d.back().push_back(-5);
    const auto p = write(std::string(data::token_type_name(t)), t, d);
    const data::IndexedDataset ds(p);
    SCOPED_TRACE(std::string(data::token_type_name(t)));
    EXPECT_EQ(ds.token_type(), t);
    EXPECT_EQ(ds.documents(), static_cast<std::int64_t>(d.size()));
    EXPECT_EQ(ds.sequences(), static_cast<std::int64_t>(d.size()));
    std::vector<std::int64_t> all;
    for (const auto& x : d) all.insert(all.end(), x.begin(), x.end());
    ASSERT_EQ(ds.tokens(), static_cast<std::int64_t>(all.size()));
    std::vector<std::int64_t> got(all.size());
    ds.read(0, got);
    EXPECT_EQ(got, all);
    // A window across three sequences (one of them empty).
    std::vector<std::int64_t> mid(4);
    ds.read(3, mid);
    EXPECT_EQ(mid, (std::vector<std::int64_t>{4, 5, 6, 7}));
    const auto r = ds.token_range();
    EXPECT_EQ(r.max, *std::max_element(all.begin(), all.end()));
    EXPECT_EQ(r.min, *std::min_element(all.begin(), all.end()));
  }
}

TEST_F(Indexed, IdThatDoesNotFitTheDtypeIsRejected) {
  data::IndexedWriter w((dir_ / "w").string(), data::TokenType::uint8);
  const std::vector<std::int64_t> ids{1, 256};
  try {
    w.add_document(ids);
    FAIL() << "no error";
  } catch (const core::SettingError& e) {  // the writer's own setting; a program names its flag
    EXPECT_EQ(e.setting(), "token_type");
    EXPECT_EQ(e.problem(), "token id 256 of document 0 does not fit dtype uint8 (0 to 255)");
    EXPECT_EQ(e.suggestion(), "uint16 or wider");
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
  }
}

// A prefix that names no file is refused in the writer's terms (the prefix it was given); a
// program that takes it from a flag asks prefix_problem first and names its flag.
TEST_F(Indexed, PrefixThatNamesNoFileIsRefused) {
  const auto p = (dir_ / "").string();  // ends in '/'
  EXPECT_EQ(data::prefix_problem((dir_ / "w").string()), std::nullopt);
  ASSERT_TRUE(data::prefix_problem(p));
  EXPECT_EQ(*data::prefix_problem(p), "names no file prefix (it would write the hidden files " + p +
                                          ".bin and " + p + ".idx)");
  try {
    data::IndexedWriter w(p, data::TokenType::uint8);
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "tprimat: prefix '" + p + "' " + *data::prefix_problem(p) +
                                         "; pass a prefix that ends in a file name, e.g. "
                                         "data/my_set (writes data/my_set.bin and "
                                         "data/my_set.idx)");
  }
  // A file that cannot be written tells the caller's fix, else the library's.
  const auto l = (dir_ / "l").string();
  fs::create_symlink("/dev/null", l + ".bin");
  const auto refusal = [](auto make) {
    try {
      make();
    } catch (const core::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto own = refusal([&] { data::IndexedWriter w(l, data::TokenType::uint8); });
  EXPECT_TRUE(own.ends_with("; pass another prefix")) << own;
  const auto told = refusal([&] { data::IndexedWriter w(l, data::TokenType::uint8, "FIX"); });
  EXPECT_TRUE(told.ends_with("; FIX")) << told;
}

TEST_F(Indexed, MissingPairNamesBothFiles) {
  const auto p = (dir_ / "nothing").string();
  const auto e = error_of(p);
  EXPECT_NE(e.find("data set " + p + " not found: expected both " + p + ".bin and " + p + ".idx"),
            std::string::npos)
      << e;
}

TEST_F(Indexed, WrongMagicIsNamed) {
  const auto p = write("m", data::TokenType::int32, docs);
  auto b = bytes(p + ".idx");
  std::memcpy(b.data(), "NOTANIDX", 8);
  put(p + ".idx", b);
  const auto e = error_of(p);
  EXPECT_NE(e.find(p + ".idx: not a Megatron index (wrong magic"), std::string::npos) << e;
}

TEST_F(Indexed, TruncatedIndexIsNamed) {
  const auto p = write("ti", data::TokenType::int32, docs);
  auto b = bytes(p + ".idx");
  b.resize(b.size() - 3);
  put(p + ".idx", b);
  auto e = error_of(p);
  EXPECT_NE(e.find(p + ".idx: truncated"), std::string::npos) << e;
  b.resize(20);
  put(p + ".idx", b);
  e = error_of(p);
  EXPECT_NE(e.find(p + ".idx: truncated: 20 bytes, the header alone needs 34"), std::string::npos)
      << e;
}

TEST_F(Indexed, TruncatedBinIsNamed) {
  const auto p = write("tb", data::TokenType::int32, docs);
  auto b = bytes(p + ".bin");
  b.resize(b.size() - 1);
  put(p + ".bin", b);
  const auto e = error_of(p);
  EXPECT_NE(e.find(p + ".bin is truncated: it holds 43 bytes, its index " + p + ".idx needs 44"),
            std::string::npos)
      << e;
}

TEST_F(Indexed, PointerPastTheEndIsNamed) {
  const auto p = write("pp", data::TokenType::int32, docs);
  auto b = bytes(p + ".idx");
  const std::int64_t far = 4000;
  std::memcpy(b.data() + 34 + 4 * 4 + 8 * 2, &far, 8);  // sequence 2 now points far away
  put(p + ".idx", b);
  const auto e = error_of(p);
  EXPECT_NE(e.find(p + ".idx: sequence 2 points past the end of " + p + ".bin"), std::string::npos)
      << e;
}

TEST_F(Indexed, UnknownDtypeCodeIsNamed) {
  const auto p = write("dt", data::TokenType::int32, docs);
  auto b = bytes(p + ".idx");
  b[17] = 9;
  put(p + ".idx", b);
  const auto e = error_of(p);
  EXPECT_NE(e.find(p + ".idx: unknown dtype code 9"), std::string::npos) << e;
}

TEST_F(Indexed, FifoOrDeviceInThePairIsRefusedWithoutBlocking) {
  // open() of a FIFO for reading waited for a writer: `data inspect` hung.
  const auto p = write("f", data::TokenType::int32, docs);
  fs::remove(p + ".bin");
  tprimat::testing::make_fifo(p + ".bin");
  EXPECT_EQ(tprimat::testing::error_reading_fifo(p + ".bin",
                                                 [&] { data::IndexedDataset ds(p); }),
            "tprimat: " + p + ".bin: is a FIFO (named pipe), not a Megatron data file; pass the "
                              "prefix of a .bin/.idx pair");
  fs::remove(p + ".idx");
  fs::create_symlink("/dev/zero", p + ".idx");
  EXPECT_NE(error_of(p).find(p + ".idx: is a character device, not a Megatron data file"),
            std::string::npos);
}

}  // namespace
