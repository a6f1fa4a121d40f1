# SPDX-License-Identifier: MIT
#
# gen_dalli_table.rb KEYS OUT VERSIONS [confirm]: writes the Dalli table.
#
# Each case builds a real Dalli::Client (servers as "host", "host:port" or
# "host:port:weight" strings, options such as :namespace) and places every key
# through the client's own path: Client#get(key) -> perform -> KeyManager
# #validate_key -> Ring#server_for_key. So that no connection is made, each
# server object of the client's ring answers alive? with true and records
# the request instead of sending it; the recorded server is mapped back to
# its index in the list. Keys are Ruby Strings read from keys.txt as UTF-8.
#
# With "confirm", the "*-confirm-5" cases are also checked on real memcached
# servers (127.0.98.1-5:21981-21985, started by gen_dalli.sh): a plain client
# stores every key with Client#set, then every server is asked which keys it
# holds (lru_crawler metadump).
require 'dalli'
require_relative 'gen_dalli_common' # fail!, note, read_keys, client_options, mc_*

GOLDEN_WHO = 'gen_dalli'

keys_path, out_path, versions, mode = ARGV
confirm = mode == 'confirm'
keys = read_keys(keys_path)

NS = [1, 2, 3, 5, 10, 25].freeze

def weight_of(i)
  1 + (7 * i + 3) % 5
end

# [host, port, weight, the string given to Dalli]
def server_list(layout, n)
  (0...n).map do |i|
    case layout
    when 'ip' # IP hosts on the default port, given without a port
      host = "127.0.0.#{i + 1}"
      [host, 11_211, 1, host]
    when 'names' # host names (Dalli does not resolve them until it connects)
      host = "cache-#{i + 1}.example.net"
      port = 11_212 + i
      [host, port, 1, "#{host}:#{port}"]
    when 'weighted'
      host = "127.0.1.#{i + 1}"
      port = i.even? ? 11_211 : 11_311
      w = weight_of(i)
      [host, port, w, "#{host}:#{port}:#{w}"]
    when 'confirm'
      host = "127.0.98.#{i + 1}"
      port = 21_981 + i
      w = weight_of(i)
      [host, port, w, "#{host}:#{port}:#{w}"]
    else
      fail!("unknown layout #{layout}")
    end
  end
end

# Places every key through Dalli's own code path, without connecting.
def place_all(servers, keys, namespace)
  client = Dalli::Client.new(servers.map { |s| s[3] }, client_options(namespace))
  ring = client.send(:ring)
  fail!('ring has the wrong number of servers') unless ring.servers.size == servers.size
  picked = nil
  ring.servers.each_with_index do |srv, idx|
    h, p, w, = servers[idx]
    unless srv.hostname == h && srv.port == p && srv.weight == w
      fail!("server #{idx} parsed as #{srv.hostname}:#{srv.port}:#{srv.weight}, expected #{h}:#{p}:#{w}")
    end
    srv.define_singleton_method(:alive?) { true }
    srv.define_singleton_method(:request) { |*_args| picked = idx; nil }
  end
  keys.map do |k|
    picked = nil
    client.get(k)
    fail!("no server picked for #{k.inspect}") if picked.nil?
    picked
  end
end

def case_text(id, client, profile, options, servers, place)
  s = +"case #{id}\nclient #{client}\nprofile #{profile}\n"
  options.each { |name, value| s << "option #{name}=#{value}\n" }
  servers.each { |h, p, w, _| s << "server #{h}:#{p}:#{w}\n" }
  s << "place #{place.join(' ')}\nend\n\n"
end

# ------------------------------------------------------------ real servers

def confirm_on_servers(what, servers, keys, place, namespace)
  mc_flush_all(servers)
  client = Dalli::Client.new(servers.map { |s| s[3] }, client_options(namespace))
  key_manager = client.instance_variable_get(:@key_manager)
  expect = {}
  keys.each_with_index do |k, i|
    fail!("#{what}: set #{k.inspect} failed") unless client.set(k, "v#{i}", 0, raw: true)
    expect[key_manager.validate_key(k).b] = place[i]
  end
  client.close
  found = {}
  servers.each_with_index do |(h, p, _), s|
    mc_dump_keys(h, p).each do |k|
      fail!("#{what}: key #{k.inspect} is on two servers") if found.key?(k)
      found[k] = s
    end
  end
  expect.each do |k, s|
    fail!("#{what}: key #{k.inspect} is on no server") unless found.key?(k)
    fail!("#{what}: key #{k.inspect} is on server #{found[k]}, the table says #{s}") unless found[k] == s
  end
  fail!("#{what}: the servers hold #{found.size} keys, #{expect.size} were stored") unless found.size == expect.size
  mc_flush_all(servers)
  "#{what}: #{expect.size} keys stored on #{servers.size} real servers agree with the table"
end

# ------------------------------------------------------------ the cases

out = +''
count = 0
notes = []
client_base = "#{versions}: Dalli::Client.new(%s); placement by Client#get(key) " \
              '-> Ring#server_for_key (servers not connected)'
add = lambda do |id, servers, namespace|
  place = place_all(servers, keys, namespace)
  opts = namespace ? { 'namespace' => namespace } : {}
  form = { 1 => '["host", ...]', 2 => '["host:port", ...]', 3 => '["host:port:weight", ...]' }
  shown = form.fetch(servers[0][3].count(':') + 1)
  shown += ", namespace: '#{namespace}'" if namespace
  out << case_text(id, format(client_base, shown), 'dalli', opts, servers, place)
  count += 1
  place
end

NS.each do |n|
  %w[ip names weighted].each { |layout| add.call("dalli-#{layout}-#{n}", server_list(layout, n), nil) }
end
[2, 3, 10, 25].each do |n|
  %w[ip weighted].each { |layout| add.call("dalli-namespace-#{layout}-#{n}", server_list(layout, n), 'app') }
end
[nil, 'app'].each do |namespace|
  id = namespace ? 'dalli-namespace-confirm-5' : 'dalli-confirm-5'
  servers = server_list('confirm', 5)
  place = add.call(id, servers, namespace)
  notes << confirm_on_servers(id, servers, keys, place, namespace) if confirm
end

km = Dalli::KeyManager.new(namespace: 'app')
truncated = keys.count { |k| km.validate_key(k) != "app:#{k}" }
notes << "with namespace 'app', #{truncated} keys are hashed in their truncated form (namespace:key over 250 characters)"

header = +"# dalli.golden: written by tests/golden/gen_dalli.sh (gen_dalli_table.rb)\n"
header << "# #{versions}\n"
header << "# Keys are Ruby Strings (UTF-8) read from keys.txt.\n"
if confirm
  header << "# The *-confirm-5 cases were also checked on real memcached servers (Client#set, then\n"
  header << "# every server asked which keys it holds).\n"
end
header << "# #{count} cases.\n\n"
File.write(out_path, header + out.rstrip + "\n")
notes.each { |n| note n }
note "wrote #{out_path} (#{count} cases)"
