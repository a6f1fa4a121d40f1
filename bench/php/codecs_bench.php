<?php
// SPDX-License-Identifier: MIT
//
// codecs_bench.php: the PHP side of memshard's codec benchmark. The benchmark
// (bench/codecs_bench.cpp) starts it and talks to it, one line each way:
//
//   php codecs_bench.php VALUES_TXT HOST:PORT KEY_PREFIX
//
// It builds str20000 of values.txt (the "lines" kind, sha256 checked) and
// answers
//   ready php=<version> memcached=<extension version> keys=<k>,<k>,...
// (the keys it may write, each starting with KEY_PREFIX), then one answer per
// command:
//   check       stores its items once and reads each back (===), reads the
//               zlib item's raw bytes from the server and checks that
//               php-memcached's zlib is gzcompress() behind a 4-byte length:
//               "ok"
//   run OP N    N calls of OP, timed with hrtime() around the loop, each
//               answer checked: "ok <ns for the N calls>"
//   quit        exits
// and "error <why>" (then exits 1) when anything fails. The operations:
//   set_fastlz, set_zlib, set_raw  Memcached::set of str20000 with FastLZ,
//                 zlib, or no compression (three Memcached objects);
//   set_raw_fastlz, set_raw_zlib  Memcached::set, no compression, of the bytes
//                 the FastLZ and zlib items hold (read raw from the server
//                 by check): the same bytes on the wire, no codec;
//   get_fastlz, get_zlib, get_raw, get_raw_fastlz, get_raw_zlib
//                 Memcached::get of those items;
//   get_int       Memcached::get of the integer 42;
//   get_small     Memcached::get of "hello, memshard";
//   gzcompress, gzuncompress  zlib alone, as php-memcached 3.2 calls it.
// Every Memcached object has the behaviours memshard's own handles have
// (text protocol, TCP_NODELAY, non-blocking I/O); the compression threshold
// and factor are the ini's (2000 and 1.3, as memshard's PhpMemcachedCodec).

declare(strict_types=1);

function fail(string $why): never
{
    fwrite(STDOUT, 'error ' . str_replace("\n", ' ', $why) . "\n");
    fflush(STDOUT);
    exit(1);
}

function answer(string $line): void
{
    fwrite(STDOUT, $line . "\n");
    fflush(STDOUT);
}

/** str20000 of values.txt, built as every value-table script builds a "lines" value. */
function read_str20000(string $path): string
{
    foreach (file($path, FILE_IGNORE_NEW_LINES) as $line) {
        if ($line === '' || $line[0] === '#') {
            continue;
        }
        [$name, $kind, $check, $spec] = preg_split('/ +/', $line, 4);
        if ($name !== 'str20000') {
            continue;
        }
        if ($kind !== 'lines') {
            fail("str20000 is of kind $kind, not lines");
        }
        $parts = explode(' ', $spec);
        $n = (int)$parts[0];
        $v = $parts[1] ?? '';
        for ($i = 1; strlen($v) < $n; $i++) {
            $v .= sprintf("line %05d: the quick brown fox jumps over the lazy dog\n", $i);
        }
        $v = substr($v, 0, $n);
        if (hash('sha256', $v) !== $check) {
            fail('str20000: sha256 ' . hash('sha256', $v) . ", want $check");
        }
        return $v;
    }
    fail("no str20000 in $path");
}

/** A Memcached object on the one server, with memshard's behaviours. */
function client(string $host, int $port, ?int $compression): Memcached
{
    $m = new Memcached();
    $m->setOption(Memcached::OPT_BINARY_PROTOCOL, false);
    $m->setOption(Memcached::OPT_TCP_NODELAY, true);
    $m->setOption(Memcached::OPT_NO_BLOCK, true);
    if ($compression === null) {
        $m->setOption(Memcached::OPT_COMPRESSION, false);
    } else {
        $m->setOption(Memcached::OPT_COMPRESSION, true);
        $m->setOption(Memcached::OPT_COMPRESSION_TYPE, $compression);
    }
    if (!$m->addServer($host, $port)) {
        fail("addServer $host:$port: " . $m->getResultMessage());
    }
    return $m;
}

/** The raw bytes the server holds under $key (text protocol, own socket). */
function raw_get(string $host, int $port, string $key): array
{
    $socket = fsockopen($host, $port, $errno, $errstr, 5.0);
    if ($socket === false) {
        fail("connect $host:$port: $errstr");
    }
    fwrite($socket, "get $key\r\n");
    $header = fgets($socket);
    if ($header === false || !preg_match('/^VALUE \S+ (\d+) (\d+)\r\n$/', $header, $m)) {
        fail("get $key: " . var_export($header, true));
    }
    $bytes = '';
    while (strlen($bytes) < (int)$m[2] + 2) {
        $chunk = fread($socket, (int)$m[2] + 2 - strlen($bytes));
        if ($chunk === false || $chunk === '') {
            fail("get $key: short read");
        }
        $bytes .= $chunk;
    }
    fclose($socket);
    return [(int)$m[1], substr($bytes, 0, -2)];
}

if ($argc !== 4) {
    fail('usage: php codecs_bench.php VALUES_TXT HOST:PORT KEY_PREFIX');
}
[, $values_txt, $address, $prefix] = $argv;
[$host, $port] = explode(':', $address);
$port = (int)$port;
$s = read_str20000($values_txt);
$small = 'hello, memshard';
$zipped = gzcompress($s);

$clients = [
    'fastlz' => client($host, $port, Memcached::COMPRESSION_FASTLZ),
    'zlib' => client($host, $port, Memcached::COMPRESSION_ZLIB),
    'raw' => client($host, $port, null),
];
$keys = [
    'fastlz' => $prefix . 'php:fastlz',
    'zlib' => $prefix . 'php:zlib',
    'raw' => $prefix . 'php:raw',
    'raw_fastlz' => $prefix . 'php:raw_fastlz',
    'raw_zlib' => $prefix . 'php:raw_zlib',
    'int' => $prefix . 'php:int',
    'small' => $prefix . 'php:small',
];

answer(sprintf('ready php=%s memcached=%s keys=%s', PHP_VERSION, phpversion('memcached'), implode(',', $keys)));

/** One call of $op, checked; false when the answer is wrong. */
$ops = [
    'set_fastlz' => fn() => $clients['fastlz']->set($keys['fastlz'], $s),
    'set_zlib' => fn() => $clients['zlib']->set($keys['zlib'], $s),
    'set_raw' => fn() => $clients['raw']->set($keys['raw'], $s),
    'get_fastlz' => fn() => $clients['fastlz']->get($keys['fastlz']) === $s,
    'get_zlib' => fn() => $clients['zlib']->get($keys['zlib']) === $s,
    'get_raw' => fn() => $clients['raw']->get($keys['raw']) === $s,
    'get_int' => fn() => $clients['raw']->get($keys['int']) === 42,
    'get_small' => fn() => $clients['raw']->get($keys['small']) === $small,
    'gzcompress' => fn() => strlen(gzcompress($s)) === strlen($zipped),
    'gzuncompress' => fn() => gzuncompress($zipped) === $s,
];

while (($line = fgets(STDIN)) !== false) {
    $words = explode(' ', trim($line));
    switch ($words[0]) {
        case 'check':
            foreach (['fastlz', 'zlib', 'raw'] as $c) {
                if (!$clients[$c]->set($keys[$c], $s)) {
                    fail("set $c: " . $clients[$c]->getResultMessage());
                }
            }
            if (!$clients['raw']->set($keys['int'], 42) || !$clients['raw']->set($keys['small'], $small)) {
                fail('set int, small: ' . $clients['raw']->getResultMessage());
            }
            foreach ($ops as $name => $op) {
                if (!str_starts_with($name, 'set_') && !$op()) {
                    fail("$name: a wrong answer");
                }
            }
            [$flags, $bytes] = raw_get($host, $port, $keys['zlib']);
            if ($flags !== 0x30 || substr($bytes, 4) !== $zipped || unpack('V', $bytes)[1] !== strlen($s)) {
                fail(sprintf('the zlib item (flags %d, %d bytes) is not a length and gzcompress()',
                    $flags, strlen($bytes)));
            }
            // The same bytes, stored and read with no codec.
            foreach (['fastlz', 'zlib'] as $c) {
                $stored = raw_get($host, $port, $keys[$c])[1];
                $raw_key = $keys["raw_$c"];
                $ops["set_raw_$c"] = fn() => $clients['raw']->set($raw_key, $stored);
                $ops["get_raw_$c"] = fn() => $clients['raw']->get($raw_key) === $stored;
                if (!$ops["set_raw_$c"]() || !$ops["get_raw_$c"]()) {
                    fail("raw_$c: " . $clients['raw']->getResultMessage());
                }
            }
            answer('ok');
            break;
        case 'run':
            $op = $ops[$words[1] ?? ''] ?? null;
            $n = (int)($words[2] ?? 0);
            if ($op === null || $n <= 0) {
                fail('bad command: ' . trim($line));
            }
            $wrong = 0;
            $start = hrtime(true);
            for ($i = 0; $i < $n; $i++) {
                if (!$op()) {
                    $wrong++;
                }
            }
            $ns = hrtime(true) - $start;
            if ($wrong !== 0) {
                fail("$words[1]: $wrong wrong answers of $n");
            }
            answer("ok $ns");
            break;
        case 'quit':
            exit(0);
        default:
            fail('bad command: ' . trim($line));
    }
}
