<?php
// SPDX-License-Identifier: MIT
//
// gen_php_memcache.php KEYS OUT VERSIONS [confirm]: writes the pecl memcache
// table (new Memcache()). The ini settings memcache.hash_strategy and
// memcache.hash_function are set with ini_set() before each new Memcache();
// servers are added with addServer(host, port, false, weight) and each key is
// placed with the client's own MemcachePool::findServer($key), which returns
// "host:port" (no connection is made); that is mapped back to the index.
// With "confirm", the "*-confirm-5" cases are also checked on real memcached
// servers (127.0.99.1-5:21981-21985, started by gen_php.sh): every key is
// stored with Memcache::set() and every server is asked which keys it holds.

const GOLDEN_WHO = 'gen_php';
require __DIR__ . '/gen_php_common.php';

[$_, $keys_path, $out_path, $versions] = $argv;
$confirm = ($argv[4] ?? '') === 'confirm';
$keys = read_keys($keys_path);

const STRATEGIES = ['php-memcache' => 'consistent', 'php-memcache-standard' => 'standard'];
const HASH_FUNCTIONS = ['crc32', 'fnv'];

function make_client(string $strategy, string $hash, array $servers): Memcache
{
    ini_set('memcache.hash_strategy', $strategy);
    ini_set('memcache.hash_function', $hash);
    if (ini_get('memcache.hash_strategy') !== $strategy || ini_get('memcache.hash_function') !== $hash) {
        fail("cannot set memcache.hash_strategy=$strategy memcache.hash_function=$hash");
    }
    $m = new Memcache();
    foreach ($servers as [$host, $port, $w]) {
        $m->addServer($host, $port, false, $w) || fail("addServer $host:$port weight $w");
    }
    return $m;
}

function place_all(Memcache $m, array $servers, array $keys): array
{
    $map = index_map($servers);
    $place = [];
    foreach ($keys as $k) {
        $id = $m->findServer($k);
        if (!is_string($id) || !isset($map[$id])) {
            fail('findServer(' . bin2hex($k) . ') returned ' . var_export($id, true));
        }
        $place[] = $map[$id];
    }
    return $place;
}

// What pecl memcache sends for a key: bytes <= 0x20 become '_', cut at 250.
// Used only to find the stored keys on the servers in the confirmation.
function stored_key(string $k): string
{
    $k = substr($k, 0, 250);
    return preg_replace('/[\x00-\x20]/', '_', $k);
}

$out = '';
$count = 0;
$notes = [];
$add = function (string $id, string $profile, string $hash, array $servers) use (&$out, &$count, $keys, $versions): array {
    $strategy = STRATEGIES[$profile];
    $m = make_client($strategy, $hash, $servers);
    $place = place_all($m, $servers, $keys);
    $client = "$versions: memcache.hash_strategy=$strategy memcache.hash_function=$hash; new Memcache(); "
        . 'addServer(host, port, false, weight); findServer(key)';
    $out .= case_text($id, $client, $profile, ['hash' => $hash], $servers, $place);
    $count++;
    return $place;
};

foreach (array_keys(STRATEGIES) as $profile) {
    foreach (HASH_FUNCTIONS as $hash) {
        foreach (GOLDEN_NS as $n) {
            foreach (['ip', 'names', 'weighted'] as $layout) {
                $add("$profile-$hash-$layout-$n", $profile, $hash, server_list($layout, $n));
            }
        }
    }
}
foreach (array_keys(STRATEGIES) as $profile) {
    foreach (HASH_FUNCTIONS as $hash) {
        $servers = server_list('confirm', 5);
        $place = $add("$profile-$hash-confirm-5", $profile, $hash, $servers);
        if ($confirm) {
            $m = make_client(STRATEGIES[$profile], $hash, $servers);
            $notes[] = confirm_on_servers(
                "$profile-$hash-confirm-5",
                $servers,
                $keys,
                $place,
                fn ($k, $v) => $m->set($k, $v),
                'stored_key'
            );
            $m->close();
        }
    }
}

$header = "# php_memcache.golden: written by tests/golden/gen_php.sh (gen_php_memcache.php)\n"
    . "# $versions\n"
    . "# Placement from MemcachePool::findServer(); keys passed as their raw UTF-8 bytes.\n"
    . ($confirm ? "# The *-confirm-5 cases were also checked on real memcached servers (Memcache::set, then\n"
        . "# every server asked which keys it holds).\n" : '')
    . "# $count cases.\n\n";
file_put_contents($out_path, $header . rtrim($out) . "\n") !== false || fail("cannot write $out_path");
foreach ($notes as $n) {
    note($n);
}
note("wrote $out_path ($count cases)");
