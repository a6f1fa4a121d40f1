// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_LOCATORS_RENDEZVOUS_LOCATOR_HPP_
#define MEMSHARD_PLACEMENT_LOCATORS_RENDEZVOUS_LOCATOR_HPP_

// placement/locators/rendezvous_locator.hpp: RendezvousLocator, highest-random-weight hashing as
// pymemcache's HashClient does it.
//
// Every server scores every key, `murmur3_32("node-key")`, and the highest
// score wins. Removing a server moves only its own keys, and adding one moves
// about 1/(N+1) of the keys, all to the new server; the price is that a lookup
// scores all N servers, so it suits small fleets.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "memshard/detail/throw.hpp"
#include "memshard/placement/hash/murmur3.hpp"
#include "memshard/placement/server.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// RendezvousInput: what the score hash reads of the key.
enum class RendezvousInput : std::uint8_t {
  /// The key's bytes.
  kBytes,
  /// One byte per character of the key decoded from UTF-8: the code point's
  /// low eight bits. This is what pymemcache's pure-Python murmur3_32 hashes
  /// for a str key (it reads `ord(c) & 0xff` of each character).
  kCodePointLowBytes,
  /// Python's repr() of the key as bytes (`b'user:42'`, `\xNN` escapes):
  /// what pymemcache hashes for a bytes key, since it formats "%s-%s" % (node,
  /// key).
  kPythonBytesRepr,
};

/// RendezvousLocator: the server whose `Murmur3_32(node + "-" + key)` is
/// highest, where node is the server's name or, without one, "host:port";
/// equal scores go to the node whose name sorts last (pymemcache's
/// `max(str(node), str(winner))`).
///
/// Complexity: O(N x key length) per locate (the key is transcoded once);
/// no allocation. Exception guarantee: the constructor throws ConfigError for
/// an invalid server list or two servers with the same node name, or
/// std::bad_alloc; locate is noexcept. Immutable, so safe to share.
///
/// **Example**:
///   memshard::RendezvousLocator ring(memshard::parse_servers("a:11211,b:11211"));
///   std::size_t index = ring.locate("user:42");
class RendezvousLocator {
 public:
  explicit RendezvousLocator(std::span<const Server> servers,
                             RendezvousInput input = RendezvousInput::kBytes)
      : size_(servers.size()), input_(input) {
    validate_servers(servers);
    nodes_.reserve(servers.size());
    prefixes_.reserve(servers.size());
    for (const Server& server : servers) {
      std::string node =
          server.name.empty() ? server.host + ":" + std::to_string(server.port) : server.name;
      Murmur3_32::Stream prefix;
      if (input_ == RendezvousInput::kBytes) {
        prefix.update(node);
      } else {
        low_bytes(node, [&prefix](char c) { prefix.update(std::string_view(&c, 1)); });  // a str
      }
      prefix.update("-");
      prefixes_.push_back(prefix);
      nodes_.push_back(std::move(node));
    }
    std::vector<std::string> sorted = nodes_;
    std::sort(sorted.begin(), sorted.end());
    const auto same = std::adjacent_find(sorted.begin(), sorted.end());
    if (same != sorted.end()) {
      detail::throw_config_error("two servers have the same node name", *same);
    }
  }

  /// locate: the index of the key's server, in the caller's order.
  [[nodiscard]] auto locate(std::string_view key) const noexcept -> std::size_t {
    return best(key, {});
  }

  /// locate_avoiding: the best-scoring server not marked in `avoid`: only the
  /// keys of avoided servers move. Answers locate(key) when all are avoided.
  [[nodiscard]] auto locate_avoiding(std::string_view key,
                                     std::span<const std::uint8_t> avoid) const noexcept
      -> std::size_t {
    const auto live = std::count(avoid.begin(), avoid.end(), std::uint8_t{0});
    if (avoid.size() != size_ || live == 0 || static_cast<std::size_t>(live) == size_) {
      return locate(key);
    }
    return best(key, avoid);
  }

  /// size: the number of servers.
  [[nodiscard]] auto size() const noexcept -> std::size_t { return size_; }

  /// node: the node name server `index` (< size()) is scored under.
  [[nodiscard]] auto node(std::size_t index) const noexcept -> const std::string& {
    return nodes_[index];
  }

 private:
  // The longest key transcoded into a stack buffer (a 250-byte key's Python
  // repr takes at most 4 * 250 + 3 bytes); longer keys are fed in pieces.
  static constexpr std::size_t kBuffer = 1024;

  // The best-scoring server not marked in `avoid` (an empty `avoid`: none
  // is), the key's text transcoded once.
  [[nodiscard]] auto best(std::string_view key, std::span<const std::uint8_t> avoid) const noexcept
      -> std::size_t {
    if (size_ == 1) {
      return 0;
    }
    char buffer[kBuffer];
    std::string_view text = key;
    bool whole = true;
    if (input_ == RendezvousInput::kCodePointLowBytes && !is_ascii(key)) {
      whole = key.size() <= kBuffer;
      if (whole) {
        std::size_t used = 0;
        low_bytes(key, [&](char c) { buffer[used++] = c; });
        text = std::string_view(buffer, used);
      }
    } else if (input_ == RendezvousInput::kPythonBytesRepr) {
      whole = key.size() * 4 + 3 <= kBuffer;
      if (whole) {
        std::size_t used = 0;
        bytes_repr(key, [&](char c) { buffer[used++] = c; });
        text = std::string_view(buffer, used);
      }
    }
    std::size_t winner = size_;
    std::uint32_t top = 0;
    for (std::size_t s = 0; s < size_; ++s) {
      if (!avoid.empty() && avoid[s] != 0) {
        continue;
      }
      Murmur3_32::Stream stream = prefixes_[s];
      if (whole) {
        stream.update(text);
      } else {
        feed(stream, key);
      }
      const std::uint32_t score = stream.finish();
      if (winner == size_ || score > top || (score == top && nodes_[s] > nodes_[winner])) {
        top = score;
        winner = s;
      }
    }
    return winner;
  }

  [[nodiscard]] static auto is_ascii(std::string_view text) noexcept -> bool {
    for (const char c : text) {
      if (static_cast<unsigned char>(c) >= 0x80U) {
        return false;
      }
    }
    return true;
  }

  // Feeds a key too long for the buffer to the stream, in pieces.
  void feed(Murmur3_32::Stream& stream, std::string_view key) const noexcept {
    char chunk[64];
    std::size_t used = 0;
    const auto put = [&](char c) {
      chunk[used++] = c;
      if (used == sizeof chunk) {
        stream.update(std::string_view(chunk, used));
        used = 0;
      }
    };
    if (input_ == RendezvousInput::kPythonBytesRepr) {
      bytes_repr(key, put);
    } else {
      low_bytes(key, put);
    }
    stream.update(std::string_view(chunk, used));
  }

  // Python's bytes repr: b'...' (b"..." when the bytes hold ' but no "), with
  // \\, the quote, \t, \n, \r and \xNN escapes; printable ASCII as is.
  template <class Put>
  static void bytes_repr(std::string_view key, Put&& put) noexcept {
    const bool double_quotes =
        key.find('\'') != std::string_view::npos && key.find('"') == std::string_view::npos;
    const char quote = double_quotes ? '"' : '\'';
    static constexpr char kHex[] = "0123456789abcdef";
    put('b');
    put(quote);
    for (const char c : key) {
      const auto byte = static_cast<unsigned char>(c);
      if (c == quote || c == '\\') {
        put('\\');
        put(c);
      } else if (c == '\t' || c == '\n' || c == '\r') {
        put('\\');
        put(c == '\t' ? 't' : c == '\n' ? 'n' : 'r');
      } else if (byte < 0x20U || byte >= 0x7FU) {
        put('\\');
        put('x');
        put(kHex[byte >> 4U]);
        put(kHex[byte & 0xFU]);
      } else {
        put(c);
      }
    }
    put(quote);
  }

  // One byte per UTF-8 character: the code point's low byte. A lead byte
  // (or an ASCII byte) starts a character; the low byte joins bits 0..5 of
  // its last continuation byte with bits 0..1 of the byte before. A byte that
  // starts no complete sequence stands alone.
  template <class Put>
  static void low_bytes(std::string_view text, Put&& put) noexcept {
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto lead = static_cast<unsigned char>(text[i]);
      std::size_t extra = lead >= 0xF0U ? 3 : lead >= 0xE0U ? 2 : lead >= 0xC0U ? 1 : 0;
      std::size_t have = 0;
      while (have < extra && i + have + 1 < text.size() &&
             (static_cast<unsigned char>(text[i + have + 1]) & 0xC0U) == 0x80U) {
        ++have;
      }
      if (have != extra) {
        extra = 0;
      }
      unsigned char low = lead;
      if (extra > 0) {
        const auto last = static_cast<unsigned char>(text[i + extra]);
        const auto before = static_cast<unsigned char>(text[i + extra - 1]);
        low = static_cast<unsigned char>((last & 0x3FU) | ((before & 0x03U) << 6U));
      }
      put(static_cast<char>(low));
      i += extra;
    }
  }

  std::size_t size_;
  RendezvousInput input_;
  std::vector<std::string> nodes_;
  std::vector<Murmur3_32::Stream> prefixes_;
};

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_LOCATORS_RENDEZVOUS_LOCATOR_HPP_
