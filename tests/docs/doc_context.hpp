// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_TESTS_DOCS_DOC_CONTEXT_HPP_
#define MEMSHARD_TESTS_DOCS_DOC_CONTEXT_HPP_

// doc_context.hpp: the names the documentation's C++ fragments take as given (a client, its
// servers, a key, the application's database and logging), for compile_doc_blocks.py, which
// compiles every fragment as a function body in namespace memshard_docs. The fragments are only
// compiled, never linked or run: these are declarations. A fragment may declare the same name
// again (its own client, its own servers): a local name hides these.

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "memshard/memshard.hpp"

namespace memshard_docs {

using namespace std::chrono_literals;  // 1h, 50ms, ...

/// The fleet: the servers of a client, and the old and new lists of a migration.
extern const std::vector<memshard::Server> servers;
extern const std::vector<memshard::Server> old_servers;
extern const std::vector<memshard::Server> new_servers;
/// The client of the examples, and a locator for a migration's new placement.
extern memshard::ShardedClient<memshard::AnyLocator>& client;
extern const memshard::AnyLocator new_locator;

/// Keys: one key, a batch of them, and a key made from a query (as a cache-aside service does).
extern const std::string key;
extern const std::vector<std::string> keys;
extern const std::string sql;
extern const std::string md5_of_sql;

/// The application's database, as a cache-aside service has one.
struct Database {
  auto query(std::string_view statement) -> std::string;
};
extern Database db;
auto load_rows() -> std::map<std::string, std::string>;

/// The application's output, logging and secrets.
template <class T>
void render(const T& value);
template <class... T>
void log(const T&... what);
auto read_secret(std::string_view name) -> std::string;

}  // namespace memshard_docs

#endif  // MEMSHARD_TESTS_DOCS_DOC_CONTEXT_HPP_
