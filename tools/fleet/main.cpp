// SPDX-License-Identifier: MIT
// main.cpp: memshard-fleet, the operator's tool for a fleet of processes kept in step through
// etcd:
//
//   $ memshard-fleet --store etcd://10.0.0.1:2379 create web --profile libmemcached-ketama
//                    --servers "10.0.1.1:11211 10.0.1.2:11211"
//   $ memshard-fleet --store etcd://10.0.0.1:2379 show web
//   $ memshard-fleet --store etcd://10.0.0.1:2379 members web --json
//
// Exit status: 0 done; 1 etcd unreachable or the request refused; 2 usage or configuration
// error. The work is done by the units in fleet/ (command line, run); this file connects run()
// to the standard streams and the environment.

#include <cstdlib>
#include <iostream>
#include <string_view>
#include <vector>

#include "fleet/command_line.hpp"
#include "fleet/run.hpp"

auto main(int argc, char** argv) -> int {
  namespace tool = memshard::fleet_tool;
  std::vector<std::string_view> args;
  for (int i = 1; i < argc; ++i) {
    args.emplace_back(argv[i]);
  }
  const char* store = std::getenv("MEMSHARD_STORE");
  const int status = tool::run(args, store != nullptr ? store : "", std::cout, std::cerr);
  std::cout.flush();
  if (status != tool::kExitUsage && !std::cout) {
    std::cerr << tool::kProgram << ": cannot write to standard output\n";
    return tool::kExitFailed;
  }
  return status;
}
