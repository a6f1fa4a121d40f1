// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_SUPPORT_CODEC_BYTES_HPP_
#define MEMSHARD_TESTS_SUPPORT_CODEC_BYTES_HPP_

// support/codec_bytes.hpp: the bytes the codec tests write and compare: hex
// text to bytes and back, the payloads of known shape they compress (lines of
// text, pseudo-random noise, words, noise then a run), and how an Encoded
// item and a CodecErrc print in a failure.

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "memshard/codecs/codec.hpp"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/quote.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

// PrintTo: an item and an error code as test failures show them.
inline void PrintTo(const Encoded& item, std::ostream* out) {
  *out << "{flags 0x" << std::hex << item.flags << std::dec << ", " << item.bytes.size()
       << " bytes " << detail::quote_bytes(item.bytes, 120) << "}";
}
inline void PrintTo(CodecErrc code, std::ostream* out) { *out << to_string(code); }

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

namespace memshard::testing {

/// from_hex: the bytes of lowercase or uppercase hex text, two digits a byte.
inline auto from_hex(std::string_view hex) -> std::string {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

/// to_hex: `bytes` as lowercase hex, two digits a byte.
inline auto to_hex(std::string_view bytes) -> std::string {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(kDigits[b >> 4U]);
    out.push_back(kDigits[b & 0xFU]);
  }
  return out;
}

/// lines: text of the lines the value tables use ("line 00001: the quick
/// brown fox ..."), `size` bytes.
inline auto lines(std::size_t size) -> std::string {
  std::string text;
  for (int n = 1; text.size() < size; ++n) {
    std::string number = std::to_string(n);
    number.insert(0, 5 - number.size(), '0');
    text += "line " + number + ": the quick brown fox jumps over the lazy dog\n";
  }
  text.resize(size);
  return text;
}

/// noise: `size` pseudo-random bytes (a fixed 64-bit LCG: the same on every
/// platform).
inline auto noise(std::size_t size, std::uint64_t seed) -> std::string {
  std::string out;
  for (std::size_t i = 0; i < size; ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    out.push_back(static_cast<char>(seed >> 56U));
  }
  return out;
}

/// words: 1 MiB of words and numbers (varied enough that zlib's memLevel
/// changes the level-9 stream).
inline auto words() -> std::string {
  constexpr std::size_t kSize = std::size_t{1} << 20U;
  const char* const kWords[] = {"alpha", "beta",  "gamma",   "delta", "epsilon", "zeta",
                                "eta",   "theta", "iota",    "kappa", "lambda",  "mu",
                                "nu",    "xi",    "omicron", "pi"};
  std::uint64_t x = 42;
  std::string text;
  while (text.size() < kSize) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    text += kWords[x >> 60U];
    text += std::to_string((x >> 40U) % 1000U);
    text += (x >> 32U) % 16U == 0 ? '\n' : ' ';
  }
  text.resize(kSize);
  return text;
}

/// noisy: `random` xorshift32 bytes, then `run` times 'a': a payload whose
/// compressed size is known exactly.
inline auto noisy(std::size_t random, std::size_t run) -> std::string {
  std::string out;
  std::uint32_t x = 2463534242U;
  for (std::size_t i = 0; i < random; ++i) {
    x ^= x << 13U;
    x ^= x >> 17U;
    x ^= x << 5U;
    out.push_back(static_cast<char>(x & 0xffU));
  }
  return out.append(run, 'a');
}

}  // namespace memshard::testing

#endif  // MEMSHARD_TESTS_SUPPORT_CODEC_BYTES_HPP_
