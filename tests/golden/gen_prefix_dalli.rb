# SPDX-License-Identifier: MIT
#
# gen_prefix_dalli.rb KEYS OUT VERSIONS NET: writes prefix/dalli.golden, where
# Ruby Dalli puts keys stored with a namespace (Dalli::Client.new(servers,
# namespace: NS)), measured on real memcached servers (NET.1-5, ports
# 21981-21985, started by gen_prefix.sh). Dalli sends "NS:key": the table's
# prefix is NS + ":".
#
# For each case: every server is flushed, every key of keys.txt is stored
# through the real client (Client#set), then every server is asked which keys
# it holds (lru_crawler metadump). Key i is recorded on the one server holding
# exactly the bytes prefix + key_i, or as "x" when no server does (Dalli
# rewrites a namespaced key of more than 250 characters into a digest form,
# and the server refuses a key of more than 250 bytes). Two more runs without
# a namespace (the bare keys, then the keys prefix + key_i) tell whether the
# client placed by the bare or by the prefixed key, and the client's own ring
# (Client#get -> KeyManager#validate_key -> Ring#server_for_key, on a client
# whose servers record the request instead of sending it) is compared with
# where the keys really are (the key the ring's server is asked for is checked
# too: prefix + key_i, or the digest form). Disagreements are reported, not hidden: in the
# table's header and on stderr. Keys are Ruby Strings read from keys.txt as
# UTF-8.
require 'dalli'
require_relative 'gen_dalli_common' # fail!, note, read_keys, client_options, mc_*

GOLDEN_WHO = 'gen_prefix_dalli'

keys_path, out_path, versions, net = ARGV

Dalli.logger.level = Logger::ERROR

keys = read_keys(keys_path)

# ------------------------------------------------------------ raw server access

# Every key the server holds, each once. The crawler walks the LRU segments
# one after the other, so an item moving between them during a walk can be
# listed twice or missed: the dumps are repeated until one adds no key.
def dump_keys(host, port)
  seen = {}
  10.times do |pass|
    added = 0
    mc_dump_keys(host, port).each do |k|
      next if seen.key?(k)

      seen[k] = true
      added += 1
    end
    return seen.keys if pass.positive? && added.zero?
  end
  fail!("#{host}:#{port}: the dumps keep listing new keys")
end

def flush_servers(servers)
  mc_flush_all(servers)
  servers.each do |h, p|
    fail!("#{h}:#{p} still holds keys after flush_all") unless dump_keys(h, p).empty?
  end
end

# { key bytes => server index } of every key the servers hold; fails if a
# key is on two servers.
def held_keys(servers)
  where = {}
  servers.each_with_index do |(h, p), s|
    dump_keys(h, p).each do |k|
      fail!("key #{k.inspect} is on servers #{where[k]} and #{s}") if where.key?(k)
      where[k] = s
    end
  end
  where
end

# ------------------------------------------------------------ the client

def server_strings(servers)
  servers.map { |h, p| "#{h}:#{p}:1" }
end

# One run: flush, store every key through a real client (value "v<i>", raw),
# and return the held keys and, per key, nil (stored) or the error raised.
# After an error the client's sockets are closed, so that the next request
# starts on a fresh connection.
def run(servers, keys, namespace)
  flush_servers(servers)
  client = Dalli::Client.new(server_strings(servers), client_options(namespace))
  errors = keys.each_with_index.map do |k, i|
    client.set(k, "v#{i}", 0, raw: true) ? nil : 'set returned false'
  rescue Dalli::DalliError => e
    client.close
    "#{e.class}: #{e.message}"
  end
  client.close
  [held_keys(servers), errors]
end

# The client's own placement: the server index Client#get(key) asks, and the
# key it asks for, on a client whose servers record the request instead of
# sending it.
def ring_places(servers, keys, namespace)
  client = Dalli::Client.new(server_strings(servers), client_options(namespace))
  ring = client.send(:ring)
  fail!('ring has the wrong number of servers') unless ring.servers.size == servers.size
  picked = asked = nil
  ring.servers.each_with_index do |srv, idx|
    h, p = servers[idx]
    fail!("server #{idx} parsed as #{srv.hostname}:#{srv.port}") unless srv.hostname == h && srv.port == p
    srv.define_singleton_method(:alive?) { true }
    srv.define_singleton_method(:request) do |_op, key, *_args|
      picked = idx
      asked = key
      nil
    end
  end
  keys.map do |k|
    picked = asked = nil
    client.get(k)
    fail!("no server picked for #{k.inspect}") if picked.nil?
    [picked, asked]
  end.transpose
end

# ------------------------------------------------------------ the cases

namespaces = { 'app' => 'app', 'svc' => 'svc.v2|tenant-7_' }
cases = []
namespaces.each do |tag, ns|
  [3, 5].each { |n| cases << { id: "dalli-#{tag}-#{n}", namespace: ns, n: n } }
end

out = +''
summary = []
api_total = 0
cases.each do |c|
  ns = c[:namespace]
  prefix = "#{ns}:"
  servers = (1..c[:n]).map { |i| ["#{net}.#{i}", 21_980 + i] }
  key_manager = Dalli::KeyManager.new(namespace: ns)
  prefixed = keys.map { |k| prefix + k }
  wire = keys.map { |k| key_manager.validate_key(k) } # what Dalli sends for each key

  held, errors = run(servers, keys, ns)
  place = prefixed.map { |w| held[w.b] }
  # Every key on the servers must be a key Dalli sent, and every key sent
  # without an error must be on a server.
  expected = wire.map(&:b)
  stray = held.keys - expected
  fail!("#{c[:id]}: the servers hold #{stray.size} unexpected keys, e.g. #{stray[0].inspect}") unless stray.empty?
  errors.each_with_index do |e, i|
    fail!("#{c[:id]}: key ##{i} stored without error but on no server") if e.nil? && !held.key?(expected[i])
    fail!("#{c[:id]}: key ##{i} refused (#{e}) but on a server") if e && held.key?(expected[i])
  end

  # The references: no namespace, the bare keys, then the keys prefix + key_i.
  held_bare, = run(servers, keys, nil)
  held_pref, = run(servers, prefixed, nil)
  stored = agree_bare = agree_pref = both = 0
  keys.each_with_index do |k, i|
    next if place[i].nil?

    stored += 1
    agree_bare += 1 if held_bare[k.b] == place[i]
    next unless held_pref.key?(prefixed[i].b)

    both += 1
    agree_pref += 1 if held_pref[prefixed[i].b] == place[i]
  end
  hashing =
    if agree_pref == both && both == stored && agree_bare < stored
      'prefixed'
    elsif agree_bare == stored && agree_pref < both
      'bare'
    else
      fail!("#{c[:id]}: neither the bare (#{agree_bare} of #{stored}) nor the prefixed key " \
            "(#{agree_pref} of #{both}) explains the placement")
    end

  # The client's ring against where the keys really are (the digest forms too).
  ring, asked = ring_places(servers, keys, ns)
  (0...keys.size).each do |i|
    fail!("#{c[:id]}: the client asks for #{asked[i].inspect}, not #{wire[i].inspect}") unless asked[i] == wire[i]
  end
  api_disagree = (0...keys.size).select { |i| held.key?(expected[i]) && ring[i] != held[expected[i]] }
  api_total += api_disagree.size

  digested = (0...keys.size).select { |i| wire[i] != prefixed[i] }
  sent_long = (0...keys.size).select { |i| wire[i] == prefixed[i] && wire[i].bytesize > 250 }
  digested_held = digested.count { |i| held.key?(expected[i]) }
  unless (0...keys.size).all? { |i| place[i].nil? == (digested.include?(i) || sent_long.include?(i)) }
    fail!("#{c[:id]}: the x keys are not exactly the digested and the over-long ones")
  end
  error_kinds = errors.compact.tally.map { |m, n| "#{n} refused by the server (#{m})" }
  line = "#{c[:id]}: #{stored} on a server, #{keys.size - stored} x; bare #{agree_bare}/#{stored}, " \
         "prefixed #{agree_pref}/#{both}; the ring disagrees on #{api_disagree.size}" \
         "#{api_disagree.empty? ? '' : " (keys ##{api_disagree.first(10).join(', #')})"}\n" \
         "    x: #{digested.size} sent in the digest form (#{digested_held} of them on the server the ring " \
         "names), #{sent_long.size} sent as prefix+key of over 250 bytes" \
         "#{error_kinds.empty? ? '' : ": #{error_kinds.join(', ')}"}"
  summary << line
  note line.sub("\n    ", '; ')

  client = "#{versions}: Dalli::Client.new([\"host:port:1\", ...], namespace: '#{ns}'), other options " \
           "default; Client#set(key, value, 0, raw: true)"
  out << "case #{c[:id]}\nclient #{client}\nprofile dalli\nprefix #{prefix}\nprefix_hashing #{hashing}\n"
  servers.each { |h, p| out << "server #{h}:#{p}:1\n" }
  out << "place #{place.map { |s| s.nil? ? 'x' : s }.join(' ')}\nend\n\n"
end
flush_servers((1..5).map { |i| ["#{net}.#{i}", 21_980 + i] })

header = +"# dalli.golden: written by tests/golden/gen_prefix.sh (gen_prefix_dalli.rb)\n"
header << "# #{versions}\n"
header << "# Recorded on real memcached servers: each key of keys.txt (a Ruby UTF-8 String) stored with\n"
header << "# Client#set through a client with namespace: NS, then every server asked which keys it holds\n"
header << "# (lru_crawler metadump); prefix = NS + \":\" (what Dalli puts before the key); place = the server\n"
header << "# holding exactly the bytes prefix+key, x when none does.\n"
header << "# prefix_hashing is measured: clients without a namespace, storing the bare keys and then the\n"
header << "# keys prefix+key, must put every key where the namespaced client did.\n"
header << "# Per case: keys held by a server as prefix+key, and x; bare a/b: of the b keys on a server, a\n"
header << "# lie where a client without a namespace puts the bare key; prefixed a/b: where it puts the key\n"
header << "# prefix+key; the ring (the client's own answer, Client#get -> Ring#server_for_key) against\n"
header << "# where the keys really are, digest forms included. Dalli shortens a namespaced key of more than\n"
header << "# 250 characters into a digest form (not prefix+key); a key of at most 250 characters but more\n"
header << "# than 250 bytes is sent as it is and the server refuses it.\n"
summary.each { |s| header << "#   #{s.gsub("\n", "\n#   ")}\n" }
header << "# #{cases.size} cases.\n\n"
File.write(out_path, header + out.rstrip + "\n")
note "wrote #{out_path} (#{cases.size} cases, ring disagreements: #{api_total})"
