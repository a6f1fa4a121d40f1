<?php
// SPDX-License-Identifier: MIT
// session_show.php SESSION_ID: what the next PHP request sees: the session's variables as one
// line of JSON. Exits 1 when the session cannot be started (its lock stayed taken).
session_id($argv[1]);
if (!session_start()) {
    exit(1);
}
echo json_encode($_SESSION), "\n";
