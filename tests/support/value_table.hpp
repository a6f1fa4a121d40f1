// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_VALUE_TABLE_HPP_
#define MEMSHARD_TESTS_SUPPORT_VALUE_TABLE_HPP_

// support/value_table.hpp: the reader of the value tables in
// tests/golden/values/ (format: "Value tables" in tests/golden/README.md):
// each case's codec, settings and items (flags and bytes, base64-decoded), and
// the expected Value of each entry of values.txt.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memshard/codecs/value.hpp"

namespace memshard::testing {

/// ValueItem: what the client stored for one value, or why it refused.
struct ValueItem {
  std::string name;  ///< the value's name in values.txt
  std::uint32_t flags = 0;
  std::string bytes;
  bool nondeterministic = false;
  std::optional<std::string> refused;  ///< set: the client refused it, for this reason
  std::vector<std::string> comments;   ///< the `#` lines after the item (roundtrip notes)
};

/// ValueCase: one case of a value table.
struct ValueCase {
  std::string id;
  std::string client;
  std::string codec;
  std::map<std::string, std::string> settings;
  std::vector<ValueItem> items;

  /// item: the item for value `name`, or nullptr.
  [[nodiscard]] auto item(std::string_view name) const -> const ValueItem* {
    for (const ValueItem& entry : items) {
      if (entry.name == name) {
        return &entry;
      }
    }
    return nullptr;
  }
  /// setting: the setting `name`, or `fallback`.
  [[nodiscard]] auto setting(const std::string& name, std::string fallback = {}) const
      -> std::string {
    const auto found = settings.find(name);
    return found == settings.end() ? fallback : found->second;
  }
};

/// base64_decode: the bytes of standard base64 text (padding required), or a
/// runtime_error.
inline auto base64_decode(std::string_view text) -> std::string {
  auto digit = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') {
      return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
      return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
      return c - '0' + 52;
    }
    if (c == '+') {
      return 62;
    }
    if (c == '/') {
      return 63;
    }
    return -1;
  };
  if (text.size() % 4 != 0) {
    throw std::runtime_error("base64 text of a length that is not a multiple of 4");
  }
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    std::uint32_t group = 0;
    int pad = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const char c = text[i + j];
      int v = 0;
      if (c == '=' && i + 4 == text.size() && j >= 2) {
        ++pad;
      } else if (pad != 0 || (v = digit(c)) < 0) {
        throw std::runtime_error("bad base64 text");
      }
      group = group << 6U | static_cast<std::uint32_t>(v);
    }
    out.push_back(static_cast<char>(group >> 16U));
    if (pad < 2) {
      out.push_back(static_cast<char>(group >> 8U & 0xffU));
    }
    if (pad < 1) {
      out.push_back(static_cast<char>(group & 0xffU));
    }
  }
  return out;
}

/// read_value_cases: the cases of `file` (a *.values table).
inline auto read_value_cases(const std::filesystem::path& file) -> std::vector<ValueCase> {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read " + file.string());
  }
  std::vector<ValueCase> cases;
  ValueCase* open = nullptr;
  int number = 0;
  auto fail = [&](const std::string& why) {
    throw std::runtime_error(file.string() + ":" + std::to_string(number) + ": " + why);
  };
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty()) {
      continue;
    }
    if (line[0] == '#') {
      if (open != nullptr && !open->items.empty()) {
        open->items.back().comments.push_back(line);
      }
      continue;
    }
    const std::size_t space = line.find(' ');
    const std::string word = line.substr(0, space);
    const std::string rest = space == std::string::npos ? std::string() : line.substr(space + 1);
    if (word == "case") {
      if (open != nullptr) {
        fail("case inside a case");
      }
      open = &cases.emplace_back();
      open->id = rest;
    } else if (open == nullptr) {
      fail("'" + word + "' outside a case");
    } else if (word == "client") {
      open->client = rest;
    } else if (word == "codec") {
      open->codec = rest;
    } else if (word == "setting") {
      const std::size_t equals = rest.find('=');
      if (equals == std::string::npos) {
        fail("setting without '='");
      }
      open->settings[rest.substr(0, equals)] = rest.substr(equals + 1);
    } else if (word == "item") {
      std::istringstream fields(rest);
      ValueItem item;
      std::string flags;
      std::string data;
      std::string mark;
      if (!(fields >> item.name >> flags >> data)) {
        fail("item needs <value> <flags> <b64>");
      }
      item.flags = static_cast<std::uint32_t>(std::stoul(flags));
      item.bytes = data == "-" ? std::string() : base64_decode(data);
      if (fields >> mark) {
        if (mark != "nondeterministic") {
          fail("unknown item mark '" + mark + "'");
        }
        item.nondeterministic = true;
      }
      open->items.push_back(std::move(item));
    } else if (word == "refused") {
      ValueItem item;
      const std::size_t gap = rest.find(' ');
      item.name = rest.substr(0, gap);
      item.refused = gap == std::string::npos ? std::string() : rest.substr(gap + 1);
      open->items.push_back(std::move(item));
    } else if (word == "end") {
      open = nullptr;
    } else {
      fail("unknown line '" + word + "'");
    }
  }
  if (open != nullptr) {
    throw std::runtime_error(file.string() + ": the last case has no end");
  }
  return cases;
}

/// value_set_line: one line of values.txt, as the expected Value of that name.
struct NamedValue {
  std::string name;
  Value value;
};

/// read_value_set: the values of `dir`/values.txt, as Values (strings as
/// strings, the map as a map with string keys "a" and "b").
inline auto read_value_set(const std::filesystem::path& dir) -> std::vector<NamedValue> {
  std::ifstream in(dir / "values.txt", std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read " + (dir / "values.txt").string());
  }
  std::vector<NamedValue> values;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::istringstream fields(line);
    std::string name;
    std::string kind;
    std::string check;
    fields >> name >> kind >> check;
    std::string spec;
    std::getline(fields >> std::ws, spec);
    if (kind == "str") {
      values.push_back({name, Value(spec)});
    } else if (kind == "lines") {
      std::istringstream parts(spec);
      std::size_t length = 0;
      std::string lead;
      parts >> length >> lead;
      std::string text = lead;
      for (int n = 1; text.size() < length; ++n) {
        char number[16];
        std::snprintf(number, sizeof number, "%05d", n);
        text += std::string("line ") + number + ": the quick brown fox jumps over the lazy dog\n";
      }
      text.resize(length);
      values.push_back({name, Value(text)});
    } else if (kind == "int") {
      values.push_back({name, Value(static_cast<std::int64_t>(std::stoll(spec)))});
    } else if (kind == "float") {
      const std::size_t slash = spec.find('/');
      const double number = slash == std::string::npos ? std::stod(spec)
                                                       : std::stod(spec.substr(0, slash)) /
                                                             std::stod(spec.substr(slash + 1));
      values.push_back({name, Value(number)});
    } else if (kind == "bool") {
      values.push_back({name, Value(spec == "true")});
    } else if (kind == "map") {
      values.push_back({name, Value::map({{"a", 1}, {"b", Value::list({2, 3})}})});
    } else {
      throw std::runtime_error("values.txt: unknown kind '" + kind + "'");
    }
  }
  return values;
}

/// read_value_item: the item of value `name` in case `case_id` of `file` (a
/// *.values table), or nullopt.
inline auto read_value_item(const std::filesystem::path& file, std::string_view case_id,
                            std::string_view name) -> std::optional<ValueItem> {
  for (const ValueCase& value_case : read_value_cases(file)) {
    if (value_case.id == case_id) {
      if (const ValueItem* item = value_case.item(name)) {
        return *item;
      }
    }
  }
  return std::nullopt;
}

/// read_named_value: the value `name` of `dir`/values.txt, or nullopt.
inline auto read_named_value(const std::filesystem::path& dir, std::string_view name)
    -> std::optional<Value> {
  for (NamedValue& named : read_value_set(dir)) {
    if (named.name == name) {
      return std::move(named.value);
    }
  }
  return std::nullopt;
}

/// read_string_values: the strings of `dir`/values.txt by name.
inline auto read_string_values(const std::filesystem::path& dir)
    -> std::map<std::string, std::string> {
  std::map<std::string, std::string> strings;
  for (const NamedValue& named : read_value_set(dir)) {
    if (named.value.is_string()) {
      strings[named.name] = named.value.as_string();
    }
  }
  return strings;
}

#ifdef MEMSHARD_GOLDEN_DIR
/// golden_values_dir: tests/golden/values/, where the value tables are.
inline auto golden_values_dir() -> std::filesystem::path {
  return std::filesystem::path(MEMSHARD_GOLDEN_DIR) / "values";
}
#endif

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_VALUE_TABLE_HPP_
