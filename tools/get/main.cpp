// SPDX-License-Identifier: MIT
// main.cpp: memshard-get, the operator's tool for looking at what any client
// stored: it reads keys from the servers a profile places them on, decodes
// each item as the client that stored it would, and prints one JSON object per
// key:
//
//   $ memshard-get --profile php-memcached-consistent --server 10.0.0.1:11211
//                  --server 10.0.0.2:11211 --codec php-memcached user:42 user:43
//   {"key":"user:42","server":"10.0.0.2:11211","flags":4,"type":"map","value":{"a":1,"b":[2,3]}}
//   {"key":"user:43","server":"10.0.0.1:11211","type":"miss"}
//
// Without KEY arguments it reads the keys on standard input, one per line.
// Exit status: 0 every key read (a miss is not an error); 1 some key could not
// be read or decoded, or was not a valid key (each printed as an error line,
// the others still read); 2 usage, configuration or I/O error.
//
// The work is done by the units in get/ (command line, output, run); this file
// connects run() to the standard descriptors.

#include <unistd.h>

#include <iostream>
#include <string_view>
#include <vector>

#include "get/command_line.hpp"
#include "get/run.hpp"
#include "locate/io.hpp"

auto main(int argc, char** argv) -> int {
  namespace tool = memshard::get_tool;
  std::ios::sync_with_stdio(false);
  std::vector<std::string_view> args;
  for (int i = 1; i < argc; ++i) {
    args.emplace_back(argv[i]);
  }
  memshard::locate_tool::FdInputBuffer input_buffer(STDIN_FILENO);
  memshard::locate_tool::FdOutputBuffer output_buffer(STDOUT_FILENO);
  std::istream in(&input_buffer);
  std::ostream out(&output_buffer);
  const int status = tool::run(args, in, out, std::cerr);
  if (status != tool::kExitError && !out) {
    std::cerr << tool::kProgram << ": cannot write to standard output\n";
    return tool::kExitError;
  }
  return status;
}
