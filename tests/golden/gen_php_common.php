<?php
// SPDX-License-Identifier: MIT
//
// gen_php_common.php: helpers shared by the PHP generators: keys.txt,
// messages, server lists, output format and the check on real memcached
// servers for gen_php_memcached.php and gen_php_memcache.php; keys.txt,
// messages, the index map and the raw access to real memcached servers
// (commands, flush_all, lru_crawler metadump) for gen_prefix_php.php too.
// Each script defines GOLDEN_WHO, the name its messages start with, before
// it requires this file.

const GOLDEN_NS = [1, 2, 3, 5, 10, 25];

function fail(string $msg): void
{
    fwrite(STDERR, GOLDEN_WHO . ": $msg\n");
    exit(1);
}

function note(string $msg): void
{
    fwrite(STDERR, GOLDEN_WHO . ": $msg\n");
}

// keys.txt as raw bytes, one key per line (PHP strings are byte strings: the
// UTF-8 bytes of each line are passed to the client as they are).
function read_keys(string $path): array
{
    $text = file_get_contents($path);
    if ($text === false) {
        fail("cannot read $path");
    }
    if ($text === '' || substr($text, -1) !== "\n") {
        fail("$path must end with a newline");
    }
    $keys = explode("\n", substr($text, 0, -1));
    foreach ($keys as $i => $k) {
        if ($k === '') {
            fail("$path: empty key on line " . ($i + 1));
        }
    }
    return $keys;
}

// Weights 1..5 for the weighted lists.
function weight_of(int $i): int
{
    return 1 + (7 * $i + 3) % 5;
}

// The server lists of every case: [host, port, weight] each.
//   ip:       127.0.0.<i+1>:11211, weight 1 (IP hosts, default port)
//   names:    cache-<i+1>.example.net:<11212+i>, weight 1 (never resolved)
//   weighted: 127.0.1.<i+1>, port 11211 or 11311, weights 1..5
//   confirm:  127.0.99.<i+1>:<21981+i>, weights 1..5 (real servers run there)
function server_list(string $layout, int $n): array
{
    $out = [];
    for ($i = 0; $i < $n; $i++) {
        switch ($layout) {
            case 'ip':
                $out[] = ['127.0.0.' . ($i + 1), 11211, 1];
                break;
            case 'names':
                $out[] = ['cache-' . ($i + 1) . '.example.net', 11212 + $i, 1];
                break;
            case 'weighted':
                $out[] = ['127.0.1.' . ($i + 1), $i % 2 === 0 ? 11211 : 11311, weight_of($i)];
                break;
            case 'confirm':
                $out[] = ['127.0.99.' . ($i + 1), 21981 + $i, weight_of($i)];
                break;
            default:
                fail("unknown layout $layout");
        }
    }
    return $out;
}

// Maps "host:port" back to the server's index in the list (servers as
// [host, port, ...]).
function index_map(array $servers): array
{
    $map = [];
    foreach ($servers as $i => [$host, $port]) {
        $id = "$host:$port";
        if (isset($map[$id])) {
            fail("duplicate server $id");
        }
        $map[$id] = $i;
    }
    return $map;
}

function case_text(string $id, string $client, string $profile, array $options, array $servers, array $place): string
{
    $s = "case $id\nclient $client\nprofile $profile\n";
    foreach ($options as $name => $value) {
        $s .= "option $name=$value\n";
    }
    foreach ($servers as [$host, $port, $w]) {
        $s .= "server $host:$port:$w\n";
    }
    return $s . 'place ' . implode(' ', $place) . "\nend\n\n";
}

// ------------------------------------------------------------ real servers

// Sends one command on a new connection and reads until the answer ends with
// $until (or, for "END\r\n", is a one-line BUSY from a busy crawler).
function mc_command(string $host, int $port, string $cmd, string $until): string
{
    $errno = 0;
    $errstr = '';
    $sock = @stream_socket_client("tcp://$host:$port", $errno, $errstr, 5);
    if ($sock === false) {
        fail("cannot connect to $host:$port: $errstr");
    }
    stream_set_timeout($sock, 20);
    fwrite($sock, $cmd);
    $buf = '';
    while (!str_ends_with($buf, $until)) {
        $chunk = fread($sock, 65536);
        if ($chunk === false || ($chunk === '' && feof($sock))) {
            fail("$host:$port closed the connection during '" . trim($cmd) . "'");
        }
        $meta = stream_get_meta_data($sock);
        if ($meta['timed_out']) {
            fail("$host:$port timed out during '" . trim($cmd) . "'");
        }
        $buf .= $chunk;
        if ($until === "END\r\n" && str_starts_with($buf, 'BUSY') && str_ends_with($buf, "\r\n")) {
            break;
        }
    }
    fclose($sock);
    return $buf;
}

// flush_all on every server (servers as [host, port, ...]).
function mc_flush_all(array $servers): void
{
    foreach ($servers as [$host, $port]) {
        $r = mc_command($host, $port, "flush_all\r\n", "\r\n");
        if ($r !== "OK\r\n") {
            fail("flush_all on $host:$port answered " . trim($r));
        }
    }
}

// One lru_crawler metadump of a server: the keys it lists, as bytes (metadump
// writes them %XX-encoded, "key=<encoded> ..." lines ending in "\n", the
// answer in "END\r\n"). A busy crawler is asked again, up to 100 times.
function mc_dump_keys(string $host, int $port): array
{
    for ($try = 0; $try < 100; $try++) {
        $r = mc_command($host, $port, "lru_crawler metadump all\r\n", "END\r\n");
        if (!str_starts_with($r, 'BUSY')) {
            break;
        }
        usleep(50000);
    }
    if (!str_ends_with($r, "END\r\n")) {
        fail("$host:$port: metadump answered " . trim($r));
    }
    $keys = [];
    foreach (explode("\n", $r) as $line) {
        $line = rtrim($line, "\r");
        if (str_starts_with($line, 'key=')) {
            $sp = strpos($line, ' ');
            $keys[] = rawurldecode(substr($line, 4, $sp === false ? null : $sp - 4));
        }
    }
    return $keys;
}

// Stores every key through the client ($store(key) -> bool), then asks each
// server which keys it holds and checks that every key stored is on the
// server of $place. $stored_as(key) gives the key bytes the server receives.
// Returns a short report line.
function confirm_on_servers(string $what, array $servers, array $keys, array $place, callable $store, callable $stored_as): string
{
    mc_flush_all($servers);
    $expect = [];
    $refused = 0;
    foreach ($keys as $i => $k) {
        if (!$store($k, "v$i")) {
            $refused++;
            continue;
        }
        $expect[$stored_as($k)] = $place[$i];
    }
    $found = [];
    foreach ($servers as $s => [$host, $port, $w]) {
        foreach (mc_dump_keys($host, $port) as $k) {
            if (isset($found[$k])) {
                fail("$what: key " . bin2hex($k) . " is on two servers");
            }
            $found[$k] = $s;
        }
    }
    foreach ($expect as $k => $s) {
        if (!isset($found[$k])) {
            fail("$what: key " . bin2hex((string)$k) . " is on no server");
        }
        if ($found[$k] !== $s) {
            fail("$what: key " . bin2hex((string)$k) . " is on server {$found[$k]}, the placement API said $s");
        }
    }
    if (count($found) !== count($expect)) {
        fail("$what: the servers hold " . count($found) . ' keys, ' . count($expect) . ' were stored');
    }
    mc_flush_all($servers);
    return "$what: " . count($expect) . ' keys stored on ' . count($servers)
        . " real servers agree with the table ($refused refused by the client)";
}
