// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_STOPPED_PROCESS_HPP_
#define MEMSHARD_TESTS_SUPPORT_STOPPED_PROCESS_HPP_

// support/stopped_process.hpp: StoppedProcess, a server hung for real
// (SIGSTOP: it keeps its connections and its data, and answers nothing) for
// the scope of a test, resumed however the test ends.

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <thread>

namespace memshard::testing {

/// all_threads_stopped: whether every thread of `pid` is stopped (state T in
/// /proc).
inline auto all_threads_stopped(pid_t pid) -> bool {
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  std::error_code error;
  bool any = false;
  for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
    std::ifstream stat(task.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size()) {
      return false;
    }
    const char state = line[close + 2];
    if (state != 'T' && state != 't') {
      return false;
    }
    any = true;
  }
  return any && !error;
}

/// StoppedProcess: stops `pid` (SIGSTOP), waits (at most 5 s, polling) until
/// all its threads are stopped, and resumes it (SIGCONT) when destroyed or
/// resume() is called.
class StoppedProcess {
 public:
  explicit StoppedProcess(pid_t pid) : pid_(pid) {
    ::kill(pid_, SIGSTOP);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!all_threads_stopped(pid_) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  StoppedProcess(const StoppedProcess&) = delete;
  auto operator=(const StoppedProcess&) -> StoppedProcess& = delete;
  StoppedProcess(StoppedProcess&&) = delete;
  auto operator=(StoppedProcess&&) -> StoppedProcess& = delete;
  ~StoppedProcess() { resume(); }

  /// resume: lets the process run again (once).
  void resume() noexcept {
    if (pid_ > 0) {
      ::kill(pid_, SIGCONT);
      pid_ = -1;
    }
  }

 private:
  pid_t pid_;
};

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_STOPPED_PROCESS_HPP_
