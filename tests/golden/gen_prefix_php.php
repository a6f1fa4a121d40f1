<?php
// SPDX-License-Identifier: MIT
//
// gen_prefix_php.php KEYS OUT VERSIONS NET: writes prefix/php_memcached.golden,
// where php-memcached (libmemcached underneath) puts keys stored with
// Memcached::OPT_PREFIX_KEY, measured on real memcached servers
// (NET.1-5, ports 21981-21985, started by gen_prefix.sh).
//
// For each case: every server is flushed, every key of keys.txt is stored
// through the real client (Memcached::set), then every server is asked which
// keys it holds (lru_crawler metadump). Key i is recorded on the one server
// holding exactly the bytes prefix.key_i, or as "x" when no server does.
// Two more runs of the same placement without a prefix (the bare keys, then
// the keys prefix.key_i) tell whether the client placed by the bare or by the
// prefixed key; Memcached::getServerByKey() of the prefixed client is
// compared with where the keys really are. Disagreements are reported, not
// hidden: in the table's header and on stderr.
//
// The text protocol (the default) refuses keys with bytes >= 0x80
// (RES_BAD_KEY_PROVIDED); a key the text client does not store is stored
// through a second client, identical but with OPT_BINARY_PROTOCOL. A key of
// more than 250 bytes with the prefix is sent as prefix+key and refused by
// the server: what each client sends for such a key is checked on a listening
// socket.

const GOLDEN_WHO = 'gen_prefix_php';
require __DIR__ . '/gen_php_common.php'; // fail, note, read_keys, index_map, mc_*

[$_, $keys_path, $out_path, $versions, $net] = $argv;

// ------------------------------------------------------------ raw server access

// Every key the server holds, each once. The crawler walks the LRU segments
// one after the other, so an item moving between them during a walk can be
// listed twice or missed: the dumps are repeated until one adds no key.
function dump_keys(array $server): array
{
    [$host, $port] = $server;
    $seen = [];
    for ($pass = 0; $pass < 10; $pass++) {
        $added = 0;
        foreach (mc_dump_keys($host, $port) as $k) {
            if (!isset($seen[$k])) {
                $seen[$k] = true;
                $added++;
            }
        }
        if ($pass > 0 && $added === 0) {
            return array_map('strval', array_keys($seen));
        }
    }
    fail("$host:$port: the dumps keep listing new keys");
}

function flush_servers(array $servers): void
{
    mc_flush_all($servers);
    foreach ($servers as $s) {
        if (dump_keys($s) !== []) {
            fail("$s[0]:$s[1] still holds keys after flush_all");
        }
    }
}

// Server index of each wanted key (byte string) among the keys the servers
// hold, null where no server holds it; fails if a key is on two servers.
// Also returns the held keys that are not wanted.
function locate_on_servers(array $servers, array $wanted): array
{
    $where = [];
    foreach ($servers as $s => $server) {
        foreach (dump_keys($server) as $k) {
            if (isset($where[$k])) {
                fail('key ' . bin2hex($k) . " is on servers {$where[$k]} and $s");
            }
            $where[$k] = $s;
        }
    }
    $place = [];
    foreach ($wanted as $i => $k) {
        $place[$i] = $where[$k] ?? null;
        unset($where[$k]);
    }
    return [$place, array_keys($where)];
}

// ------------------------------------------------------------ the client

// The client of a case: options first, then addServer(host, port, 1) in list order.
function make_client(array $c, array $servers, string $prefix, bool $binary): Memcached
{
    $m = new Memcached();
    if ($c['profile'] === 'php-memcached-libketama') {
        $m->setOption(Memcached::OPT_LIBKETAMA_COMPATIBLE, true) || fail('OPT_LIBKETAMA_COMPATIBLE');
    }
    if ($c['hash_with_prefix']) {
        $m->setOption(Memcached::OPT_HASH_WITH_PREFIX_KEY, true) || fail('OPT_HASH_WITH_PREFIX_KEY');
    }
    if ($prefix !== '') {
        $m->setOption(Memcached::OPT_PREFIX_KEY, $prefix) || fail('OPT_PREFIX_KEY');
    }
    if ($binary) {
        $m->setOption(Memcached::OPT_BINARY_PROTOCOL, true) || fail('OPT_BINARY_PROTOCOL');
    }
    foreach ($servers as [$host, $port]) {
        $m->addServer($host, $port, 1) || fail("addServer $host:$port");
    }
    return $m;
}

// What the client of a case sends for a set of $key to a listening socket
// that never answers (the client gives up after its poll timeout): the bytes
// received, '' when it sent nothing.
function bytes_sent(array $c, string $prefix, bool $binary, string $key): string
{
    $l = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr) or fail("listen: $errstr");
    [$host, $port] = explode(':', stream_socket_get_name($l, false));
    $m = make_client($c, [[$host, (int)$port]], $prefix, $binary);
    $m->setOption(Memcached::OPT_POLL_TIMEOUT, 100) || fail('OPT_POLL_TIMEOUT');
    $m->set($key, 'v');
    $m->quit();
    $s = @stream_socket_accept($l, 0);
    $buf = '';
    if ($s !== false) {
        $buf = stream_get_contents($s);
        fclose($s);
    }
    fclose($l);
    return $buf;
}

// Whether $sent is a set of exactly the key $wire: "set <key> " (text) or a
// binary request header (opcode 0x01) followed by extras and the key.
function sent_as(string $sent, string $wire, bool $binary): bool
{
    if (!$binary) {
        return str_starts_with($sent, "set $wire ");
    }
    if (strlen($sent) < 24 || ord($sent[0]) !== 0x80 || ord($sent[1]) !== 0x01) {
        return false;
    }
    $keylen = unpack('n', substr($sent, 2, 2))[1];
    return $keylen === strlen($wire) && substr($sent, 24 + ord($sent[4]), $keylen) === $wire;
}

function settings_text(array $c, string $prefix): string
{
    $s = [];
    if ($c['profile'] === 'php-memcached-libketama') {
        $s[] = 'OPT_LIBKETAMA_COMPATIBLE => true';
    }
    if ($c['hash_with_prefix']) {
        $s[] = 'OPT_HASH_WITH_PREFIX_KEY => true';
    }
    $s[] = "OPT_PREFIX_KEY => '$prefix'";
    return 'setOption ' . implode(', ', $s) . ' before addServer(host, port, 1), other options default';
}

// Stores every key through the client (set, value "v<i>"); a key the text
// client does not store goes through the binary one. After a failure the
// client's connections are closed (quit), so that a server's error reply
// cannot be read as the answer to the next command. Returns, per key, null
// (stored by the text client), 'binary', or the refusal messages.
function store_all(Memcached $text, Memcached $binary, array $keys): array
{
    $how = [];
    foreach ($keys as $i => $k) {
        if ($text->set($k, "v$i")) {
            $how[$i] = null;
            continue;
        }
        $why = 'text: ' . $text->getResultMessage();
        $text->quit();
        if ($binary->set($k, "v$i")) {
            $how[$i] = 'binary';
            continue;
        }
        $how[$i] = "$why; binary: " . $binary->getResultMessage();
        $binary->quit();
    }
    $text->quit();
    $binary->quit();
    return $how;
}

// One run: flush, store $keys through a client with $prefix, find $wire[i]
// (the key bytes that should be on a server) on the servers.
function run(array $c, array $servers, string $prefix, array $keys, array $wire): array
{
    flush_servers($servers);
    $how = store_all(make_client($c, $servers, $prefix, false), make_client($c, $servers, $prefix, true), $keys);
    [$place, $stray] = locate_on_servers($servers, $wire);
    if ($stray !== []) {
        fail("{$c['id']}: the servers hold " . count($stray) . ' keys that are no expected key, e.g. '
            . bin2hex($stray[0]));
    }
    foreach ($keys as $i => $k) {
        $stored = $how[$i] === null || $how[$i] === 'binary';
        if ($stored && $place[$i] === null) {
            fail("{$c['id']}: key #$i was stored (set returned true) but is on no server");
        }
        if (!$stored && $place[$i] !== null) {
            fail("{$c['id']}: key #$i was refused ({$how[$i]}) but is on server {$place[$i]}");
        }
    }
    return [$place, $how];
}

// ------------------------------------------------------------ the cases

$keys = read_keys($keys_path);
$prefixes = ['app' => 'app:', 'svc' => 'svc.v2|tenant-7_'];
$cases = [];
foreach (['php-memcached', 'php-memcached-libketama'] as $profile) {
    foreach ([false, true] as $hwp) {
        foreach ($prefixes as $tag => $prefix) {
            foreach ([3, 5] as $n) {
                $cases[] = [
                    'id' => $profile . ($hwp ? '-hash-with-prefix' : '') . "-$tag-$n",
                    'profile' => $profile,
                    'hash_with_prefix' => $hwp,
                    'prefix' => $prefix,
                    'n' => $n,
                ];
            }
        }
    }
}

$out = '';
$summary = [];
$totals = ['api_disagree' => 0];
foreach ($cases as $c) {
    $prefix = $c['prefix'];
    $servers = [];
    for ($i = 1; $i <= $c['n']; $i++) {
        $servers[] = ["$net.$i", 21980 + $i];
    }
    $prefixed = array_map(fn ($k) => $prefix . $k, $keys);

    // The case: keys stored with OPT_PREFIX_KEY; prefix.key_i must be on a server.
    [$place, $how] = run($c, $servers, $prefix, $keys, $prefixed);
    // The references: the same placement without a prefix.
    [$bare] = run($c, $servers, '', $keys, $keys);
    [$pref] = run($c, $servers, '', $prefixed, $prefixed);

    $stored = 0;
    $agree_bare = 0;
    $agree_pref = 0;
    $both = 0;
    $via_binary = 0;
    $sent_long = 0;
    $refusals = [];
    foreach ($keys as $i => $k) {
        if ($how[$i] === 'binary') {
            $via_binary++;
        } elseif ($how[$i] !== null) {
            $refusals[$how[$i]] = ($refusals[$how[$i]] ?? 0) + 1;
            if (strlen($prefix . $k) <= 250) {
                fail("{$c['id']}: key #$i (" . strlen($prefix . $k) . " bytes with the prefix) refused: {$how[$i]}");
            }
            // Refused by the server, not the client: the binary client sends
            // prefix+key (and so does the text one, unless it rejects the key
            // itself as a bad key).
            foreach ([false, true] as $binary) {
                $sent = bytes_sent($c, $prefix, $binary, $k);
                $bad_key = !$binary && str_starts_with($how[$i], 'text: A BAD KEY');
                if ($bad_key ? $sent !== '' : !sent_as($sent, $prefix . $k, $binary)) {
                    fail("{$c['id']}: key #$i ({$how[$i]}): the " . ($binary ? 'binary' : 'text')
                        . ' client sent ' . strlen($sent) . " bytes: '" . substr($sent, 0, 40) . "...'");
                }
            }
            $sent_long++;
        } elseif (strlen($prefix . $k) > 250) {
            fail("{$c['id']}: key #$i is over 250 bytes with the prefix, yet stored");
        }
        if ($place[$i] === null) {
            continue;
        }
        $stored++;
        $agree_bare += (int)($bare[$i] === $place[$i]);
        if ($pref[$i] !== null) {
            $both++;
            $agree_pref += (int)($pref[$i] === $place[$i]);
        }
    }
    if ($agree_bare === $stored && $agree_pref < $both) {
        $hashing = 'bare';
    } elseif ($agree_pref === $both && $both === $stored && $agree_bare < $stored) {
        $hashing = 'prefixed';
    } else {
        fail("{$c['id']}: neither the bare ($agree_bare of $stored) nor the prefixed key "
            . "($agree_pref of $both) explains the placement");
    }

    // The client's own placement API, with the prefix set.
    $m = make_client($c, $servers, $prefix, false);
    $index = index_map($servers);
    $api_disagree = [];
    foreach ($keys as $i => $k) {
        $r = $m->getServerByKey($k);
        if (!is_array($r)) {
            fail("{$c['id']}: getServerByKey(" . bin2hex($k) . ') failed: ' . $m->getResultMessage());
        }
        $api = $index[$r['host'] . ':' . $r['port']] ?? null;
        if ($api === null) {
            fail("{$c['id']}: getServerByKey returned unknown server {$r['host']}:{$r['port']}");
        }
        if ($place[$i] !== null && $api !== $place[$i]) {
            $api_disagree[] = $i;
        }
    }
    $totals['api_disagree'] += count($api_disagree);

    $x = count($keys) - $stored;
    $refused_text = [];
    foreach ($refusals as $msg => $count) {
        $refused_text[] = "$count refused ($msg)";
    }
    $line = sprintf(
        '%s: %d on a server, %d x; bare %d/%d, prefixed %d/%d; getServerByKey disagrees on %d%s',
        $c['id'], $stored, $x, $agree_bare, $stored, $agree_pref, $both, count($api_disagree),
        $api_disagree ? ' (keys #' . implode(', #', array_slice($api_disagree, 0, 10)) . ')' : ''
    );
    $line .= "\n    x: " . ($refused_text ? implode(', ', $refused_text) : 'none')
        . "; $via_binary keys stored through the binary-protocol client; the $sent_long x keys were sent as "
        . 'prefix+key (binary; text too unless a bad key) and refused by the server';
    $summary[] = $line;
    note(str_replace("\n    ", '; ', $line));

    $client = "$versions: new Memcached(); " . settings_text($c, $prefix)
        . '; Memcached::set(key, value); keys the text protocol refuses stored through an identical '
        . 'client with OPT_BINARY_PROTOCOL => true';
    $out .= "case {$c['id']}\nclient $client\nprofile {$c['profile']}\nprefix $prefix\n"
        . "prefix_hashing $hashing\n";
    foreach ($servers as [$host, $port]) {
        $out .= "server $host:$port:1\n";
    }
    $out .= 'place ' . implode(' ', array_map(fn ($p) => $p ?? 'x', $place)) . "\nend\n\n";
}
flush_servers(array_map(fn ($i) => ["$net.$i", 21980 + $i], range(1, 5)));

$header = "# php_memcached.golden: written by tests/golden/gen_prefix.sh (gen_prefix_php.php)\n"
    . "# $versions\n"
    . "# Recorded on real memcached servers: each key of keys.txt stored with Memcached::set() through\n"
    . "# a client with OPT_PREFIX_KEY, then every server asked which keys it holds (lru_crawler\n"
    . "# metadump); place = the server holding exactly the bytes prefix+key, x when none does.\n"
    . "# prefix_hashing is measured: the same placement without a prefix, storing the bare keys and\n"
    . "# then the keys prefix+key, must put every key where the prefixed client did.\n"
    . "# Per case: keys held by a server as prefix+key, and x; bare a/b: of the b keys on a server,\n"
    . "# a lie where the client without a prefix puts the bare key; prefixed a/b: where it puts the key\n"
    . "# prefix+key; getServerByKey (the client's own answer, prefix set) against where keys really are.\n";
foreach ($summary as $s) {
    $header .= '#   ' . str_replace("\n", "\n#   ", $s) . "\n";
}
$header .= '# ' . count($cases) . " cases.\n\n";
file_put_contents($out_path, $header . rtrim($out) . "\n") !== false || fail("cannot write $out_path");
note("wrote $out_path (" . count($cases) . ' cases, getServerByKey disagreements: '
    . $totals['api_disagree'] . ')');
