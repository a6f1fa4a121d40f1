// SPDX-License-Identifier: MIT
// locate_io_test.cpp: memshard-locate's line input and output in process: lines
// and their ends, lines longer than the buffer, invalid lines reported with
// their numbers, the output buffer and when it is flushed, and the descriptor
// stream buffers' errors.

#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <memshard/placement/key.hpp>
#include <optional>
#include <sstream>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "locate/io.hpp"
#include "tools/locate_support.hpp"

namespace locate_io_test {
namespace {

namespace tool = memshard::locate_tool;
using tool::testing::join_lines;
using tool::testing::key_error_line;
using tool::testing::random_keys;

/// ReadLine: one line as LineReader gives it.
struct ReadLine {
  std::string text;
  std::size_t length = 0;

  auto operator==(const ReadLine&) const -> bool = default;
};

void PrintTo(const ReadLine& line, std::ostream* out) {
  *out << "{'" << line.text.substr(0, 40) << "', " << line.length << "}";
}

/// read_lines: every line of `input`, read `buffer_size` bytes at a time.
auto read_lines(const std::string& input, std::size_t buffer_size = tool::kBufferSize)
    -> std::vector<ReadLine> {
  std::istringstream in(input);
  std::ostringstream out;
  tool::Output output(out);
  tool::LineReader reader(in, output, buffer_size);
  std::vector<ReadLine> lines;
  tool::Line line{};
  while (reader.next(line)) {
    lines.push_back({std::string(line.text), line.length});
  }
  return lines;
}

/// KeysRead: what read_keys gave and reported.
struct KeysRead {
  std::vector<std::string> keys;
  std::size_t invalid = 0;
  std::string errors;
};

auto read_all_keys(const std::string& input) -> KeysRead {
  std::istringstream in(input);
  std::ostringstream out;
  std::ostringstream errors;
  tool::Output output(out);
  KeysRead read;
  read.invalid = tool::read_keys(in, output, errors,
                                 [&read](std::string_view key) { read.keys.emplace_back(key); });
  read.errors = errors.str();
  return read;
}

TEST(LocateLineReaderTest, LinesWithoutTheirEnds) {
  EXPECT_EQ(read_lines(""), std::vector<ReadLine>{});
  EXPECT_EQ(read_lines("first\nsecond"),
            (std::vector<ReadLine>{{"first", 5}, {"second", 6}}));  // no final newline
  EXPECT_EQ(read_lines("a\n\nb\n"), (std::vector<ReadLine>{{"a", 1}, {"", 0}, {"b", 1}}));
  // One CR before the LF is dropped, and one at the very end; no more.
  EXPECT_EQ(read_lines("alpha\r\n\r\ngamma\r\r\ndelta\r"),
            (std::vector<ReadLine>{{"alpha", 5}, {"", 0}, {"gamma\r", 6}, {"delta", 5}}));
  EXPECT_EQ(read_lines("mid\rdle\n"), (std::vector<ReadLine>{{"mid\rdle", 7}}));
}

TEST(LocateLineReaderTest, LinesAcrossSmallBuffers) {
  // A buffer of 8 bytes: lines split across reads, and lines longer than the
  // buffer, which keep only their length (and their last bytes).
  const std::string input = "abc\nabcdefg\nabcdefgh\nabcdefghijklmnopq\r\nxy\r\n12345678901234567";
  const std::vector<ReadLine> lines = read_lines(input, 8);
  ASSERT_EQ(lines.size(), 6U);
  EXPECT_EQ(lines[0], (ReadLine{"abc", 3}));
  EXPECT_EQ(lines[1], (ReadLine{"abcdefg", 7}));
  EXPECT_EQ(lines[2].length, 8U);
  EXPECT_EQ(lines[3].length, 17U);  // its CR dropped, even when it was the last byte kept
  EXPECT_FALSE(lines[3].text.ends_with('\r'));
  EXPECT_EQ(lines[4], (ReadLine{"xy", 2}));
  EXPECT_EQ(lines[5].length, 17U);
  // Whatever the buffer, every length is right; a line shorter than the buffer
  // (with its end) is kept whole, a longer one keeps its last bytes.
  const std::vector<std::string> whole = {
      "abc", "abcdefg", "abcdefgh", "abcdefghijklmnopq", "xy", "12345678901234567"};
  for (std::size_t size : {2U, 3U, 5U, 7U, 8U, 19U, 64U}) {
    const std::vector<ReadLine> again = read_lines(input, size);
    ASSERT_EQ(again.size(), whole.size()) << size;
    for (std::size_t i = 0; i < whole.size(); ++i) {
      EXPECT_EQ(again[i].length, whole[i].size()) << "buffer " << size << ", line " << i;
      if (whole[i].size() + 2 <= size) {
        EXPECT_EQ(again[i].text, whole[i]) << "buffer " << size << ", line " << i;
      } else {
        EXPECT_TRUE(whole[i].ends_with(again[i].text)) << "buffer " << size << ", line " << i;
      }
    }
  }
}

TEST(LocateLineReaderTest, VeryLongLinesAreMeasuredAndSkipped) {
  // Lengths around the sizes a reader may use for its buffer, with LF and CRLF
  // ends; each is followed by a valid key that must still be read.
  const std::vector<std::size_t> lengths = {65535,   65536,   65537,          1048575,
                                            1048576, 1048577, 3 * 1048576 + 5};
  std::string input;
  std::string expected_errors;
  std::vector<std::string> valid;
  std::size_t line = 0;
  for (const std::size_t length : lengths) {
    for (const std::string_view end : {"\n", "\r\n"}) {
      const std::string key(length, 'x');
      input.append(key).append(end);
      expected_errors += key_error_line(++line, key);
      valid.push_back("after:" + std::to_string(length) + ":" + std::to_string(end.size()));
      input.append(valid.back()).append(end);
      ++line;
    }
  }
  input.append(std::string(2 * 1048576, 'y'));  // a last line without a newline
  expected_errors += key_error_line(++line, std::string(2 * 1048576, 'y'));

  const KeysRead read = read_all_keys(input);
  EXPECT_EQ(read.invalid, 2 * lengths.size() + 1);
  EXPECT_EQ(read.errors, expected_errors);
  EXPECT_EQ(read.keys, valid);
}

TEST(LocateReadKeysTest, InvalidKeysAreReportedWithTheirLineNumbers) {
  const std::string too_long(251, 'k');
  const std::string longest(250, 'l');
  const std::vector<std::string> lines = {
      "good:1",                     // 1
      "",                           // 2 empty
      "has space",                  // 3
      too_long,                     // 4
      "ctl\x01x",                   // 5
      "good:2",                     // 6
      longest,                      // 7 valid: exactly the limit
      std::string("nul\0byte", 8),  // 8
      "del\x7f",                    // 9
      "tab\there",                  // 10
      "utf8:\xc3\xa9t\xc3\xa9",     // 11 valid
      "last",                       // 12, without a newline
  };
  std::string input = join_lines(lines);
  input.pop_back();
  const KeysRead read = read_all_keys(input);
  EXPECT_EQ(read.keys, (std::vector<std::string>{"good:1", "good:2", longest,
                                                 "utf8:\xc3\xa9t\xc3\xa9", "last"}));
  EXPECT_EQ(read.invalid, 7U);
  std::string expected_errors;
  for (const std::size_t line : std::vector<std::size_t>{2, 3, 4, 5, 8, 9, 10}) {
    expected_errors += key_error_line(line, lines[line - 1]);
  }
  EXPECT_EQ(read.errors, expected_errors);
  // The messages name the problem.
  EXPECT_NE(read.errors.find("memshard-locate: line 2: key is empty\n"), std::string::npos)
      << read.errors;
  EXPECT_NE(read.errors.find("line 4: key is 251 bytes long"), std::string::npos) << read.errors;
  EXPECT_NE(read.errors.find("line 5: key has a control byte 0x01 at offset 3"), std::string::npos)
      << read.errors;
}

TEST(LocateReadKeysTest, KeyRulesApplyToTheSentKey) {
  // After a prefix of 4 bytes ("app:"), the sent key is 4 bytes longer: 246
  // bytes is the longest key, and the length reported is the sent key's.
  const std::string longest(246, 'l');
  const std::string too_long(247, 'k');
  auto problem = [](std::string_view text, std::size_t prefix_size) {
    return tool::key_problem(tool::Line{text, text.size()}, prefix_size);
  };
  EXPECT_EQ(problem(longest, 4), std::nullopt);
  EXPECT_EQ(problem(too_long, 4), memshard::check_key("app:" + too_long));
  EXPECT_EQ(problem(too_long, 0), std::nullopt);
  EXPECT_EQ(problem("x", 249), std::nullopt);
  EXPECT_EQ(problem("xy", 249), memshard::check_key(std::string(249, 'p') + "xy"));
  // A line longer than the buffer (only its last bytes kept): its whole length.
  EXPECT_EQ(tool::key_problem(tool::Line{"tail", 3000000}, 4),
            (memshard::KeyError{memshard::KeyErrc::kTooLong, 3000004, 0}));
  // The prefix alone is a key; a space or control byte is at its offset in the line.
  EXPECT_EQ(problem("", 4), std::nullopt);
  EXPECT_EQ(problem("", 0), memshard::check_key(""));
  EXPECT_EQ(problem("has space", 4), memshard::check_key("has space"));
  EXPECT_EQ(problem("ctl\x01", 4), memshard::check_key("ctl\x01"));

  // read_keys checks each line after every prefix given, and reports the first problem.
  std::istringstream in(join_lines({"short", longest, "", too_long, "has space"}));
  std::ostringstream out;
  std::ostringstream errors;
  tool::Output output(out);
  std::vector<std::string> keys;
  const std::vector<std::size_t> sizes = {0, 4};
  const std::size_t invalid = tool::read_keys(
      in, output, errors, sizes, [&keys](std::string_view key) { keys.emplace_back(key); });
  EXPECT_EQ(invalid, 3U);
  EXPECT_EQ(keys, (std::vector<std::string>{"short", longest}));
  EXPECT_EQ(errors.str(), key_error_line(3, "") + key_error_line(4, "app:" + too_long) +
                              key_error_line(5, "has space"));
  EXPECT_NE(errors.str().find("line 4: key is 251 bytes long, the limit is 250\n"),
            std::string::npos)
      << errors.str();
}

/// RecordingBuffer: a stream buffer that hands out its input a chunk at a time
/// and records what had been written before each chunk was asked for.
class RecordingBuffer : public std::streambuf {
 public:
  RecordingBuffer(std::vector<std::string> chunks, std::ostringstream& written)
      : chunks_(std::move(chunks)), written_(written) {}

  std::vector<std::string> written_before_chunk;

 protected:
  auto underflow() -> int_type override {
    if (gptr() < egptr()) {
      return traits_type::to_int_type(*gptr());
    }
    if (next_ == chunks_.size()) {
      return traits_type::eof();
    }
    written_before_chunk.push_back(written_.str());
    std::string& chunk = chunks_[next_++];
    setg(chunk.data(), chunk.data(), chunk.data() + chunk.size());
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::vector<std::string> chunks_;
  std::size_t next_ = 0;
  std::ostringstream& written_;
};

TEST(LocateOutputTest, FlushedBeforeEachReadThatMayWait) {
  // A script may write one key and wait for its answer: every answer is handed
  // on before the reader asks for more input.
  std::ostringstream out;
  RecordingBuffer input({"first\n", "second\nthird\n", "fourth"}, out);
  std::istream in(&input);
  tool::Output output(out);
  std::ostringstream errors;
  const std::size_t invalid = tool::read_keys(in, output, errors, [&output](std::string_view key) {
    output.append(key);
    output.append(";");
  });
  output.flush();
  EXPECT_EQ(invalid, 0U);
  EXPECT_EQ(out.str(), "first;second;third;fourth;");
  EXPECT_EQ(input.written_before_chunk,
            (std::vector<std::string>{"", "first;", "first;second;third;"}));
}

TEST(LocateOutputTest, GathersUntilFullOrFlushed) {
  std::ostringstream out;
  tool::Output output(out, 8);
  output.append("abc");
  output.append("defgh");
  EXPECT_EQ(out.str(), "");  // 8 bytes: still gathered
  output.append("i");
  EXPECT_EQ(out.str(), "abcdefgh");
  output.append("0123456789");  // larger than the buffer: written through, in order
  EXPECT_EQ(out.str(), "abcdefghi0123456789");
  output.append("z");
  output.flush();
  EXPECT_EQ(out.str(), "abcdefghi0123456789z");
}

TEST(LocateDescriptorBufferTest, ReadAndWriteErrorsNameTheStream) {
  tool::FdInputBuffer bad_input(-1);
  std::istream in(&bad_input);
  std::ostringstream out;
  tool::Output output(out);
  tool::LineReader reader(in, output);
  tool::Line line{};
  try {
    (void)reader.next(line);
    ADD_FAILURE() << "reading descriptor -1 succeeded";
  } catch (const tool::IoError& error) {
    EXPECT_EQ(std::string(error.what()),
              "cannot read standard input: " + std::generic_category().message(EBADF));
  }
  tool::FdOutputBuffer bad_output(-1);
  std::ostream to(&bad_output);
  tool::Output through(to);
  through.append("key\t0\ta:11211\n");
  try {
    through.flush();
    ADD_FAILURE() << "writing descriptor -1 succeeded";
  } catch (const tool::IoError& error) {
    EXPECT_EQ(std::string(error.what()),
              "cannot write to standard output: " + std::generic_category().message(EBADF));
  }
  // Through the stream itself, the error is the stream's state.
  to << "text";
  EXPECT_FALSE(to);
}

}  // namespace
}  // namespace locate_io_test
