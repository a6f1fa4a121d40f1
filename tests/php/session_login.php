<?php
// SPDX-License-Identifier: MIT
// session_login.php SESSION_ID USER_ID NAME [ROLE ...]: what a PHP login page does: starts the
// session (session.save_handler=memcached, session.save_path from -d) and stores the user in it,
// beside a cart that the C++ side must keep. Exits 1 when the session cannot be started.
[, $id, $user_id, $name] = $argv;
session_id($id);
if (!session_start()) {
    exit(1);
}
$_SESSION['user_id'] = (int) $user_id;
$_SESSION['name'] = $name;
$_SESSION['roles'] = array_slice($argv, 4);
$_SESSION['cart'] = [3 => 2, 17 => 1];
session_write_close();
