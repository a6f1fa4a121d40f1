// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_BENCH_CLIENT_FIXTURE_HPP_
#define MEMSHARD_BENCH_CLIENT_FIXTURE_HPP_

// client/fixture.hpp: Setup, what every run of the client benchmark uses: the
// ShardedClients (a fleet member's among them), the libmemcached baselines and
// twemproxy, the stored and checked data, and each benchmark's contenders in
// their order.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "client/baselines.hpp"
#include "client/contenders.hpp"
#include "client/workload.hpp"
#include "memshard/memshard.hpp"

namespace memshard::bench::client {

/// KetamaClient: contender (a) ketama, memshard's libmemcached_ketama_weighted profile.
using KetamaClient = ShardedClient<KetamaLocator<Md5>>;
/// ModuloClient: contender (a) modulo, modulo_crc32.
using ModuloClient = ShardedClient<ModuloLocator<Crc32>>;
/// MemberClient: contender ketama_member, the client of a fleet member (join_fleet builds it with
/// make_client from the fleet record's profile).
using MemberClient = ShardedClient<AnyLocator>;

/// kKetamaProfile: the profile name of ketama's placement, libmemcached_ketama_weighted.
inline constexpr std::string_view kKetamaProfile = "libmemcached-ketama-weighted";

/// serve_as_member: makes `client`'s family follow a fleet as a member's does while its record is
/// steady on `servers` (Fleet::serve of the placement alone, as detail::serve_record does), its
/// fence gate opened as the member opens it (FenceGate::open_until), here for good. Every call of
/// the family then checks the gate, as a member's calls do; no etcd, no follower thread.
inline void serve_as_member(MemberClient& client, const std::vector<Server>& servers) {
  Fleet<AnyLocator>& fleet = detail::FleetOf<AnyLocator>::of(client);
  fleet.serve(servers, std::make_shared<const AnyLocator>(make_locator(kKetamaProfile, servers)),
              std::nullopt);
  fleet.gate().open_until(std::numeric_limits<std::int64_t>::max());
  if (fleet.gate().closed()) {
    throw std::runtime_error("ketama_member: its fence gate is closed");
  }
}

/// Setup: the clients, baselines and stored data every benchmark uses. The
/// constructor writes every key, checks every contender's answers and starts
/// twemproxy when there is a nutcracker binary; it throws on any failure.
class Setup {
 public:
  /// Setup: on `servers` (at least 2), the first being the baseline's.
  explicit Setup(const std::vector<Server>& servers)
      : servers_(servers),
        ketama_(servers_,
                std::make_shared<const KetamaLocator<Md5>>(
                    profiles::libmemcached_ketama_weighted(servers_)),
                options_),
        ketama_per_server_(servers_, ketama_.locator(), per_server(options_)),
        modulo_(servers_,
                std::make_shared<const ModuloLocator<Crc32>>(profiles::modulo_crc32(servers_)),
                options_),
        member_(make_client(kKetamaProfile, servers_, {}, options_)),
        hot_(servers_, ketama_.locator(), with_hot_keys(options_)),
        single_(make_single_server(servers_.front(), options_)),
        multi_(make_multi_server(servers_, options_)),
        single_data_(kSingleKeys, 0x636C69656E74ULL),
        multi_data_(kMultiKeys * kMultiRequests, 0x6D756C7469ULL),
        ketama_same_data_(
            Data::on_first_server(kMultiKeys * kMultiRequests, 0x6B73616D65ULL, ketama_)),
        modulo_same_data_(
            Data::on_first_server(kMultiKeys * kMultiRequests, 0x6D73616D65ULL, modulo_)),
        requests_(multi_data_),
        ketama_same_requests_(ketama_same_data_),
        modulo_same_requests_(modulo_same_data_),
        all_fetch_(multi_.get()),
        single_fetch_(single_.get()) {
    // The member's client, served as a fleet's member; it places every key where ketama does
    // (checked here), so it reads what ketama writes.
    serve_as_member(member_, servers_);
    same_placement("ketama_member", member_, single_data_);
    same_placement("ketama_member", member_, multi_data_);
    // Single-key data: through each client (wherever it places the keys) and
    // all of it on the baseline's server.
    for (std::size_t i = 0; i < single_data_.keys.size(); ++i) {
      const std::string& key = single_data_.keys[i];
      const std::string& value = single_data_.values[i];
      require(ketama_.set(key, value), "ketama set");
      require(modulo_.set(key, value), "modulo set");
      check(memcached_set(single_.get(), key.data(), key.size(), value.data(), value.size(), 0, 0),
            single_.get(), "baseline set");
    }
    // Multi-get data: through the ketama client only at first, so that
    // libmemcached_all finds a key only if it places it as memshard does, and
    // the baseline only if memshard's ketama put it on the first server.
    write_all(ketama_, multi_data_, "ketama set (multi)");
    write_all(ketama_, ketama_same_data_, "ketama set (multi, first server)");
    write_all(modulo_, modulo_same_data_, "modulo set (multi, first server)");
    check_fetch("libmemcached_all", all_fetch_, multi_data_, requests_);
    check_fetch("libmemcached", single_fetch_, ketama_same_data_, ketama_same_requests_);
    check_sharded_multi("ketama", ketama_, multi_data_, requests_);
    check_sharded_multi("ketama_per_server", ketama_per_server_, multi_data_, requests_);
    check_sharded_multi("ketama_member", member_, multi_data_, requests_);
    check_sharded_multi("ketama_hot_keys", hot_, multi_data_, requests_);
    check_sharded_multi("ketama_same", ketama_, ketama_same_data_, ketama_same_requests_);
    check_sharded_multi("modulo_same", modulo_, modulo_same_data_, modulo_same_requests_);
    // Twemproxy (d), checked on what ketama alone has written so far.
    proxy_ = Twemproxy::start(servers_, options_);
    if (proxy_) {
      proxy_->check_round_trip(single_data_, multi_data_, requests_);
      proxy_->report_placement(servers_, options_, ketama_);
    }
    // Then through the modulo client, wherever it places them.
    write_all(modulo_, multi_data_, "modulo set (multi)");
    check_sharded_multi("modulo", modulo_, multi_data_, requests_);
    ketama_spread_ = spread(ketama_, requests_);
    modulo_spread_ = spread(modulo_, requests_);
  }

  /// single_get_contenders: the contenders of BM_Client/get. Order: the
  /// ShardedClient contenders (ketama_member, the fleet member's, also
  /// against ketama: _ratio_ketama), (c), (d) when there is a proxy, then the
  /// baseline (b) last.
  [[nodiscard]] auto single_get_contenders() -> std::vector<Contender> {
    return single_contenders([](auto&&... args) { return sharded_get(args...); },
                             [](auto&&... args) { return libmemcached_get(args...); });
  }

  /// single_set_contenders: the contenders of BM_Client/set, in the same order.
  [[nodiscard]] auto single_set_contenders() -> std::vector<Contender> {
    return single_contenders([](auto&&... args) { return sharded_set(args...); },
                             [](auto&&... args) { return libmemcached_set(args...); });
  }

  /// multi_contenders: the contenders of BM_Client/get_multi, in the same
  /// order; (a) also against (c) (_ratio_ref), as in get/set, and
  /// ketama_member against ketama (_ratio_ketama).
  [[nodiscard]] auto multi_contenders() -> std::vector<Contender> {
    std::vector<Contender> out;
    out.push_back(sharded_get_multi("ketama", ketama_, multi_data_, requests_));
    out.push_back(sharded_visit_multi("ketama_visit", ketama_, requests_));
    out.push_back(
        sharded_get_multi("ketama_per_server", ketama_per_server_, multi_data_, requests_));
    out.push_back(sharded_get_multi("modulo", modulo_, multi_data_, requests_));
    out.push_back(
        sharded_get_multi("ketama_same", ketama_, ketama_same_data_, ketama_same_requests_));
    out.push_back(sharded_visit_multi("ketama_same_visit", ketama_, ketama_same_requests_));
    out.push_back(
        sharded_get_multi("modulo_same", modulo_, modulo_same_data_, modulo_same_requests_));
    out.push_back(sharded_get_multi("ketama_member", member_, multi_data_, requests_));
    out.back().also_against = {"ketama"};
    out.push_back(sharded_get_multi("ketama_hot_keys", hot_, multi_data_, requests_));
    out.back().also_against = {"ketama"};
    out.push_back(libmemcached_get_multi("libmemcached_all", all_fetch_, requests_));
    if (proxy_) {
      out.push_back(libmemcached_get_multi("twemproxy", proxy_->fetch(), requests_));
      out[0].also_against = {"twemproxy"};
    }
    out.push_back(libmemcached_get_multi("libmemcached", single_fetch_, ketama_same_requests_));
    out[0].reference = out[1].reference = out[2].reference = out[3].reference = "libmemcached_all";
    return out;
  }

  /// set_multi_contenders: the contenders of BM_Client/set_multi: ketama's
  /// set_multi, the same writes as a loop of set, and libmemcached's loop of
  /// memcached_set over every server (the baseline), on ketama's lists.
  [[nodiscard]] auto set_multi_contenders() -> std::vector<Contender> {
    std::vector<Contender> out;
    out.push_back(sharded_set_multi("ketama_set_multi", ketama_, multi_data_, requests_));
    out.push_back(sharded_set_loop("ketama_set_loop", ketama_, multi_data_, requests_));
    out.push_back(libmemcached_set_loop("libmemcached_all", multi_.get(), multi_data_, requests_));
    return out;
  }

  /// servers: the servers, the baseline's first.
  [[nodiscard]] auto servers() const noexcept -> const std::vector<Server>& { return servers_; }
  /// ketama_spread: the fewest and most keys a request of ketama's lists asks
  /// one server for, under ketama's placement.
  [[nodiscard]] auto ketama_spread() const noexcept -> std::pair<std::size_t, std::size_t> {
    return ketama_spread_;
  }
  /// modulo_spread: the same under modulo's placement.
  [[nodiscard]] auto modulo_spread() const noexcept -> std::pair<std::size_t, std::size_t> {
    return modulo_spread_;
  }

 private:
  template <class Sharded, class Plain>
  auto single_contenders(Sharded sharded, Plain plain) -> std::vector<Contender> {
    std::vector<Contender> out;
    out.push_back(sharded("ketama", ketama_, single_data_, all_indexes(kSingleKeys)));
    out.push_back(sharded("modulo", modulo_, single_data_, all_indexes(kSingleKeys)));
    out.push_back(
        sharded("ketama_same", ketama_, single_data_, on_first_server(single_data_, ketama_)));
    out.push_back(
        sharded("modulo_same", modulo_, single_data_, on_first_server(single_data_, modulo_)));
    out.push_back(sharded("ketama_member", member_, single_data_, all_indexes(kSingleKeys)));
    out.back().also_against = {"ketama"};
    out.push_back(sharded("ketama_hot_keys", hot_, single_data_, all_indexes(kSingleKeys)));
    out.back().also_against = {"ketama"};
    out.push_back(plain("libmemcached_all", multi_.get(), single_data_, all_indexes(kSingleKeys)));
    if (proxy_) {
      out.push_back(plain("twemproxy", proxy_->handle(), single_data_, all_indexes(kSingleKeys)));
      out[0].also_against = {"twemproxy"};
    }
    out.push_back(plain("libmemcached", single_.get(), single_data_, all_indexes(kSingleKeys)));
    out[0].reference = out[1].reference = "libmemcached_all";
    return out;
  }

  static auto per_server(ClientOptions options) -> ClientOptions {
    options.multi_get = MultiGetMode::kPerServer;
    return options;
  }

  static auto with_hot_keys(ClientOptions options) -> ClientOptions {
    options.hot_keys = memshard::HotKeyOptions{};  // the defaults: 1 in 8 counted, 1 s windows
    return options;
  }

  // Throws unless `client` places every key of `data` on the server ketama_ does.
  template <class Client>
  void same_placement(std::string_view name, const Client& client, const Data& data) const {
    for (const std::string& key : data.keys) {
      if (client.server_index_for(key) != ketama_.server_index_for(key)) {
        throw std::runtime_error(std::string(name) + ": places " + key + " elsewhere than ketama");
      }
    }
  }

  template <class Client>
  [[nodiscard]] auto spread(const Client& client, const Requests& requests) const
      -> std::pair<std::size_t, std::size_t> {
    std::pair<std::size_t, std::size_t> out{kMultiKeys, 0};
    for (const std::vector<std::string_view>& keys : requests.lists) {
      std::vector<std::size_t> per_server(servers_.size(), 0);
      for (const std::string_view key : keys) {
        ++per_server[client.server_index_for(key)];
      }
      const auto [low, high] = std::minmax_element(per_server.begin(), per_server.end());
      out = {std::min(out.first, *low), std::max(out.second, *high)};
    }
    return out;
  }

  ClientOptions options_;
  std::vector<Server> servers_;
  KetamaClient ketama_;
  KetamaClient ketama_per_server_;  // ketama_ with MultiGetMode::kPerServer
  ModuloClient modulo_;
  MemberClient member_;  // a fleet member's, on ketama_'s profile (serve_as_member)
  KetamaClient hot_;     // ketama_ counting its hot keys (ClientOptions::hot_keys)
  MemcachedPtr single_;  // (b)
  MemcachedPtr multi_;   // (c)
  Data single_data_;
  Data multi_data_;
  Data ketama_same_data_;  // keys the ketama client puts on the first server
  Data modulo_same_data_;  // keys the modulo client puts on the first server
  Requests requests_;
  Requests ketama_same_requests_;
  Requests modulo_same_requests_;
  MultiFetch all_fetch_;     // through multi_
  MultiFetch single_fetch_;  // through single_
  std::pair<std::size_t, std::size_t> ketama_spread_{0, 0};
  std::pair<std::size_t, std::size_t> modulo_spread_{0, 0};
  std::unique_ptr<Twemproxy> proxy_;  // (d); none without nutcracker
};

}  // namespace memshard::bench::client

#endif  // MEMSHARD_BENCH_CLIENT_FIXTURE_HPP_
