// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TOOLS_GET_RUN_HPP_
#define MEMSHARD_TOOLS_GET_RUN_HPP_

// get/run.hpp: memshard-get as functions: one key read and decoded into its
// output line, and the whole command line carried out on given streams (a
// client of the placement, the codec, each key of the arguments or of the
// input), every usage or configuration error reported on the error stream, and
// the exit status returned. main() only connects it to the standard
// descriptors.

#include <istream>
#include <memshard/codecs/any_codec.hpp>
#include <memshard/placement/locators/any_locator.hpp>
#include <memshard/sharded_client.hpp>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

namespace memshard::get_tool {

/// KeyOutcome: the output line of one key (without its newline), and whether
/// the key was read: a value or a miss (false: an error line).
struct KeyOutcome {
  std::string line;
  bool ok = false;
};

/// get_key: reads `key` (an application key: the client adds its prefix) with
/// `client`, and decodes a hit with `codec`: the value line, the miss line, or
/// the error line of a failed read (the client's Status::message(): an
/// invalid key, a connection failure, ...) or of an item the codec cannot
/// decode (with the item's flags). The server is client.server_for(key).
[[nodiscard]] auto get_key(memshard::ShardedClient<memshard::AnyLocator>& client,
                           const memshard::AnyCodec& codec, std::string_view key) -> KeyOutcome;

/// run: does what `args` (argv without the program's name) ask: the KEY
/// arguments, or without any, each line of `in`, read and printed on `out`
/// one line per key (see get_key), each as soon as it is known; usage,
/// configuration and I/O errors are reported on `errors` as "memshard-get:
/// <problem>" lines (a usage error adds a line pointing to --help), before
/// any key is read for the first two. Returns the exit status (kExitOk,
/// kExitKeyErrors or kExitError); throws nothing but std::bad_alloc.
[[nodiscard]] auto run(std::span<const std::string_view> args, std::istream& in, std::ostream& out,
                       std::ostream& errors) -> int;

}  // namespace memshard::get_tool

#endif  // MEMSHARD_TOOLS_GET_RUN_HPP_
