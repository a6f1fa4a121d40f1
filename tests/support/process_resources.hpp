// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_PROCESS_RESOURCES_HPP_
#define MEMSHARD_TESTS_SUPPORT_PROCESS_RESOURCES_HPP_

// support/process_resources.hpp: what the test process holds right now, read
// from /proc/self: open descriptors, threads and resident memory, so that a
// test can compare them before and after a run of faults. Linux only.

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

namespace memshard::testing {

/// directory_entries: how many entries `dir` holds (0 when it cannot be read).
[[nodiscard]] inline auto directory_entries(const std::filesystem::path& dir) -> std::size_t {
  std::error_code error;
  std::filesystem::directory_iterator it(dir, error);
  if (error) {
    return 0;
  }
  return static_cast<std::size_t>(std::distance(it, std::filesystem::directory_iterator{}));
}

/// open_descriptors: the process's open file descriptors (/proc/self/fd; the
/// one that reads the directory is counted too, the same every time).
[[nodiscard]] inline auto open_descriptors() -> std::size_t {
  return directory_entries("/proc/self/fd");
}

/// threads: the process's threads (/proc/self/task).
[[nodiscard]] inline auto threads() -> std::size_t { return directory_entries("/proc/self/task"); }

/// resident_bytes: the process's resident set size (VmRSS of
/// /proc/self/status), in bytes; 0 when it cannot be read.
[[nodiscard]] inline auto resident_bytes() -> std::size_t {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return static_cast<std::size_t>(std::stoull(line.substr(6))) * 1024;  // "kB"
    }
  }
  return 0;
}

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_PROCESS_RESOURCES_HPP_
