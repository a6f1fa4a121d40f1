#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""values_collect.py: turns a draft value table into a value table.

    values_collect.py VALUES_TXT HOST:PORT DRAFT OUT

Every gen_values_<lang> script writes, per client, a draft in the table format
(see "Value tables" in ../README.md) in which each stored value is a line

    stored <value-name> [nondeterministic]

instead of an `item` line, and may limit a case to some values with a line

    subset <value-name>...

This script asks the memcached server at HOST:PORT, with a plain text-protocol
`get`, for the item "<case>:<value-name>" of every `stored` line, and writes OUT
with `item <value-name> <flags> <base64 of the bytes> [nondeterministic]` in its
place (`-` for no bytes: the base64 of nothing would be an empty field), under a header naming OUT. It fails when an item is missing, when a case has a value twice, or when a
case neither stores nor refuses a value of VALUES_TXT (outside its subset).
"""
import base64
import os
import socket
import sys


def value_names(path):
    names = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                names.append(line.split()[0])
    return names


class Server:
    """One text-protocol connection."""

    def __init__(self, address):
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.buf = b""

    def _fill(self):
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise RuntimeError("server closed the connection")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _bytes(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def get(self, key):
        """(flags, bytes) of the item, or None when the server has none."""
        self.sock.sendall(b"get " + key.encode("utf-8") + b"\r\n")
        line = self._line()
        if line == b"END":
            return None
        parts = line.split(b" ")
        if len(parts) != 4 or parts[0] != b"VALUE" or parts[1] != key.encode("utf-8"):
            raise RuntimeError("unexpected reply to get %s: %r" % (key, line))
        flags, size = int(parts[2]), int(parts[3])
        data = self._bytes(size)
        if self._bytes(2) != b"\r\n" or self._line() != b"END":
            raise RuntimeError("malformed VALUE block for %s" % key)
        return flags, data


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    values_txt, address, draft, out = sys.argv[1:]
    names = value_names(values_txt)
    server = Server(address)
    table = os.path.basename(out)
    lines = [
        "# SPDX-License-Identifier: MIT",
        "# %s: what the real client stores, as (flags, bytes), for the values of" % table,
        "# values.txt. Written by tests/golden/values/gen_values.sh: do not edit. Format:",
        "# \"Value tables\" in tests/golden/README.md. Each item was stored through the client",
        "# under the key \"<case>:<value-name>\" and read back raw with a text-protocol get.",
    ]
    case = None
    seen = set()
    subset = None

    def finish(lineno):
        wanted = subset if subset is not None else names
        missing = [n for n in wanted if n not in seen]
        if missing:
            raise SystemExit("%s:%d: case %s has no line for %s" % (draft, lineno, case, " ".join(missing)))

    with open(draft, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            word = line.split(" ", 1)[0]
            rest = line.split()[1:]
            if word == "case":
                case, seen, subset = rest[0], set(), None
            elif word == "end":
                finish(lineno)
                case = None
            elif word == "subset":
                subset = rest
                lines.append("# this case holds only: " + " ".join(rest))
                continue
            elif word in ("stored", "refused"):
                if case is None or rest[0] not in names or rest[0] in seen:
                    raise SystemExit("%s:%d: bad line: %s" % (draft, lineno, line))
                if subset is not None and rest[0] not in subset:
                    raise SystemExit("%s:%d: %s is outside the subset" % (draft, lineno, rest[0]))
                seen.add(rest[0])
                if word == "stored":
                    key = "%s:%s" % (case, rest[0])
                    got = server.get(key)
                    if got is None:
                        raise SystemExit("%s:%d: the server has no item %s" % (draft, lineno, key))
                    flags, data = got
                    b64 = base64.b64encode(data).decode("ascii") or "-"  # "-": no bytes
                    item = "item %s %d %s" % (rest[0], flags, b64)
                    if rest[1:] == ["nondeterministic"]:
                        item += " nondeterministic"
                    elif rest[1:]:
                        raise SystemExit("%s:%d: bad line: %s" % (draft, lineno, line))
                    line = item
            lines.append(line)
    if case is not None:
        raise SystemExit("%s: case %s has no end" % (draft, case))
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
