// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_TOOLS_LOCATE_SUPPORT_HPP_
#define MEMSHARD_TESTS_TOOLS_LOCATE_SUPPORT_HPP_

// tools/locate_support.hpp: what the memshard-locate tests share: reproducible
// random keys, servers written out by hand, line comparisons, and the tool's
// units run in process on string streams.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memshard/placement.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "locate/command_line.hpp"
#include "locate/locate.hpp"
#include "locate/run.hpp"
#include "support/child_process.hpp"

namespace memshard::locate_tool::testing {

using memshard::testing::lines_of;
using memshard::testing::RunResult;

/// kPrefix: how each of the tool's error lines starts.
inline constexpr std::string_view kPrefix = "memshard-locate: ";

/// capture: what `job(in, out, errors)` returned and printed, with `input` on `in`.
template <class Job>
auto capture(const std::string& input, Job&& job) -> RunResult {
  std::istringstream in(input);
  std::ostringstream out;
  std::ostringstream errors;
  RunResult result;
  result.status = std::forward<Job>(job)(in, out, errors);
  result.out = out.str();
  result.err = errors.str();
  return result;
}

/// run_in_process: run() with `args`, and `input` on its input stream.
inline auto run_in_process(const std::vector<std::string>& args, const std::string& input = {})
    -> RunResult {
  const std::vector<std::string_view> views(args.begin(), args.end());
  return capture(input, [&views](std::istream& in, std::ostream& out, std::ostream& errors) {
    return run(views, in, out, errors);
  });
}

/// parse: parse_command_line over `args`.
inline auto parse(const std::vector<std::string>& args) -> ParsedCommandLine {
  const std::vector<std::string_view> views(args.begin(), args.end());
  return parse_command_line(views);
}

/// locate_in_process: locate_keys of `placement` over `input`.
inline auto locate_in_process(const Placement& placement, const std::string& input) -> RunResult {
  return capture(input, [&placement](std::istream& in, std::ostream& out, std::ostream& errors) {
    return locate_keys(placement, in, out, errors);
  });
}

inline auto split_fields(std::string_view line) -> std::vector<std::string> {
  std::vector<std::string> fields;
  for (;;) {
    const auto tab = line.find('\t');
    fields.emplace_back(line.substr(0, tab));
    if (tab == std::string_view::npos) {
      return fields;
    }
    line.remove_prefix(tab + 1);
  }
}

/// same_lines: compares two outputs line by line and names the first difference.
inline auto same_lines(std::string_view actual, std::string_view expected)
    -> ::testing::AssertionResult {
  const std::vector<std::string> got = lines_of(actual);
  const std::vector<std::string> want = lines_of(expected);
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    if (got[i] != want[i]) {
      return ::testing::AssertionFailure()
             << "line " << i + 1 << ": got '" << got[i] << "', expected '" << want[i] << "'";
    }
  }
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure()
           << got.size() << " lines, expected " << want.size() << " lines";
  }
  if (!actual.empty() && !actual.ends_with('\n')) {
    return ::testing::AssertionFailure() << "the output does not end with a newline";
  }
  return ::testing::AssertionSuccess();
}

/// random_keys: `count` distinct valid keys of 1 to 250 bytes (printable ASCII
/// and bytes >= 0x80), the same in every run.
inline auto random_keys(std::size_t count, std::uint32_t seed) -> std::vector<std::string> {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> short_length(1, 40);
  std::uniform_int_distribution<int> any_length(1, 250);
  std::uniform_int_distribution<int> byte(0x21, 0x7e + 0x80);
  std::set<std::string> seen;
  std::vector<std::string> keys;
  while (keys.size() < count) {
    const int length = keys.size() % 10 == 0 ? any_length(random) : short_length(random);
    std::string key;
    for (int i = 0; i < length; ++i) {
      int value = byte(random);
      if (value > 0x7e) {
        value += 1;  // 0x7f, DEL, is a control byte: skip it, into 0x80..0xff
      }
      key.push_back(static_cast<char>(static_cast<unsigned char>(value)));
    }
    if (memshard::is_valid_key(key) && seen.insert(key).second) {
      keys.push_back(std::move(key));
    }
  }
  return keys;
}

inline auto join_lines(const std::vector<std::string>& lines, std::string_view end = "\n")
    -> std::string {
  std::string text;
  for (const std::string& line : lines) {
    text.append(line).append(end);
  }
  return text;
}

inline auto server(std::string host, std::uint16_t port, double weight = 1, std::string name = {})
    -> memshard::Server {
  return memshard::Server{std::move(host), port, weight, std::move(name)};
}

/// expected_lines: the locate output for `keys` under `locator` over `servers`,
/// computed with the library alone.
inline auto expected_lines(const memshard::AnyLocator& locator,
                           const std::vector<memshard::Server>& servers,
                           const std::vector<std::string>& keys) -> std::string {
  std::string out;
  for (const std::string& key : keys) {
    const std::size_t index = locator.locate(key);
    out.append(key)
        .append("\t")
        .append(std::to_string(index))
        .append("\t")
        .append(servers[index].endpoint())
        .append("\n");
  }
  return out;
}

/// key_error_line: the tool's report of invalid key `key` on line `line`.
inline auto key_error_line(std::size_t line, std::string_view key) -> std::string {
  const auto problem = memshard::check_key(key);
  if (!problem) {
    ADD_FAILURE() << "a valid key was given as invalid";
    return {};
  }
  return std::string(kPrefix) + "line " + std::to_string(line) + ": " + problem->message() + "\n";
}

/// side: SideArgs of `profile` over `specs`.
inline auto side(std::string profile, std::vector<std::string> specs) -> SideArgs {
  SideArgs args;
  args.profile = std::move(profile);
  args.server_specs = std::move(specs);
  return args;
}

}  // namespace memshard::locate_tool::testing

#endif  // MEMSHARD_TESTS_TOOLS_LOCATE_SUPPORT_HPP_
