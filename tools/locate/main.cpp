// SPDX-License-Identifier: MIT
// main.cpp: memshard-locate, the operator's command-line tool. It reads
// memcached keys on standard input, one per line, and prints the server each key
// lives on under one of memshard's profiles:
//
//   $ printf 'user:42\nuser:43\nfeed:home\n' |
//       memshard-locate --profile libmemcached-ketama-weighted --server 10.0.0.1:11211
//                       --server 10.0.0.2:11211:2 --server '[fd00::3]:11211'
//   user:42<TAB>1<TAB>10.0.0.2:11211
//   user:43<TAB>2<TAB>[fd00::3]:11211
//   feed:home<TAB>0<TAB>10.0.0.1:11211
//
// With --compare it places every key under two configurations, A (--profile,
// --server ...) and B (--to-profile, --to-server ...), and reports how many keys
// move and between which servers: whether two clients agree, and what moves when
// a server is added:
//
//   $ memshard-locate --compare --sample 10000 --profile libmemcached-ketama-weighted
//                     --server a:11211 --server b:11211 --server c:11211
//                     --to-server a:11211 --to-server b:11211 --to-server c:11211
//                     --to-server d:11211
//
// Exit status: 0 when every key was placed (or compared); 1 when some lines were
// not valid keys (each one reported on standard error with its line number, and
// skipped; the valid keys are still printed); 2 for a usage, configuration or I/O
// error (a usage or configuration error is found before any key is read, so
// nothing is printed on standard output then); 3 with --compare --fail-if-moved
// when some key moved.
//
// The work is done by the units in locate/ (command line, line input and output,
// locate, compare, run); this file connects run() to the standard descriptors.

#include <unistd.h>

#include <iostream>
#include <string_view>
#include <vector>

#include "locate/command_line.hpp"
#include "locate/io.hpp"
#include "locate/run.hpp"

auto main(int argc, char** argv) -> int {
  namespace tool = memshard::locate_tool;
  std::ios::sync_with_stdio(false);
  std::vector<std::string_view> args;
  for (int i = 1; i < argc; ++i) {
    args.emplace_back(argv[i]);
  }
  tool::FdInputBuffer input_buffer(STDIN_FILENO);
  tool::FdOutputBuffer output_buffer(STDOUT_FILENO);
  std::istream in(&input_buffer);
  std::ostream out(&output_buffer);
  const int status = tool::run(args, in, out, std::cerr);
  if (status != tool::kExitError && !out) {
    std::cerr << tool::kProgram << ": cannot write to standard output\n";
    return tool::kExitError;
  }
  return status;
}
