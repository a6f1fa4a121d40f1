# SPDX-License-Identifier: MIT
#
# gen_dalli_common.rb: helpers shared by the Ruby generators gen_dalli_table.rb
# and gen_prefix_dalli.rb (require_relative): messages, keys.txt, Dalli client
# options, and the raw access to real memcached servers (commands, flush_all,
# lru_crawler metadump). Each script defines GOLDEN_WHO, the name its messages
# start with.
require 'socket'

def fail!(msg)
  warn "#{GOLDEN_WHO}: #{msg}"
  exit 1
end

def note(msg)
  warn "#{GOLDEN_WHO}: #{msg}"
end

# keys.txt as Ruby Strings (UTF-8), one key per line.
def read_keys(path)
  keys = File.read(path, mode: 'r:UTF-8').split("\n", -1)
  fail!("#{path} must end with a newline") unless keys.last == ''
  keys.pop
  keys.each_with_index do |k, i|
    fail!("#{path}: line #{i + 1} is empty or not valid UTF-8") if k.empty? || !k.valid_encoding?
  end
  keys
end

# Dalli::Client.new options: only :namespace, when given.
def client_options(namespace)
  namespace ? { namespace: namespace } : {}
end

# ------------------------------------------------------------ real servers

# Sends one command on a new connection and reads until the answer ends with
# until_suffix (or, for "END\r\n", is a one-line BUSY from a busy crawler).
def mc_command(host, port, cmd, until_suffix)
  sock = Socket.tcp(host, port, connect_timeout: 5)
  sock.write(cmd)
  buf = +''.b
  deadline = Time.now + 20
  until buf.end_with?(until_suffix)
    fail!("#{host}:#{port} timed out during #{cmd.strip}") if Time.now > deadline
    next unless IO.select([sock], nil, nil, 1)

    chunk = sock.read_nonblock(65_536, exception: false)
    fail!("#{host}:#{port} closed the connection during #{cmd.strip}") if chunk.nil?
    buf << chunk unless chunk == :wait_readable
    break if until_suffix == "END\r\n" && buf.start_with?('BUSY') && buf.end_with?("\r\n")
  end
  sock.close
  buf
end

# flush_all on every server (servers as [host, port, ...]).
def mc_flush_all(servers)
  servers.each do |h, p, _|
    r = mc_command(h, p, "flush_all\r\n", "\r\n")
    fail!("flush_all on #{h}:#{p} answered #{r.strip}") unless r == "OK\r\n"
  end
end

# One lru_crawler metadump of a server: the keys it lists, as binary Strings
# (metadump writes them %XX-encoded, "key=<encoded> ..." lines ending in "\n").
# A busy crawler is asked again, up to 100 times.
def mc_dump_keys(host, port)
  r = nil
  100.times do
    r = mc_command(host, port, "lru_crawler metadump all\r\n", "END\r\n")
    break unless r.start_with?('BUSY')

    sleep 0.05
  end
  fail!("#{host}:#{port}: metadump answered #{r.strip}") unless r.end_with?("END\r\n")
  r.split("\n").select { |l| l.start_with?('key=') }.map do |l|
    l.split(' ', 2)[0][4..].gsub(/%([0-9A-Fa-f]{2})/) { Regexp.last_match(1).hex.chr }.b
  end
end
