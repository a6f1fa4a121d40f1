// SPDX-License-Identifier: MIT
// codecs_bench.cpp: the value codecs (codecs/) on str20000 of
// tests/golden/values/values.txt, a 20,000-byte compressible string, against
// PHP itself doing the same work on the same machine in the same run; and a
// typed get against a raw get.
//
// Benchmarks:
//   BM_Encode/<case>, BM_Decode/<case>  one codec's encode of str20000, and
//       its decode of the item the peer client stored for it (the golden
//       item of value table case <case>), in a Google Benchmark loop:
//       bytes_per_second counts the 20,000 bytes of the string. The codec is
//       make_codec(<the case's codec>, <its settings>): the settings under
//       which that client compressed the string. Counters: stored_bytes (the
//       item's size), golden_bytes (1: memshard's encoding is the client's
//       byte for byte; gzip headers hold a time, so gzip cases may differ
//       there and still decode alike).
//   BM_VsPhp/zlib  php-memcached's zlib (PhpMemcachedCodec, compression=zlib):
//       memshard_encode and memshard_decode against PHP's own gzcompress()
//       and gzuncompress() (php_encode, php_decode), which is what
//       php-memcached 3.2 does around a 4-byte length (the PHP side checks
//       that on an item its client stored). No server.
//   BM_VsPhp/set, BM_VsPhp/get  round trips to one memcached: memshard's
//       ShardedClient::set_value / get_value with PhpMemcachedCodec
//       (memshard_fastlz, memshard_zlib) and set / get with no codec
//       (memshard_raw), against php-memcached's Memcached::set / get with
//       compression FastLZ, zlib and off (php_fastlz, php_zlib, php_raw). Two
//       more raw arms per side move, uncompressed, the very bytes the
//       compressing arms store (raw_fastlz: 1,899 bytes, raw_zlib: 955): the
//       difference between a compressing arm and the raw arm of the same size
//       is that side's codec cost inside the round trip, the same bytes
//       crossing the network. Counters fastlz_bytes and zlib_bytes: those sizes.
//   BM_TypedGet  memshard alone: get_value with PhpMemcachedCodec against get
//       of the same item: the FastLZ item of str20000 (typed_fastlz,
//       raw_fastlz), the integer 42 (typed_int, raw_int) and the string
//       "hello, memshard" (typed_small, raw_small); with PHP, its get of the
//       same two small values (php_int, php_small).
//
// PHP: bench/php/codecs_bench.php, started once by this process (MEMSHARD_PHP,
// default /usr/bin/php; MEMSHARD_BENCH_PHP_SCRIPT overrides the script) and
// driven over a pipe: each of its batches is timed by PHP itself (hrtime
// around the loop), so the pipe is not in its times. Without PHP or its
// memcached extension the PHP arms are left out, and the context
// memshard_codecs_php says why.
//
// Measurement of BM_VsPhp and BM_TypedGet: MEMSHARD_BENCH_CODECS_ROUNDS rounds
// (default 300) after 3 rounds of warm-up; in each round every arm runs one
// batch of 10 calls, in a fresh random order. Each counter <a>_vs_<b> is the
// median of the per-round ratios of arm a's time to arm b's, with _lo and _hi
// (distribution-free ~95% interval); <arm>_ns is the arm's median time per
// call; <side>_<c>_codec_ns the median of the per-round differences
// <side>_<c> - <side>_raw_<c>. Every call of every arm checks its answer (the
// value read back, stored, or the size compressed), and a wrong one fails the
// benchmark.
//
// Before timing: str20000 is compared with the golden items' decoded values;
// memshard's FastLZ and zlib items are compared, byte for byte, with
// php-memcached's golden items and with the items the PHP side stored in this
// run (read raw), and get_value reads the PHP side's items.
//
// Server: the first of MEMSHARD_SERVERS (each empty unless
// MEMSHARD_BENCH_ALLOW_NONEMPTY=1), or one local memcached. Every key starts
// with the run's prefix (MEMSHARD_BENCH_PREFIX, run_keys.hpp), then
// "memshard-codecs:"; at the end, and after a failure, every key of both
// sides is deleted; a local server must then be empty.

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "live_servers.hpp"
#include "memshard/codecs/make_codec.hpp"
#include "memshard/codecs/php_memcached_codec.hpp"
#include "memshard/memshard.hpp"
#include "run_keys.hpp"
#include "support/child_process.hpp"
#include "support/value_table.hpp"

namespace {

using memshard::AnyCodec;
using memshard::CodecResult;
using memshard::Encoded;
using memshard::PhpCompression;
using memshard::PhpMemcachedCodec;
using memshard::PhpMemcachedOptions;
using memshard::Server;
using memshard::Value;
using memshard::bench::median;
using memshard::bench::median_interval;
using memshard::bench::MedianInterval;
using Client = memshard::ShardedClient<memshard::KetamaLocator<memshard::Md5>>;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kDefaultRounds = 300;
constexpr std::size_t kWarmupRounds = 3;
constexpr std::size_t kBatch = 10;
constexpr std::string_view kSmall = "hello, memshard";
constexpr std::int64_t kInt = 42;

auto values_dir() -> std::filesystem::path {
  return std::filesystem::path(MEMSHARD_GOLDEN_DIR) / "values";
}

/// fail: throws std::runtime_error "memshard bench: <what>".
[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("memshard bench: " + what);
}

/// str20000: the string of values.txt.
auto str20000() -> const std::string& {
  static const std::string text = [] {
    for (const auto& named : memshard::testing::read_value_set(values_dir())) {
      if (named.name == "str20000") {
        return named.value.as_string();
      }
    }
    fail("no str20000 in values.txt");
  }();
  return text;
}

/// GoldenCase: a value table case whose client compressed str20000.
struct GoldenCase {
  std::string_view file;   ///< the table, in tests/golden/values/
  std::string_view id;     ///< the case
  std::string_view label;  ///< how the report names it
};

constexpr std::array<GoldenCase, 10> kCases = {{
    {"php_memcached.values", "php-memcached-default", "php-memcached FastLZ"},
    {"php_memcached.values", "php-memcached-zlib", "php-memcached zlib"},
    {"php_memcache.values", "php-memcache-default", "php-memcache zlib"},
    {"spymemcached.values", "spymemcached-default", "spymemcached gzip"},
    {"dalli.values", "dalli-default", "dalli zlib (Marshal)"},
    {"dalli.values", "dalli-gzip", "dalli gzip (Marshal)"},
    {"cache_memcached.values", "cache-memcached-compress1000", "cache-memcached gzip"},
    {"cache_memcached_fast.values", "cache-memcached-fast-compress1000",
     "cache-memcached-fast gzip"},
    {"python_memcache.values", "python-memcache-compress1000", "python-memcache zlib"},
    {"pylibmc.values", "pylibmc-compress1000", "pylibmc zlib"},
}};

/// Subject: one case's codec and the item its client stored for str20000.
struct Subject {
  std::string id;  ///< the case
  std::string label;
  AnyCodec codec;
  Encoded golden;
};

/// load_subject: the codec and golden item of `wanted`; throws unless the
/// codec decodes the golden item to str20000.
auto load_subject(const GoldenCase& wanted) -> Subject {
  for (const auto& found : memshard::testing::read_value_cases(values_dir() / wanted.file)) {
    if (found.id != wanted.id) {
      continue;
    }
    const memshard::testing::ValueItem* item = found.item("str20000");
    if (item == nullptr || item->refused) {
      fail(std::string(wanted.id) + ": no str20000 item");
    }
    Subject subject{
        std::string(wanted.id), std::string(wanted.label),
        memshard::make_codec(found.codec,
                             memshard::CodecSettings(found.settings.begin(), found.settings.end())),
        Encoded{item->bytes, item->flags}};
    const CodecResult<Value> decoded = subject.codec.decode(item->bytes, item->flags);
    if (!decoded.ok() || decoded.value().as_string() != str20000()) {
      fail(std::string(wanted.id) + ": the golden str20000 item does not decode to str20000");
    }
    if (item->bytes.size() >= str20000().size()) {
      fail(std::string(wanted.id) + ": the golden str20000 item is not compressed");
    }
    return subject;
  }
  fail(std::string(wanted.file) + " has no case " + std::string(wanted.id));
}

/// golden_item: the item php-memcached stored for value `name` in case `id`
/// of php_memcached.values.
auto golden_item(std::string_view id, std::string_view name) -> Encoded {
  for (const auto& found :
       memshard::testing::read_value_cases(values_dir() / "php_memcached.values")) {
    if (found.id == id) {
      if (const memshard::testing::ValueItem* item = found.item(name); item != nullptr) {
        return {item->bytes, item->flags};
      }
    }
  }
  fail("php_memcached.values: no item " + std::string(name) + " in case " + std::string(id));
}

void bm_encode(benchmark::State& state, const Subject& subject) {
  const Value value(str20000());
  CodecResult<Encoded> first = subject.codec.encode(value);
  if (!first.ok()) {
    state.SkipWithError(first.error().message().c_str());
    return;
  }
  const CodecResult<Value> back = subject.codec.decode(first.value().bytes, first.value().flags);
  if (!back.ok() || back.value().as_string() != str20000()) {
    state.SkipWithError("what memshard encodes does not decode to str20000");
    return;
  }
  for (auto _ : state) {
    CodecResult<Encoded> out = subject.codec.encode(value);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(str20000().size()));
  state.SetLabel(subject.label);
  state.counters["stored_bytes"] = static_cast<double>(first.value().bytes.size());
  state.counters["golden_bytes"] = first.value() == subject.golden ? 1 : 0;
}

void bm_decode(benchmark::State& state, const Subject& subject) {
  for (auto _ : state) {
    CodecResult<Value> out = subject.codec.decode(subject.golden.bytes, subject.golden.flags);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(str20000().size()));
  state.SetLabel(subject.label);
  state.counters["stored_bytes"] = static_cast<double>(subject.golden.bytes.size());
}

// ---- PHP ------------------------------------------------------------------

/// PhpSide: bench/php/codecs_bench.php, running as a child process, one
/// command line in, one answer line out.
class PhpSide {
 public:
  PhpSide(const std::string& php, const std::string& script, const std::string& address,
          const std::string& key_prefix) {
    int to_child[2];
    int from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) {
      fail("pipe2 failed");
    }
    to_ = to_child[1];
    from_ = from_child[0];
    try {
      child_ = std::make_unique<memshard::testing::ChildProcess>(
          php,
          std::vector<std::string>{script, (values_dir() / "values.txt").string(), address,
                                   key_prefix},
          to_child[0], from_child[1], STDERR_FILENO);
    } catch (...) {
      ::close(to_child[0]);
      ::close(from_child[1]);
      close_pipes();
      throw;
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    const std::string ready = read_line();
    if (ready.rfind("ready ", 0) != 0) {
      fail("PHP did not start: " + ready);
    }
    for (std::string_view rest = std::string_view(ready).substr(6); !rest.empty();) {
      const std::size_t space = rest.find(' ');
      const std::string_view field = rest.substr(0, space);
      rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
      if (field.rfind("keys=", 0) == 0) {
        for (std::string_view list = field.substr(5); !list.empty();) {
          const std::size_t comma = list.find(',');
          keys_.emplace_back(list.substr(0, comma));
          list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        }
      } else {
        versions_.append(versions_.empty() ? "" : " ").append(field);
      }
    }
  }
  PhpSide(const PhpSide&) = delete;
  auto operator=(const PhpSide&) -> PhpSide& = delete;
  PhpSide(PhpSide&&) = delete;
  auto operator=(PhpSide&&) -> PhpSide& = delete;
  ~PhpSide() {
    static_cast<void>(::write(to_, "quit\n", 5));
    child_->stop(std::chrono::milliseconds{2000});
    close_pipes();
  }

  /// call: sends `command`; answers what follows "ok" in the answer, or throws.
  auto call(const std::string& command) -> std::string {
    const std::string line = command + "\n";
    for (std::size_t sent = 0; sent < line.size();) {
      const ssize_t n = ::write(to_, line.data() + sent, line.size() - sent);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        fail("PHP stopped reading (" + command + ")");
      }
      sent += static_cast<std::size_t>(n);
    }
    const std::string answer = read_line();
    if (answer == "ok") {
      return {};
    }
    if (answer.rfind("ok ", 0) != 0) {
      fail("PHP, " + command + ": " + answer);
    }
    return answer.substr(3);
  }

  /// run: `calls` calls of `op`, checked by PHP; the ns PHP measured.
  auto run(const std::string& op, std::size_t calls) -> double {
    return std::stod(call("run " + op + " " + std::to_string(calls)));
  }

  /// keys: every key the PHP side may write.
  [[nodiscard]] auto keys() const -> const std::vector<std::string>& { return keys_; }
  /// versions: "php=8.2.36 memcached=3.2.0".
  [[nodiscard]] auto versions() const -> const std::string& { return versions_; }

 private:
  auto read_line() -> std::string {
    const auto deadline = Clock::now() + std::chrono::seconds{120};
    for (;;) {
      if (const std::size_t end = buffer_.find('\n'); end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return line;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd entry{from_, POLLIN, 0};
      const int ready = ::poll(&entry, 1, static_cast<int>(std::max<std::int64_t>(left, 0)));
      if (ready < 0 && errno == EINTR) {
        continue;
      }
      if (ready <= 0) {
        fail("no answer from PHP in 120 s");
      }
      std::array<char, 4096> chunk{};
      const ssize_t n = ::read(from_, chunk.data(), chunk.size());
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        fail("PHP ended" + (buffer_.empty() ? std::string() : ": " + buffer_));
      }
      buffer_.append(chunk.data(), static_cast<std::size_t>(n));
    }
  }

  void close_pipes() noexcept {
    ::close(to_);
    ::close(from_);
  }

  int to_ = -1;
  int from_ = -1;
  std::unique_ptr<memshard::testing::ChildProcess> child_;
  std::string buffer_;
  std::vector<std::string> keys_;
  std::string versions_;
};

/// php_program: MEMSHARD_PHP, or /usr/bin/php; nullopt (with the reason in
/// `why`) when it is not an executable file.
auto php_program(std::string& why) -> std::optional<std::string> {
  const char* given = std::getenv("MEMSHARD_PHP");
  std::string php = given != nullptr && *given != '\0' ? given : "/usr/bin/php";
  if (::access(php.c_str(), X_OK) != 0) {
    why = php + " not found (Debian: php-cli php-memcached)";
    return std::nullopt;
  }
  return php;
}

auto php_script() -> std::string {
  const char* given = std::getenv("MEMSHARD_BENCH_PHP_SCRIPT");
  return given != nullptr && *given != '\0' ? given : MEMSHARD_BENCH_PHP_SCRIPT_DEFAULT;
}

// ---- interleaved arms -------------------------------------------------------

/// Arm: one contender: `run(calls)` makes that many checked calls and answers
/// their time in ns; it throws on a wrong answer.
struct Arm {
  std::string name;
  std::function<double(std::size_t)> run;
};

/// timed: an arm timed here, with steady_clock, around `calls` calls of `call`
/// (false: a wrong answer).
auto timed(std::string name, std::function<bool()> call) -> Arm {
  return {
      name, [name, call = std::move(call)](std::size_t calls) {
        std::size_t wrong = 0;
        const auto start = Clock::now();
        for (std::size_t i = 0; i < calls; ++i) {
          if (!call()) {
            ++wrong;
          }
        }
        const auto stop = Clock::now();
        if (wrong != 0) {
          fail(name + ": " + std::to_string(wrong) + " wrong answers of " + std::to_string(calls));
        }
        return std::chrono::duration<double, std::nano>(stop - start).count();
      }};
}

/// php_arm: an arm run and timed by the PHP side.
auto php_arm(std::string name, PhpSide& php, std::string op) -> Arm {
  return {std::move(name),
          [&php, op = std::move(op)](std::size_t calls) { return php.run(op, calls); }};
}

/// Measured: ns per call of each arm (by name) in each timed round.
class Measured {
 public:
  Measured(const std::vector<Arm>& arms, std::vector<std::vector<double>> ns) : ns_(std::move(ns)) {
    for (const Arm& arm : arms) {
      names_.push_back(arm.name);
    }
  }

  [[nodiscard]] auto of(std::string_view name) const -> const std::vector<double>& {
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == name) {
        return ns_[i];
      }
    }
    fail("no arm " + std::string(name));
  }
  [[nodiscard]] auto has(std::string_view name) const -> bool {
    return std::find(names_.begin(), names_.end(), name) != names_.end();
  }

  /// publish: <arm>_ns for every arm.
  void publish(benchmark::State& state) const {
    for (std::size_t i = 0; i < names_.size(); ++i) {
      state.counters[names_[i] + "_ns"] = median(ns_[i]);
    }
    state.counters["rounds"] = static_cast<double>(ns_.empty() ? 0 : ns_.front().size());
    state.counters["batch"] = static_cast<double>(kBatch);
  }

  /// ratio: <a>_vs_<b> (with _lo, _hi): the median of a's time over b's, round by round.
  void ratio(benchmark::State& state, const std::string& a, const std::string& b) const {
    if (!has(a) || !has(b)) {
      return;
    }
    const std::vector<double>& x = of(a);
    const std::vector<double>& y = of(b);
    std::vector<double> ratios(x.size());
    for (std::size_t r = 0; r < x.size(); ++r) {
      ratios[r] = x[r] / y[r];
    }
    const MedianInterval in = median_interval(std::move(ratios));
    const std::string name = a + "_vs_" + b;
    state.counters[name] = in.median;
    state.counters[name + "_lo"] = in.low;
    state.counters[name + "_hi"] = in.high;
  }

  /// difference: `counter`: the median of a's time minus b's, round by round.
  void difference(benchmark::State& state, const std::string& counter, const std::string& a,
                  const std::string& b) const {
    if (!has(a) || !has(b)) {
      return;
    }
    const std::vector<double>& x = of(a);
    const std::vector<double>& y = of(b);
    std::vector<double> gaps(x.size());
    for (std::size_t r = 0; r < x.size(); ++r) {
      gaps[r] = x[r] - y[r];
    }
    state.counters[counter] = median(std::move(gaps));
  }

 private:
  std::vector<std::string> names_;
  std::vector<std::vector<double>> ns_;
};

/// interleave: kWarmupRounds + MEMSHARD_BENCH_CODECS_ROUNDS rounds, each running
/// every arm for kBatch calls in a fresh random order.
auto interleave(const std::vector<Arm>& arms) -> Measured {
  const std::size_t rounds =
      memshard::bench::env_count("MEMSHARD_BENCH_CODECS_ROUNDS", kDefaultRounds, 5);
  std::vector<std::vector<double>> ns(arms.size());
  memshard::bench::interleaved_rounds(arms.size(), kWarmupRounds, rounds, 0x636F64656373ULL,
                                      [&](std::size_t a, bool timed) {
                                        const double time = arms[a].run(kBatch);
                                        if (timed) {
                                          ns[a].push_back(time / static_cast<double>(kBatch));
                                        }
                                      });
  return Measured(arms, std::move(ns));
}

// ---- the live part ----------------------------------------------------------

/// Live: the server, memshard's client and items, and the PHP side.
class Live {
 public:
  explicit Live(const memshard::bench::LiveServers& servers)
      : server_(servers.servers().front()),
        client_(std::vector<Server>{server_}),
        prefix_(memshard::bench::run_prefix() + "memshard-codecs:"),
        fastlz_(options(PhpCompression::kFastlz)),
        zlib_(options(PhpCompression::kZlib)),
        value_(str20000()),
        fastlz_bytes_(golden_item("php-memcached-default", "str20000").bytes),
        zlib_bytes_(golden_item("php-memcached-zlib", "str20000").bytes) {
    for (const char* name : {"fastlz", "zlib", "raw", "raw_fastlz", "raw_zlib", "int", "small"}) {
      keys_.push_back(prefix_ + "memshard:" + name);
    }
    std::string why;
    if (const std::optional<std::string> php = php_program(why)) {
      try {
        php_ = std::make_unique<PhpSide>(*php, php_script(), server_.endpoint(), prefix_);
        php_note_ = php_->versions();
      } catch (const std::exception& error) {
        php_note_ = std::string("none: ") + error.what();
      }
    } else {
      php_note_ = "none: " + why;
    }
  }

  /// store_and_check: stores memshard's items and checks them, and the PHP
  /// side's, against the golden items and each other.
  void store_and_check() {
    const auto ok = [](const memshard::Status& status, const std::string& what) {
      if (!status.ok()) {
        fail(what + ": " + status.message());
      }
    };
    ok(client_.set_value(key("fastlz"), value_, fastlz_), "set_value fastlz");
    ok(client_.set_value(key("zlib"), value_, zlib_), "set_value zlib");
    ok(client_.set(key("raw"), str20000()), "set raw");
    ok(client_.set(key("raw_fastlz"), fastlz_bytes_), "set raw_fastlz");
    ok(client_.set(key("raw_zlib"), zlib_bytes_), "set raw_zlib");
    ok(client_.set_value(key("int"), Value(kInt), fastlz_), "set_value int");
    ok(client_.set_value(key("small"), Value(std::string(kSmall)), fastlz_), "set_value small");
    const Encoded fastlz = golden_item("php-memcached-default", "str20000");
    const Encoded zlib = golden_item("php-memcached-zlib", "str20000");
    const Encoded number = golden_item("php-memcached-default", "int42");
    const Encoded small = golden_item("php-memcached-default", "ascii");
    if (number.bytes != std::to_string(kInt) || small.bytes != kSmall) {
      fail("the golden items int42 and ascii are not 42 and '" + std::string(kSmall) + "'");
    }
    expect_item(key("fastlz"), fastlz);
    expect_item(key("zlib"), zlib);
    expect_item(key("raw"), Encoded{str20000(), 0});
    expect_item(key("raw_fastlz"), Encoded{fastlz.bytes, 0});
    expect_item(key("raw_zlib"), Encoded{zlib.bytes, 0});
    expect_item(key("int"), number);
    expect_item(key("small"), small);
    if (php_) {
      static_cast<void>(php_->call("check"));
      const std::string php_prefix = prefix_ + "php:";
      expect_item(php_prefix + "fastlz", fastlz);
      expect_item(php_prefix + "zlib", zlib);
      expect_item(php_prefix + "raw", Encoded{str20000(), 0});
      expect_item(php_prefix + "raw_fastlz", Encoded{fastlz.bytes, 0});
      expect_item(php_prefix + "raw_zlib", Encoded{zlib.bytes, 0});
      expect_item(php_prefix + "int", number);
      expect_item(php_prefix + "small", small);
      for (const char* name : {"fastlz", "zlib"}) {
        if (!typed_hit(php_prefix + name, value_)) {
          fail(std::string("get_value of the PHP side's ") + name + " item");
        }
      }
    }
  }

  [[nodiscard]] auto zlib_arms() -> std::vector<Arm> {
    const Encoded golden = golden_item("php-memcached-zlib", "str20000");
    const std::size_t size = golden.bytes.size();
    std::vector<Arm> arms = {timed("memshard_encode",
                                   [this, size] {
                                     const CodecResult<Encoded> out = zlib_.encode(value_);
                                     return out.ok() && out.value().bytes.size() == size;
                                   }),
                             timed("memshard_decode", [this, golden] {
                               const CodecResult<Value> out =
                                   zlib_.decode(golden.bytes, golden.flags);
                               return out.ok() && out.value().as_string() == str20000();
                             })};
    if (php_) {
      arms.push_back(php_arm("php_encode", *php_, "gzcompress"));
      arms.push_back(php_arm("php_decode", *php_, "gzuncompress"));
    }
    return arms;
  }

  [[nodiscard]] auto set_arms() -> std::vector<Arm> {
    std::vector<Arm> arms = {
        timed("memshard_fastlz",
              [this] { return client_.set_value(key("fastlz"), value_, fastlz_).ok(); }),
        timed("memshard_zlib",
              [this] { return client_.set_value(key("zlib"), value_, zlib_).ok(); }),
        timed("memshard_raw", [this] { return client_.set(key("raw"), str20000()).ok(); }),
        timed("memshard_raw_fastlz",
              [this] { return client_.set(key("raw_fastlz"), fastlz_bytes_).ok(); }),
        timed("memshard_raw_zlib",
              [this] { return client_.set(key("raw_zlib"), zlib_bytes_).ok(); })};
    add_php(arms, "set_");
    return arms;
  }

  [[nodiscard]] auto get_arms() -> std::vector<Arm> {
    std::vector<Arm> arms = {
        timed("memshard_fastlz", [this] { return typed_hit(key("fastlz"), value_, fastlz_); }),
        timed("memshard_zlib", [this] { return typed_hit(key("zlib"), value_, zlib_); }),
        timed("memshard_raw", [this] { return raw_hit(key("raw"), str20000()); }),
        timed("memshard_raw_fastlz", [this] { return raw_hit(key("raw_fastlz"), fastlz_bytes_); }),
        timed("memshard_raw_zlib", [this] { return raw_hit(key("raw_zlib"), zlib_bytes_); })};
    add_php(arms, "get_");
    return arms;
  }

  [[nodiscard]] auto typed_get_arms() -> std::vector<Arm> {
    std::vector<Arm> arms = {
        timed("typed_fastlz", [this] { return typed_hit(key("fastlz"), value_, fastlz_); }),
        timed("raw_fastlz", [this] { return raw_hit(key("fastlz"), fastlz_bytes_); }),
        timed("typed_int", [this] { return typed_hit(key("int"), Value(kInt), fastlz_); }),
        timed("raw_int", [this] { return raw_hit(key("int"), "42"); }),
        timed("typed_small",
              [this] { return typed_hit(key("small"), Value(std::string(kSmall)), fastlz_); }),
        timed("raw_small", [this] { return raw_hit(key("small"), kSmall); })};
    if (php_) {
      arms.push_back(php_arm("php_int", *php_, "get_int"));
      arms.push_back(php_arm("php_small", *php_, "get_small"));
    }
    return arms;
  }

  /// erase: deletes every key of both sides; answers how many were found.
  auto erase() -> std::size_t {
    std::vector<std::string> every = keys_;
    if (php_) {
      every.insert(every.end(), php_->keys().begin(), php_->keys().end());
    }
    return memshard::bench::erase_keys(std::vector<Server>{server_}, every);
  }

  [[nodiscard]] auto php_note() const -> const std::string& { return php_note_; }
  /// stored_sizes: the counters fastlz_bytes and zlib_bytes.
  void stored_sizes(benchmark::State& state) const {
    state.counters["fastlz_bytes"] = static_cast<double>(fastlz_bytes_.size());
    state.counters["zlib_bytes"] = static_cast<double>(zlib_bytes_.size());
  }

 private:
  static auto options(PhpCompression compression) -> PhpMemcachedOptions {
    PhpMemcachedOptions options;
    options.compression = compression;
    return options;
  }

  [[nodiscard]] auto key(std::string_view name) const -> std::string {
    return prefix_ + "memshard:" + std::string(name);
  }

  void add_php(std::vector<Arm>& arms, const std::string& op) {
    if (php_) {
      for (const char* c : {"fastlz", "zlib", "raw", "raw_fastlz", "raw_zlib"}) {
        arms.push_back(php_arm(std::string("php_") + c, *php_, op + c));
      }
    }
  }

  auto typed_hit(const std::string& key, const Value& want, const PhpMemcachedCodec& codec)
      -> bool {
    const auto got = client_.get_value(key, codec);
    return got.ok() && got.value() && *got.value() == want;
  }
  auto typed_hit(const std::string& key, const Value& want) -> bool {
    return typed_hit(key, want, fastlz_);
  }
  auto raw_hit(const std::string& key, std::string_view want) -> bool {
    const auto got = client_.get(key);
    return got.ok() && got.value() && got.value()->value == want;
  }

  /// expect_item: throws unless the server holds exactly `want` under `key`.
  void expect_item(const std::string& key, const Encoded& want) {
    const auto got = client_.get(key);
    if (!got.ok() || !got.value()) {
      fail("no item " + key);
    }
    if (got.value()->value != want.bytes || got.value()->flags != want.flags) {
      fail(key + ": flags " + std::to_string(got.value()->flags) + " and " +
           std::to_string(got.value()->value.size()) + " bytes, want flags " +
           std::to_string(want.flags) + " and the " + std::to_string(want.bytes.size()) +
           " bytes of the golden item");
    }
  }

  Server server_;
  Client client_;
  std::string prefix_;
  PhpMemcachedCodec fastlz_;
  PhpMemcachedCodec zlib_;
  Value value_;
  std::string fastlz_bytes_;  ///< what PHP's FastLZ stores for str20000
  std::string zlib_bytes_;    ///< what PHP's zlib stores for it
  std::vector<std::string> keys_;
  std::unique_ptr<PhpSide> php_;
  std::string php_note_;
};

/// register_interleaved: a benchmark of `arms()` in interleaved rounds, with
/// `publish` adding its ratios.
void register_interleaved(const std::string& name, std::function<std::vector<Arm>()> arms,
                          std::function<void(benchmark::State&, const Measured&)> publish) {
  benchmark::RegisterBenchmark(
      name.c_str(),
      [arms = std::move(arms), publish = std::move(publish)](benchmark::State& state) {
        try {
          const std::vector<Arm> contenders = arms();
          std::optional<Measured> measured;
          for (auto _ : state) {
            measured.emplace(interleave(contenders));
          }
          measured->publish(state);
          publish(state, *measured);
        } catch (const std::exception& error) {
          state.SkipWithError(error.what());
        }
      })
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
}

void register_all(const std::vector<Subject>& subjects, Live& live) {
  for (const Subject& subject : subjects) {
    benchmark::RegisterBenchmark(
        ("BM_Encode/" + subject.id).c_str(),
        [&subject](benchmark::State& state) { bm_encode(state, subject); });
    benchmark::RegisterBenchmark(
        ("BM_Decode/" + subject.id).c_str(),
        [&subject](benchmark::State& state) { bm_decode(state, subject); });
  }
  register_interleaved(
      "BM_VsPhp/zlib", [&live] { return live.zlib_arms(); },
      [](benchmark::State& state, const Measured& m) {
        m.ratio(state, "memshard_encode", "php_encode");
        m.ratio(state, "memshard_decode", "php_decode");
      });
  for (const char* op : {"set", "get"}) {
    register_interleaved(
        std::string("BM_VsPhp/") + op,
        [&live, op] { return std::string_view(op) == "set" ? live.set_arms() : live.get_arms(); },
        [&live](benchmark::State& state, const Measured& m) {
          live.stored_sizes(state);
          for (const char* c : {"fastlz", "zlib", "raw", "raw_fastlz", "raw_zlib"}) {
            m.ratio(state, std::string("memshard_") + c, std::string("php_") + c);
          }
          for (const char* side : {"memshard", "php"}) {
            for (const char* c : {"fastlz", "zlib"}) {
              m.difference(state, std::string(side) + "_" + c + "_codec_ns",
                           std::string(side) + "_" + c, std::string(side) + "_raw_" + c);
            }
          }
        });
  }
  register_interleaved(
      "BM_TypedGet", [&live] { return live.typed_get_arms(); },
      [](benchmark::State& state, const Measured& m) {
        for (const char* item : {"fastlz", "int", "small"}) {
          m.ratio(state, std::string("typed_") + item, std::string("raw_") + item);
        }
        m.ratio(state, "typed_int", "php_int");
        m.ratio(state, "typed_small", "php_small");
      });
}

void run_all(const memshard::bench::LiveServers& servers) {
  std::vector<Subject> subjects;
  for (const GoldenCase& wanted : kCases) {
    subjects.push_back(load_subject(wanted));
  }
  Live live(servers);
  benchmark::AddCustomContext("memshard_codecs_value_bytes", std::to_string(str20000().size()));
  benchmark::AddCustomContext("memshard_codecs_php", live.php_note());
  try {
    live.store_and_check();
    register_all(subjects, live);
    benchmark::RunSpecifiedBenchmarks();
  } catch (const std::exception&) {
    static_cast<void>(live.erase());
    throw;
  }
  const std::size_t deleted = live.erase();
  std::cerr << "memshard: deleted " << deleted << " keys under '" << memshard::bench::run_prefix()
            << "'\n";
  if (servers.started_here()) {
    memshard::bench::require_emptied(servers.servers(), "deleting the codecs benchmark's keys");
  }
}

}  // namespace

auto main(int argc, char** argv) -> int {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  // A PHP side that ends early must fail a write, not end this process.
  ::signal(SIGPIPE, SIG_IGN);
  try {
    const memshard::bench::LiveServers servers(1, 100, 1, "memshard_codecs_");
    run_all(servers);
    benchmark::Shutdown();
  } catch (const std::exception& error) {
    std::cerr << "memshard codecs benchmark: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
