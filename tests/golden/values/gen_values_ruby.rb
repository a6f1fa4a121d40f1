# SPDX-License-Identifier: MIT
#
# gen_values_ruby.rb: the Ruby half of the value tables. Run by gen_values.sh:
#
#   ruby gen_values_ruby.rb [--readback=MANIFEST] VALUES_TXT HOST:PORT DRAFT_DIR NAME=VERSION...
#
# Stores every value of values.txt, as Ruby's natural type (UTF-8 String,
# Integer, Float, true/false, Hash with String keys), through Dalli
# (Dalli::Client.new(server, options)) under "<case>:<value-name>", one case per
# setting, reads each back through the same client and compares it (eql?, so
# 1 and 1.0 differ, and a String must also have the same encoding) with what
# was stored. Writes the draft dalli.values in DRAFT_DIR:
# `stored` lines, which values_collect.py replaces with the raw (flags, bytes)
# the server holds, `refused` lines and "# roundtrip" comments.
#
# Nondeterministic: with compressor: Dalli::GzipCompressor every compressed item
# (serialized size >= compression_min_size) is a gzip stream whose header holds
# the current time (Zlib::GzipWriter writes Time.now as its mtime).
#
# With --readback=MANIFEST (readback.sh) it writes no draft: for every item of
# MANIFEST ("<case> <value> <flags> <base64>", what memshard's codec stored under
# "rb:<case>:<value>"), it stores the value itself as above, reads memshard's item
# through the client configured as the case says, and prints one line per item
# (see readback.sh): ok, same (read back as the client reads its own item),
# refused (the client refuses the value itself) or DIFF.

require 'dalli'
require 'digest'
require 'logger'

MAP_SPEC = '{"a":1,"b":[2,3]}'

# [[name, value]] in file order.
def read_values(path)
  values = []
  File.foreach(path, encoding: 'UTF-8') do |line|
    line = line.chomp
    next if line.empty? || line.start_with?('#')

    name, kind, check, spec = line.split(/ +/, 4)
    v = case kind
        when 'str' then spec
        when 'lines'
          n, prefix = spec.split(' ')
          n = Integer(n, 10)
          s = +(prefix || '')
          i = 1
          while s.bytesize < n
            s << format("line %05d: the quick brown fox jumps over the lazy dog\n", i)
            i += 1
          end
          s.byteslice(0, n).force_encoding('UTF-8')
        when 'int' then Integer(spec, 10)
        when 'float'
          f = if spec.include?('/')
                a, b = spec.split('/')
                Float(a) / Float(b)
              else
                Float(spec)
              end
          bits = [f].pack('G').unpack1('H*')
          raise "#{name}: bits #{bits}, want #{check}" unless bits == check

          f
        when 'bool' then spec == 'true'
        when 'map'
          raise "#{name}: this script builds only the map #{MAP_SPEC}" unless spec == MAP_SPEC

          { 'a' => 1, 'b' => [2, 3] }
        else raise "#{name}: unknown kind #{kind}"
        end
    if %w[str lines].include?(kind)
      sha = Digest::SHA256.hexdigest(v)
      raise "#{name}: sha256 #{sha}, want #{check}" unless sha == check
    end
    values << [name, v]
  end
  values
end

def describe(v, stored)
  if v.is_a?(String) && stored.is_a?(String) && v.b == stored.b
    return "String (#{v.encoding}) with the same bytes, stored as #{stored.encoding}"
  end

  text = v.inspect
  text = "#{text[0, 100]}... (#{text.size} chars of inspect)" if text.size > 100
  enc = v.is_a?(String) ? " (#{v.encoding})" : ''
  "#{v.class}#{enc} #{text}"
end

# eql?, and a String also of the same encoding.
def same?(got, v)
  got.eql?(v) && (!v.is_a?(String) || got.encoding == v.encoding)
end

# Readback mode: reads memshard's item for value name of case id back through
# client and prints its line; req: the options of set.
def readback_item(client, id, name, v, req)
  key = "#{id}:#{name}"
  own = nil
  begin
    ok = client.set(key, v, nil, req.empty? ? nil : req)
    refused = ok ? nil : "set returned #{ok.inspect}"
    own = [client.get(key)] if ok
  rescue StandardError => e
    refused = "#{e.class}: #{e.message}"
  end
  begin
    got = client.get("rb:#{key}")
  rescue StandardError => e
    puts "DIFF #{id} #{name}: get raised #{e.class}: #{e.message}"
    return
  end
  if got.nil?
    puts "DIFF #{id} #{name}: get found nothing"
  elsif same?(got, v)
    puts "ok #{id} #{name}"
  elsif own && same?(got, own[0])
    puts "same #{id} #{name}: read back as #{describe(got, v)}, as the client reads its own item"
  elsif own.nil?
    puts "refused #{id} #{name}: the client refuses the value itself (#{refused}); " \
         "memshard's item read back as #{describe(got, v)}"
  else
    puts "DIFF #{id} #{name}: read back as #{describe(got, v)}; the client's own item as #{describe(own[0], v)}"
  end
end

readback = nil # readback mode: { [case, value name] => true } for what memshard wrote
if ARGV[0]&.start_with?('--readback=')
  readback = File.readlines(ARGV.shift.split('=', 2)[1]).to_h { |line| [line.split(' ')[0, 2], true] }
end
values_txt, address, draft_dir, *rest = ARGV
versions = rest.to_h { |a| a.split('=', 2) }
values = read_values(values_txt)
Dalli.logger = Logger.new($stderr, level: Logger::WARN)

cases = [
  ['dalli-default', 'Dalli::Client.new(server); set(key, value)', {}, {}, false],
  ['dalli-raw', 'Dalli::Client.new(server); set(key, value, nil, raw: true)', {}, { raw: true }, false],
  ['dalli-gzip', 'Dalli::Client.new(server, compress: true, compressor: Dalli::GzipCompressor); set(key, value)',
   { compress: true, compressor: Dalli::GzipCompressor }, {}, true]
]

out = []
out << "# Dalli: Dalli::Client.new('#{address}', options) (binary protocol, the only one of 3.0.6);"
out << '# every value stored with set(key, value, nil[, raw: true]), read back with get(key) and'
out << '# compared (eql?) with what was stored. Defaults: serializer Marshal, compress true,'
out << '# compressor Dalli::Compressor (zlib deflate), compression_min_size 4096.'
out << '# Values read back unchanged unless a "# roundtrip" comment says otherwise.'
cases.each do |id, how, options, req, gzip|
  client = Dalli::Client.new(address, options)
  out << "case #{id}"
  out << "client #{versions['dalli']}; #{how}"
  out << 'codec dalli'
  out << "setting serializer=#{req[:raw] ? 'none' : 'Marshal'}"
  out << 'setting compress=true'
  out << "setting compressor=#{gzip ? 'gzip' : 'zlib'}"
  out << 'setting compression_min_size=4096'
  out << "setting raw=#{req[:raw] ? 'true' : 'false'}"
  values.each do |name, v|
    if readback
      readback_item(client, id, name, v, req) if readback[[id, name]]
      next
    end
    key = "#{id}:#{name}"
    begin
      ok = client.set(key, v, nil, req.empty? ? nil : req)
    rescue StandardError => e
      out << "refused #{name} #{e.class}: #{e.message}"
      next
    end
    unless ok
      out << "refused #{name} set returned #{ok.inspect}"
      next
    end
    stored_size = req[:raw] ? v.to_s.bytesize : Marshal.dump(v).bytesize
    out << (gzip && stored_size >= 4096 ? "stored #{name} nondeterministic" : "stored #{name}")
    begin
      got = client.get(key)
    rescue StandardError => e
      out << "# roundtrip #{name}: get raised #{e.class}: #{e.message}"
      next
    end
    same = got.eql?(v) && (!v.is_a?(String) || got.encoding == v.encoding)
    out << "# roundtrip #{name}: read back as #{describe(got, v)}" unless same
  end
  out << 'end'
  client.close
end
File.write(File.join(draft_dir, 'dalli.values'), "#{out.join("\n")}\n") unless readback
