// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_WIRE_MULTI_WRITE_HPP_
#define MEMSHARD_WIRE_MULTI_WRITE_HPP_

// wire/multi_write.hpp: the batch writes (set_multi, add_multi,
// delete_multi, touch_multi): MultiWriteResult, their answer, the
// KeyValueRange concept, and MultiWriter, which sends one server its share of
// a batch as one pipeline of meta commands and reads the answers.
//
// The client routes every key (its own server, a probe, a failover server)
// and groups the keys by server; MultiWriter then writes each server's group
// in one round trip over the server's meta connection (wire/meta_pool.hpp),
// all within the call's one deadline. A server's failure (a timeout, a broken
// connection) counts once in its health and fails each of its keys; a
// server's per-key answers (stored, not stored, not found) are each key's
// own. A server without meta commands (memcached before 1.6), or a client
// with SASL credentials (memcached -S refuses text commands), writes key by
// key through libmemcached instead.

#include <libmemcached-1.0/memcached.h>

#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "memshard/client/client_core.hpp"
#include "memshard/client/result.hpp"
#include "memshard/detail/compiled.hpp"
#include "memshard/version.hpp"
#include "memshard/wire/detail/meta_protocol.hpp"
#include "memshard/wire/meta_connection.hpp"
#include "memshard/wire/meta_pool.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// KeyValueRange: a sized range of key and value pairs whose `first` and
/// `second` convert to std::string_view (a std::map<std::string,
/// std::string>, a std::vector<std::pair<std::string_view, std::string>>,
/// ...), as set_multi and add_multi take them.
template <class R>
concept KeyValueRange = std::ranges::sized_range<R> &&
    requires(std::ranges::range_reference_t<R> pair) {
  {std::string_view(pair.first)};
  {std::string_view(pair.second)};
};

/// MultiWriteResult: a batch write's answer, one Status per item, in order:
/// ok, or why that item was not written (kNotStored for add_multi on a key
/// that exists, kNotFound for delete_multi or touch_multi on a missing key,
/// a server failure, an invalid key, ...).
struct MultiWriteResult {
  std::vector<Status> statuses;

  /// ok: every key got the outcome it asked for (stored, deleted, touched).
  /// A key `delete_multi` found already gone, or one `add_multi` found
  /// present, is not ok here (Errc::kNotFound, Errc::kNotStored) although its
  /// server answered: all_answered() asks that question.
  [[nodiscard]] auto ok() const noexcept -> bool { return failures() == 0; }
  /// failures: how many keys did not get the outcome they asked for, for
  /// whatever reason.
  [[nodiscard]] auto failures() const noexcept -> std::size_t {
    return static_cast<std::size_t>(std::count_if(
        statuses.begin(), statuses.end(), [](const Status& status) { return !status.ok(); }));
  }
  /// all_answered: every key reached its server and got an answer, whatever
  /// it was (not found and not stored included): no server failure
  /// (is_server_failure), ejected server, timeout or refused key.
  [[nodiscard]] auto all_answered() const noexcept -> bool { return unanswered() == 0; }
  /// unanswered: how many keys got no answer from their server.
  [[nodiscard]] auto unanswered() const noexcept -> std::size_t {
    return static_cast<std::size_t>(
        std::count_if(statuses.begin(), statuses.end(), [](const Status& status) {
          return !status.ok() && status.code() != Errc::kNotFound &&
                 status.code() != Errc::kNotStored && status.code() != Errc::kExists;
        }));
  }
};

namespace detail {

/// WriteKind: what a batch write does to each key.
enum class WriteKind : std::uint8_t { kSet, kAdd, kDelete, kTouch };

/// operation_name: "set", "add", "delete" or "touch", as statuses name them.
[[nodiscard]] constexpr auto operation_name(WriteKind kind) noexcept -> std::string_view {
  switch (kind) {
    case WriteKind::kSet:
      return "set";
    case WriteKind::kAdd:
      return "add";
    case WriteKind::kDelete:
      return "delete";
    case WriteKind::kTouch:
      return "touch";
  }
  return "write";
}

/// WriteItem: one key of a server's group: its sent key, value (set, add),
/// the exptime to send (set, add, touch) and its position in the batch.
struct WriteItem {
  std::string_view key;
  std::string_view value;
  std::int32_t exptime = 0;
  std::uint32_t flags = 0;
  std::size_t index = 0;
};

/// MultiWriter: writes one server's group of a batch over the meta protocol.
/// Keeps its request buffer between calls. Not thread-safe: one per client.
class MultiWriter {
 public:
  /// Outcome of write(): kAnswered (each item's answer is its libmemcached
  /// code in `codes`, in the group's order), kFailed (the server or its
  /// connection failed: every code is that failure, and `cause` explains
  /// it), or kNoMeta (the server has no meta commands: nothing was written,
  /// write the group another way).
  enum class Outcome : std::uint8_t { kAnswered, kFailed, kNoMeta };

  /// write: sends `items` (keys valid for the meta protocol) to member `s`
  /// as one pipeline and reads the answers by `deadline`.
  auto write(MetaPool& meta, std::size_t s, WriteKind kind, std::span<const WriteItem> items,
             MetaDeadline deadline, std::vector<memcached_return_t>& codes, std::string& cause)
      -> Outcome;

 private:
  void append(WriteKind kind, const WriteItem& item);

  std::string request_;
};

#if MEMSHARD_DETAIL_DEFINITIONS
MEMSHARD_DETAIL_INLINE auto MultiWriter::write(MetaPool& meta, std::size_t s, WriteKind kind,
                                               std::span<const WriteItem> items,
                                               MetaDeadline deadline,
                                               std::vector<memcached_return_t>& codes,
                                               std::string& cause) -> Outcome {
  codes.assign(items.size(), MEMCACHED_SUCCESS);
  cause.clear();
  request_.clear();
  for (const WriteItem& item : items) {
    append(kind, item);
  }
  MetaStatus connected;
  MetaConnection& link = meta.connection(s, deadline, connected);
  MetaPipelineOutcome answer;
  if (connected.ok()) {
    answer = link.pipeline(request_, deadline);
  } else {
    answer.status = connected;
  }
  if (answer.status.code == MetaErrc::kNoMetaSupport ||
      (answer.ok() && !answer.replies.empty() &&
       answer.replies.front().kind == MetaReplyKind::kError)) {
    meta.mark_no_meta(s);
    return Outcome::kNoMeta;
  }
  if (answer.ok() && answer.replies.size() != items.size()) {
    answer.status.code = MetaErrc::kMalformed;
    answer.status.message = std::to_string(answer.replies.size()) + " replies to " +
                            std::to_string(items.size()) + " requests";
    link.close();  // what else it holds is no answer of ours
  }
  if (!answer.ok()) {
    codes.assign(items.size(), to_memcached_return(answer.status, MetaReplyKind::kHeader));
    cause = answer.status.message;
    return Outcome::kFailed;
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    codes[i] = to_memcached_return(answer.status, answer.replies[i].kind);
  }
  return Outcome::kAnswered;
}

MEMSHARD_DETAIL_INLINE void MultiWriter::append(WriteKind kind, const WriteItem& item) {
  switch (kind) {
    case WriteKind::kSet:
    case WriteKind::kAdd: {
      MetaSetFlags flags;
      flags.mode = kind == WriteKind::kAdd ? MetaSetMode::kAdd : MetaSetMode::kSet;
      flags.ttl = item.exptime;
      flags.client_flags = item.flags;
      (void)write_meta_set(request_, item.key, item.value, flags);
      break;
    }
    case WriteKind::kDelete:
      (void)write_meta_delete(request_, item.key, MetaDeleteFlags{});
      break;
    case WriteKind::kTouch: {
      MetaGetFlags flags;
      flags.touch_ttl = item.exptime;
      (void)write_meta_get(request_, item.key, flags);
      break;
    }
  }
}
#endif  // MEMSHARD_DETAIL_DEFINITIONS

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_WIRE_MULTI_WRITE_HPP_
