// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// core/input_file.hpp: only regular files are read, nothing blocks, nothing passes its cap.
#include "tprimat/core/input_file.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "../../support/fifo.hpp"

namespace {

namespace core = tprimat::core;
namespace fs = std::filesystem;

class InputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tprimat-input-file-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return dir_ / name;
  }
  /// The problem read_input_file names for `path` under `kind`, or "" when it reads.
  static std::string problem(const fs::path& path, const core::InputKind& kind) {
    try {
      core::read_input_file(path, kind);
    } catch (const core::InputFileError& e) {
      EXPECT_EQ(e.path(), path.string());
      EXPECT_EQ(std::string(e.what()),
                "tprimat: " + path.string() + ": " + e.problem() + "; " + std::string(kind.fix));
      return e.problem();
    }
    return "";
  }
  fs::path dir_;
};

constexpr core::InputKind ten_bytes{"config file", 10, "pass a config file"};

TEST_F(InputFile, ReadsARegularFileWhole) {
  const std::string bytes("a\0b\nc", 5);  // binary-safe
  EXPECT_EQ(core::read_input_file(write("f", bytes), ten_bytes), bytes);
  EXPECT_EQ(core::read_input_file(write("empty", ""), ten_bytes), "");
  const auto link = dir_ / "link";
  fs::create_symlink(dir_ / "f", link);  // links are followed
  EXPECT_EQ(core::read_input_file(link, ten_bytes), bytes);
}

TEST_F(InputFile, CapIsInclusive) {
  EXPECT_EQ(core::read_input_file(write("at", std::string(10, 'x')), ten_bytes).size(), 10u);
  EXPECT_EQ(problem(write("over", std::string(11, 'x')), ten_bytes),
            "is 11 bytes, more than the 10 bytes tprimat reads from a config file");
}

TEST_F(InputFile, AFileLongerThanItsStatSizeStopsAtTheCap) {
  // /proc files report a size of 0 and hold more: the read, not fstat, must hold the cap.
  const std::string status = core::read_input_file("/proc/self/status", {"file", 1 << 20, ""});
  ASSERT_GT(status.size(), 10u);
  EXPECT_EQ(problem("/proc/self/status", ten_bytes),
            "holds more than the 10 bytes tprimat reads from a config file");
}

TEST_F(InputFile, DirectoryIsRefused) {
  fs::create_directories(dir_ / "d.json");
  EXPECT_EQ(problem(dir_ / "d.json", ten_bytes), "is a directory, not a config file");
  EXPECT_EQ(problem(dir_.string() + "/d.json/", ten_bytes), "is a directory, not a config file");
}

TEST_F(InputFile, DeviceIsRefused) {
  EXPECT_EQ(problem("/dev/zero", ten_bytes), "is a character device, not a config file");
  EXPECT_EQ(problem("/dev/zero", {"result file", core::no_size_cap, "pass a result"}),
            "is a character device, not a result file");
  const auto link = dir_ / "zero.json";
  fs::create_symlink("/dev/zero", link);
  EXPECT_EQ(problem(link, ten_bytes), "is a character device, not a config file");
}

TEST_F(InputFile, FifoIsRefusedWithoutWaitingForAWriter) {
  const auto fifo = dir_ / "fifo.json";
  tprimat::testing::make_fifo(fifo);
  EXPECT_EQ(
      tprimat::testing::error_reading_fifo(fifo, [&] { core::read_input_file(fifo, ten_bytes); }),
      "tprimat: " + fifo.string() + ": is a FIFO (named pipe), not a config file; " +
          std::string(ten_bytes.fix));
  // open_input_file, which mappings use, refuses it the same way.
  EXPECT_NE(
      tprimat::testing::error_reading_fifo(fifo, [&] { core::open_input_file(fifo, ten_bytes); })
          .find("is a FIFO"),
      std::string::npos);
}

TEST_F(InputFile, SocketIsRefused) {
  const auto path = dir_ / "s";
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.string().size(), sizeof addr.sun_path);
  std::strcpy(addr.sun_path, path.c_str());
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  EXPECT_EQ(problem(path, ten_bytes), "is a socket, not a config file");
  ::close(s);
}

TEST_F(InputFile, MissingAndUnreadableFilesNameTheReason) {
  EXPECT_EQ(problem(dir_ / "none.json", ten_bytes),
            "cannot read the config file: No such file or directory");
  EXPECT_EQ(problem(dir_ / "none" / "x.json", ten_bytes),
            "cannot read the config file: No such file or directory");
  EXPECT_EQ(problem(write("plain", "x") / "x.json", ten_bytes),
            "cannot read the config file: Not a directory");
}

TEST_F(InputFile, SpecialFileKindNamesWhatIsThere) {
  EXPECT_EQ(core::special_file_kind(write("f", "x")), "");
  EXPECT_EQ(core::special_file_kind(dir_ / "missing"), "");
  EXPECT_EQ(core::special_file_kind(dir_), "a directory");
  EXPECT_EQ(core::special_file_kind(fs::path("/dev/null")), "a character device");
}

TEST(InputFileSizes, ByteSizeText) {
  EXPECT_EQ(core::byte_size_text(core::max_config_bytes), "1 MiB");
  EXPECT_EQ(core::byte_size_text(core::max_result_bytes), "256 MiB");
  EXPECT_EQ(core::byte_size_text(core::max_trace_bytes), "1 GiB");
  EXPECT_EQ(core::byte_size_text(4096), "4 KiB");
  EXPECT_EQ(core::byte_size_text(1000), "1000 bytes");
}

}  // namespace
