// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_RENDEZVOUS_LOCATOR_HPP_
#define MEMSHARD_RENDEZVOUS_LOCATOR_HPP_

// rendezvous_locator.hpp: RendezvousLocator, highest-random-weight hashing as
// pymemcache's HashClient does it.
//
// Every server scores every key, `murmur3_32("node-key")`, and the highest
// score wins. Removing a server moves only its own keys, and adding one moves
// about 1/(N+1) of the keys, all to the new server; the price is that a lookup
// scores all N servers, so it suits small fleets.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "memshard/detail/throw.hpp"
#include "memshard/murmur3.hpp"
#include "memshard/server.hpp"

namespace memshard {

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
/// Complexity: O(N + key length x N) per locate; no allocation.
/// Exception guarantee: the constructor throws ConfigError for an invalid
/// server list; locate is noexcept. Immutable, so safe to share.
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
      std::string node = server.name.empty()
                             ? server.host + ":" + std::to_string(server.port)
                             : server.name;
      Murmur3_32::Stream prefix;
      if (input_ == RendezvousInput::kBytes) {
        prefix.update(node);
      } else {
        update_low_bytes(prefix, node);  // a Python str
      }
      prefix.update("-");
      prefixes_.push_back(prefix);
      nodes_.push_back(std::move(node));
    }
  }

  /// locate: the index of the key's server, in the caller's order.
  [[nodiscard]] auto locate(std::string_view key) const noexcept -> std::size_t {
    std::size_t winner = 0;
    std::uint32_t best = 0;
    for (std::size_t s = 0; s < size_; ++s) {
      Murmur3_32::Stream stream = prefixes_[s];
      update(stream, key);
      const std::uint32_t score = stream.finish();
      if (s == 0 || score > best || (score == best && nodes_[s] > nodes_[winner])) {
        best = score;
        winner = s;
      }
    }
    return winner;
  }

  /// locate_avoiding: the best-scoring server not marked in `avoid`: only the
  /// keys of avoided servers move. Answers locate(key) when all are avoided.
  [[nodiscard]] auto locate_avoiding(std::string_view key,
                                     std::span<const std::uint8_t> avoid) const noexcept
      -> std::size_t {
    if (avoid.size() != size_) {
      return locate(key);
    }
    std::size_t winner = size_;
    std::uint32_t best = 0;
    for (std::size_t s = 0; s < size_; ++s) {
      if (avoid[s] != 0) {
        continue;
      }
      Murmur3_32::Stream stream = prefixes_[s];
      update(stream, key);
      const std::uint32_t score = stream.finish();
      if (winner == size_ || score > best || (score == best && nodes_[s] > nodes_[winner])) {
        best = score;
        winner = s;
      }
    }
    return winner == size_ ? locate(key) : winner;
  }

  /// size: the number of servers.
  [[nodiscard]] auto size() const noexcept -> std::size_t { return size_; }

  /// node: the node name server `index` is scored under.
  [[nodiscard]] auto node(std::size_t index) const -> const std::string& { return nodes_.at(index); }

 private:
  // Feeds the key to the score hash as input_ says.
  void update(Murmur3_32::Stream& stream, std::string_view key) const noexcept {
    switch (input_) {
      case RendezvousInput::kBytes:
        stream.update(key);
        break;
      case RendezvousInput::kCodePointLowBytes:
        update_low_bytes(stream, key);
        break;
      case RendezvousInput::kPythonBytesRepr:
        update_bytes_repr(stream, key);
        break;
    }
  }

  // Python's bytes repr: b'...' (b"..." when the bytes hold ' but no "), with
  // \\, the quote, \t, \n, \r and \xNN escapes; printable ASCII as is.
  static void update_bytes_repr(Murmur3_32::Stream& stream, std::string_view key) noexcept {
    const bool double_quotes =
        key.find('\'') != std::string_view::npos && key.find('"') == std::string_view::npos;
    const char quote = double_quotes ? '"' : '\'';
    static constexpr char kHex[] = "0123456789abcdef";
    char chunk[64];
    std::size_t used = 0;
    const auto put = [&](char c) {
      chunk[used++] = c;
      if (used == sizeof chunk) {
        stream.update(std::string_view(chunk, used));
        used = 0;
      }
    };
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
    stream.update(std::string_view(chunk, used));
  }

  // One byte per UTF-8 character: the code point's low byte.
  static void update_low_bytes(Murmur3_32::Stream& stream, std::string_view text) noexcept {
    char chunk[64];
    std::size_t used = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      // A UTF-8 lead byte (or an ASCII byte) starts a character; its code
      // point's low byte is the lead's low bits joined with the last
      // continuation byte's. Stray bytes count as characters of their own.
      const auto lead = static_cast<unsigned char>(text[i]);
      std::size_t extra = lead >= 0xF0U ? 3 : lead >= 0xE0U ? 2 : lead >= 0xC0U ? 1 : 0;
      std::size_t have = 0;
      while (have < extra && i + have + 1 < text.size() &&
             (static_cast<unsigned char>(text[i + have + 1]) & 0xC0U) == 0x80U) {
        ++have;
      }
      if (have != extra) {
        extra = 0;  // malformed: the byte stands alone
      }
      unsigned char low = lead;
      if (extra > 0) {
        const auto last = static_cast<unsigned char>(text[i + extra]);
        const auto before = static_cast<unsigned char>(text[i + extra - 1]);
        // low byte = bits 0..5 of the last byte, bits 6..7 from the byte before.
        low = static_cast<unsigned char>((last & 0x3FU) | ((before & 0x03U) << 6U));
      }
      chunk[used++] = static_cast<char>(low);
      i += extra;
      if (used == sizeof chunk) {
        stream.update(std::string_view(chunk, used));
        used = 0;
      }
    }
    stream.update(std::string_view(chunk, used));
  }

  std::size_t size_;
  RendezvousInput input_;
  std::vector<std::string> nodes_;
  std::vector<Murmur3_32::Stream> prefixes_;
};

}  // namespace memshard

#endif  // MEMSHARD_RENDEZVOUS_LOCATOR_HPP_
