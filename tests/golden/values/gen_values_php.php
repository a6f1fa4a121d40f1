<?php
// SPDX-License-Identifier: MIT
//
// gen_values_php.php: the PHP half of the value tables. Run by gen_values.sh:
//
//   php gen_values_php.php [--readback=MANIFEST] VALUES_TXT HOST:PORT DRAFT_DIR NAME=VERSION...
//
// Stores every value of values.txt, as PHP's natural type (string, int, float,
// bool, array), through php-memcached (new Memcached()) and pecl memcache
// (new Memcache()) under "<case>:<value-name>", one case per setting, reads
// each back through the same client and compares it (===) with what was
// stored. Writes the drafts php_memcached.values and php_memcache.values in
// DRAFT_DIR: `stored` lines, which values_collect.py replaces with the raw
// (flags, bytes) the server holds, `refused` lines and "# roundtrip" comments
// for the values the client did not give back unchanged.
//
// With --readback=MANIFEST (readback.sh) it writes no drafts: for every item of
// MANIFEST ("<case> <value> <flags> <base64>", what memshard's codec stored
// under "rb:<case>:<value>"), it stores the value itself as above, reads
// memshard's item through the client configured as the case says, and prints
// one line per item (see readback.sh): ok, same (read back as the client reads
// its own item), refused (the client refuses the value itself) or DIFF.

declare(strict_types=1);

const MAP_SPEC = '{"a":1,"b":[2,3]}';

/** The value set: [name => PHP value], in file order. */
function read_values(string $path): array
{
    $values = [];
    foreach (file($path, FILE_IGNORE_NEW_LINES) as $line) {
        if ($line === '' || $line[0] === '#') {
            continue;
        }
        [$name, $kind, $check, $spec] = preg_split('/ +/', $line, 4);
        switch ($kind) {
            case 'str':
                $v = $spec;
                break;
            case 'lines':
                $parts = explode(' ', $spec);
                $n = (int)$parts[0];
                $v = $parts[1] ?? '';
                for ($i = 1; strlen($v) < $n; $i++) {
                    $v .= sprintf("line %05d: the quick brown fox jumps over the lazy dog\n", $i);
                }
                $v = substr($v, 0, $n);
                if (strlen($v) !== $n) {
                    throw new RuntimeException("$name: length " . strlen($v));
                }
                break;
            case 'int':
                $v = (int)$spec;
                if ((string)$v !== $spec) {
                    throw new RuntimeException("$name: $spec is not a PHP int");
                }
                break;
            case 'float':
                if (str_contains($spec, '/')) {
                    [$a, $b] = explode('/', $spec);
                    $v = (float)$a / (float)$b;
                } else {
                    $v = (float)$spec;
                }
                if (bin2hex(pack('E', $v)) !== $check) {
                    throw new RuntimeException("$name: bits " . bin2hex(pack('E', $v)) . ", want $check");
                }
                break;
            case 'bool':
                $v = $spec === 'true';
                break;
            case 'map':
                if ($spec !== MAP_SPEC) {
                    throw new RuntimeException("$name: this script builds only the map " . MAP_SPEC);
                }
                $v = ['a' => 1, 'b' => [2, 3]];
                break;
            default:
                throw new RuntimeException("$name: unknown kind $kind");
        }
        if (($kind === 'str' || $kind === 'lines') && hash('sha256', $v) !== $check) {
            throw new RuntimeException("$name: sha256 " . hash('sha256', $v) . ", want $check");
        }
        $values[$name] = $v;
    }
    return $values;
}

/** A short, one-line description of a value read back. */
function describe($v): string
{
    if (is_object($v) || is_array($v)) {
        return (is_object($v) ? 'object ' . get_class($v) : 'array') . ' ' . json_encode($v);
    }
    $text = var_export($v, true);
    $text = str_replace(["\n", "\r"], ['\\n', '\\r'], $text);
    if (strlen($text) > 100) {
        $text = substr($text, 0, 100) . sprintf('... (%d bytes of var_export)', strlen($text));
    }
    return gettype($v) . ' ' . $text;
}

/** ===, with objects compared by class and properties (=== compares their identity). */
function same($a, $b): bool
{
    if (is_object($a) || is_object($b)) {
        return is_object($a) && is_object($b) && get_class($a) === get_class($b)
            && same((array)$a, (array)$b);
    }
    if (is_array($a) && is_array($b)) {
        if (array_keys($a) !== array_keys($b)) {
            return false;
        }
        foreach ($a as $k => $x) {
            if (!same($x, $b[$k])) {
                return false;
            }
        }
        return true;
    }
    return $a === $b;
}

/**
 * Readback mode: reads memshard's item for value $name of case $id back and
 * prints its line. $store($key, $v) stores through the client (true, or why
 * not); $fetch($key) is [found, value].
 */
function readback_item(string $id, string $name, $v, callable $store, callable $fetch): void
{
    $key = "$id:$name";
    try {
        $stored = $store($key, $v);
    } catch (Throwable $e) {
        $stored = get_class($e) . ': ' . $e->getMessage();
    }
    $own = $stored === true ? $fetch($key) : [false, null];
    [$found, $got] = $fetch("rb:$key");
    if (!$found) {
        echo "DIFF $id $name: get() found nothing\n";
    } elseif (same($got, $v)) {
        echo "ok $id $name\n";
    } elseif ($own[0] && same($got, $own[1])) {
        echo "same $id $name: read back as " . describe($got) . ", as the client reads its own item\n";
    } elseif ($stored !== true) {
        echo "refused $id $name: the client refuses the value itself ($stored); memshard's item read back as " . describe($got) . "\n";
    } else {
        echo "DIFF $id $name: read back as " . describe($got) . "; the client's own item as "
            . ($own[0] ? describe($own[1]) : 'nothing') . "\n";
    }
}

$last_warning = '';
set_error_handler(function (int $no, string $msg) use (&$last_warning): bool {
    $last_warning = $msg;
    return true;
});

$readback = null;  // readback mode: ["<case> <value>" => true] for what memshard wrote
if (str_starts_with($argv[1] ?? '', '--readback=')) {
    $readback = [];
    foreach (file(substr($argv[1], strlen('--readback=')), FILE_IGNORE_NEW_LINES) as $line) {
        $fields = explode(' ', $line);
        if (count($fields) >= 2) {
            $readback["$fields[0] $fields[1]"] = true;
        }
    }
    array_splice($argv, 1, 1);
}
[$script, $values_txt, $address, $draft_dir] = array_slice($argv, 0, 4);
$versions = [];
foreach (array_slice($argv, 4) as $arg) {
    [$k, $text] = explode('=', $arg, 2);
    $versions[$k] = $text;
}
[$host, $port] = explode(':', $address);
$port = (int)$port;
$values = read_values($values_txt);

// ------------------------------------------------------------ php-memcached
$USER_FLAGS = 0xC0DE;
$memcached_cases = [
    ['php-memcached-default', 'Debian defaults', [], []],
    ['php-memcached-zlib', 'setOption(Memcached::OPT_COMPRESSION_TYPE, Memcached::COMPRESSION_ZLIB)',
        [Memcached::OPT_COMPRESSION_TYPE => Memcached::COMPRESSION_ZLIB], ['compression' => 'zlib']],
    ['php-memcached-igbinary', 'setOption(Memcached::OPT_SERIALIZER, Memcached::SERIALIZER_IGBINARY)',
        [Memcached::OPT_SERIALIZER => Memcached::SERIALIZER_IGBINARY], ['serializer' => 'igbinary']],
    ['php-memcached-json', 'setOption(Memcached::OPT_SERIALIZER, Memcached::SERIALIZER_JSON)',
        [Memcached::OPT_SERIALIZER => Memcached::SERIALIZER_JSON], ['serializer' => 'json']],
    ['php-memcached-msgpack', 'setOption(Memcached::OPT_SERIALIZER, Memcached::SERIALIZER_MSGPACK)',
        [Memcached::OPT_SERIALIZER => Memcached::SERIALIZER_MSGPACK], ['serializer' => 'msgpack']],
    ['php-memcached-user-flags', sprintf('setOption(Memcached::OPT_USER_FLAGS, 0x%X)', $USER_FLAGS),
        [Memcached::OPT_USER_FLAGS => $USER_FLAGS], ['user_flags' => (string)$USER_FLAGS]],
];

$out = [];
$out[] = '# php-memcached: new Memcached(), addServer(' . $address . '), text protocol, then the';
$out[] = '# setOption calls of each case; every value stored with set($key, $value), read back';
$out[] = '# with get($key) and compared (===) with what was stored. Debian\'s memcached.ini sets';
$out[] = '# memcached.serializer=php; the other settings are the extension\'s defaults.';
$out[] = '# Settings: serializer (memcached.serializer / OPT_SERIALIZER), compression';
$out[] = '# (memcached.compression_type / OPT_COMPRESSION_TYPE), compression_threshold and';
$out[] = '# compression_factor (ini), user_flags (OPT_USER_FLAGS; 3.2.0 has no user-flags';
$out[] = '# argument on set(): OPT_USER_FLAGS is the only way).';
$out[] = '# Values read back unchanged unless a "# roundtrip" comment says otherwise.';
$serializers = [Memcached::SERIALIZER_PHP => 'php', Memcached::SERIALIZER_IGBINARY => 'igbinary',
    Memcached::SERIALIZER_JSON => 'json', Memcached::SERIALIZER_JSON_ARRAY => 'json_array',
    Memcached::SERIALIZER_MSGPACK => 'msgpack'];
foreach ($memcached_cases as [$id, $how, $options, $settings]) {
    $m = new Memcached();
    $m->addServer($host, $port);
    foreach ($options as $opt => $val) {
        if (!$m->setOption($opt, $val)) {
            throw new RuntimeException("$id: setOption($opt, $val) failed: $last_warning");
        }
    }
    $ser = $serializers[$m->getOption(Memcached::OPT_SERIALIZER)] ?? 'unknown';
    $comp = $m->getOption(Memcached::OPT_COMPRESSION_TYPE) === Memcached::COMPRESSION_ZLIB ? 'zlib' : 'fastlz';
    $all = ['serializer' => $ser, 'compression' => $comp,
        'compression_threshold' => ini_get('memcached.compression_threshold'),
        'compression_factor' => ini_get('memcached.compression_factor')] + $settings;
    $out[] = "case $id";
    $out[] = "client {$versions['php_memcached']}; $how";
    $out[] = 'codec php-memcached';
    foreach ($all as $k => $v) {
        $out[] = "setting $k=$v";
    }
    foreach ($values as $name => $v) {
        if ($readback !== null) {
            if (isset($readback["$id $name"])) {
                readback_item($id, $name, $v,
                    fn($k, $x) => $m->set($k, $x) ?: 'set() returned false: ' . $m->getResultMessage(),
                    fn($k) => [($got = $m->get($k)) !== false || $m->getResultCode() === Memcached::RES_SUCCESS, $got]);
            }
            continue;
        }
        $key = "$id:$name";
        $last_warning = '';
        try {
            $ok = $m->set($key, $v);
        } catch (Throwable $e) {
            $out[] = "refused $name " . get_class($e) . ': ' . $e->getMessage();
            continue;
        }
        if (!$ok) {
            $out[] = "refused $name set() returned false: " . $m->getResultMessage() . ($last_warning !== '' ? "; $last_warning" : '');
            continue;
        }
        $out[] = "stored $name";
        $got = $m->get($key);
        if ($m->getResultCode() !== Memcached::RES_SUCCESS) {
            $out[] = "# roundtrip $name: get() failed: " . $m->getResultMessage();
        } elseif ($got !== $v) {
            $out[] = "# roundtrip $name: read back as " . describe($got);
        }
    }
    $out[] = 'end';
}
if ($readback === null) {
    file_put_contents("$draft_dir/php_memcached.values", implode("\n", $out) . "\n");
}

// ------------------------------------------------------------ pecl memcache
$memcache_cases = [
    ['php-memcache-default', 'set($key, $value) (flags 0)', 0],
    ['php-memcache-compressed', 'set($key, $value, MEMCACHE_COMPRESSED)', MEMCACHE_COMPRESSED],
];
$out = [];
$out[] = '# pecl memcache: new Memcache(), addServer(' . $address . '), Debian defaults (text';
$out[] = '# protocol, memcache.compress_threshold from the ini); every value stored with';
$out[] = '# set($key, $value, $flags), read back with get($key) and compared (===) with what';
$out[] = '# was stored. set_flags is the third argument of set().';
$out[] = '# Values read back unchanged unless a "# roundtrip" comment says otherwise.';
foreach ($memcache_cases as [$id, $how, $flags]) {
    $m = new Memcache();
    $m->addServer($host, $port);
    $out[] = "case $id";
    $out[] = "client {$versions['php_memcache']}; $how";
    $out[] = 'codec php-memcache';
    $out[] = 'setting compress_threshold=' . ini_get('memcache.compress_threshold');
    $out[] = "setting set_flags=$flags";
    foreach ($values as $name => $v) {
        if ($readback !== null) {
            if (isset($readback["$id $name"])) {
                readback_item($id, $name, $v,
                    fn($k, $x) => $m->set($k, $x, $flags) ?: 'set() returned false',
                    function ($k) use ($m) {
                        $got_flags = null;
                        $got = $m->get($k, $got_flags);
                        return [$got_flags !== null, $got];
                    });
            }
            continue;
        }
        $key = "$id:$name";
        $last_warning = '';
        try {
            $ok = $m->set($key, $v, $flags);
        } catch (Throwable $e) {
            $out[] = "refused $name " . get_class($e) . ': ' . $e->getMessage();
            continue;
        }
        if (!$ok) {
            $out[] = "refused $name set() returned false" . ($last_warning !== '' ? ": $last_warning" : '');
            continue;
        }
        $out[] = "stored $name";
        $last_warning = '';
        $got = $m->get($key);
        if ($got !== $v) {
            $out[] = "# roundtrip $name: read back as " . describe($got) . ($last_warning !== '' ? " ($last_warning)" : '');
        }
    }
    $out[] = 'end';
}
if ($readback === null) {
    file_put_contents("$draft_dir/php_memcache.values", implode("\n", $out) . "\n");
}
