// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// report/load.hpp's walk of a results folder: a subfolder it cannot read is named, and the
// results after it are still found.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tprimat/report/load.hpp"

namespace tprimat::report {
namespace {

namespace fs = std::filesystem;

/// What result_files_below(dir) finds and says, as a user without root sees it: run in a child
/// that drops to nobody (65534) where the test runs as root, whom no permission stops.
std::string walk_without_root(const fs::path& dir) {
  int out[2];
  if (::pipe(out) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(out[0]);
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    std::vector<std::string> problems;
    std::string text;
    for (const auto& f : result_files_below(dir, problems)) text += f.lexically_relative(dir).string() + "\n";
    for (const auto& p : problems) text += p + "\n";
    (void)!::write(out[1], text.data(), text.size());
    ::_exit(0);
  }
  ::close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) text.append(buf, std::size_t(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 3 ? "cannot drop root" : text;
}

TEST(LoadFolders, AnUnreadableSubfolderIsNamedAndTheRestIsRead) {
  const fs::path dir = fs::temp_directory_path() / ("tprimat-load-folders-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (const char* sub : {"a", "b", "c"}) {
    fs::create_directories(dir / sub);
    std::ofstream(dir / sub / "benchmark_cuda_llama.json") << "{}";
  }
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                           fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(dir / "b", fs::perms::none);
  const std::string seen = walk_without_root(dir);
  fs::permissions(dir / "b", fs::perms::owner_all);
  fs::remove_all(dir);
  if (seen == "cannot drop root") GTEST_SKIP() << "no user to drop to";
  EXPECT_NE(seen.find("a/benchmark_cuda_llama.json\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("c/benchmark_cuda_llama.json\n"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("b/benchmark"), std::string::npos) << seen;
  EXPECT_NE(seen.find("tprimat: " + (dir / "b").string() +
                      ": cannot read this folder (Permission denied); the results in it are left "
                      "out, the others are read"),
            std::string::npos)
      << seen;
}

}  // namespace
}  // namespace tprimat::report
