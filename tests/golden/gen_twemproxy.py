#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""gen_twemproxy.py: writes twemproxy.golden from the real twemproxy (nutcracker).

For every case it starts one memcached per server on loopback, starts Debian's
nutcracker in front of them with the case's yml (distribution, hash, servers),
sets every key of keys.txt through the proxy, then asks every memcached
directly which keys it holds. The hash_tag cases do the same with the
pool's hash_tag set ("{}", ":e", "::"). A key found on no server or on more
than one, a set the proxy does not answer with STORED, or an item count that
does not add up stops the run with an error: the table is only written when
every key was stored on exactly one server.

Run as root on Debian 12 (installs nutcracker and memcached when missing):

    tests/golden/gen_twemproxy.py [output]     # default: twemproxy.golden here
"""
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from golden_lib import ensure_packages, package_version

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGES = ["nutcracker", "memcached"]
HASHES = ["md5", "one_at_a_time", "crc32", "crc32a", "fnv1_32", "fnv1a_32", "fnv1_64",
          "fnv1a_64", "murmur"]
SWEEP_N = [1, 2, 3, 5, 10, 25]
SWEEP_HASH = {"ketama": "md5", "modula": "fnv1a_64"}
# Server names of different lengths, deliberately not in twemproxy's
# (length, bytes) order.
NAMES = ["server10", "server2", "cache-a", "b", "cache-bb", "mc3", "server1",
         "node-07.example.net", "z", "cache-c", "server9", "memcached-long-name-11", "x1",
         "s12", "cache-dd", "server100", "alpha", "beta-2", "q", "server25", "m-16",
         "cache-e", "node-17", "server3", "gamma-gamma-19"]
BATCH = 64
# hash_tag cases: the tag as written in the yml, and the word for it in case ids.
# "{}" is the usual tag (few keys of keys.txt hold braces, many of those
# without a closing one); ":e" is carried by many keys; "::" has two equal
# characters, which nutcracker accepts.
TAGS = [("{}", "braces"), (":e", "colon-e"), ("::", "colons")]
TAG_HASHES = ["md5", "fnv1a_64"]


def fail(message):
    raise SystemExit("gen_twemproxy: " + message)


# ---------------------------------------------------------------- packages

# ---------------------------------------------------------------- processes

class Processes:
    """Every process this run started; stop() ends them all."""

    def __init__(self):
        self.procs = []

    def start(self, argv, log):
        with open(log, "wb") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)
        self.procs.append(proc)
        return proc

    def stop(self):
        # memcached takes most of a second to leave after SIGTERM; the data of
        # a finished case is of no further use, so it gets SIGKILL.
        for proc in self.procs:
            if proc.poll() is None:
                if proc.args[0] == "memcached":
                    proc.kill()
                else:
                    proc.terminate()
        deadline = time.monotonic() + 5
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs = []


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(proc, host, port, log, probe=b"version\r\n", expect=b"VERSION"):
    """Polls host:port (at most 10 s) until it answers probe with expect."""
    for _ in range(400):
        if proc.poll() is not None:
            fail("%s exited with %s while starting:\n%s" % (proc.args[0], proc.returncode,
                                                            read_tail(log)))
        try:
            with socket.create_connection((host, port), timeout=1) as s:
                if probe is None:
                    return
                s.sendall(probe)
                if s.recv(64).startswith(expect):
                    return
        except OSError:
            pass
        time.sleep(0.025)
    fail("%s on %s:%d not ready after 10 s:\n%s" % (proc.args[0], host, port, read_tail(log)))


def read_tail(path):
    try:
        with open(path, "rb") as f:
            return f.read()[-3000:].decode("utf-8", "replace")
    except OSError:
        return ""


# ---------------------------------------------------------------- memcached protocol

class Conn:
    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=20)
        self.buf = b""

    def close(self):
        self.sock.close()

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                fail("connection closed (buffered %r)" % self.buf[:200])
            self.buf += chunk
        out, self.buf = self.buf.split(b"\r\n", 1)
        return out

    def exact(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                fail("connection closed in a value")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out


def set_through_proxy(port, keys):
    conn = Conn("127.0.0.1", port)
    try:
        for start in range(0, len(keys), BATCH):
            req = []
            for i in range(start, min(start + BATCH, len(keys))):
                value = b"%d" % i
                req.append(b"set %s 0 0 %d\r\n%s\r\n" % (keys[i], len(value), value))
            conn.sock.sendall(b"".join(req))
            for i in range(start, min(start + BATCH, len(keys))):
                reply = conn.line()
                if reply != b"STORED":
                    fail("proxy answered %r to the set of key %d %r" % (reply, i, keys[i]))
    finally:
        conn.close()


def held_keys(host, port, keys):
    """Returns ({key index}, curr_items) of the memcached at host:port."""
    index = {k: i for i, k in enumerate(keys)}
    found = set()
    conn = Conn(host, port)
    try:
        for start in range(0, len(keys), BATCH):
            conn.sock.sendall(b"get " + b" ".join(keys[start:start + BATCH]) + b"\r\n")
            while True:
                line = conn.line()
                if line == b"END":
                    break
                parts = line.split(b" ")
                if len(parts) != 4 or parts[0] != b"VALUE":
                    fail("unexpected reply %r from %s:%d" % (line, host, port))
                data = conn.exact(int(parts[3]) + 2)[:-2]
                i = index.get(parts[1])
                if i is None or data != b"%d" % i:
                    fail("%s:%d holds %r = %r, not a key of this run" % (host, port, parts[1],
                                                                          data))
                found.add(i)
        conn.sock.sendall(b"stats\r\n")
        items = None
        while True:
            line = conn.line()
            if line == b"END":
                break
            if line.startswith(b"STAT curr_items "):
                items = int(line.split(b" ")[2])
    finally:
        conn.close()
    return found, items


# ---------------------------------------------------------------- cases

class Server:
    def __init__(self, host, port, weight, name=None, listen=None):
        self.host = host          # as written in the yml
        self.port = port
        self.weight = weight
        self.name = name          # twemproxy server name, or None
        self.listen = listen or [host]  # addresses memcached listens on

    def yml(self):
        text = "%s:%d:%d" % (self.host, self.port, self.weight)
        return text + (" " + self.name if self.name else "")

    def spec(self):
        text = "%s:%d:%d" % (self.host, self.port, self.weight)
        return text + (":" + self.name if self.name else "")


def localhost_addresses():
    addrs = []
    for family, _, _, _, sockaddr in socket.getaddrinfo("localhost", 11211,
                                                        type=socket.SOCK_STREAM):
        if family in (socket.AF_INET, socket.AF_INET6) and sockaddr[0] not in addrs:
            addrs.append(sockaddr[0])
    return addrs


def weights_for(rng, n):
    while True:
        w = [rng.randint(1, 5) for _ in range(n)]
        if n == 1 or len(set(w)) > 1:
            return w


def build_servers(kind, n, rng):
    """kind: ip11211 | ip11211-shuffled | localhost | ipport-w | named | named-w."""
    if kind.startswith("ip11211"):
        servers = [Server("127.0.0.%d" % (2 + i), 11211, 1) for i in range(n)]
        if kind == "ip11211-shuffled":
            rng.shuffle(servers)
        return servers
    if kind == "localhost":
        servers = [Server("localhost", 21101 + i, 1, listen=localhost_addresses())
                   for i in range(n)]
        rng.shuffle(servers)
        return servers
    if kind == "ipport-w":
        w = weights_for(rng, n)
        return [Server("127.0.1.%d" % (10 + i), 11300 + 7 * i, w[i]) for i in range(n)]
    if kind in ("named", "named-w"):
        names = NAMES[:n] if kind == "named" else rng.sample(NAMES, n)
        w = [1] * n if kind == "named" else weights_for(rng, n)
        return [Server("127.0.0.1", 21201 + i, w[i], name=names[i]) for i in range(n)]
    raise ValueError(kind)


def case_list():
    cases = []
    for dist in ("ketama", "modula"):
        for h in HASHES:
            for n in (3, 10):
                for kind in ("ip11211-shuffled", "named-w"):
                    cases.append((dist, h, n, kind))
        for n in SWEEP_N:
            for kind in ("ip11211", "localhost", "named", "ipport-w", "named-w"):
                cases.append((dist, SWEEP_HASH[dist], n, kind))
    return cases


def tag_case_list():
    """(dist, hash, n, kind, tag) of the hash_tag cases.

    "{}" and ":e" each take half of distribution x hash x N x server kind, the
    halves complementary (between them every combination is there once, and
    each tag meets both distributions, both hashes, both N and both kinds);
    "::" takes four of them.
    """
    cases = []
    for tag_index, (tag, _) in enumerate(TAGS):
        for d, dist in enumerate(("ketama", "modula")):
            for h, hash_name in enumerate(TAG_HASHES):
                for i, n in enumerate((3, 10)):
                    if tag_index < 2:
                        kind = ("ip11211-shuffled", "named-w")[(d + h + i + tag_index) % 2]
                    elif (d + h + i) % 2 == 0:
                        kind = ("ip11211-shuffled", "named-w")[i]
                    else:
                        continue
                    cases.append((dist, hash_name, n, kind, tag))
    return cases


def tag_counts(tag, keys):
    """How keys.txt's keys meet the tag: (carry it, X without Y after it,
    XY adjacent at the first X). Only for the comments of the table."""
    x, y = tag.encode()[0:1], tag.encode()[1:2]
    carry = no_close = empty = 0
    for key in keys:
        start = key.find(x)
        if start < 0:
            continue
        end = key.find(y, start + 1)
        if end < 0:
            no_close += 1
        elif end == start + 1:
            empty += 1
        else:
            carry += 1
    return carry, no_close, empty


def run_case(procs, tmp, dist, hash_name, servers, keys, hash_tag=None):
    started = []
    for s in servers:
        log = os.path.join(tmp, "memcached-%s-%d.log" % (s.host, s.port))
        proc = procs.start(["memcached", "-u", "nobody", "-l", ",".join(s.listen),
                            "-p", str(s.port), "-U", "0", "-t", "1", "-m", "64", "-c", "64"],
                           log)
        started.append((proc, s, log))
    for proc, s, log in started:
        wait_ready(proc, s.listen[0], s.port, log)
    listen, stats = free_port(), free_port()
    conf = os.path.join(tmp, "nutcracker.yml")
    with open(conf, "w") as f:
        f.write("golden:\n"
                "  listen: 127.0.0.1:%d\n"
                "  hash: %s\n"
                "  distribution: %s\n"
                "%s"
                "  timeout: 10000\n"
                "  auto_eject_hosts: false\n"
                "  server_retry_timeout: 2000\n"
                "  server_failure_limit: 1000\n"
                "  servers:\n" % (listen, hash_name, dist,
                                  '  hash_tag: "%s"\n' % hash_tag if hash_tag else ""))
        for s in servers:
            f.write("   - %s\n" % s.yml())
    test = subprocess.run(["nutcracker", "-t", "-c", conf], capture_output=True, text=True)
    if test.returncode != 0:
        fail("nutcracker rejects the configuration:\n%s%s" % (test.stdout, test.stderr))
    log = os.path.join(tmp, "nutcracker.log")
    proxy = procs.start(["nutcracker", "-c", conf, "-o", log, "-v", "5", "-a", "127.0.0.1",
                         "-s", str(stats), "-i", "60000",
                         "-p", os.path.join(tmp, "nutcracker.pid")], log)
    wait_ready(proxy, "127.0.0.1", listen, log, probe=None)
    set_through_proxy(listen, keys)
    owner = [None] * len(keys)
    total = 0
    for index, s in enumerate(servers):
        found, items = held_keys(s.listen[0], s.port, keys)
        if items != len(found):
            fail("%s holds %s items but %d keys of this run" % (s.spec(), items, len(found)))
        total += items
        for i in found:
            if owner[i] is not None:
                fail("key %d %r is on server %d and on server %d" % (i, keys[i], owner[i],
                                                                      index))
            owner[i] = index
    missing = [i for i, o in enumerate(owner) if o is None]
    if missing or total != len(keys):
        fail("keys on no server: %r (items %d)" % (missing[:10], total))
    if proxy.poll() is not None:
        fail("nutcracker exited during the case:\n" + read_tail(log))
    with open(log, "rb") as f:
        if b"eject" in f.read():
            fail("nutcracker ejected a server:\n" + read_tail(log))
    procs.stop()
    return owner


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "twemproxy.golden")
    ensure_packages(*PACKAGES)
    with open(os.path.join(HERE, "keys.txt"), "rb") as f:
        keys = [k for k in f.read().split(b"\n") if k]
    wide = sum(1 for k in keys if any(b >= 0x80 for b in k))
    nc_version, mc_version = package_version("nutcracker"), package_version("memcached")
    nc_banner = subprocess.run(["nutcracker", "-V"], capture_output=True,
                               text=True).stderr.split("\n")[0].strip()

    procs = Processes()
    tmp = tempfile.mkdtemp(prefix="gen_twemproxy.")

    def on_signal(signum, _frame):
        raise SystemExit("gen_twemproxy: stopped by signal %d" % signum)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, on_signal)

    started = time.monotonic()
    lines = [
        "# twemproxy.golden: where twemproxy (nutcracker) stores every key of keys.txt.",
        "# Written by tests/golden/gen_twemproxy.py: each key was set through a real",
        "# nutcracker on loopback (auto_eject_hosts: false) and read back from each",
        "# memcached; every key was found on exactly one server.",
        "# Debian packages: nutcracker %s (%s), memcached %s." % (nc_version, nc_banner,
                                                                 mc_version),
        "# Keys are sent as their UTF-8 bytes; nutcracker accepted all of them,",
        "# including the %d keys with bytes >= 0x80." % wide,
        "# Server index = position in the yml list as written (twemproxy itself sorts",
        "# servers by name length, then name bytes).",
        "# hash_tag cases (option hash_tag=XY, the pool's hash_tag: \"XY\"): nutcracker",
        "# hashes only the bytes between the first X of the key and the first Y after",
        "# it when at least one byte lies between them, else the whole key (no X; X but",
        "# no Y after it; Y right after the first X, even when a later X..Y follows).",
        "# Two equal characters are accepted (\"::\": between the first two colons).",
        "",
    ]
    rng = random.Random(20261130)
    # The hash_tag cases draw from their own generator, so that adding them
    # left every earlier case as it was.
    tag_rng = random.Random(20261201)
    tag_words = dict(TAGS)
    count = 0
    seen = set()
    try:
        cases = [c + (None,) for c in case_list()] + tag_case_list()
        for dist, hash_name, n, kind, tag in cases:
            servers = build_servers(kind, n, rng if tag is None else tag_rng)
            owner = run_case(procs, tmp, dist, hash_name, servers, keys, hash_tag=tag)
            cid = "%s-%s-n%d-%s" % (dist, hash_name, n, kind) + (
                "-tag-" + tag_words[tag] if tag is not None else "")
            while cid in seen:  # the hash grid and the N sweep meet at some cases
                cid += "-2"
            seen.add(cid)
            settings = "hash: %s" % hash_name
            if tag is not None:
                carry, no_close, empty = tag_counts(tag, keys)
                settings += (', hash_tag: "%s" (%d of the %d keys carry the tag; %d have %s '
                             "but no %s after it, %d have %s at their first %s)"
                             % (tag, carry, len(keys), no_close, tag[0], tag[1], empty, tag,
                                tag[0]))
            lines.append("case " + cid)
            lines.append("client nutcracker %s (twemproxy 0.5.0): distribution: %s, %s, "
                         "auto_eject_hosts: false; yml servers: %s"
                         % (nc_version, dist, settings, ", ".join(s.yml() for s in servers)))
            lines.append("profile twemproxy-" + dist)
            lines.append("option hash=" + hash_name)
            if tag is not None:
                lines.append("option hash_tag=" + tag)
            lines.extend("server " + s.spec() for s in servers)
            lines.append("place " + " ".join(str(o) for o in owner))
            lines.append("end")
            lines.append("")
            count += 1
            print("gen_twemproxy: %s done" % cid, file=sys.stderr)
    finally:
        procs.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    with open(out_path + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    os.replace(out_path + ".tmp", out_path)
    print("gen_twemproxy: wrote %d cases to %s in %.1f s" % (count, out_path,
                                                            time.monotonic() - started),
          file=sys.stderr)


if __name__ == "__main__":
    main()
