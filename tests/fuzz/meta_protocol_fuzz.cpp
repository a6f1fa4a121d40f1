// SPDX-License-Identifier: MIT
// libFuzzer target for wire/detail/meta_protocol.hpp: the input is fed to
// MetaReplyParser and TextLineParser whole and in pieces whose sizes come from
// the input itself; both ways must agree, and no feed may use more bytes than
// it was given. Run by CTest for a bounded number of runs (tests/fuzz/CMakeLists.txt).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "memshard/wire/detail/meta_protocol.hpp"

namespace {

using memshard::detail::MetaLimits;
using memshard::detail::MetaParse;
using memshard::detail::MetaParseResult;
using memshard::detail::MetaReplyParser;
using memshard::detail::TextLineParser;

void check(bool condition) {
  if (!condition) {
    std::abort();
  }
}

constexpr MetaLimits kLimits{.max_line = 256, .max_value = 1024};

// Parses every reply in `bytes`, feeding pieces of `piece` bytes at most;
// returns a digest of what was parsed.
auto replies(std::string_view bytes, std::size_t piece) -> std::string {
  MetaReplyParser parser(kLimits);
  std::string digest;
  std::size_t at = 0;
  while (at < bytes.size()) {
    const std::string_view chunk = bytes.substr(at, piece);
    const MetaParseResult step = parser.feed(chunk);
    check(step.consumed <= chunk.size());
    if (step.status == MetaParse::kMalformed) {
      return digest + "!" + std::string(step.reason);
    }
    at += step.consumed;
    if (step.status == MetaParse::kComplete) {
      const auto reply = parser.take();
      check(reply.value.size() <= kLimits.max_value);
      digest += std::to_string(static_cast<int>(reply.kind)) + ":" + reply.value + ":" +
                reply.message + "|";
    } else {
      check(step.consumed == chunk.size());
    }
  }
  return digest;
}

auto lines(std::string_view bytes, std::size_t piece) -> std::string {
  TextLineParser parser(kLimits.max_line);
  std::string digest;
  std::size_t at = 0;
  while (at < bytes.size()) {
    const std::string_view chunk = bytes.substr(at, piece);
    const MetaParseResult step = parser.feed(chunk, [&](std::string_view line) {
      check(line.size() <= kLimits.max_line);
      digest.append(line).push_back('\n');
    });
    check(step.consumed <= chunk.size());
    if (step.status == MetaParse::kMalformed) {
      return digest + "!" + std::string(step.reason);
    }
    at += step.consumed;
    if (step.status == MetaParse::kComplete) {
      digest += "END " + parser.message() + "|";
    }
  }
  return digest;
}

}  // namespace

extern "C" auto LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) -> int {
  if (size == 0) {
    return 0;
  }
  const std::size_t piece = 1 + data[0] % 16;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  check(replies(bytes, bytes.size() + 1) == replies(bytes, piece));
  check(lines(bytes, bytes.size() + 1) == lines(bytes, piece));
  return 0;
}
