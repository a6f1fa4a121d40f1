// SPDX-License-Identifier: MIT
// php_session.cpp: a C++ service that shares state with a PHP application through memcached:
// the login state PHP keeps in its sessions (php-memcached's session handler), and the database
// rows a PHP page cached with `$mc->add(md5($sql), $rows)`.
//
//   memshard-php-session --servers LIST show SESSION_ID
//   memshard-php-session --servers LIST login SESSION_ID USER_ID NAME [ROLE ...]
//   memshard-php-session --servers LIST rows SQL
//
// LIST is PHP's session.save_path (and the list the PHP page gives addServers), such as
// "10.0.0.1:11211,10.0.0.2:11211". Lock options, with PHP's defaults: --lock-retries 5,
// --lock-wait-min 150 and --lock-wait-max 150 (milliseconds), --lock-expire 30 (seconds; 0:
// never), and --lifetime 1440 (seconds, session.gc_maxlifetime).
//
// What php-memcached 3.2.0 does with Debian's settings (memcached.ini only sets
// memcached.serializer=php; the session settings are the extension's defaults):
//
//   - a session lives under "memc.sess.key." + id (memcached.sess_prefix, a libmemcached
//     namespace: the key is placed by the bare id, the prefix only goes on the wire), with
//     flags 0 and the expiry session.gc_maxlifetime (1440 s);
//   - placement is libmemcached's KETAMA ring with one_at_a_time (memcached.sess_consistent_hash
//     On, sess_consistent_hash_type ketama): memshard's "php-memcached-consistent" profile;
//   - the data is PHP's session format (session.serialize_handler = php):
//     `user_id|i:42;name|s:3:"Ada";`, read and written by memshard's PhpSessionCodec;
//   - while a request runs, it holds the lock "memc.sess.key.lock." + id (placed by "lock." + id,
//     so often on another server than the session), taken with `add` of the value "1" with flags
//     0 and the expiry memcached.sess_lock_expire, or max_execution_time when that is 0 (30 s
//     in Debian's php.ini for FPM and Apache; the CLI forces 0: never). A request that finds it
//     taken tries again 5 times (sess_lock_retries), 150 ms apart (sess_lock_wait_min, doubling up
//     to sess_lock_wait_max, also 150), then gives up: session_start() fails. The lock is deleted
//     when the session closes. PHP speaks the binary protocol (sess_binary_protocol On); the items
//     are the same whichever protocol reads them, so this program keeps memshard's default, the
//     text one.
//
// This program takes the lock the same way before it reads or writes a session, and deletes it
// when done. The rows are what a page with `new Memcached()` (default options: libmemcached's
// modula placement, memshard's "php-memcached" profile) stored: PHP serialize() of a list of
// associative arrays, FastLZ-compressed from 2,000 bytes on; PhpMemcachedCodec reads both.
//
// Prints the session's variables (or the rows), one per line, as `name: value`. Exits 0 on
// success, 1 when the session or the rows are not there or a server failed, 2 for bad
// arguments, 3 when the session stayed locked.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <iostream>
#include <memshard/codecs/php_memcached_codec.hpp>
#include <memshard/codecs/php_session_codec.hpp>
#include <memshard/memshard.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace {

/// UsageError: bad command-line arguments (exit status 2).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Failure: a missing session or rows, or a failed server (exit status 1).
class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Locked: another request kept the session locked through every retry (exit status 3).
class Locked : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

constexpr std::string_view kSessionPrefix = "memc.sess.key.";  // memcached.sess_prefix
constexpr std::string_view kLockPrefix = "lock.";              // before the id, inside the prefix

/// SessionSettings: php-memcached's session settings this program must share with PHP.
struct SessionSettings {
  int lock_retries = 5;                          // memcached.sess_lock_retries
  std::chrono::milliseconds lock_wait_min{150};  // memcached.sess_lock_wait_min
  std::chrono::milliseconds lock_wait_max{150};  // memcached.sess_lock_wait_max
  std::chrono::seconds lock_expire{30};          // sess_lock_expire, else max_execution_time
  std::chrono::seconds lifetime{1440};           // session.gc_maxlifetime
};

/// SessionClient: the session handler's placement (a ketama ring over one_at_a_time) with its
/// key prefix, which placement leaves out.
using SessionClient = memshard::ShardedClient<memshard::KetamaLocator<memshard::OneAtATime>>;
/// CacheClient: a page's `new Memcached()`: modula over one_at_a_time, no prefix.
using CacheClient = memshard::ShardedClient<memshard::ModuloLocator<memshard::OneAtATime>>;

auto make_session_client(const std::vector<memshard::Server>& servers) -> SessionClient {
  memshard::ClientOptions options;
  options.key_prefix = std::string(kSessionPrefix);
  options.prefix_hashing = memshard::PrefixHashing::kBareKey;  // libmemcached's namespace
  return SessionClient(servers, memshard::profiles::php_memcached_consistent(servers), options);
}

/// to_text: a Status as operator<< prints it.
auto to_text(const memshard::Status& status) -> std::string {
  std::ostringstream text;
  text << status;
  return text.str();
}

/// SessionLock: the session's lock, taken as php-memcached takes it (add "lock.<id>" = "1"),
/// with PHP's retries and waits, and deleted on destruction.
class SessionLock {
 public:
  SessionLock(SessionClient& client, std::string_view id, const SessionSettings& settings)
      : client_(client), key_(std::string(kLockPrefix) + std::string(id)) {
    const memshard::Expiry expiry = settings.lock_expire.count() > 0
                                        ? memshard::Expiry::after(settings.lock_expire)
                                        : memshard::Expiry::never();
    std::chrono::milliseconds wait = settings.lock_wait_min;
    for (int attempt = 0;; ++attempt) {
      const memshard::Status added = client_.add(key_, "1", expiry);
      if (added.ok()) {
        return;
      }
      // The text protocol answers NOT_STORED for a taken key, the binary one EXISTS.
      if (added.code() != memshard::Errc::kNotStored && added.code() != memshard::Errc::kExists) {
        throw Failure("cannot take the session lock: " + to_text(added));
      }
      if (attempt == settings.lock_retries) {
        throw Locked("session " + std::string(id) + " is locked by another request (" +
                     std::to_string(attempt + 1) + " attempts)");
      }
      if (attempt == 0) {
        std::cerr << "session " << id << " is locked, waiting\n";
      }
      std::this_thread::sleep_for(wait);
      wait = std::min(settings.lock_wait_max, wait * 2);
    }
  }
  SessionLock(const SessionLock&) = delete;
  auto operator=(const SessionLock&) -> SessionLock& = delete;
  SessionLock(SessionLock&&) = delete;
  auto operator=(SessionLock&&) -> SessionLock& = delete;
  ~SessionLock() {
    const memshard::Status removed = client_.remove(key_);
    if (!removed.ok() && removed.code() != memshard::Errc::kNotFound) {
      std::cerr << "cannot release the session lock: " << removed << '\n';
    }
  }

 private:
  SessionClient& client_;
  std::string key_;
};

/// read_session: the session's variables (a map, in PHP's order), or nothing when PHP has no
/// such session.
auto read_session(SessionClient& client, std::string_view id) -> std::optional<memshard::Value> {
  memshard::Result<std::optional<memshard::Value>> variables =
      client.get_value(id, memshard::PhpSessionCodec{});
  if (!variables.ok()) {
    // A session that is not PHP session data is a codec error (its status says what was found).
    throw Failure("cannot read session " + std::string(id) + ": " + to_text(variables.status()));
  }
  return std::move(variables).value();
}

/// write_session: stores the variables as PHP's session handler does.
void write_session(SessionClient& client, std::string_view id, const memshard::Value& variables,
                   const SessionSettings& settings) {
  const memshard::Status stored = client.set_value(id, variables, memshard::PhpSessionCodec{},
                                                   memshard::Expiry::after(settings.lifetime));
  if (!stored.ok()) {
    throw Failure("cannot write session " + std::string(id) + ": " + to_text(stored));
  }
}

/// put: sets the variable `name`, in place when the session has it, else at the end.
void put(memshard::Value::Map& variables, std::string_view name, memshard::Value value) {
  for (auto& [key, current] : variables) {
    if (key.is_string() && key.as_string() == name) {
      current = std::move(value);
      return;
    }
  }
  variables.emplace_back(memshard::Value(name), std::move(value));
}

void print_variables(const memshard::Value& variables) {
  if (variables.is_serialized()) {  // a PHP object in the session: kept whole, not taken apart
    std::cout << "(" << variables << ")\n";
    return;
  }
  for (const auto& [name, value] : variables.as_map()) {
    std::cout << name.as_string() << ": " << value << '\n';
  }
}

/// show: the session's variables, read under its lock.
void show(SessionClient& client, std::string_view id, const SessionSettings& settings) {
  const SessionLock lock(client, id, settings);
  const std::optional<memshard::Value> variables = read_session(client, id);
  if (!variables) {
    throw Failure("no session " + std::string(id));
  }
  print_variables(*variables);
}

/// login: logs the session in as a user (a session PHP does not have yet is created), keeping
/// its other variables; PHP's next request sees the user logged in.
void login(SessionClient& client, std::string_view id, std::int64_t user_id,
           const std::string& name, const std::vector<std::string>& roles,
           const SessionSettings& settings) {
  const SessionLock lock(client, id, settings);
  memshard::Value variables = read_session(client, id).value_or(memshard::Value::map({}));
  if (!variables.is_map()) {
    throw Failure("session " + std::string(id) + " holds a PHP object; it is left alone");
  }
  memshard::Value::List role_list(roles.begin(), roles.end());
  memshard::Value::Map& map = variables.as_map();
  put(map, "user_id", user_id);
  put(map, "name", name);
  put(map, "roles", memshard::Value::list(std::move(role_list)));
  put(map, "logged_in_by", "memshard-php-session");
  put(map, "login_time", static_cast<std::int64_t>(std::time(nullptr)));
  write_session(client, id, variables, settings);
  print_variables(variables);
}

/// md5_hex: PHP's md5($text).
auto md5_hex(std::string_view text) -> std::string {
  static constexpr std::string_view kHex = "0123456789abcdef";
  std::string hex;
  for (const unsigned char byte : memshard::Md5::digest(text)) {
    hex += kHex[byte >> 4U];
    hex += kHex[byte & 0xFU];
  }
  return hex;
}

/// rows: the rows a PHP page cached under md5($sql), one row per line.
void rows(const std::vector<memshard::Server>& servers, const std::string& sql) {
  CacheClient cache(servers, memshard::profiles::php_memcached(servers));
  const memshard::PhpMemcachedCodec php;  // Debian's settings: serialize(), FastLZ
  const std::string key = md5_hex(sql);
  const memshard::Result<std::optional<memshard::Value>> cached = cache.get_value(key, php);
  if (!cached.ok()) {
    throw Failure("cannot read " + key + ": " + to_text(cached.status()));
  }
  if (!*cached) {
    throw Failure("no rows cached under " + key + " (md5 of the query)");
  }
  const memshard::Value& value = **cached;
  if (!value.is_list()) {
    throw Failure(key + " holds a " + std::string(memshard::to_string(value.kind())) +
                  ", not a list of rows");
  }
  std::cout << value.as_list().size() << " rows\n";
  for (const memshard::Value& row : value.as_list()) {
    std::cout << row << '\n';
  }
}

struct Arguments {
  std::vector<memshard::Server> servers;
  SessionSettings settings;
  std::vector<std::string> command;  // the command and its operands
};

template <class Number>
auto number(std::string_view option, std::string_view text) -> Number {
  Number value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size() || value < 0) {
    throw UsageError(std::string(option) + " needs a number, got '" + std::string(text) + "'");
  }
  return value;
}

auto parse_arguments(int argc, char** argv) -> Arguments {
  Arguments arguments;
  std::string servers;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!arg.starts_with("--") || !arguments.command.empty()) {
      arguments.command.emplace_back(arg);
      continue;
    }
    const std::string_view value = i + 1 < argc ? argv[++i] : "";
    SessionSettings& settings = arguments.settings;
    if (arg == "--servers") {
      servers = value;
    } else if (arg == "--lock-retries") {
      settings.lock_retries = number<int>(arg, value);
    } else if (arg == "--lock-wait-min") {
      settings.lock_wait_min = std::chrono::milliseconds(number<std::int64_t>(arg, value));
    } else if (arg == "--lock-wait-max") {
      settings.lock_wait_max = std::chrono::milliseconds(number<std::int64_t>(arg, value));
    } else if (arg == "--lock-expire") {
      settings.lock_expire = std::chrono::seconds(number<std::int64_t>(arg, value));
    } else if (arg == "--lifetime") {
      settings.lifetime = std::chrono::seconds(number<std::int64_t>(arg, value));
    } else {
      throw UsageError("unknown option " + std::string(arg));
    }
  }
  if (servers.empty()) {
    throw UsageError("--servers is required");
  }
  arguments.servers = memshard::parse_servers(servers);
  const std::vector<std::string>& command = arguments.command;
  const bool known = !command.empty() && ((command[0] == "show" && command.size() == 2) ||
                                          (command[0] == "login" && command.size() >= 4) ||
                                          (command[0] == "rows" && command.size() == 2));
  if (!known) {
    throw UsageError(
        "expected show SESSION_ID, login SESSION_ID USER_ID NAME [ROLE ...] or "
        "rows SQL");
  }
  return arguments;
}

}  // namespace

auto main(int argc, char** argv) -> int try {
  const Arguments arguments = parse_arguments(argc, argv);
  const std::vector<std::string>& command = arguments.command;
  if (command[0] == "rows") {
    rows(arguments.servers, command[1]);
    return 0;
  }
  SessionClient client = make_session_client(arguments.servers);
  if (command[0] == "show") {
    show(client, command[1], arguments.settings);
  } else {
    const std::vector<std::string> roles(command.begin() + 4, command.end());
    login(client, command[1], number<std::int64_t>("USER_ID", command[2]), command[3], roles,
          arguments.settings);
  }
  return 0;
} catch (const UsageError& error) {
  std::cerr << "memshard-php-session: " << error.what()
            << "\nusage: memshard-php-session --servers LIST [--lock-retries N] [--lock-wait-min "
               "MS] [--lock-wait-max MS] [--lock-expire S] [--lifetime S]\n"
               "         show SESSION_ID | login SESSION_ID USER_ID NAME [ROLE ...] | rows SQL\n";
  return 2;
} catch (const memshard::ConfigError& error) {
  std::cerr << error.what() << '\n';
  return 2;
} catch (const Failure& error) {
  std::cerr << "memshard-php-session: " << error.what() << '\n';
  return 1;
} catch (const Locked& error) {
  std::cerr << "memshard-php-session: " << error.what() << '\n';
  return 3;
}
