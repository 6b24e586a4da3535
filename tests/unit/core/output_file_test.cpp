// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// core/output_file.hpp: writers create new files only, never through a link, never over a
// device, a FIFO, a directory or a file the run reads.
#include "tprimat/core/output_file.hpp"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../../support/fifo.hpp"
#include "tprimat/core/input_file.hpp"

namespace {

namespace core = tprimat::core;
namespace fs = std::filesystem;

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tprimat-output-file-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return dir_ / name;
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  /// The OutputFileError write_file_atomically throws for `path`, or "" when it writes.
  static std::string refusal(const fs::path& path) {
    try {
      core::write_file_atomically(path, "new\n", "pass another path");
    } catch (const core::OutputFileError& e) {
      return e.what();
    }
    return "";
  }
  /// Names in the directory, hidden ones too: a refused or failed write leaves no temporary.
  std::size_t entries() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++n;
    return n;
  }
  fs::path dir_;
};

TEST_F(OutputFile, WritesANewFileAndReplacesARegularOne) {
  const auto path = dir_ / "result.json";
  core::write_file_atomically(path, "one\n");
  EXPECT_EQ(read(path), "one\n");
  core::write_file_atomically(path, "two\n");
  EXPECT_EQ(read(path), "two\n");
  EXPECT_EQ(entries(), 1u);  // no temporary left beside it
}

TEST_F(OutputFile, NeverWritesThroughASymbolicLink) {
  const auto victim = write("victim", "keep\n");
  fs::create_symlink(victim, dir_ / "out.json");
  EXPECT_NE(refusal(dir_ / "out.json").find("is a symbolic link"), std::string::npos);
  EXPECT_EQ(read(victim), "keep\n");
  EXPECT_TRUE(fs::is_symlink(dir_ / "out.json"));
  // A dangling link: nothing is created where it points.
  fs::create_symlink(dir_ / "elsewhere", dir_ / "dangling.json");
  EXPECT_NE(refusal(dir_ / "dangling.json").find("symbolic link"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "elsewhere"));
}

TEST_F(OutputFile, NeverReplacesAFifoADirectoryOrADevice) {
  tprimat::testing::make_fifo(dir_ / "fifo");
  EXPECT_NE(refusal(dir_ / "fifo").find("is a FIFO (named pipe); tprimat writes regular files"),
            std::string::npos);
  EXPECT_TRUE(fs::is_fifo(dir_ / "fifo"));
  fs::create_directory(dir_ / "sub");
  EXPECT_NE(refusal(dir_ / "sub").find("is a directory"), std::string::npos);
  // A character device made here where mknod is allowed (root); skipped elsewhere.
  if (::mknod((dir_ / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    EXPECT_NE(refusal(dir_ / "null").find("is a character device"), std::string::npos);
    EXPECT_TRUE(fs::is_character_file(dir_ / "null"));
  }
}

TEST_F(OutputFile, NeverReplacesAnInputOfTheRun) {
  core::guard_input_files();  // as the tprimat CLI does at start
  const auto input = write("data.bin", "tokens");
  fs::create_hard_link(input, dir_ / "alias.bin");
  (void)core::read_input_file(input, core::InputKind{"data file", core::no_size_cap, "fix"});
  EXPECT_NE(refusal(input).find("a file this run reads"), std::string::npos);
  // Under another name too (a hard link is the same file).
  EXPECT_NE(refusal(dir_ / "alias.bin").find("a file this run reads"), std::string::npos);
  EXPECT_EQ(read(input), "tokens");
  // A file read to be replaced (the previous result) is not guarded.
  const auto previous = write("previous.json", "{}");
  (void)core::read_input_file(
      previous, core::InputKind{"result", core::no_size_cap, "fix",
                                core::InputUse::replaced_by_this_run});
  EXPECT_EQ(refusal(previous), "");
  // Deleted, its inode number taken by a new file: that file is no input.
  fs::remove(input);
  fs::remove(dir_ / "alias.bin");
  for (int i = 0; i < 8; ++i) {
    const auto fresh = write("fresh" + std::to_string(i), "x");
    EXPECT_EQ(refusal(fresh), "");
  }
}

TEST_F(OutputFile, AHardLinkIsReplacedAtThisNameOnly) {
  const auto other = write("previous_result.json", "keep\n");
  fs::create_hard_link(other, dir_ / "out.json");
  core::write_file_atomically(dir_ / "out.json", "new\n");
  EXPECT_EQ(read(other), "keep\n");
  EXPECT_EQ(read(dir_ / "out.json"), "new\n");
}

TEST_F(OutputFile, TemporariesAreUnguessableAndRemovedWhenUnpublished) {
  fs::path first, second;
  {
    core::NewFile a(dir_ / "x.json", "fix");
    core::NewFile b(dir_ / "x.json", "fix");
    first = a.path();
    second = b.path();
    EXPECT_NE(first, second);
    EXPECT_EQ(first.parent_path(), dir_);
    EXPECT_EQ(first.filename().string().rfind(".x.json.tmp-", 0), 0u);
  }
  EXPECT_FALSE(fs::exists(first));
  EXPECT_FALSE(fs::exists(second));
  EXPECT_FALSE(fs::exists(dir_ / "x.json"));
}

TEST_F(OutputFile, AFullDiskIsNamed) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  core::NewFile f(dir_ / "x.json", "fix");
  // Write errors come from write(2): stand the descriptor in for one on a full disk.
  const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(full, 0);
  ASSERT_GE(::dup2(full, f.fd()), 0);
  ::close(full);
  try {
    f.write("x");
    FAIL() << "no error";
  } catch (const core::RunError& e) {
    EXPECT_NE(std::string(e.what()).find("the disk is full"), std::string::npos) << e.what();
  }
}

}  // namespace
