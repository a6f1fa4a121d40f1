// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_GOLDEN_TABLE_HPP_
#define MEMSHARD_TESTS_SUPPORT_GOLDEN_TABLE_HPP_

// support/golden_table.hpp: the reader of the golden tables in tests/golden/
// (format: tests/golden/README.md): keys.txt, the cases of a table, and a
// case's profile options. Prefix tables (tests/golden/prefix/) add a
// `prefix` and a `prefix_hashing` line to a case, and `x` for a key the real
// client did not send as prefix + key (kNotSent).

#include <charconv>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/placement/key_prefix.hpp"
#include "memshard/placement/profiles.hpp"
#include "memshard/placement/server.hpp"

namespace memshard::testing {

/// kNotSent: a `place` entry `x`: no server holds the key as prefix + key.
inline constexpr std::size_t kNotSent = std::numeric_limits<std::size_t>::max();

/// GoldenCase: one case of a golden table.
struct GoldenCase {
  std::string id;
  std::string client;
  std::string profile;
  std::map<std::string, std::string> options;
  std::vector<Server> servers;
  std::vector<std::size_t> placement;  ///< one server index (or kNotSent) per key
  std::string prefix;                  ///< prefix tables: the bytes put before each key
  std::optional<PrefixHashing> prefix_hashing;
  int line = 0;
};

/// read_keys: the keys of `dir`/keys.txt, in order.
inline auto read_keys(const std::filesystem::path& dir) -> std::vector<std::string> {
  std::ifstream in(dir / "keys.txt", std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read " + (dir / "keys.txt").string());
  }
  std::vector<std::string> keys;
  for (std::string line; std::getline(in, line);) {
    keys.push_back(line);
  }
  return keys;
}

/// parse_index: a decimal number, or a runtime_error naming `where`.
inline auto parse_index(std::string_view text, const std::string& where) -> std::size_t {
  std::size_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size()) {
    throw std::runtime_error(where + ": not a number: " + std::string(text));
  }
  return value;
}

/// read_golden: the cases of the table at `path`; a runtime_error for any
/// line the format does not allow.
inline auto read_golden(const std::filesystem::path& path) -> std::vector<GoldenCase> {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read " + path.string());
  }
  std::vector<GoldenCase> cases;
  GoldenCase current;
  bool open = false;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::string where = path.filename().string() + ":" + std::to_string(number);
    if (line.empty() || line[0] == '#') {
      continue;
    }
    const std::size_t space = line.find(' ');
    const std::string word = line.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
    if (word == "case") {
      if (open) {
        throw std::runtime_error(where + ": case without end");
      }
      current = GoldenCase{};
      current.id = rest;
      current.line = number;
      open = true;
    } else if (!open) {
      throw std::runtime_error(where + ": '" + word + "' outside a case");
    } else if (word == "client") {
      current.client = rest;
    } else if (word == "profile") {
      current.profile = rest;
    } else if (word == "option") {
      const std::size_t equals = rest.find('=');
      if (equals == std::string::npos) {
        throw std::runtime_error(where + ": option without '='");
      }
      current.options[rest.substr(0, equals)] = rest.substr(equals + 1);
    } else if (word == "server") {
      current.servers.push_back(parse_server(rest));
    } else if (word == "prefix") {
      current.prefix = rest;
    } else if (word == "prefix_hashing") {
      if (rest != "bare" && rest != "prefixed") {
        throw std::runtime_error(where + ": prefix_hashing is bare or prefixed, not " + rest);
      }
      current.prefix_hashing =
          rest == "bare" ? PrefixHashing::kBareKey : PrefixHashing::kPrefixedKey;
    } else if (word == "place") {
      std::istringstream fields(rest);
      for (std::string field; fields >> field;) {
        current.placement.push_back(field == "x" ? kNotSent : parse_index(field, where));
      }
    } else if (word == "end") {
      cases.push_back(std::move(current));
      open = false;
    } else {
      throw std::runtime_error(where + ": unknown line '" + word + "'");
    }
  }
  if (open) {
    throw std::runtime_error(path.filename().string() + ": last case has no end");
  }
  return cases;
}

/// profile_options: the profile options of a case; "namespace" is not one
/// (it is how the client builds the key it hashes).
inline auto profile_options(const GoldenCase& c) -> ProfileOptions {
  ProfileOptions options;
  for (const auto& [name, value] : c.options) {
    if (name == "hash") {
      options.hash = value;
    } else if (name == "points") {
      options.points = parse_index(value, c.id);
    } else if (name == "weighted") {
      options.weighted = value == "true";
    } else if (name == "hash_tag") {
      options.hash_tag = value;
    } else if (name != "namespace") {
      throw std::runtime_error(c.id + ": unknown option " + name);
    }
  }
  return options;
}

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_GOLDEN_TABLE_HPP_
