// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_DETAIL_PICKLE_READER_HPP_
#define MEMSHARD_CODECS_DETAIL_PICKLE_READER_HPP_

// codecs/detail/pickle_reader.hpp: PickleReader, pickle_loads' stack
// machine: the opcodes of protocols 0 to 5 run on a PickleMachine, and the
// Value tree built after STOP. The format is told in codecs/pickle.hpp.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/pickle_machine.hpp"
#include "memshard/codecs/detail/pickle_python.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// PickleReader: pickle_loads' stack machine. It runs the opcodes on the
/// memory of its PickleMachine; the Value tree is built from that memory
/// after STOP.
class PickleReader : private PickleMachine {
 public:
  PickleReader(std::string_view input, const DecodeLimits& limits) : PickleMachine(input, limits) {}

  [[nodiscard]] auto run() -> CodecResult<Value> {
    if (in_.empty()) {
      return CodecError(CodecErrc::kCorrupt, "pickle: the input is empty");
    }
    Ref root;
    for (;;) {
      if (pos_ >= in_.size()) {
        return CodecError(CodecErrc::kCorrupt, "pickle: at byte " + std::to_string(pos_) +
                                                   ": the input ends without STOP ('.')");
      }
      op_at_ = pos_;
      const auto op = static_cast<unsigned char>(in_[pos_++]);
      if (op == '.') {
        if (!opaque_) {
          if (stack_.size() <= fence()) {
            return underflow("STOP");
          }
          root = stack_.back();
        }
        break;
      }
      if (!(opaque_ ? skip(op) : step(op))) {
        return std::move(*error_);
      }
    }
    if (pos_ != in_.size()) {
      return CodecError(CodecErrc::kCorrupt, "pickle: at byte " + std::to_string(pos_) + ": " +
                                                 std::to_string(in_.size() - pos_) +
                                                 " bytes after STOP ('.')");
    }
    if (opaque_) {
      return Value::serialized(std::string(kPickleName), std::string(in_));
    }
    if (!tree_.take_values(1)) {
      return CodecError(CodecErrc::kTooLarge, "pickle: " + tree_.exceeded("a value"));
    }
    if (root.tag == Tag::kText || root.tag == Tag::kBytes) {
      std::string& text = texts_[static_cast<std::size_t>(root.bits)];
      if (text.size() > limits_.max_size) {
        return too_large_text();
      }
      if (!tree_.take(text.size())) {
        return CodecError(
            CodecErrc::kTooLarge,
            "pickle: " + tree_.exceeded("a string of " + std::to_string(text.size()) + " bytes"));
      }
      return root.tag == Tag::kText ? Value(std::move(text)) : Value::bytes(std::move(text));
    }
    Value out;
    switch (build(root, 0, out)) {
      case Built::kOk:
        return out;
      case Built::kOpaque:
        return Value::serialized(std::string(kPickleName), std::string(in_));
      case Built::kError:
        break;
    }
    return std::move(*error_);
  }

 private:
  enum class Built : std::uint8_t { kOk, kOpaque, kError };

  // --- text opcodes ---------------------------------------------------------

  auto load_int(std::string_view text) -> bool {
    std::int64_t value = 0;
    const std::string_view digits = before_nul(text);
    // strtol stops at a NUL; with no digits before it, its 0 stands.
    if (digits.empty() || pickle_c_long(digits, value)) {
      if (text.size() == 2 && (value == 0 || value == 1)) {
        return push_bool(value == 1);  // I01 / I00: protocol 0's booleans
      }
      return push_int(value);
    }
    switch (pickle_py_int(digits, 0, value)) {
      case PickleNumber::kOk:
        return push_int(value);
      case PickleNumber::kOutOfRange:
        return fail(CodecErrc::kTooLarge, "integer out of range: " + pickle_quote(digits));
      case PickleNumber::kInvalid:
        break;
    }
    return corrupt("INT argument " + pickle_quote(digits) + " is not an integer");
  }
  auto load_long(std::string_view text) -> bool {
    if (!text.empty() && text.back() == 'L') {
      text.remove_suffix(1);
    }
    std::int64_t value = 0;
    const std::string_view digits = before_nul(text);
    switch (pickle_py_int(digits, 0, value)) {
      case PickleNumber::kOk:
        return push_int(value);
      case PickleNumber::kOutOfRange:
        return fail(CodecErrc::kTooLarge, "integer out of range: " + pickle_quote(digits));
      case PickleNumber::kInvalid:
        break;
    }
    return corrupt("LONG argument " + pickle_quote(digits) + " is not an integer");
  }
  auto load_float(std::string_view text) -> bool {
    double value = 0;
    const std::string_view digits = before_nul(text);
    switch (pickle_py_float(digits, value)) {
      case PickleNumber::kOk:
        return push_float(value);
      case PickleNumber::kOutOfRange:
        return fail(CodecErrc::kTooLarge, "float out of range: " + pickle_quote(digits));
      case PickleNumber::kInvalid:
        break;
    }
    return corrupt("FLOAT argument " + pickle_quote(digits) + " is not a float");
  }
  auto memo_index(std::string_view text, std::string_view opcode, std::uint64_t& out) -> bool {
    std::int64_t value = 0;
    if (pickle_py_int(before_nul(text), 10, value) != PickleNumber::kOk || value < 0) {
      return corrupt(std::string(opcode) + " argument " + pickle_quote(text) +
                     " is not a memo index");
    }
    out = static_cast<std::uint64_t>(value);
    return true;
  }
  /// load_string: STRING, a quoted Python 2 str with its escapes.
  auto load_string(std::string_view text) -> bool {
    if (text.size() < 2 || text.front() != text.back() ||
        (text.front() != '\'' && text.front() != '"')) {
      return corrupt("STRING argument is not quoted");
    }
    text = text.substr(1, text.size() - 2);
    if (!take_work(text.size())) {  // escapes only shorten it
      return false;
    }
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '\\') {
        out.push_back(text[i]);
        continue;
      }
      if (++i == text.size()) {
        return corrupt("STRING ends with a lone backslash");
      }
      const char c = text[i];
      switch (c) {
        case '\\':
        case '\'':
        case '"':
          out.push_back(c);
          break;
        case 'a':
          out.push_back('\a');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'v':
          out.push_back('\v');
          break;
        case 'x': {
          if (i + 2 >= text.size() || pickle_digit(text[i + 1]) >= 16 ||
              pickle_digit(text[i + 2]) >= 16) {
            return corrupt("STRING has a \\x escape without two hex digits");
          }
          out.push_back(
              static_cast<char>(pickle_digit(text[i + 1]) * 16 + pickle_digit(text[i + 2])));
          i += 2;
          break;
        }
        default:
          if (c >= '0' && c <= '7') {
            unsigned value = static_cast<unsigned>(c - '0');
            for (int more = 0;
                 more < 2 && i + 1 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '7';
                 ++more) {
              value = value * 8 + static_cast<unsigned>(text[++i] - '0');
            }
            out.push_back(static_cast<char>(value & 0xffU));
          } else {
            out.push_back('\\');
            out.push_back(c);
          }
      }
    }
    return push_text(Tag::kBytes, std::move(out));
  }
  /// load_unicode: UNICODE, raw-unicode-escape text: bytes are Latin-1
  /// characters, \uXXXX and \UXXXXXXXX escapes (after an odd number of
  /// backslashes) code points.
  auto load_unicode(std::string_view text) -> bool {
    if (!take_work(text.size())) {
      return false;
    }
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c != '\\' || i + 1 == text.size() || (text[i + 1] != 'u' && text[i + 1] != 'U')) {
        pickle_append_utf8(out, c);
        if (c == '\\' && i + 1 < text.size()) {
          pickle_append_utf8(out, static_cast<unsigned char>(text[++i]));
        }
        continue;
      }
      const std::size_t count = text[i + 1] == 'u' ? 4 : 8;
      char32_t code_point = 0;
      for (std::size_t k = 0; k < count; ++k) {
        const std::size_t at = i + 2 + k;
        if (at >= text.size() || pickle_digit(text[at]) >= 16) {
          return corrupt("UNICODE has a truncated \\u or \\U escape");
        }
        code_point = code_point << 4U | static_cast<char32_t>(pickle_digit(text[at]));
      }
      if (code_point > 0x10ffff) {
        return corrupt("UNICODE escapes a code point above U+10FFFF");
      }
      if (code_point >= 0xd800 && code_point <= 0xdfff) {
        opaque_ = true;  // a lone surrogate: no UTF-8 text holds it
        return true;
      }
      pickle_append_utf8(out, code_point);
      i += 1 + count;
    }
    if (out.size() > limits_.max_size) {
      return fail(CodecErrc::kTooLarge,
                  "UNICODE decodes to more than " + std::to_string(limits_.max_size) + " bytes");
    }
    // Latin-1 above U+007F takes two bytes of UTF-8: at most twice the text.
    if (out.size() > text.size() && !take_work(out.size() - text.size())) {
      return false;
    }
    return push_text(Tag::kText, std::move(out));
  }
  /// load_utf8: the payload of BINUNICODE and its kin (UTF-8, surrogates
  /// allowed as Python writes them).
  auto load_utf8(std::string_view text, std::string_view opcode) -> bool {
    bool surrogate = false;
    for (std::size_t i = 0; i < text.size();) {
      char32_t code_point = 0;
      const std::size_t length = pickle_utf8_next(text, i, code_point, true);
      if (length == 0) {
        return corrupt(std::string(opcode) + " holds invalid UTF-8 at offset " + std::to_string(i) +
                       " of its text");
      }
      surrogate = surrogate || (code_point >= 0xd800 && code_point <= 0xdfff);
      i += length;
    }
    if (surrogate) {
      opaque_ = true;
      return true;
    }
    return copy_text(Tag::kText, text);
  }

  // --- globals and calls ------------------------------------------------------

  auto global(PickleCallable callable) -> bool {
    if (callable == PickleCallable::kNone) {
      opaque_ = true;  // would import a module: never
      return true;
    }
    Container node;
    node.kind = Kind::kCallable;
    node.callable = callable;
    node.hashable = true;
    return push_container(std::move(node));
  }
  auto stack_global() -> bool {
    if (stack_.size() < fence() + 2) {
      return fail_underflow("STACK_GLOBAL");
    }
    const std::string* name = text_of(stack_.back());
    const std::string* module = text_of(stack_[stack_.size() - 2]);
    if (name == nullptr || module == nullptr) {
      return corrupt("STACK_GLOBAL needs two str");
    }
    const PickleCallable callable = pickle_callable(*module, *name, protocol_);
    stack_.resize(stack_.size() - 2);
    return global(callable);
  }
  /// reduce: REDUCE of one of the constructors PickleCallable names, on
  /// arguments it knows; anything else leaves the input opaque.
  auto reduce() -> bool {
    if (stack_.size() < fence() + 2) {
      return fail_underflow("REDUCE");
    }
    const Ref args_ref = stack_.back();
    const Container* callee = container_of(stack_[stack_.size() - 2]);
    if (callee == nullptr || callee->kind != Kind::kCallable) {
      opaque_ = true;  // a call: never made
      return true;
    }
    const PickleCallable callable = callee->callable;
    if (!is_kind(args_ref, Kind::kTuple)) {
      return corrupt("REDUCE arguments are not a tuple");
    }
    const std::vector<Ref> args = container_of(args_ref)->items;
    stack_.resize(stack_.size() - 2);
    switch (callable) {
      case PickleCallable::kCodecsEncode: {
        const std::string* text = args.size() == 2 ? text_of(args[0]) : nullptr;
        const std::string* encoding = args.size() == 2 ? text_of(args[1]) : nullptr;
        if (text == nullptr || encoding == nullptr || *encoding != "latin1") {
          break;
        }
        if (!take_work(text->size())) {  // one byte for each character
          return false;
        }
        std::string bytes;
        for (std::size_t i = 0; i < text->size();) {
          char32_t code_point = 0;
          i += pickle_utf8_next(*text, i, code_point, false);
          if (code_point > 0xff) {
            return corrupt("_codecs.encode(..., 'latin1') of a character above U+00FF");
          }
          bytes.push_back(static_cast<char>(code_point));
        }
        return push_text(Tag::kBytes, std::move(bytes));
      }
      case PickleCallable::kBytes:
      case PickleCallable::kBytearray:
        if (args.empty()) {
          return push_text(Tag::kBytes, std::string());
        }
        if (args.size() == 1 && args[0].tag == Tag::kBytes) {
          return push(args[0]);  // bytes are immutable: the same object will do
        }
        break;
      case PickleCallable::kSet:
      case PickleCallable::kFrozenSet: {
        const Kind kind = callable == PickleCallable::kSet ? Kind::kSet : Kind::kFrozenSet;
        const std::size_t from = stack_.size();
        if (args.size() == 1) {
          const Container* items = container_of(args[0]);
          if (items == nullptr || items->kind == Kind::kDict || items->kind == Kind::kCallable) {
            break;
          }
          if (!take_work(items->items.size() * sizeof(Ref))) {
            return false;
          }
          const std::vector<Ref> copy = items->items;
          stack_.insert(stack_.end(), copy.begin(), copy.end());
          if (!check_hashable(from, 1)) {
            return false;
          }
        } else if (!args.empty()) {
          break;
        }
        return container(kind, from);
      }
      case PickleCallable::kNone:
        break;
    }
    opaque_ = true;
    return true;
  }

  // --- one opcode ---------------------------------------------------------------

  /// step: runs the opcode `op`, whose arguments start at pos_.
  auto step(unsigned char op) -> bool {
    std::string_view arg;
    std::size_t mark = 0;
    switch (op) {
      case '(':  // MARK
        if (!take_work(sizeof(std::size_t))) {
          return false;
        }
        marks_.push_back(stack_.size());
        return true;
      case '0':  // POP: the top object, or the MARK right on top
        if (!marks_.empty() && marks_.back() == stack_.size()) {
          marks_.pop_back();
        } else if (stack_.size() <= fence()) {
          return fail_underflow("POP");
        } else {
          stack_.pop_back();
        }
        return true;
      case '1':  // POP_MARK
        if (!pop_mark("POP_MARK", mark)) {
          return false;
        }
        stack_.resize(mark);
        return true;
      case '2':  // DUP
        if (stack_.size() <= fence()) {
          return fail_underflow("DUP");
        }
        return push(stack_.back());
      case 'N':
        return push(Ref{Tag::kNone, 0});
      case 0x88:  // NEWTRUE
        return push_bool(true);
      case 0x89:  // NEWFALSE
        return push_bool(false);
      case 'I':
        return line("INT", arg) && (arg.empty() ? corrupt("INT without digits") : load_int(arg));
      case 'L':
        return line("LONG", arg) && (arg.empty() ? corrupt("LONG without digits") : load_long(arg));
      case 'F':
        return line("FLOAT", arg) &&
               (arg.empty() ? corrupt("FLOAT without digits") : load_float(arg));
      case 'J': {  // BININT: 4 bytes, signed
        if (!fixed(4, "BININT", arg)) {
          return false;
        }
        const auto bits = static_cast<std::uint32_t>(little_endian(arg));
        return push_int(static_cast<std::int32_t>(bits));
      }
      case 'K':  // BININT1
        return fixed(1, "BININT1", arg) && push_int(static_cast<std::int64_t>(little_endian(arg)));
      case 'M':  // BININT2
        return fixed(2, "BININT2", arg) && push_int(static_cast<std::int64_t>(little_endian(arg)));
      case 0x8a:    // LONG1
      case 0x8b: {  // LONG4
        const std::size_t width = op == 0x8a ? 1 : 4;
        std::string_view size_bytes;
        if (!fixed(width, "LONG1/LONG4", size_bytes)) {
          return false;
        }
        const std::uint64_t size = little_endian(size_bytes);
        if (width == 4 && size >= 0x80000000U) {
          return corrupt("LONG4 has a negative byte count");
        }
        if (size > in_.size() - pos_) {
          return corrupt("LONG1/LONG4 declares " + std::to_string(size) + " bytes, " +
                         std::to_string(in_.size() - pos_) + " remain");
        }
        const std::string_view bytes = in_.substr(pos_, static_cast<std::size_t>(size));
        pos_ += static_cast<std::size_t>(size);
        return load_twos_complement(bytes);
      }
      case 'G': {  // BINFLOAT: 8 bytes big-endian
        if (!fixed(8, "BINFLOAT", arg)) {
          return false;
        }
        std::uint64_t bits = 0;
        for (const char c : arg) {
          bits = bits << 8U | static_cast<unsigned char>(c);
        }
        return push_float(std::bit_cast<double>(bits));
      }
      case 'S':
        return line("STRING", arg) && load_string(arg);
      case 'T':  // BINSTRING
        return counted(4, "BINSTRING", true, arg) && copy_text(Tag::kBytes, arg);
      case 'U':  // SHORT_BINSTRING
        return counted(1, "SHORT_BINSTRING", true, arg) && copy_text(Tag::kBytes, arg);
      case 'V':
        return line("UNICODE", arg) && load_unicode(arg);
      case 'X':
        return counted(4, "BINUNICODE", true, arg) && load_utf8(arg, "BINUNICODE");
      case 0x8c:
        return counted(1, "SHORT_BINUNICODE", true, arg) && load_utf8(arg, "SHORT_BINUNICODE");
      case 0x8d:
        return counted(8, "BINUNICODE8", true, arg) && load_utf8(arg, "BINUNICODE8");
      case 'B':
        return counted(4, "BINBYTES", true, arg) && copy_text(Tag::kBytes, arg);
      case 'C':
        return counted(1, "SHORT_BINBYTES", true, arg) && copy_text(Tag::kBytes, arg);
      case 0x8e:
        return counted(8, "BINBYTES8", true, arg) && copy_text(Tag::kBytes, arg);
      case 0x96:
        return counted(8, "BYTEARRAY8", true, arg) && copy_text(Tag::kBytes, arg);
      case ']':
        return empty_container(Kind::kList);
      case '}':
        return empty_container(Kind::kDict);
      case 0x8f:  // EMPTY_SET
        return empty_container(Kind::kSet);
      case ')':  // EMPTY_TUPLE
        return container(Kind::kTuple, stack_.size());
      case 0x85:  // TUPLE1..3
      case 0x86:
      case 0x87: {
        const std::size_t count = static_cast<std::size_t>(op - 0x84);
        if (stack_.size() < count || stack_.size() - count < fence()) {
          return fail_underflow("TUPLE1/2/3");
        }
        return container(Kind::kTuple, stack_.size() - count);
      }
      case 't':
        return pop_mark("TUPLE", mark) && container(Kind::kTuple, mark);
      case 'l':
        return pop_mark("LIST", mark) && container(Kind::kList, mark);
      case 0x91:  // FROZENSET
        return pop_mark("FROZENSET", mark) && check_hashable(mark, 1) &&
               container(Kind::kFrozenSet, mark);
      case 'd':  // DICT
        if (!pop_mark("DICT", mark)) {
          return false;
        }
        if ((stack_.size() - mark) % 2 != 0) {
          return corrupt("DICT of an odd number of objects");
        }
        return check_hashable(mark, 2) && container(Kind::kDict, mark);
      case 'a':  // APPEND
        if (stack_.size() < fence() + 2) {
          return fail_underflow("APPEND");
        }
        return extend(stack_.size() - 1, Kind::kList, "APPEND");
      case 'e':  // APPENDS
        return pop_mark("APPENDS", mark) && extend(mark, Kind::kList, "APPENDS");
      case 0x90:  // ADDITEMS
        return pop_mark("ADDITEMS", mark) && extend(mark, Kind::kSet, "ADDITEMS");
      case 's':  // SETITEM
        if (stack_.size() < fence() + 3) {
          return fail_underflow("SETITEM");
        }
        return extend(stack_.size() - 2, Kind::kDict, "SETITEM");
      case 'u':  // SETITEMS
        return pop_mark("SETITEMS", mark) && extend(mark, Kind::kDict, "SETITEMS");
      case 'p': {
        std::uint64_t index = 0;
        return line("PUT", arg) && memo_index(arg, "PUT", index) && memo_put(index, "PUT");
      }
      case 'q':
        return fixed(1, "BINPUT", arg) && memo_put(little_endian(arg), "BINPUT");
      case 'r':
        return fixed(4, "LONG_BINPUT", arg) && memo_put(little_endian(arg), "LONG_BINPUT");
      case 0x94:  // MEMOIZE
        return memo_put(memo_.size(), "MEMOIZE");
      case 'g': {
        std::uint64_t index = 0;
        return line("GET", arg) && memo_index(arg, "GET", index) && memo_get(index);
      }
      case 'h':
        return fixed(1, "BINGET", arg) && memo_get(little_endian(arg));
      case 'j':
        return fixed(4, "LONG_BINGET", arg) && memo_get(little_endian(arg));
      case 0x80:  // PROTO
        if (!fixed(1, "PROTO", arg)) {
          return false;
        }
        protocol_ = static_cast<unsigned char>(arg[0]);
        if (protocol_ > kPickleHighestProtocol) {
          return fail(CodecErrc::kUnsupported,
                      "pickle protocol " + std::to_string(protocol_) + " is newer than 5");
        }
        return true;
      case 0x95:  // FRAME: only a length, checked against the input
        return frame();
      case 'c': {  // GLOBAL
        std::string_view module;
        std::string_view name;
        if (!line("GLOBAL", module) || !line("GLOBAL", name)) {
          return false;
        }
        if (module.empty() || name.empty()) {
          return corrupt("GLOBAL with an empty module or name");
        }
        return global(pickle_callable(module, name, protocol_));
      }
      case 0x93:
        return stack_global();
      case 'R':
        return reduce();
      case 'P':   // PERSID
      case 'Q':   // BINPERSID
      case 'b':   // BUILD
      case 'i':   // INST
      case 'o':   // OBJ
      case 0x81:  // NEWOBJ
      case 0x82:  // EXT1
      case 0x83:  // EXT2
      case 0x84:  // EXT4
      case 0x92:  // NEWOBJ_EX
      case 0x97:  // NEXT_BUFFER
      case 0x98:  // READONLY_BUFFER
        opaque_ = true;
        return skip(op);
      default:
        return corrupt("unknown opcode 0x" + pickle_hex(op, 2));
    }
  }

  /// extend: APPEND(S), SETITEM(S), ADDITEMS: stack_[from..] go into the
  /// object at stack_[from - 1], which must be of kind `kind`.
  auto extend(std::size_t from, Kind kind, std::string_view opcode) -> bool {
    if (from <= fence()) {
      return fail_underflow(opcode);
    }
    if (from == stack_.size()) {
      return true;
    }
    const Ref target = stack_[from - 1];
    if (!is_kind(target, kind)) {
      return corrupt(std::string(opcode) + " onto an object that is not a " +
                     (kind == Kind::kList   ? "list"
                      : kind == Kind::kDict ? "dict"
                                            : "set"));
    }
    if (kind == Kind::kDict) {
      if ((stack_.size() - from) % 2 != 0) {
        return corrupt(std::string(opcode) + " of an odd number of objects");
      }
      if (!check_hashable(from, 2)) {
        return false;
      }
    } else if (kind == Kind::kSet && !check_hashable(from, 1)) {
      return false;
    }
    return add_items(static_cast<std::size_t>(target.bits), from);
  }

  auto load_twos_complement(std::string_view bytes) -> bool {
    if (bytes.empty()) {
      return push_int(0);
    }
    const bool negative = (static_cast<unsigned char>(bytes.back()) & 0x80U) != 0;
    const unsigned char extension = negative ? 0xffU : 0x00U;
    std::size_t size = bytes.size();
    // Bytes above the eighth must only extend the sign.
    while (size > 8 && static_cast<unsigned char>(bytes[size - 1]) == extension) {
      --size;
    }
    std::uint64_t bits = little_endian(bytes.substr(0, size > 8 ? 8 : size));
    if (size > 8 || (size == 8 && ((bits >> 63U) != 0) != negative)) {
      return fail(CodecErrc::kTooLarge,
                  "integer out of range: LONG of " + std::to_string(bytes.size()) + " bytes");
    }
    if (negative && size < 8) {
      bits |= ~std::uint64_t{0} << (8 * size);
    }
    return push_int(static_cast<std::int64_t>(bits));
  }

  auto frame() -> bool {
    std::string_view size_bytes;
    if (!fixed(8, "FRAME", size_bytes)) {
      return false;
    }
    const std::uint64_t size = little_endian(size_bytes);
    if (size > in_.size() - pos_) {
      return corrupt("FRAME of " + std::to_string(size) + " bytes, " +
                     std::to_string(in_.size() - pos_) + " remain");
    }
    return true;
  }

  /// skip: the opcode `op`'s arguments, checked for form only (the input is
  /// already known to be opaque).
  auto skip(unsigned char op) -> bool {
    std::string_view arg;
    switch (op) {
      case 'F':
      case 'I':
      case 'L':
      case 'P':
      case 'S':
      case 'V':
      case 'g':
      case 'p':
        return line("a text opcode", arg);
      case 'c':
      case 'i':
        return line("GLOBAL/INST", arg) && line("GLOBAL/INST", arg);
      case 'K':
      case 'h':
      case 'q':
      case 0x82:
        return fixed(1, "an opcode", arg);
      case 'M':
      case 0x83:
        return fixed(2, "an opcode", arg);
      case 'J':
      case 'j':
      case 'r':
      case 0x84:
        return fixed(4, "an opcode", arg);
      case 'G':
        return fixed(8, "BINFLOAT", arg);
      case 0x80:
        if (!fixed(1, "PROTO", arg)) {
          return false;
        }
        if (static_cast<unsigned char>(arg[0]) > kPickleHighestProtocol) {
          return fail(CodecErrc::kUnsupported,
                      "pickle protocol " + std::to_string(static_cast<unsigned char>(arg[0])) +
                          " is newer than 5");
        }
        return true;
      case 0x95:
        return frame();
      case 'U':
      case 'C':
      case 0x8a:
      case 0x8c:
        return counted(1, "a counted opcode", false, arg);
      case 'T':
      case 'X':
      case 'B':
        return counted(4, "a counted opcode", false, arg);
      case 0x8b: {
        std::string_view size_bytes;
        if (!fixed(4, "LONG4", size_bytes)) {
          return false;
        }
        if (little_endian(size_bytes) >= 0x80000000U) {
          return corrupt("LONG4 has a negative byte count");
        }
        pos_ -= 4;
        return counted(4, "LONG4", false, arg);
      }
      case 0x8d:
      case 0x8e:
      case 0x96:
        return counted(8, "a counted opcode", false, arg);
      case '(':
      case '0':
      case '1':
      case '2':
      case 'N':
      case 'Q':
      case 'R':
      case 'a':
      case 'b':
      case 'd':
      case '}':
      case 'e':
      case 'l':
      case ']':
      case 'o':
      case 's':
      case 't':
      case ')':
      case 'u':
      case 0x81:
      case 0x85:
      case 0x86:
      case 0x87:
      case 0x88:
      case 0x89:
      case 0x8f:
      case 0x90:
      case 0x91:
      case 0x92:
      case 0x93:
      case 0x94:
      case 0x97:
      case 0x98:
        return true;
      default:
        return corrupt("unknown opcode 0x" + pickle_hex(op, 2));
    }
  }

  // --- the Value tree -----------------------------------------------------------

  /// build: the Value of `ref`, a container's item at nesting `depth`.
  /// Shared objects are copied; a container met again on its own path is a
  /// cycle.
  auto build(Ref ref, std::size_t depth, Value& out) -> Built {
    switch (ref.tag) {
      case Tag::kNone:
        out = Value();
        return Built::kOk;
      case Tag::kTrue:
      case Tag::kFalse:
        out = Value(ref.tag == Tag::kTrue);
        return Built::kOk;
      case Tag::kInt:
        out = Value(static_cast<std::int64_t>(ref.bits));
        return Built::kOk;
      case Tag::kFloat:
        out = Value(std::bit_cast<double>(ref.bits));
        return Built::kOk;
      case Tag::kText:
      case Tag::kBytes: {
        const std::string& text = texts_[static_cast<std::size_t>(ref.bits)];
        if (!tree_.take(text.size())) {
          return too_large_tree("a string of " + std::to_string(text.size()) + " bytes");
        }
        out = ref.tag == Tag::kText ? Value(text) : Value::bytes(text);
        return Built::kOk;
      }
      case Tag::kContainer:
        break;
    }
    const std::size_t index = static_cast<std::size_t>(ref.bits);
    if (containers_[index].kind == Kind::kCallable || containers_[index].open) {
      return Built::kOpaque;  // a bare type or function, or a container in itself
    }
    if (depth + 1 > limits_.max_depth) {
      error_.emplace(CodecErrc::kTooDeep,
                     "pickle: containers nested deeper than " + std::to_string(limits_.max_depth));
      return Built::kError;
    }
    containers_[index].open = true;
    const Kind kind = containers_[index].kind;
    const bool is_dict = kind == Kind::kDict;
    // Python keeps one of equal dict keys (the first, with the last value)
    // and of equal set items; CPython never writes such duplicates.
    const bool is_set = kind == Kind::kSet || kind == Kind::kFrozenSet;
    const std::size_t count = containers_[index].items.size();
    if (is_dict ? !tree_.take_entries(count / 2) : !tree_.take_values(count)) {
      containers_[index].open = false;
      return too_large_tree(std::string(is_dict ? "a dict of " : "a list of ") +
                            std::to_string(is_dict ? count / 2 : count) + " items");
    }
    Value::List list;
    Value::Map map;
    if (is_dict) {
      map.reserve(count / 2);
    } else {
      list.reserve(count);
    }
    std::unordered_map<std::string, std::size_t> seen;
    std::size_t slot = 0;  // the map entry the next value goes to
    Built status = Built::kOk;
    for (std::size_t i = 0; i < count && status == Built::kOk; ++i) {
      Value item;
      status = build(containers_[index].items[i], depth + 1, item);
      if (status != Built::kOk) {
        break;
      }
      if (is_dict && i % 2 == 1) {
        map[slot].second = std::move(item);
        continue;
      }
      if (is_dict || is_set) {
        std::optional<std::string> identity = pickle_key_identity(item);
        if (identity) {
          const auto [found, fresh] =
              seen.emplace(std::move(*identity), is_dict ? map.size() : list.size());
          if (!fresh) {
            slot = found->second;
            continue;  // a set item already there, or a dict key whose value is replaced
          }
        }
      }
      if (is_dict) {
        slot = map.size();
        map.emplace_back(std::move(item), Value());
      } else {
        list.push_back(std::move(item));
      }
    }
    containers_[index].open = false;
    if (status == Built::kOk) {
      out = is_dict ? Value::map(std::move(map)) : Value::list(std::move(list));
    }
    return status;
  }
  /// too_large_tree: the error when `what` does not fit in the tree's budget.
  auto too_large_tree(const std::string& what) -> Built {
    error_.emplace(CodecErrc::kTooLarge,
                   "pickle: " + tree_.exceeded(what) + " (a shared object is copied each time)");
    return Built::kError;
  }
};

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_DETAIL_PICKLE_READER_HPP_
