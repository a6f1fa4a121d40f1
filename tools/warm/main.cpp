// SPDX-License-Identifier: MIT
// main.cpp: memshard-warm, the operator's tool for warming a new memcached
// fleet: it copies the keys whose server changes from the old fleet's servers
// to the new ones, under a rate limit, and prints what it did:
//
//   $ memshard-warm --from libmemcached-ketama-weighted
//                   --from-servers 10.0.0.1:11211,10.0.0.2:11211
//                   --to libmemcached-ketama-weighted
//                   --to-servers 10.0.0.1:11211,10.0.0.2:11211,10.0.0.3:11211
//                   --ops-per-second 5000 --json
//
// It never commits the migration: the fleet's clients do. Exit status: 0 done;
// 1 some old server could not be listed; 2 usage or configuration error.
//
// The work is done by the units in warm/ (command line, run); this file
// connects run() to the standard streams and the terminal.

#include <sys/ioctl.h>
#include <unistd.h>

#include <iostream>
#include <string_view>
#include <vector>

#include "warm/command_line.hpp"
#include "warm/run.hpp"

auto main(int argc, char** argv) -> int {
  namespace tool = memshard::warm_tool;
  std::vector<std::string_view> args;
  for (int i = 1; i < argc; ++i) {
    args.emplace_back(argv[i]);
  }
  tool::Terminal terminal;
  terminal.progress = ::isatty(STDERR_FILENO) == 1;
  winsize size{};
  if (terminal.progress && ::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 1) {
    terminal.width = static_cast<std::size_t>(size.ws_col) - 1;
  }
  const int status = tool::run(args, std::cout, std::cerr, terminal);
  std::cout.flush();
  if (status != tool::kExitError && !std::cout) {
    std::cerr << tool::kProgram << ": cannot write to standard output\n";
    return tool::kExitError;
  }
  return status;
}
