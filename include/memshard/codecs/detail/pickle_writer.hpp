// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_DETAIL_PICKLE_WRITER_HPP_
#define MEMSHARD_CODECS_DETAIL_PICKLE_WRITER_HPP_

// codecs/detail/pickle_writer.hpp: PickleWriter, pickle_dumps' pickler,
// which writes what CPython 3.11's C pickler writes: its opcodes per
// protocol, its memo, its batches and its frames. The format is told in
// codecs/pickle.hpp.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/pickle_python.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// PickleWriter: pickle_dumps. Mirrors CPython's C pickler: its memo (which
/// objects are one object: see pickle_dumps), its batches and its frames.
class PickleWriter {
 public:
  explicit PickleWriter(int protocol) : protocol_(protocol) {}

  [[nodiscard]] auto dump(const Value& value) -> CodecResult<std::string> {
    if (protocol_ >= 2) {
      out_.push_back('\x80');
      out_.push_back(static_cast<char>(protocol_));
      framing_ = protocol_ >= 4;
    }
    if (!save(value, 0, false)) {
      return std::move(*error_);
    }
    write(".");
    commit_frame();
    return std::move(out_);
  }

 private:
  static constexpr std::size_t kFrameTarget = 64 * 1024;  // CPython's FRAME_SIZE_TARGET
  static constexpr std::size_t kFrameMin = 4;             // FRAME_SIZE_MIN
  static constexpr std::size_t kFrameHeader = 9;
  static constexpr std::size_t kBatch = 1000;  // BATCHSIZE
  static constexpr std::size_t kMaxDepth = DecodeLimits{}.max_depth;

  auto fail(const std::string& what) -> bool {
    error_.emplace(CodecErrc::kNotEncodable, "pickle: " + what);
    return false;
  }

  // --- output and frames --------------------------------------------------------

  void write(std::string_view data) {
    if (framing_ && !frame_start_) {
      frame_start_ = out_.size();
      out_.append(kFrameHeader, '\0');
    }
    out_.append(data);
  }
  void commit_frame() {
    if (!framing_ || !frame_start_) {
      return;
    }
    const std::size_t start = *frame_start_;
    const std::size_t length = out_.size() - start - kFrameHeader;
    if (length >= kFrameMin) {
      out_[start] = '\x95';
      for (std::size_t i = 0; i < 8; ++i) {
        out_[start + 1 + i] =
            static_cast<char>(static_cast<std::uint64_t>(length) >> (8 * i) & 0xffU);
      }
    } else {
      out_.erase(start, kFrameHeader);
    }
    frame_start_.reset();
  }
  /// boundary: before each object, a frame of 64 KiB or more is closed.
  void boundary() {
    if (framing_ && frame_start_ && out_.size() - *frame_start_ - kFrameHeader >= kFrameTarget) {
      commit_frame();
    }
  }
  /// write_payload: an opcode with its str or bytes data; data of 64 KiB or
  /// more goes outside any frame.
  void write_payload(std::string_view header, std::string_view data) {
    if (data.size() >= kFrameTarget) {
      commit_frame();
      const bool framing = framing_;
      framing_ = false;
      write(header);
      write(data);
      framing_ = framing;
      return;
    }
    std::string joined(header);
    joined.append(data);
    write(joined);
  }
  [[nodiscard]] static auto le(std::uint64_t value, std::size_t width) -> std::string {
    std::string out;
    for (std::size_t i = 0; i < width; ++i) {
      out.push_back(static_cast<char>(value >> (8 * i) & 0xffU));
    }
    return out;
  }
  /// sized: the opcode for a payload of `size` bytes: `short_op` and 1 byte
  /// under 256 (when given), `op4` and 4 bytes, or `op8` and 8.
  [[nodiscard]] static auto sized(std::size_t size, char short_op, char op4, char op8)
      -> std::string {
    if (short_op != '\0' && size < 256) {
      return std::string(1, short_op) + le(size, 1);
    }
    if (size <= 0xffffffffU || op8 == '\0') {
      return std::string(1, op4) + le(size, 4);
    }
    return std::string(1, op8) + le(size, 8);
  }

  // --- the memo -----------------------------------------------------------------

  /// memo_put: records the object just written (under `identity`, when it is
  /// one Python shares) and writes PUT/BINPUT/LONG_BINPUT/MEMOIZE.
  void memo_put(const std::string* identity) {
    const std::size_t index = memo_size_++;
    if (identity != nullptr) {
      shared_.emplace(*identity, index);
    }
    if (protocol_ >= 4) {
      write("\x94");
    } else if (protocol_ == 0) {
      write("p" + std::to_string(index) + "\n");
    } else if (index < 256) {
      write("q" + le(index, 1));
    } else {
      write("r" + le(index, 4));
    }
  }
  /// memo_get: writes GET of the shared object `identity` when it was
  /// written before.
  auto memo_get(const std::string& identity) -> bool {
    const auto found = shared_.find(identity);
    if (found == shared_.end()) {
      return false;
    }
    const std::size_t index = found->second;
    if (protocol_ == 0) {
      write("g" + std::to_string(index) + "\n");
    } else if (index < 256) {
      write("h" + le(index, 1));
    } else {
      write("j" + le(index, 4));
    }
    return true;
  }

  // --- objects ------------------------------------------------------------------

  auto save(const Value& value, std::size_t depth, bool as_key) -> bool {
    boundary();
    switch (value.kind()) {
      case ValueKind::kNull:
        write("N");
        return true;
      case ValueKind::kBool:
        if (protocol_ >= 2) {
          write(value.as_bool() ? "\x88" : "\x89");
        } else {
          write(value.as_bool() ? "I01\n" : "I00\n");
        }
        return true;
      case ValueKind::kInt:
        save_int(value.as_int());
        return true;
      case ValueKind::kFloat:
        if (protocol_ == 0) {
          write("F" + pickle_float_repr(value.as_double()) + "\n");
        } else {
          const auto bits = std::bit_cast<std::uint64_t>(value.as_double());
          std::string out = "G";
          for (int shift = 56; shift >= 0; shift -= 8) {
            out.push_back(static_cast<char>(bits >> static_cast<unsigned>(shift) & 0xffU));
          }
          write(out);
        }
        return true;
      case ValueKind::kString:
        return save_str(value.as_string(), as_key);
      case ValueKind::kBytes:
        return save_bytes(value.as_string());
      case ValueKind::kList:
        return save_list(value.as_list(), depth);
      case ValueKind::kMap:
        return save_dict(value.as_map(), depth);
      case ValueKind::kSerialized:
        return fail(value.as_serialized().format == kPickleName
                        ? "a serialized pickle can only be written whole, not inside a container"
                        : "a serialized " + value.as_serialized().format +
                              " value has no pickle form");
    }
    return fail("a value of an unknown kind");
  }

  void save_int(std::int64_t number) {
    if (number >= std::numeric_limits<std::int32_t>::min() &&
        number <= std::numeric_limits<std::int32_t>::max()) {
      if (protocol_ == 0) {
        write("I" + std::to_string(number) + "\n");
      } else if (number >= 0 && number <= 0xff) {
        write("K" + le(static_cast<std::uint64_t>(number), 1));
      } else if (number >= 0 && number <= 0xffff) {
        write("M" + le(static_cast<std::uint64_t>(number), 2));
      } else {
        write("J" + le(static_cast<std::uint32_t>(static_cast<std::int32_t>(number)), 4));
      }
      return;
    }
    if (protocol_ < 2) {
      write("L" + std::to_string(number) + "L\n");
      return;
    }
    // LONG1: two's complement, little-endian, as few bytes as keep the sign.
    const auto bits = static_cast<std::uint64_t>(number);
    std::size_t size = 8;
    while (size > 1) {
      const std::uint64_t top = bits >> (8 * (size - 1)) & 0xffU;
      const std::uint64_t next_sign = bits >> (8 * (size - 1) - 1) & 1U;
      if ((top == 0 && next_sign == 0) || (top == 0xff && next_sign == 1)) {
        --size;
      } else {
        break;
      }
    }
    write("\x8a" + le(size, 1) + le(bits, size));
  }

  /// save_str: `utf8` as a Python str. Python shares the empty str and the
  /// one-character strs below U+0100, and (as json.loads builds them) equal
  /// dict keys.
  auto save_str(std::string_view utf8, bool as_key) -> bool {
    std::size_t characters = 0;
    char32_t first = 0;
    for (std::size_t i = 0; i < utf8.size(); ++characters) {
      char32_t code_point = 0;
      const std::size_t length = pickle_utf8_next(utf8, i, code_point, false);
      if (length == 0) {
        return fail("a string that is not UTF-8 (at byte " + std::to_string(i) + ")");
      }
      first = i == 0 ? code_point : first;
      i += length;
    }
    std::string identity;
    if (characters == 0 || (characters == 1 && first < 0x100)) {
      identity = "c" + std::string(utf8);  // a CPython singleton
    } else if (as_key) {
      identity = "k" + std::string(utf8);  // json's key memo
    }
    if (!identity.empty() && memo_get(identity)) {
      return true;
    }
    write_str(utf8);
    memo_put(identity.empty() ? nullptr : &identity);
    return true;
  }
  /// write_str: the opcode for the (valid UTF-8) str `utf8`.
  void write_str(std::string_view utf8) {
    if (protocol_ >= 1) {
      write_payload(protocol_ >= 4 ? sized(utf8.size(), '\x8c', 'X', '\x8d')
                                   : sized(utf8.size(), '\0', 'X', '\0'),
                    utf8);
      return;
    }
    // Protocol 0: raw-unicode-escape, with \ NUL LF CR ^Z escaped as well.
    std::string out = "V";
    for (std::size_t i = 0; i < utf8.size();) {
      char32_t code_point = 0;
      i += pickle_utf8_next(utf8, i, code_point, false);
      if (code_point >= 0x10000) {
        out += "\\U" + pickle_hex(static_cast<std::uint32_t>(code_point), 8);
      } else if (code_point >= 0x100 || code_point == '\\' || code_point == 0 ||
                 code_point == '\n' || code_point == '\r' || code_point == 0x1a) {
        out += "\\u" + pickle_hex(static_cast<std::uint32_t>(code_point), 4);
      } else {
        out.push_back(static_cast<char>(code_point));
      }
    }
    out.push_back('\n');
    write(out);
  }

  /// save_global: GLOBAL module\nname\n, shared like any object.
  void save_global(std::string_view text, const std::string& identity) {
    boundary();
    if (memo_get(identity)) {
      return;
    }
    write(text);
    memo_put(&identity);
  }

  /// save_bytes: `data` as Python bytes. Python shares b'' and the one-byte
  /// bytes. Protocols 0 to 2 have no bytes opcode: CPython calls
  /// _codecs.encode(data as Latin-1 text, 'latin1'), or bytes() for b''.
  auto save_bytes(std::string_view data) -> bool {
    std::string identity;
    if (data.size() <= 1) {
      identity = "b" + std::string(data);
      if (memo_get(identity)) {
        return true;
      }
    }
    const std::string* shared = identity.empty() ? nullptr : &identity;
    if (protocol_ >= 3) {
      write_payload(protocol_ >= 4 ? sized(data.size(), 'C', 'B', '\x8e')
                                   : sized(data.size(), 'C', 'B', '\0'),
                    data);
      memo_put(shared);
      return true;
    }
    if (data.empty()) {
      save_global("c__builtin__\nbytes\n", "gbytes");
      boundary();
      write(protocol_ == 0 ? "(t" : ")");
    } else {
      save_global("c_codecs\nencode\n", "gencode");
      boundary();  // the argument tuple
      if (protocol_ < 2) {
        write("(");
      }
      std::string latin1;
      for (const char c : data) {
        pickle_append_utf8(latin1, static_cast<unsigned char>(c));
      }
      boundary();
      if (!save_str(latin1, false)) {
        return false;
      }
      boundary();
      const std::string name_identity = "latin1";  // CPython's interned 'latin1'
      if (!memo_get(name_identity)) {
        write_str("latin1");
        memo_put(&name_identity);
      }
      write(protocol_ == 2 ? "\x86" : "t");
      memo_put(nullptr);  // the tuple
    }
    write("R");
    memo_put(shared);
    return true;
  }

  auto save_list(const Value::List& items, std::size_t depth) -> bool {
    if (depth + 1 > kMaxDepth) {
      return fail("lists and maps nested deeper than " + std::to_string(kMaxDepth));
    }
    write(protocol_ == 0 ? "(l" : "]");
    memo_put(nullptr);
    if (protocol_ == 0) {
      for (const Value& item : items) {
        if (!save(item, depth + 1, false)) {
          return false;
        }
        write("a");
      }
      return true;
    }
    if (items.size() == 1) {
      if (!save(items.front(), depth + 1, false)) {
        return false;
      }
      write("a");
      return true;
    }
    std::size_t done = 0;
    while (done < items.size()) {
      write("(");
      const std::size_t end = items.size() - done > kBatch ? done + kBatch : items.size();
      for (; done < end; ++done) {
        if (!save(items[done], depth + 1, false)) {
          return false;
        }
      }
      write("e");
    }
    return true;
  }

  auto save_dict(const Value::Map& entries, std::size_t depth) -> bool {
    if (depth + 1 > kMaxDepth) {
      return fail("lists and maps nested deeper than " + std::to_string(kMaxDepth));
    }
    std::unordered_set<std::string> keys;
    for (const Value::Entry& entry : entries) {
      const ValueKind kind = entry.first.kind();
      if (kind == ValueKind::kList || kind == ValueKind::kMap || kind == ValueKind::kSerialized) {
        return fail("a " + std::string(to_string(kind)) +
                    " map key (Python dict keys here are None, bool, int, float, str or bytes)");
      }
      std::optional<std::string> identity = pickle_key_identity(entry.first);
      if (identity && !keys.insert(std::move(*identity)).second) {
        return fail("a map with two keys Python finds equal (a dict has one)");
      }
    }
    write(protocol_ == 0 ? "(d" : "}");
    memo_put(nullptr);
    const auto save_entry = [&](const Value::Entry& entry) {
      return save(entry.first, depth + 1, true) && save(entry.second, depth + 1, false);
    };
    if (protocol_ == 0) {
      for (const Value::Entry& entry : entries) {
        if (!save_entry(entry)) {
          return false;
        }
        write("s");
      }
      return true;
    }
    if (entries.size() == 1) {
      if (!save_entry(entries.front())) {
        return false;
      }
      write("s");
      return true;
    }
    if (entries.empty()) {
      return true;
    }
    // Batches of 1,000; a dict whose size is a multiple of 1,000 ends with an
    // empty MARK SETITEMS (CPython's loop does).
    std::size_t done = 0;
    std::size_t in_batch = 0;
    do {
      write("(");
      in_batch = 0;
      while (done < entries.size() && in_batch < kBatch) {
        if (!save_entry(entries[done])) {
          return false;
        }
        ++done;
        ++in_batch;
      }
      write("u");
    } while (in_batch == kBatch);
    return true;
  }

  int protocol_;
  bool framing_ = false;
  std::optional<std::size_t> frame_start_;
  std::string out_;
  std::size_t memo_size_ = 0;
  std::unordered_map<std::string, std::size_t> shared_;
  std::optional<CodecError> error_;
};

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_DETAIL_PICKLE_WRITER_HPP_
