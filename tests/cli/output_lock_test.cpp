// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// cli/output_lock.hpp: one holder per file, all or none of a set; a dead holder blocks nobody.
#include "cli/output_lock.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

using namespace tprimat;
namespace fs = std::filesystem;

class OutputLocks : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tprimat-lock-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string text(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
};

TEST_F(OutputLocks, OneHolderAtATimeAndTheHolderIsNamed) {
  const auto file = dir_ / "benchmark_cpu_tiny.json";
  EXPECT_EQ(cli::lock_file_of(file), dir_ / ".benchmark_cpu_tiny.json.lock");
  std::string holder;
  auto first = cli::OutputLock::try_take(file, "pid 1 on a: tprimat bench --seed 1\n", holder);
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(first->unsupported().empty());
  EXPECT_EQ(text(cli::lock_file_of(file)), "pid 1 on a: tprimat bench --seed 1\n");
  // Another open file of the same lock, as another process would hold: refused, holder named.
  EXPECT_FALSE(cli::OutputLock::try_take(file, "second", holder).has_value());
  EXPECT_EQ(holder, "pid 1 on a: tprimat bench --seed 1");
  first.reset();  // released: the lock file goes with it
  EXPECT_FALSE(fs::exists(cli::lock_file_of(file)));
  EXPECT_TRUE(cli::OutputLock::try_take(file, "third", holder).has_value());
}

TEST_F(OutputLocks, AStaleLockFileIsNotAHeldLock) {
  const auto file = dir_ / "training_tiny.log";
  std::ofstream(cli::lock_file_of(file)) << "pid 999999 on gone: tprimat bench\n";
  std::string holder;
  const auto lock = cli::OutputLock::try_take(file, "pid 2: tprimat bench\n", holder);
  ASSERT_TRUE(lock.has_value());
  EXPECT_EQ(text(cli::lock_file_of(file)), "pid 2: tprimat bench\n");
}

TEST_F(OutputLocks, AKilledHolderReleasesItsLock) {
  const auto file = dir_ / "benchmark_cpu_tiny.json";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // holds the lock until killed
    std::string h;
    auto lock = cli::OutputLock::try_take(file, "pid child: tprimat bench\n", h);
    (void)!::write(ready[1], lock ? "1" : "0", 1);
    for (;;) ::pause();
  }
  char got = 0;
  ASSERT_EQ(::read(ready[0], &got, 1), 1);
  ASSERT_EQ(got, '1');
  std::string holder;
  EXPECT_FALSE(cli::OutputLock::try_take(file, "parent", holder).has_value());
  EXPECT_EQ(holder, "pid child: tprimat bench");
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(fs::exists(cli::lock_file_of(file))) << "a killed holder cannot remove it";
  EXPECT_TRUE(cli::OutputLock::try_take(file, "parent", holder).has_value());
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_F(OutputLocks, ASetIsLockedWhollyOrNotAtAll) {
  const auto result = dir_ / "benchmark_cpu_tiny.json";
  const auto log = dir_ / "training_tiny.log";
  std::string holder;
  auto held = cli::OutputLock::try_take(log, "pid 7 on b: tprimat bench --model tiny\n", holder);
  ASSERT_TRUE(held.has_value());
  std::vector<std::string> notices;
  try {
    (void)cli::lock_outputs({result, log}, "me", notices);
    FAIL() << "a held file must refuse the set";
  } catch (const core::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "tprimat: " + log.string() +
                  " is being written by another tprimat run (pid 7 on b: tprimat bench --model "
                  "tiny); nothing ran; wait for that run to end, or pass another --output-dir");
  }
  EXPECT_TRUE(cli::OutputLock::try_take(result, "x", holder).has_value())
      << "the file locked before the refusal was released";
  held.reset();
  const auto both = cli::lock_outputs({result, log}, "me", notices);
  EXPECT_EQ(both.size(), 2u);
  EXPECT_TRUE(notices.empty());
}

TEST_F(OutputLocks, AnUncreatableLockIsBadInput) {
  std::string holder;
  EXPECT_THROW((void)cli::OutputLock::try_take(dir_ / "missing" / "x.json", "me", holder),
               core::InputError);
}

TEST_F(OutputLocks, OwnerTextNamesPidAndCommand) {
  const std::string t = cli::lock_owner_text("tprimat bench --seed 3");
  EXPECT_EQ(t.rfind("pid " + std::to_string(::getpid()), 0), 0u) << t;
  EXPECT_NE(t.find(": tprimat bench --seed 3\n"), std::string::npos) << t;
}

}  // namespace
