// SPDX-License-Identifier: MIT
// libFuzzer target for key.hpp: a key is accepted only when it is 1 to 250
// bytes with no byte <= 0x20 and no 0x7f (so no CR/LF can reach the wire);
// is_valid_key agrees with check_key, whose error names the first bad byte;
// and the word-at-a-time scan of detail::has_forbidden_byte agrees with a
// byte loop at every alignment and length. Run by CTest for a bounded time
// (tests/fuzz/CMakeLists.txt).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "fuzz_support.hpp"
#include "memshard/placement/key.hpp"

namespace {

using memshard::KeyErrc;
using memshard::KeyError;
using memshard::fuzz::check;

auto forbidden(unsigned char byte) -> bool { return byte <= 0x20 || byte == 0x7f; }

auto first_forbidden(std::string_view bytes) -> std::size_t {
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (forbidden(static_cast<unsigned char>(bytes[i]))) {
      return i;
    }
  }
  return bytes.size();
}

void check_key_rules(std::string_view key) {
  const std::optional<KeyError> problem = memshard::check_key(key);
  const bool valid = memshard::is_valid_key(key);
  check(valid == !problem.has_value());
  const std::size_t bad = first_forbidden(key);
  if (valid) {
    check(!key.empty() && key.size() <= memshard::kMaxKeyLength && bad == key.size());
    return;
  }
  check(!problem->message().empty());
  switch (problem->code) {
    case KeyErrc::kEmpty:
      check(key.empty() && problem->offset == 0 && problem->byte == 0);
      break;
    case KeyErrc::kTooLong:
      check(key.size() > memshard::kMaxKeyLength && problem->offset == key.size() &&
            problem->byte == 0);
      break;
    case KeyErrc::kSpace:
    case KeyErrc::kControl:
      check(!key.empty() && key.size() <= memshard::kMaxKeyLength);
      check(problem->offset == bad && bad < key.size());
      check(problem->byte == static_cast<unsigned char>(key[bad]));
      check((problem->code == KeyErrc::kSpace) == (problem->byte == 0x20));
      break;
  }
}

}  // namespace

extern "C" auto LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) -> int {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check_key_rules(bytes);
  // Every alignment of the word loop, and every length of its byte tail.
  for (std::size_t start = 0; start < 8 && start <= bytes.size(); ++start) {
    const std::string_view tail = bytes.substr(start);
    check(memshard::detail::has_forbidden_byte(tail) == (first_forbidden(tail) < tail.size()));
    check_key_rules(tail);
    for (std::size_t cut = 1; cut < 8 && cut <= tail.size(); ++cut) {
      const std::string_view head = tail.substr(0, tail.size() - cut);
      check(memshard::detail::has_forbidden_byte(head) == (first_forbidden(head) < head.size()));
    }
  }
  return 0;
}
