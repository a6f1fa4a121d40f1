// SPDX-License-Identifier: MIT
// A user of memshard's codecs alone: writes and reads a PHP array of rows as
// php-memcached does (FastLZ, then zlib and zstd, which link the libraries),
// with no libmemcached anywhere.
#include <cstdio>
#include <memshard/codecs/make_codec.hpp>
#include <string>

auto main() -> int {
  const memshard::Value rows =
      memshard::Value::list({memshard::Value::map({{"id", 1}, {"name", std::string(3000, 'a')}}),
                             memshard::Value::map({{"id", 2}, {"name", "bob"}})});
  int failures = 0;
  for (const char* spec :
       {"php-memcached", "php-memcached:compression=zlib", "php-memcached:compression=zstd"}) {
    const memshard::AnyCodec codec = memshard::make_codec_from_spec(spec);
    const auto stored = codec.encode(rows);
    const auto read = stored.ok() ? codec.decode(stored->bytes, stored->flags)
                                  : memshard::CodecResult<memshard::Value>(stored.error());
    const bool same = read.ok() && *read == rows;
    std::printf("%s: flags 0x%x, %zu bytes, %s\n", spec, stored.ok() ? stored->flags : 0U,
                stored.ok() ? stored->bytes.size() : 0U, same ? "read back" : "WRONG");
    failures += same && (stored->flags & 0x10U) != 0 ? 0 : 1;
  }
  return failures == 0 ? 0 : 1;
}
