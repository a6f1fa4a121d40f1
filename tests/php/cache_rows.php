<?php
// SPDX-License-Identifier: MIT
// cache_rows.php SERVERS SQL COUNT: a page caching a query's rows as PHP pages do,
// `$mc->add(md5($sql), $rows)`, with `new Memcached()` and its default options (Debian's
// memcached.ini: memcached.serializer=php). The rows are COUNT associative arrays made up for
// the query. Prints the key; exits 1 when the add fails.
[, $servers, $sql, $count] = $argv;
$mc = new Memcached();
foreach (explode(',', $servers) as $server) {
    [$host, $port] = explode(':', $server);
    $mc->addServer($host, (int) $port);
}
$rows = [];
for ($id = 1; $id <= (int) $count; $id++) {
    $rows[] = ['id' => $id, 'name' => "product $id", 'price' => $id + 0.5, 'in_stock' => $id % 2 == 1];
}
$key = md5($sql);
if (!$mc->add($key, $rows, 600)) {
    fwrite(STDERR, "add failed: " . $mc->getResultMessage() . "\n");
    exit(1);
}
echo $key, "\n";
