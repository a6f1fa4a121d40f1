// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TOOLS_LOCATE_IO_HPP_
#define MEMSHARD_TOOLS_LOCATE_IO_HPP_

// locate/io.hpp: memshard-locate's line input and output: keys read from a
// stream one line at a time in bounded memory, each invalid line reported with
// its number; output gathered in a large buffer and handed to the stream when
// full or before the input may block; and the stream buffers over the standard
// descriptors that main() gives them.

#include <array>
#include <cstddef>
#include <istream>
#include <memshard/placement/key.hpp>
#include <optional>
#include <ostream>
#include <span>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memshard::locate_tool {

/// kBufferSize: bytes read from the input, and gathered for the output, at once.
inline constexpr std::size_t kBufferSize = std::size_t{1} << 20;

/// IoError: reading the input or writing the output failed; what() is
/// "<what>: <the system's message for the error number>".
class IoError : public std::runtime_error {
 public:
  /// IoError: the error of `what` (e.g. "cannot read standard input"), `error` an errno value.
  IoError(std::string_view what, int error);
};

/// Output: a stream's output behind one large buffer, handed to the stream's
/// buffer only when full or flushed. Throws IoError when the stream refuses bytes.
class Output {
 public:
  /// Output: gathers output for `out`, `buffer_size` bytes at a time.
  explicit Output(std::ostream& out, std::size_t buffer_size = kBufferSize);

  /// append: adds `bytes` to the output.
  void append(std::string_view bytes);

  /// flush: hands everything gathered to the stream and flushes it.
  void flush();

 private:
  std::streambuf* out_;
  std::size_t buffer_size_;
  std::string buffer_;
};

/// Line: one line of input, without its "\n" and without one "\r" before it.
struct Line {
  /// The line's bytes; for a line longer than the read buffer, only its last
  /// bytes (such a line is far too long to be a key).
  std::string_view text;
  /// The line's length in bytes.
  std::size_t length;
};

/// LineReader: the lines of a stream, read in large blocks. Memory stays
/// bounded whatever the input: of a line longer than the buffer, only the
/// length is kept. The output is flushed before each read that may block, so a
/// process that writes one key at a time and waits for each answer gets it.
/// Each read takes what the stream has at hand (one read(2) for standard input).
class LineReader {
 public:
  /// LineReader: the lines of `in`, read `buffer_size` (at least 2) bytes at a
  /// time; `output` is flushed before each read.
  LineReader(std::istream& in, Output& output, std::size_t buffer_size = kBufferSize);

  /// next: stores the next line in `line` and returns true, or returns false at
  /// the end of the input. `line.text` stays valid until the next call. Throws
  /// IoError.
  [[nodiscard]] auto next(Line& line) -> bool;

 private:
  auto take(std::string_view tail) noexcept -> Line;
  void refill();

  std::streambuf* in_;
  Output& output_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;      // first byte not yet returned
  std::size_t end_ = 0;        // one past the last byte read
  std::size_t discarded_ = 0;  // bytes of the current line dropped by refill()
  bool at_end_ = false;
};

/// key_problem: what is wrong with `line` as a memcached key sent after a key
/// prefix of `prefix_size` bytes (0: none), if anything. The key rules apply to
/// the sent key, prefix + line: kTooLong counts the prefix (and gives the sent
/// length), and an empty line is a key after a prefix. A valid prefix holds no
/// space or control byte, so such a byte is in the line: it is reported at its
/// offset there, as without a prefix.
[[nodiscard]] auto key_problem(const Line& line, std::size_t prefix_size = 0) noexcept
    -> std::optional<memshard::KeyError>;

/// invalid_line_message: the error line for input line `line_number` (from 1),
/// which has `problem`: "memshard-locate: line N: <problem>\n".
[[nodiscard]] auto invalid_line_message(std::size_t line_number, const memshard::KeyError& problem)
    -> std::string;

/// read_keys: calls `on_key(key)` for every line of `in` that is a valid key
/// after each of the key prefixes whose sizes are `prefix_sizes` (see
/// key_problem; the first problem found is reported), in order, and reports
/// each invalid line on `errors`. Returns the number of invalid lines. Throws
/// IoError.
template <class OnKey>
auto read_keys(std::istream& in, Output& output, std::ostream& errors,
               std::span<const std::size_t> prefix_sizes, OnKey&& on_key) -> std::size_t {
  LineReader reader(in, output);
  Line line{};
  std::size_t line_number = 0;
  std::size_t invalid = 0;
  while (reader.next(line)) {
    ++line_number;
    std::optional<memshard::KeyError> problem;
    for (const std::size_t prefix_size : prefix_sizes) {
      problem = key_problem(line, prefix_size);
      if (problem) {
        break;
      }
    }
    if (problem) {
      errors << invalid_line_message(line_number, *problem);
      ++invalid;
      continue;
    }
    std::forward<OnKey>(on_key)(line.text);
  }
  return invalid;
}

/// read_keys: the same for keys sent as they are (no key prefix).
template <class OnKey>
auto read_keys(std::istream& in, Output& output, std::ostream& errors, OnKey&& on_key)
    -> std::size_t {
  constexpr std::array<std::size_t, 1> kNoPrefix = {0};
  return read_keys(in, output, errors, kNoPrefix, std::forward<OnKey>(on_key));
}

/// FdInputBuffer: a stream buffer over a readable descriptor (standard input):
/// each underflow is one read(2). Throws IoError("cannot read standard input").
class FdInputBuffer : public std::streambuf {
 public:
  /// FdInputBuffer: reads `fd`, which stays open.
  explicit FdInputBuffer(int fd, std::size_t buffer_size = kBufferSize);

 protected:
  auto underflow() -> int_type override;

 private:
  int fd_;
  std::vector<char> buffer_;
};

/// FdOutputBuffer: an unbuffered stream buffer over a writable descriptor
/// (standard output): every write goes to write(2) whole. Throws
/// IoError("cannot write to standard output").
class FdOutputBuffer : public std::streambuf {
 public:
  /// FdOutputBuffer: writes to `fd`, which stays open.
  explicit FdOutputBuffer(int fd) noexcept : fd_(fd) {}

 protected:
  auto overflow(int_type c) -> int_type override;
  auto xsputn(const char* bytes, std::streamsize count) -> std::streamsize override;

 private:
  int fd_;
};

}  // namespace memshard::locate_tool

#endif  // MEMSHARD_TOOLS_LOCATE_IO_HPP_
