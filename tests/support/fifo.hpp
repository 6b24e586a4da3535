// SPDX-License-Identifier: Apache-2.0
// SPDX-FileCopyrightText: 2026 tprimat authors
// A FIFO for reader tests, and a run that fails instead of hanging when a reader waits on it.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <stdexcept>
#include <string>

#include "tprimat/core/error.hpp"

namespace tprimat::testing {

/// Makes a FIFO (named pipe) at `path`; nothing ever writes to it.
inline void make_fifo(const std::filesystem::path& path) {
  if (::mkfifo(path.c_str(), 0600) != 0)
    throw std::runtime_error("mkfifo " + path.string() + ": " + std::strerror(errno));
}

/// The InputError message `read` throws for `fifo`, "no error" when it throws none, or
/// "blocked" when it is still waiting after 10 s: then a writer opens the FIFO, so that the
/// blocked open returns and the test ends (failed) instead of hanging.
template <class Read>
std::string error_reading_fifo(const std::filesystem::path& fifo, Read read) {
  auto done = std::async(std::launch::async, [&]() -> std::string {
    try {
      read();
    } catch (const core::InputError& e) {
      return e.what();
    }
    return "no error";
  });
  if (done.wait_for(std::chrono::seconds(10)) == std::future_status::ready) return done.get();
  const int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  if (w >= 0) ::close(w);
  (void)done.wait_for(std::chrono::seconds(10));
  return "blocked";
}

}  // namespace tprimat::testing
