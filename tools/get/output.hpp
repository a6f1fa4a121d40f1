// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TOOLS_GET_OUTPUT_HPP_
#define MEMSHARD_TOOLS_GET_OUTPUT_HPP_

// get/output.hpp: memshard-get's output: one JSON object per key (RFC 8259,
// compact, no spaces), for a decoded value, a miss, or a failure, and the JSON
// form of a decoded memshard::Value:
//
//   null, bool, int     as JSON has them
//   float               the shortest text that reads back as the same double
//                       (std::to_chars), with ".0" when that text has neither
//                       a point nor an exponent (-0.0, 1.0), so that a JSON
//                       reader reads a float back, sign included; "inf",
//                       "-inf" and "nan" as strings
//   string              a JSON string when it is valid UTF-8 (passed through,
//                       with ", \ and control characters escaped), otherwise
//                       {"base64":"..."}
//   bytes               {"base64":"..."}: standard base64 with padding
//   list                an array
//   map                 an object in entry order; a key that is a UTF-8 string
//                       as it is, an integer key as its decimal text, any other
//                       key as its own compact JSON text, in a string
//   serialized          {"format":"...","base64":"..."} (inside a list or map;
//                       at the top of a line, the two fields of the line)
//
// Each *_line function gives one line without its newline.

#include <cstdint>
#include <memshard/codecs/codec_result.hpp>
#include <memshard/codecs/value.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace memshard::get_tool {

/// append_base64: appends `bytes` in standard base64 (RFC 4648 alphabet, "="
/// padding) to `out`.
void append_base64(std::string& out, std::string_view bytes);

/// append_json_string: appends `text` as a JSON string: quoted, with '"' and
/// '\' escaped, the control characters below 0x20 as \b, \f, \n, \r, \t or
/// \u00xx (lowercase hex), and every other byte as it is (so `text` should be
/// UTF-8).
void append_json_string(std::string& out, std::string_view text);

/// append_text: appends `text` as a JSON string when it is valid UTF-8 (RFC
/// 3629), or as {"base64":"..."} when it is not.
void append_text(std::string& out, std::string_view text);

/// append_float: appends `number` as the shortest decimal that reads back as
/// the same double (std::to_chars: 3.25, 0.1, 1e+21), with ".0" added when it
/// would read as an integer (-0.0, 1.0), or as the string "inf", "-inf" or
/// "nan" when it is not finite.
void append_float(std::string& out, double number);

/// append_value: appends `value` as compact JSON (see the file comment). The
/// nesting is that of the value, which its codec bounded (DecodeLimits).
void append_value(std::string& out, const memshard::Value& value);

/// value_line: the line of a key whose item (with `flags`) decoded to `value`:
/// {"key":K,"server":S,"flags":N,"type":T,"value":V}, or for a serialized
/// value {"key":K,"server":S,"flags":N,"type":"serialized","format":F,"base64":B}.
/// K is append_text of the key, S a JSON string.
[[nodiscard]] auto value_line(std::string_view key, std::string_view server, std::uint32_t flags,
                              const memshard::Value& value) -> std::string;

/// miss_line: the line of a key the server does not hold:
/// {"key":K,"server":S,"type":"miss"}.
[[nodiscard]] auto miss_line(std::string_view key, std::string_view server) -> std::string;

/// error_line: the line of a key that failed: {"key":K,"server":S,"error":M},
/// with "flags":N after the server when an item (with `flags`) was read. M is
/// always a JSON string: a byte of `message` that breaks UTF-8 becomes U+FFFD.
[[nodiscard]] auto error_line(std::string_view key, std::string_view server,
                              std::optional<std::uint32_t> flags, std::string_view message)
    -> std::string;

/// codec_error_message: the error of a line whose item the codec could not
/// decode: "codec_error: <code>: <message>" ("codec_error: unknown_flags:
/// php-memcached: ...").
[[nodiscard]] auto codec_error_message(const memshard::CodecError& error) -> std::string;

}  // namespace memshard::get_tool

#endif  // MEMSHARD_TOOLS_GET_OUTPUT_HPP_
