#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes python_memcache.golden and pymemcache.golden in this folder.

python-memcache: the placement comes from the client's own Client._get_server()
(the method its get/set use), after its own _encode_key() (str keys become
UTF-8 bytes). _get_server() connects, so every case runs against real
memcached servers on loopback; each case is cross-checked by storing every key
through Client.set() and asking every server, over a plain socket, which keys
it holds.

pymemcache: HashClient with its default RendezvousHash; the placement comes
from HashClient._get_client(key) (what its get/set use), which never connects,
so host names need not resolve. Keys are passed as str (decoded keys.txt) with
allow_unicode_keys=True (without it non-ASCII str keys are refused); the cases
of profile pymemcache-rendezvous-bytes pass the raw UTF-8 bytes instead.

Requires root (apt-get, memcached -u nobody).
"""
import importlib
import os
import signal
import socket
import subprocess
import sys
import time

from golden_lib import ensure_packages, package_version

HERE = os.path.dirname(os.path.abspath(__file__))
NS = [1, 2, 3, 5, 10, 25]
INT_WEIGHTS = [1, 3, 5, 2, 4, 1, 2, 5, 3, 4, 2, 1, 4, 5, 3, 3, 1, 5, 2, 4, 5, 2, 1, 3, 4]


# ------------------------------------------------------------------ servers
CHILDREN = []


def stop_servers():
    for proc in CHILDREN:
        if proc.poll() is None:
            proc.terminate()
    while CHILDREN:
        proc = CHILDREN.pop()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def on_signal(signum, _frame):
    raise SystemExit(128 + signum)


def port_free(addr, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr, port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def kernel_port(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((addr, 0))
        return s.getsockname()[1]
    finally:
        s.close()


def start_server(addr, port):
    """Starts memcached on addr:port; True once it answers "version"."""
    proc = subprocess.Popen(["memcached", "-u", "nobody", "-l", addr, "-p", str(port), "-U", "0",
                             "-t", "1", "-m", "64", "-c", "256"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    CHILDREN.append(proc)
    for _ in range(200):  # at most ~10 s
        if proc.poll() is not None:
            CHILDREN.remove(proc)
            return False
        try:
            with socket.create_connection((addr, port), timeout=2) as s:
                s.sendall(b"version\r\n")
                if s.recv(100).startswith(b"VERSION "):
                    return True
        except OSError:
            pass
        time.sleep(0.05)
    proc.terminate()
    proc.wait()
    CHILDREN.remove(proc)
    return False


def start_set(wanted):
    """One server per (addr, port); a taken port is replaced by a kernel one."""
    out = []
    for addr, port in wanted:
        ok = port_free(addr, port) and start_server(addr, port)
        tries = 0
        while not ok:
            tries += 1
            if tries > 5:
                raise SystemExit("cannot start memcached on %s" % addr)
            port = kernel_port(addr)
            ok = start_server(addr, port)
        out.append((addr, port))
    return out


# ------------------------------------------------------------------ probing
class Conn:
    def __init__(self, addr, port):
        self.sock = socket.create_connection((addr, port), timeout=10)
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise SystemExit("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exact(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise SystemExit("server closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def close(self):
        self.sock.close()


def flush_server(addr, port):
    c = Conn(addr, port)
    c.sock.sendall(b"flush_all\r\n")
    if c.line() != b"OK":
        raise SystemExit("flush_all failed on %s:%d" % (addr, port))
    c.close()


def held_keys(addr, port, wire_keys):
    """Asks one server for every key (bytes); returns {key: value}."""
    c = Conn(addr, port)
    held = {}
    for i in range(0, len(wire_keys), 50):
        c.sock.sendall(b"get " + b" ".join(wire_keys[i:i + 50]) + b"\r\n")
        while True:
            line = c.line()
            if line == b"END":
                break
            parts = line.split(b" ")
            if len(parts) < 4 or parts[0] != b"VALUE":
                raise SystemExit("unexpected reply %r" % line)
            data = c.exact(int(parts[3]) + 2)
            held[parts[1]] = data[:-2]
    c.close()
    return held


def where_stored(tag, servers, keys_bytes):
    """Index of the server holding each key (value "<tag>:<i>"), exactly one each."""
    where = [None] * len(keys_bytes)
    for si, (addr, port) in enumerate(servers):
        held = held_keys(addr, port, keys_bytes)
        for i, k in enumerate(keys_bytes):
            if held.get(k) == ("%s:%d" % (tag, i)).encode():
                if where[i] is not None:
                    raise SystemExit("%s: key #%d on servers %d and %d" % (tag, i, where[i], si))
                where[i] = si
    missing = [i for i, s in enumerate(where) if s is None]
    if missing:
        raise SystemExit("%s: keys %s found on no server" % (tag, missing[:10]))
    return where


# ------------------------------------------------------------------ output
def write_case(out, cid, client, profile, servers, place, options=()):
    out.write("case %s\n" % cid)
    out.write("client %s\n" % client)
    out.write("profile %s\n" % profile)
    for o in options:
        out.write("option %s\n" % o)
    for s in servers:
        out.write("server %s\n" % s)
    out.write("place %s\n" % " ".join(str(p) for p in place))
    out.write("end\n\n")


def header(out, lines):
    for line in lines:
        out.write("# %s\n" % line)
    out.write("\n")


def main():
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    started = time.time()
    ensure_packages("memcached", "python3-memcache", "python3-pymemcache")
    memcache = importlib.import_module("memcache")
    hash_mod = importlib.import_module("pymemcache.client.hash")
    pymemcache = importlib.import_module("pymemcache")

    with open(os.path.join(HERE, "keys.txt"), "rb") as f:
        raw_keys = f.read().split(b"\n")
    if raw_keys and raw_keys[-1] == b"":
        raw_keys.pop()
    if not raw_keys:
        raise SystemExit("keys.txt: no keys")
    text_keys = [k.decode("utf-8") for k in raw_keys]
    versions = "python3 %s; memcached %s; python3-memcache %s; python3-pymemcache %s" % (
        sys.version.split()[0], package_version("memcached"), package_version("python3-memcache"),
        package_version("python3-pymemcache"))

    # -------------------------------------------------------- python-memcache
    try:
        ip_set = start_set([("127.78.0.%d" % i, 11211) for i in range(1, 26)])
        name_set = start_set([("127.0.0.1", 21400 + i) for i in range(1, 26)])
        weight_set = start_set([("127.78.1.%d" % i, 11400 + 7 * i) for i in range(1, 26)])
        groups = {
            "ip": [("%s:%d" % s, s) for s in ip_set],
            "names": [("localhost:%d" % s[1], s) for s in name_set],
            "weights": [("%s:%d" % s, s) for s in weight_set],
        }
        path = os.path.join(HERE, "python_memcache.golden")
        with open(path + ".tmp", "w", encoding="utf-8") as out:
            header(out, ["Written by tests/golden/gen_python.py (run as root; see generate.sh).",
                         "python-memcache %s; %s." % (memcache.__version__, versions),
                         "Placement from Client._get_server(Client._encode_key(key)) with str",
                         "keys (decoded keys.txt) on real memcached servers (127.78.x.y and",
                         "localhost), cross-checked by Client.set() of every key and asking",
                         "every server which keys it holds."])
            for n in NS:
                for kind in ("ip", "names", "weights"):
                    given = groups[kind][:n]
                    weights = INT_WEIGHTS[:n] if kind == "weights" else [1] * n
                    if kind == "weights":
                        servers = [(g[0], w) for g, w in zip(given, weights)]
                        how = '("host:port", weight) tuples'
                    else:
                        servers = [g[0] for g in given]
                        how = 'plain "host:port" strings'
                    client = memcache.Client(servers)
                    index = {id(h): i for i, h in enumerate(client.servers)}
                    place = []
                    for k in text_keys:
                        host, _ = client._get_server(client._encode_key(k))
                        if host is None:
                            raise SystemExit("python-memcache: no server for %r" % k)
                        place.append(index[id(host)])
                    cid = "n%d-%s" % (n, kind)
                    tag = "pm-" + cid
                    for _, (addr, port) in given:
                        flush_server(addr, port)
                    for i, k in enumerate(text_keys):
                        if not client.set(k, "%s:%d" % (tag, i)):
                            raise SystemExit("python-memcache: set failed for key #%d" % i)
                    client.disconnect_all()
                    stored = where_stored(tag, [g[1] for g in given], raw_keys)
                    if stored != place:
                        bad = [i for i in range(len(place)) if stored[i] != place[i]]
                        raise SystemExit("%s: _get_server and set disagree on keys %s"
                                         % (cid, bad[:10]))
                    write_case(out, cid, "python-memcache %s, servers as %s, other settings default"
                               % (memcache.__version__, how), "python-memcache",
                               ["%s:%d" % (g[0], w) for g, w in zip(given, weights)], place)
        os.replace(path + ".tmp", path)
        print("gen_python.py: wrote %s" % path, file=sys.stderr)
    finally:
        stop_servers()

    # -------------------------------------------------------- pymemcache
    path = os.path.join(HERE, "pymemcache.golden")
    version = pymemcache.__version__
    with open(path + ".tmp", "w", encoding="utf-8") as out:
        header(out, ["Written by tests/golden/gen_python.py (see generate.sh).",
                     "pymemcache %s; %s." % (version, versions),
                     "Placement from HashClient._get_client(key) (default RendezvousHash, seed 0);",
                     "no server is contacted. Servers given as (host, port) tuples. Keys as str",
                     "(decoded keys.txt, allow_unicode_keys=True), or as the raw UTF-8 bytes in",
                     "the cases of profile pymemcache-rendezvous-bytes."])
        hosts = {
            "ip": [("127.78.0.%d" % i, 11211) for i in range(1, 26)],
            "names": [("cache-%d.example.net" % i, 11300 + 7 * i) for i in range(1, 26)],
        }
        for keys_kind in ("str", "bytes"):
            for n in NS:
                if keys_kind == "bytes" and n not in (1, 3, 10):
                    continue
                for kind in ("ip", "names"):
                    given = hosts[kind][:n]
                    client = hash_mod.HashClient(given, allow_unicode_keys=True)
                    index = {"%s:%s" % g: i for i, g in enumerate(given)}
                    if sorted(client.clients) != sorted(index):
                        raise SystemExit("pymemcache: unexpected node keys %r" % list(client.clients))
                    by_client = {id(client.clients[node]): i for node, i in index.items()}
                    keys = text_keys if keys_kind == "str" else raw_keys
                    place = [by_client[id(client._get_client(k))] for k in keys]
                    cid = "n%d-%s" % (n, kind) + ("-bytes" if keys_kind == "bytes" else "")
                    profile = ("pymemcache-rendezvous-bytes" if keys_kind == "bytes"
                               else "pymemcache-rendezvous")
                    write_case(out, cid,
                               "pymemcache %s HashClient(servers as (host, port) tuples, "
                               "allow_unicode_keys=True), default RendezvousHash, keys as %s"
                               % (version, keys_kind), profile,
                               ["%s:%d:1" % g for g in given], place, [])
    os.replace(path + ".tmp", path)
    print("gen_python.py: wrote %s" % path, file=sys.stderr)
    print("gen_python.py: done in %.0f s" % (time.time() - started), file=sys.stderr)


if __name__ == "__main__":
    main()
