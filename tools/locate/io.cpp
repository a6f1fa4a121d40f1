// SPDX-License-Identifier: MIT
// locate/io.cpp: memshard-locate's line reader, output buffer and descriptor
// stream buffers.

#include "locate/io.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "locate/command_line.hpp"

namespace memshard::locate_tool {
namespace {

/// throw_io_error: throws IoError(what, error); the tool's one I/O throw site.
[[noreturn]] [[gnu::cold]] [[gnu::noinline]] void throw_io_error(std::string_view what, int error) {
  throw IoError(what, error);
}

constexpr std::string_view kCannotWrite = "cannot write to standard output";

}  // namespace

IoError::IoError(std::string_view what, int error)
    : std::runtime_error(std::string(what) + ": " + std::generic_category().message(error)) {}

Output::Output(std::ostream& out, std::size_t buffer_size)
    : out_(out.rdbuf()), buffer_size_(buffer_size) {
  buffer_.reserve(buffer_size_);
}

void Output::append(std::string_view bytes) {
  if (buffer_.size() + bytes.size() > buffer_size_) {
    flush();
    if (bytes.size() > buffer_size_) {
      if (out_ == nullptr ||
          out_->sputn(bytes.data(), static_cast<std::streamsize>(bytes.size())) !=
              static_cast<std::streamsize>(bytes.size())) {
        throw_io_error(kCannotWrite, EIO);
      }
      return;
    }
  }
  buffer_.append(bytes);
}

void Output::flush() {
  if (out_ == nullptr) {
    throw_io_error(kCannotWrite, EIO);
  }
  if (out_->sputn(buffer_.data(), static_cast<std::streamsize>(buffer_.size())) !=
          static_cast<std::streamsize>(buffer_.size()) ||
      out_->pubsync() != 0) {
    throw_io_error(kCannotWrite, EIO);
  }
  buffer_.clear();
}

LineReader::LineReader(std::istream& in, Output& output, std::size_t buffer_size)
    : in_(in.rdbuf()), output_(output), buffer_(std::max<std::size_t>(buffer_size, 2)) {}

auto LineReader::next(Line& line) -> bool {
  for (;;) {
    const char* first = buffer_.data() + begin_;
    const std::size_t available = end_ - begin_;
    if (const void* newline = std::memchr(first, '\n', available); newline != nullptr) {
      const auto length = static_cast<std::size_t>(static_cast<const char*>(newline) - first);
      begin_ += length + 1;
      line = take({first, length});
      return true;
    }
    if (at_end_) {
      if (available == 0) {
        return false;
      }
      begin_ = end_;
      line = take({first, available});
      return true;
    }
    refill();
  }
}

// The line whose last bytes are `tail`.
auto LineReader::take(std::string_view tail) noexcept -> Line {
  if (tail.ends_with('\r')) {
    tail.remove_suffix(1);
  }
  const Line line{tail, discarded_ + tail.size()};
  discarded_ = 0;
  return line;
}

// Moves the partial line to the front and reads more after it. When the
// partial line fills the whole buffer, its bytes are counted and dropped,
// all but the last (which may be the "\r" of a "\r\n").
void LineReader::refill() {
  if (begin_ > 0) {
    std::copy(buffer_.begin() + static_cast<std::ptrdiff_t>(begin_),
              buffer_.begin() + static_cast<std::ptrdiff_t>(end_), buffer_.begin());
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) {
    discarded_ += end_ - 1;
    buffer_.front() = buffer_[end_ - 1];
    end_ = 1;
  }
  output_.flush();
  if (in_ == nullptr ||
      std::streambuf::traits_type::eq_int_type(in_->sgetc(), std::streambuf::traits_type::eof())) {
    at_end_ = true;
    return;
  }
  // sgetc() made at least one byte available: take what is at hand, no more,
  // so that a read never waits for input the writer has not sent yet.
  const auto at_hand = static_cast<std::size_t>(std::max<std::streamsize>(in_->in_avail(), 1));
  const std::size_t count = std::min(at_hand, buffer_.size() - end_);
  end_ += static_cast<std::size_t>(
      in_->sgetn(buffer_.data() + end_, static_cast<std::streamsize>(count)));
}

auto key_problem(const Line& line, std::size_t prefix_size) noexcept
    -> std::optional<memshard::KeyError> {
  const std::size_t sent_length = prefix_size + line.length;
  if (line.length != line.text.size() || sent_length > memshard::kMaxKeyLength) {
    return memshard::KeyError{memshard::KeyErrc::kTooLong, sent_length, 0};
  }
  if (line.text.empty() && prefix_size > 0) {
    return std::nullopt;  // the prefix alone is sent
  }
  return memshard::check_key(line.text);
}

auto invalid_line_message(std::size_t line_number, const memshard::KeyError& problem)
    -> std::string {
  return std::string(kProgram) + ": line " + std::to_string(line_number) + ": " +
         problem.message() + "\n";
}

FdInputBuffer::FdInputBuffer(int fd, std::size_t buffer_size)
    : fd_(fd), buffer_(std::max<std::size_t>(buffer_size, 1)) {}

auto FdInputBuffer::underflow() -> int_type {
  if (gptr() < egptr()) {
    return traits_type::to_int_type(*gptr());
  }
  for (;;) {
    const ssize_t count = ::read(fd_, buffer_.data(), buffer_.size());
    if (count < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw_io_error("cannot read standard input", errno);
    }
    if (count == 0) {
      return traits_type::eof();
    }
    setg(buffer_.data(), buffer_.data(), buffer_.data() + count);
    return traits_type::to_int_type(*gptr());
  }
}

auto FdOutputBuffer::overflow(int_type c) -> int_type {
  if (traits_type::eq_int_type(c, traits_type::eof())) {
    return traits_type::not_eof(c);
  }
  const char byte = traits_type::to_char_type(c);
  xsputn(&byte, 1);
  return c;
}

auto FdOutputBuffer::xsputn(const char* bytes, std::streamsize count) -> std::streamsize {
  std::string_view rest(bytes, static_cast<std::size_t>(count));
  while (!rest.empty()) {
    const ssize_t written = ::write(fd_, rest.data(), rest.size());
    if (written < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw_io_error(kCannotWrite, errno);
    }
    rest.remove_prefix(static_cast<std::size_t>(written));
  }
  return count;
}

}  // namespace memshard::locate_tool
