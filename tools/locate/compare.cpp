// SPDX-License-Identifier: MIT
// locate/compare.cpp: comparing two placements key by key, and the report.

#include "locate/compare.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <memshard/detail/throw.hpp>
#include <memshard/errors.hpp>
#include <memshard/placement/key.hpp>
#include <memshard/placement/key_prefix.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "locate/io.hpp"

namespace memshard::locate_tool {
namespace {

/// kNoServer: "no such server on the other side".
constexpr std::size_t kNoServer = static_cast<std::size_t>(-1);

/// same_server: whether `x` and `y` are the same server for --compare: the same
/// host, port and name. (Not the weight: a server whose weight changes is still
/// the same server.)
auto same_server(const memshard::Server& x, const memshard::Server& y) noexcept -> bool {
  return x.host == y.host && x.port == y.port && x.name == y.name;
}

/// server_label: how --compare names a server: "host:port", or "host:port (name)".
auto server_label(const memshard::Server& server) -> std::string {
  return server.name.empty() ? server.endpoint() : server.endpoint() + " (" + server.name + ")";
}

/// ServerTally: one server's keys in a comparison.
struct ServerTally {
  std::size_t keys = 0;   ///< keys on the server (under A for A's servers, B for B's)
  std::size_t moved = 0;  ///< of those, keys that left it (A) or that arrived (B)
};

/// ComparedSide: one side's servers as the report shows them.
struct ComparedSide {
  std::string_view name;  ///< "A" or "B"
  const Placement* placement;
  std::vector<std::string> labels;
  std::vector<bool> on_other_side;  ///< whether the server is on the other side too
  std::vector<ServerTally> tallies;
};

/// percent: `part` of `whole` as "12.34%" (0.00% when whole is 0).
auto percent(std::size_t part, std::size_t whole) -> std::string {
  const std::size_t hundredths = whole == 0 ? 0 : (part * 10000 + whole / 2) / whole;
  const std::string fraction = std::to_string(hundredths % 100);
  return std::to_string(hundredths / 100) + "." + (fraction.size() == 1 ? "0" : "") + fraction +
         "%";
}

auto pad_right(std::string text, std::size_t width) -> std::string {
  text.resize(std::max(width, text.size()), ' ');
  return text;
}

auto pad_left(const std::string& text, std::size_t width) -> std::string {
  return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
}

/// append_description: "A: <profile and options>, N servers", and after the
/// options " prefix=P prefix-hashing=bare|prefixed" when the side has a prefix.
void append_description(std::string& out, const ComparedSide& side) {
  const std::size_t count = side.placement->servers.size();
  out.append(side.name).append(": ").append(side.placement->locator.description());
  if (const memshard::KeyPrefix& prefix = side.placement->prefix; !prefix.empty()) {
    out.append(" prefix=")
        .append(prefix.text())
        .append(" prefix-hashing=")
        .append(prefix.hashing() == memshard::PrefixHashing::kBareKey ? "bare" : "prefixed");
  }
  out.append(", ").append(std::to_string(count)).append(count == 1 ? " server\n" : " servers\n");
}

/// append_table: one side's servers with their keys and moved keys, in the
/// side's order.
void append_table(std::string& out, const ComparedSide& side, std::string_view keys_heading,
                  std::string_view moved_heading, std::string_view other) {
  const std::string title = std::string(side.name) + " server";
  std::size_t label_width = title.size();
  std::size_t keys_width = keys_heading.size();
  std::size_t moved_width = moved_heading.size();
  for (std::size_t i = 0; i < side.labels.size(); ++i) {
    label_width = std::max(label_width, side.labels[i].size());
    keys_width = std::max(keys_width, std::to_string(side.tallies[i].keys).size());
    moved_width = std::max(moved_width, std::to_string(side.tallies[i].moved).size());
  }
  out.append(pad_right(title, label_width + 2))
      .append(pad_left(std::string(keys_heading), keys_width))
      .append("  ")
      .append(pad_left(std::string(moved_heading), moved_width))
      .append("\n");
  for (std::size_t i = 0; i < side.labels.size(); ++i) {
    out.append(pad_right(side.labels[i], label_width + 2))
        .append(pad_left(std::to_string(side.tallies[i].keys), keys_width))
        .append("  ")
        .append(pad_left(std::to_string(side.tallies[i].moved), moved_width));
    if (!side.on_other_side[i]) {
      out.append("  not in ").append(other);
    }
    out.append("\n");
  }
}

/// compared_side: a side of the comparison before any key.
auto compared_side(std::string_view name, const Placement& placement, const Placement& other)
    -> ComparedSide {
  ComparedSide side{name, &placement, {}, {}, {}};
  for (const memshard::Server& server : placement.servers) {
    side.labels.push_back(server_label(server));
    side.on_other_side.push_back(std::any_of(
        other.servers.begin(), other.servers.end(),
        [&server](const memshard::Server& candidate) { return same_server(server, candidate); }));
  }
  side.tallies.resize(placement.servers.size());
  return side;
}

/// check_sample: throws memshard::ConfigError when --sample's longest key
/// (the last) is over kMaxKeyLength bytes once prefixed on `side`.
void check_sample(std::size_t sample, const ComparedSide& side) {
  const std::string last = std::string(kSampleKeyPrefix) + std::to_string(sample - 1);
  const std::size_t sent = side.placement->prefix.text().size() + last.size();
  if (sent > memshard::kMaxKeyLength) {
    memshard::detail::throw_config_error(
        "--sample's keys are too long for " + std::string(side.name) + "'s key prefix",
        last + " is sent as " + std::to_string(sent) + " bytes, the limit is " +
            std::to_string(memshard::kMaxKeyLength));
  }
}

}  // namespace

auto make_placement_b(const CommandLine& command) -> Placement {
  try {
    return make_placement(side_b(command.from, command.to));
  } catch (const memshard::ConfigError& error) {
    memshard::detail::throw_config_error("B (the --to-* side)",
                                         without_library_prefix(error.what()));
  }
}

auto compare_keys(const CommandLine& command, const Placement& a, const Placement& b,
                  std::istream& in, std::ostream& out, std::ostream& errors) -> int {
  ComparedSide from = compared_side("A", a, b);
  ComparedSide to = compared_side("B", b, a);
  if (command.sample) {
    check_sample(*command.sample, from);
    check_sample(*command.sample, to);
  }
  // a_in_b[i]: the index in B of A's server i, or kNoServer.
  std::vector<std::size_t> a_in_b(a.servers.size(), kNoServer);
  for (std::size_t i = 0; i < a.servers.size(); ++i) {
    for (std::size_t j = 0; j < b.servers.size(); ++j) {
      if (same_server(a.servers[i], b.servers[j])) {
        a_in_b[i] = j;
      }
    }
  }
  Output output(out);
  std::size_t keys = 0;
  std::size_t moved = 0;
  std::string a_sent;
  std::string b_sent;
  auto compare_key = [&](std::string_view key) {
    const std::size_t i = a.locate(key, a_sent);
    const std::size_t j = b.locate(key, b_sent);
    ++keys;
    ++from.tallies[i].keys;
    ++to.tallies[j].keys;
    if (a_in_b[i] == j) {
      return;
    }
    ++moved;
    ++from.tallies[i].moved;
    ++to.tallies[j].moved;
    if (command.per_key) {
      output.append(key);
      output.append("\t");
      output.append(from.labels[i]);
      output.append("\t");
      output.append(to.labels[j]);
      output.append("\n");
    }
  };
  std::size_t invalid = 0;
  std::string source;
  if (command.sample) {
    std::string key(kSampleKeyPrefix);
    for (std::size_t n = 0; n < *command.sample; ++n) {
      key.resize(kSampleKeyPrefix.size());
      key.append(std::to_string(n));
      compare_key(key);
    }
    source = std::string(kSampleKeyPrefix) + "0";
    if (*command.sample > 1) {
      source.append(" to ").append(kSampleKeyPrefix).append(std::to_string(*command.sample - 1));
    }
  } else {
    // A key is compared when it is a key after both prefixes.
    const std::array<std::size_t, 2> prefix_sizes = {a.prefix.text().size(),
                                                     b.prefix.text().size()};
    invalid = read_keys(in, output, errors, prefix_sizes, compare_key);
    source = "standard input";
    if (invalid > 0) {
      source.append("; ")
          .append(std::to_string(invalid))
          .append(invalid == 1 ? " invalid line skipped" : " invalid lines skipped");
    }
  }

  std::string report;
  if (command.per_key && moved > 0) {
    report.append("\n");
  }
  append_description(report, from);
  append_description(report, to);
  report.append("keys: ").append(std::to_string(keys)).append(" (").append(source).append(")\n");
  report.append("moved: ")
      .append(std::to_string(moved))
      .append(" (")
      .append(percent(moved, keys))
      .append(")\n\n");
  append_table(report, from, "held", "left", "B");
  report.append("\n");
  append_table(report, to, "holds", "arrived", "A");
  output.append(report);
  output.flush();
  if (command.fail_if_moved && moved > 0) {
    return kExitMoved;
  }
  return invalid == 0 ? kExitOk : kExitInvalidKeys;
}

}  // namespace memshard::locate_tool
