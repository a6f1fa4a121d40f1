// SPDX-License-Identifier: MIT
//
// readback_write.cpp: the memshard half of readback.sh. For every case of every
// value table (*.values) in VALUES_DIR, encodes each value of values.txt that the
// case holds (an `item` or `refused` line) with the case's codec and settings
// (make_codec) and stores the (flags, bytes) raw, with a text-protocol set, on
// the memcached at HOST:PORT under "rb:<case>:<value-name>":
//
//   readback_write VALUES_DIR HOST:PORT MANIFEST
//
// Prints one line per value: "written <case> <value> <flags> <size>" or
// "not written <case> <value>: <codec error>" (the codec has no form for it).
// MANIFEST gets one line per written item, "<case> <value> <flags> <base64>",
// which the gen_values_<lang> scripts read in readback mode. Exits 1 when the
// server refuses an item or cannot be reached, 2 on a bad table or argument.

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "memshard/codecs/make_codec.hpp"
#include "support/value_table.hpp"

namespace {

namespace fs = std::filesystem;
using memshard::testing::NamedValue;
using memshard::testing::ValueCase;

// TextConnection: one text-protocol connection to a memcached server.
class TextConnection {
 public:
  TextConnection(const std::string& host, const std::string& port) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr) {
      throw std::runtime_error("cannot resolve " + host + ":" + port);
    }
    for (const addrinfo* each = found; each != nullptr && fd_ < 0; each = each->ai_next) {
      fd_ = socket(each->ai_family, each->ai_socktype, each->ai_protocol);
      if (fd_ >= 0 && connect(fd_, each->ai_addr, each->ai_addrlen) != 0) {
        close(fd_);
        fd_ = -1;
      }
    }
    freeaddrinfo(found);
    if (fd_ < 0) {
      throw std::runtime_error("cannot connect to " + host + ":" + port);
    }
  }
  TextConnection(const TextConnection&) = delete;
  auto operator=(const TextConnection&) -> TextConnection& = delete;
  ~TextConnection() { close(fd_); }

  // set: stores `bytes` with `flags` under `key`; the server's reply line.
  auto set(const std::string& key, std::uint32_t flags, const std::string& bytes) -> std::string {
    send_all("set " + key + " " + std::to_string(flags) + " 0 " + std::to_string(bytes.size()) +
             "\r\n" + bytes + "\r\n");
    return read_line();
  }

 private:
  void send_all(std::string_view data) const {
    while (!data.empty()) {
      const ssize_t sent = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (sent <= 0) {
        throw std::runtime_error("send to memcached failed");
      }
      data.remove_prefix(static_cast<std::size_t>(sent));
    }
  }
  auto read_line() -> std::string {
    for (;;) {
      const std::size_t end = buffer_.find("\r\n");
      if (end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 2);
        return line;
      }
      char chunk[4096];
      const ssize_t got = recv(fd_, chunk, sizeof chunk, 0);
      if (got <= 0) {
        throw std::runtime_error("memcached closed the connection");
      }
      buffer_.append(chunk, static_cast<std::size_t>(got));
    }
  }

  int fd_ = -1;
  std::string buffer_;
};

auto base64(std::string_view data) -> std::string {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (data.empty()) {
    return "-";  // as the tables write no bytes
  }
  std::string out;
  for (std::size_t i = 0; i < data.size(); i += 3) {
    std::uint32_t group = static_cast<std::uint32_t>(static_cast<unsigned char>(data[i])) << 16U;
    if (i + 1 < data.size()) {
      group |= static_cast<std::uint32_t>(static_cast<unsigned char>(data[i + 1])) << 8U;
    }
    if (i + 2 < data.size()) {
      group |= static_cast<unsigned char>(data[i + 2]);
    }
    out.push_back(kDigits[group >> 18U & 63U]);
    out.push_back(kDigits[group >> 12U & 63U]);
    out.push_back(i + 1 < data.size() ? kDigits[group >> 6U & 63U] : '=');
    out.push_back(i + 2 < data.size() ? kDigits[group & 63U] : '=');
  }
  return out;
}

auto run(const fs::path& dir, const std::string& address, const fs::path& manifest_path) -> int {
  const std::vector<NamedValue> values = memshard::testing::read_value_set(dir);
  std::vector<fs::path> tables;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".values") {
      tables.push_back(entry.path());
    }
  }
  std::sort(tables.begin(), tables.end());
  const std::size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    throw std::invalid_argument("HOST:PORT wanted, not " + address);
  }
  TextConnection server(address.substr(0, colon), address.substr(colon + 1));
  std::ofstream manifest(manifest_path, std::ios::binary);
  int status = 0;
  for (const fs::path& table : tables) {
    for (const ValueCase& one : memshard::testing::read_value_cases(table)) {
      const memshard::AnyCodec codec = memshard::make_codec(
          one.codec, memshard::CodecSettings(one.settings.begin(), one.settings.end()));
      for (const memshard::testing::ValueItem& item : one.items) {
        const auto named = std::find_if(values.begin(), values.end(),
                                        [&](const NamedValue& v) { return v.name == item.name; });
        if (named == values.end()) {
          throw std::runtime_error(table.string() + ": no value " + item.name + " in values.txt");
        }
        const auto encoded = codec.encode(named->value);
        if (!encoded) {
          std::cout << "not written " << one.id << ' ' << item.name << ": " << encoded.error()
                    << '\n';
          continue;
        }
        const std::string key = "rb:" + one.id + ":" + item.name;
        const std::string reply = server.set(key, encoded->flags, encoded->bytes);
        if (reply != "STORED") {
          std::cout << "FAILED " << one.id << ' ' << item.name << ": the server answered " << reply
                    << '\n';
          status = 1;
          continue;
        }
        manifest << one.id << ' ' << item.name << ' ' << encoded->flags << ' '
                 << base64(encoded->bytes) << '\n';
        std::cout << "written " << one.id << ' ' << item.name << ' ' << encoded->flags << ' '
                  << encoded->bytes.size() << '\n';
      }
    }
  }
  manifest.close();
  if (!manifest) {
    throw std::runtime_error("cannot write " + manifest_path.string());
  }
  return status;
}

}  // namespace

auto main(int argc, char** argv) -> int {
  if (argc != 4) {
    std::cerr << "usage: readback_write VALUES_DIR HOST:PORT MANIFEST\n";
    return 2;
  }
  try {
    return run(argv[1], argv[2], argv[3]);
  } catch (const std::exception& e) {
    std::cerr << "readback_write: " << e.what() << '\n';
    return 2;
  }
}
