<?php
// SPDX-License-Identifier: MIT
// session_hold.php SESSION_ID: a slow PHP request: starts the session (taking its lock), says
// "locked", and keeps the lock until a line (or the end) arrives on its standard input; then it
// stores held_by = "php" and closes the session, which releases the lock.
session_id($argv[1]);
if (!session_start()) {
    exit(1);
}
echo "locked\n";
fflush(STDOUT);
fgets(STDIN);
$_SESSION['held_by'] = 'php';
session_write_close();
