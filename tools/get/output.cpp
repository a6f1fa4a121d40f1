// SPDX-License-Identifier: MIT
// get/output.cpp: memshard-get's JSON lines and the JSON form of a Value.

#include "get/output.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <memshard/codecs/detail/utf8.hpp>
#include <system_error>

namespace memshard::get_tool {
namespace {

/// append_key: a map key: a UTF-8 string as it is, an integer as its decimal
/// text, anything else as its compact JSON text, all as JSON strings.
void append_key(std::string& out, const memshard::Value& key) {
  if (key.is_string() && memshard::detail::is_utf8(key.as_string())) {
    append_json_string(out, key.as_string());
    return;
  }
  std::string text;
  append_value(text, key);
  append_json_string(out, text);
}

/// append_serialized_fields: "format":F,"base64":B (no braces).
void append_serialized_fields(std::string& out, const memshard::SerializedObject& object) {
  out.append("\"format\":");
  append_json_string(out, object.format);
  out.append(",\"base64\":\"");
  append_base64(out, object.data);
  out.push_back('"');
}

/// append_message: `text` as a JSON string, each byte that breaks UTF-8
/// replaced by U+FFFD, so that an error is always a string.
void append_message(std::string& out, std::string_view text) {
  std::string clean;
  while (!text.empty()) {
    const std::size_t good = memshard::detail::utf8_error_at(text);
    clean.append(text.substr(0, good));
    if (good == text.size()) {
      break;
    }
    clean.append("\xEF\xBF\xBD");
    text.remove_prefix(good + 1);
  }
  append_json_string(out, clean);
}

/// line_start: {"key":K,"server":S
auto line_start(std::string_view key, std::string_view server) -> std::string {
  std::string line = "{\"key\":";
  append_text(line, key);
  line.append(",\"server\":");
  append_json_string(line, server);
  return line;
}

void append_flags(std::string& out, std::uint32_t flags) {
  out.append(",\"flags\":").append(std::to_string(flags));
}

}  // namespace

void append_base64(std::string& out, std::string_view bytes) {
  static constexpr std::string_view kDigits =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  out.reserve(out.size() + (bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t group = std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16U |
                                std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8U |
                                std::uint32_t{static_cast<unsigned char>(bytes[i + 2])};
    out.push_back(kDigits[group >> 18U]);
    out.push_back(kDigits[group >> 12U & 0x3fU]);
    out.push_back(kDigits[group >> 6U & 0x3fU]);
    out.push_back(kDigits[group & 0x3fU]);
  }
  const std::size_t left = bytes.size() - i;
  if (left == 0) {
    return;
  }
  std::uint32_t group = std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16U;
  if (left == 2) {
    group |= std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8U;
  }
  out.push_back(kDigits[group >> 18U]);
  out.push_back(kDigits[group >> 12U & 0x3fU]);
  out.push_back(left == 2 ? kDigits[group >> 6U & 0x3fU] : '=');
  out.push_back('=');
}

void append_json_string(std::string& out, std::string_view text) {
  static constexpr std::string_view kHex = "0123456789abcdef";
  out.reserve(out.size() + text.size() + 2);
  out.push_back('"');
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\f':
        out.append("\\f");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default:
        if (byte < 0x20) {
          out.append("\\u00");
          out.push_back(kHex[byte >> 4U]);
          out.push_back(kHex[byte & 0xfU]);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

void append_text(std::string& out, std::string_view text) {
  if (memshard::detail::is_utf8(text)) {
    append_json_string(out, text);
    return;
  }
  out.append("{\"base64\":\"");
  append_base64(out, text);
  out.append("\"}");
}

void append_float(std::string& out, double number) {
  if (std::isnan(number)) {
    out.append("\"nan\"");
    return;
  }
  if (std::isinf(number)) {
    out.append(number < 0 ? "\"-inf\"" : "\"inf\"");
    return;
  }
  std::array<char, 32> buffer{};  // the shortest form of a double takes at most 24
  const auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), number);
  if (error != std::errc{}) {
    out.append("\"nan\"");  // cannot happen: the buffer is large enough
    return;
  }
  const std::string_view text(buffer.data(), static_cast<std::size_t>(end - buffer.data()));
  out.append(text);
  // A JSON reader takes digits alone for an integer (and -0 for 0): a ".0"
  // keeps the number a float, and its sign.
  if (text.find_first_of(".e") == std::string_view::npos) {
    out.append(".0");
  }
}

void append_value(std::string& out, const memshard::Value& value) {
  switch (value.kind()) {
    case memshard::ValueKind::kNull:
      out.append("null");
      return;
    case memshard::ValueKind::kBool:
      out.append(value.as_bool() ? "true" : "false");
      return;
    case memshard::ValueKind::kInt:
      out.append(std::to_string(value.as_int()));
      return;
    case memshard::ValueKind::kFloat:
      append_float(out, value.as_double());
      return;
    case memshard::ValueKind::kString:
      append_text(out, value.as_string());
      return;
    case memshard::ValueKind::kBytes:
      out.append("{\"base64\":\"");
      append_base64(out, value.as_string());
      out.append("\"}");
      return;
    case memshard::ValueKind::kList: {
      out.push_back('[');
      bool first = true;
      for (const memshard::Value& item : value.as_list()) {
        if (!first) {
          out.push_back(',');
        }
        first = false;
        append_value(out, item);
      }
      out.push_back(']');
      return;
    }
    case memshard::ValueKind::kMap: {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, item] : value.as_map()) {
        if (!first) {
          out.push_back(',');
        }
        first = false;
        append_key(out, key);
        out.push_back(':');
        append_value(out, item);
      }
      out.push_back('}');
      return;
    }
    case memshard::ValueKind::kSerialized:
      out.push_back('{');
      append_serialized_fields(out, value.as_serialized());
      out.push_back('}');
      return;
  }
}

auto value_line(std::string_view key, std::string_view server, std::uint32_t flags,
                const memshard::Value& value) -> std::string {
  std::string line = line_start(key, server);
  append_flags(line, flags);
  line.append(",\"type\":\"").append(memshard::to_string(value.kind())).append("\",");
  if (value.is_serialized()) {
    append_serialized_fields(line, value.as_serialized());
  } else {
    line.append("\"value\":");
    append_value(line, value);
  }
  line.push_back('}');
  return line;
}

auto miss_line(std::string_view key, std::string_view server) -> std::string {
  return line_start(key, server) + ",\"type\":\"miss\"}";
}

auto error_line(std::string_view key, std::string_view server, std::optional<std::uint32_t> flags,
                std::string_view message) -> std::string {
  std::string line = line_start(key, server);
  if (flags) {
    append_flags(line, *flags);
  }
  line.append(",\"error\":");
  append_message(line, message);
  line.push_back('}');
  return line;
}

auto codec_error_message(const memshard::CodecError& error) -> std::string {
  std::string message = "codec_error: ";
  message.append(memshard::to_string(error.code())).append(": ").append(error.message());
  return message;
}

}  // namespace memshard::get_tool
