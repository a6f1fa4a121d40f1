<?php
// SPDX-License-Identifier: MIT
//
// gen_php_memcached.php KEYS OUT VERSIONS [confirm]: writes the php-memcached
// table (new Memcached(), libmemcached underneath). Each key is placed with
// the client's own Memcached::getServerByKey($key) (no connection is made);
// the returned host and port are mapped back to the index in the list.
// With "confirm", the "confirm-*" cases are also checked on real memcached
// servers (127.0.99.1-5:21981-21985, started by gen_php.sh): every key is
// stored with Memcached::set() and every server is asked which keys it holds.
// Keys are passed as their raw UTF-8 bytes.

const GOLDEN_WHO = 'gen_php';
require __DIR__ . '/gen_php_common.php';

[$_, $keys_path, $out_path, $versions] = $argv;
$confirm = ($argv[4] ?? '') === 'confirm';
$keys = read_keys($keys_path);

// libmemcached-style hash names => Memcached::HASH_* constants.
const HASHES = [
    'one_at_a_time' => Memcached::HASH_DEFAULT,
    'md5' => Memcached::HASH_MD5,
    'crc' => Memcached::HASH_CRC,
    'fnv1_64' => Memcached::HASH_FNV1_64,
    'fnv1a_64' => Memcached::HASH_FNV1A_64,
    'fnv1_32' => Memcached::HASH_FNV1_32,
    'fnv1a_32' => Memcached::HASH_FNV1A_32,
    'murmur' => Memcached::HASH_MURMUR,
];
const HASH_CONST_NAMES = [
    'one_at_a_time' => 'HASH_DEFAULT',
    'md5' => 'HASH_MD5',
    'crc' => 'HASH_CRC',
    'fnv1_64' => 'HASH_FNV1_64',
    'fnv1a_64' => 'HASH_FNV1A_64',
    'fnv1_32' => 'HASH_FNV1_32',
    'fnv1a_32' => 'HASH_FNV1A_32',
    'murmur' => 'HASH_MURMUR',
];

// Builds the client: options first (in this order), then addServer(host,
// port, weight) for each server in list order.
function make_client(string $profile, ?string $hash, array $servers, ?Memcached $m = null): Memcached
{
    $m ??= new Memcached();
    if ($profile === 'php-memcached-libketama') {
        $m->setOption(Memcached::OPT_LIBKETAMA_COMPATIBLE, true) || fail('OPT_LIBKETAMA_COMPATIBLE');
    } elseif ($profile === 'php-memcached-consistent') {
        $m->setOption(Memcached::OPT_DISTRIBUTION, Memcached::DISTRIBUTION_CONSISTENT) || fail('OPT_DISTRIBUTION');
    }
    if ($hash !== null) {
        $m->setOption(Memcached::OPT_HASH, HASHES[$hash]) || fail("OPT_HASH $hash");
    }
    foreach ($servers as [$host, $port, $w]) {
        $m->addServer($host, $port, $w) || fail("addServer $host:$port:$w");
    }
    return $m;
}

function settings_text(string $profile, ?string $hash): string
{
    $s = [];
    if ($profile === 'php-memcached-libketama') {
        $s[] = 'OPT_LIBKETAMA_COMPATIBLE => true';
    } elseif ($profile === 'php-memcached-consistent') {
        $s[] = 'OPT_DISTRIBUTION => DISTRIBUTION_CONSISTENT';
    }
    if ($hash !== null) {
        $s[] = 'OPT_HASH => ' . HASH_CONST_NAMES[$hash];
    }
    $opts = $s ? 'setOption ' . implode(', ', $s) . ' before addServer' : 'default options';
    return $opts;
}

function place_all(Memcached $m, array $servers, array $keys): array
{
    $map = index_map($servers);
    $place = [];
    foreach ($keys as $k) {
        $r = $m->getServerByKey($k);
        if (!is_array($r)) {
            fail('getServerByKey(' . bin2hex($k) . ') failed: ' . $m->getResultMessage());
        }
        $id = $r['host'] . ':' . $r['port'];
        if (!isset($map[$id])) {
            fail("getServerByKey returned unknown server $id");
        }
        $place[] = $map[$id];
    }
    return $place;
}

$client_base = $versions . ': new Memcached(); addServer(host, port, weight); getServerByKey(key)';
$out = '';
$count = 0;
$notes = [];

$add = function (string $id, string $profile, ?string $hash, array $servers) use (&$out, &$count, $keys, $client_base): array {
    $m = make_client($profile, $hash, $servers);
    $place = place_all($m, $servers, $keys);
    $options = $hash === null ? [] : ['hash' => $hash];
    // What libmemcached reports after the servers are added: with a consistent
    // distribution, adding a weight > 1 turns its weighted (md5) ring on.
    $after = sprintf(
        '; after addServer: OPT_DISTRIBUTION=%d OPT_LIBKETAMA_COMPATIBLE=%d OPT_HASH=%d',
        $m->getOption(Memcached::OPT_DISTRIBUTION),
        $m->getOption(Memcached::OPT_LIBKETAMA_COMPATIBLE),
        $m->getOption(Memcached::OPT_HASH)
    );
    $out .= case_text($id, "$client_base; " . settings_text($profile, $hash) . $after, $profile, $options, $servers, $place);
    $count++;
    return $place;
};

$profiles = ['php-memcached', 'php-memcached-libketama', 'php-memcached-consistent'];
foreach ($profiles as $profile) {
    foreach (GOLDEN_NS as $n) {
        foreach (['ip', 'names', 'weighted'] as $layout) {
            $add("$profile-$layout-$n", $profile, null, server_list($layout, $n));
        }
    }
}
// OPT_HASH on the default (modula) distribution and on the consistent one.
foreach (['php-memcached', 'php-memcached-consistent'] as $profile) {
    foreach (array_keys(HASHES) as $hash) {
        foreach ([3, 10] as $n) {
            foreach (['ip', 'weighted'] as $layout) {
                $add("$profile-hash-$hash-$layout-$n", $profile, $hash, server_list($layout, $n));
            }
        }
    }
}
// The cases checked on real servers.
foreach ($profiles as $profile) {
    $servers = server_list('confirm', 5);
    $place = $add("$profile-confirm-5", $profile, null, $servers);
    if ($confirm) {
        // The text protocol (the default) refuses keys with bytes >= 0x80
        // (MEMCACHED_BAD_KEY_PROVIDED); those are stored through a second
        // client, identical but with OPT_BINARY_PROTOCOL, which takes them.
        $m = make_client($profile, null, $servers);
        $bin = new Memcached();
        $bin->setOption(Memcached::OPT_BINARY_PROTOCOL, true) || fail('OPT_BINARY_PROTOCOL');
        $b = make_client($profile, null, $servers, $bin);
        $via_binary = 0;
        $store = function ($k, $v) use ($m, $b, &$via_binary) {
            if ($m->set($k, $v)) {
                return true;
            }
            if ($m->getResultCode() !== Memcached::RES_BAD_KEY_PROVIDED) {
                fail('set(' . bin2hex($k) . '): ' . $m->getResultMessage());
            }
            $via_binary++;
            return $b->set($k, $v);
        };
        $notes[] = confirm_on_servers("$profile-confirm-5", $servers, $keys, $place, $store, fn ($k) => $k)
            . "; $via_binary of them refused by the text protocol, stored with OPT_BINARY_PROTOCOL";
        $m->quit();
        $b->quit();
    }
}

$header = "# php_memcached.golden: written by tests/golden/gen_php.sh (gen_php_memcached.php)\n"
    . "# $versions\n"
    . "# Placement from Memcached::getServerByKey(); keys passed as their raw UTF-8 bytes.\n"
    . "# The client lines end with the options read back after addServer (libmemcached values:\n"
    . "# OPT_DISTRIBUTION 0 = modula, 1 = consistent, 5 = consistent weighted; OPT_HASH 0 = default\n"
    . "# (one_at_a_time), 1 = md5, ...): with DISTRIBUTION_CONSISTENT, adding a server of weight > 1\n"
    . "# turns OPT_LIBKETAMA_COMPATIBLE on (the weighted md5 ring) and leaves OPT_HASH as it was.\n"
    . ($confirm ? "# The *-confirm-5 cases were also checked on real memcached servers (Memcached::set, then\n"
        . "# every server asked which keys it holds).\n" : '')
    . "# $count cases.\n\n";
file_put_contents($out_path, $header . rtrim($out) . "\n") !== false || fail("cannot write $out_path");
foreach ($notes as $n) {
    note($n);
}
note("wrote $out_path ($count cases)");
