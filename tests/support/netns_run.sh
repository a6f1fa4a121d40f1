#!/bin/sh
# SPDX-License-Identifier: MIT
# netns_run.sh UNSHARE PROGRAM ARGS...: runs PROGRAM in new network and PID
# namespaces (UNSHARE --net --pid --mount-proc --fork --kill-child=KILL), so
# that nothing it starts outlives it, even kill -9. Where namespaces are not
# allowed (not root), runs PROGRAM as it is: the namespace tests then skip.
unshare=$1
shift
if [ -n "$unshare" ] && "$unshare" --net --pid --mount-proc --fork --kill-child=KILL true \
  2>/dev/null; then
  exec "$unshare" --net --pid --mount-proc --fork --kill-child=KILL "$@"
fi
exec "$@"
