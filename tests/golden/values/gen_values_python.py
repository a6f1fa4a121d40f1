#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""gen_values_python.py: the Python half of the value tables. Run by gen_values.sh:

    /usr/bin/python3 gen_values_python.py [--readback=MANIFEST] VALUES_TXT HOST:PORT DRAFT_DIR NAME=VERSION...

Stores every value of values.txt, as Python's natural type (str, int, float,
bool, dict), through python-memcache (memcache.Client), pymemcache
(pymemcache.client.base.Client) and pylibmc (pylibmc.Client) under
"<case>:<value-name>", one case per setting, reads each back through the same
client and compares it with what was stored (same type and ==). Writes the drafts
python_memcache.values, pymemcache.values and pylibmc.values in DRAFT_DIR:
`stored` lines, which values_collect.py replaces with the raw (flags, bytes) the
server holds, `refused` lines and "# roundtrip" comments.

With --readback=MANIFEST (readback.sh) it writes no drafts: for every item of
MANIFEST ("<case> <value> <flags> <base64>", what memshard's codec stored under
"rb:<case>:<value>"), it stores the value itself as above, reads memshard's item
through the client configured as the case says, and prints one line per item
(see readback.sh): ok, same (read back as the client reads its own item),
refused (the client refuses the value itself) or DIFF.
"""
import hashlib
import os
import struct
import sys

import memcache
import pylibmc
import pymemcache.serde
from pymemcache.client.base import Client as PymemcacheClient

MAP_SPEC = '{"a":1,"b":[2,3]}'


def read_values(path):
    """[(name, value)] in file order."""
    values = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            name, kind, check, spec = line.split(None, 3)
            if kind == "str":
                v = spec
            elif kind == "lines":
                parts = spec.split(" ")
                n = int(parts[0])
                chunks = [parts[1] if len(parts) > 1 else ""]
                total, i = len(chunks[0]), 1
                while total < n:
                    chunk = "line %05d: the quick brown fox jumps over the lazy dog\n" % i
                    chunks.append(chunk)
                    total += len(chunk)
                    i += 1
                v = "".join(chunks)[:n]
            elif kind == "int":
                v = int(spec)
            elif kind == "float":
                if "/" in spec:
                    a, b = spec.split("/")
                    v = float(a) / float(b)
                else:
                    v = float(spec)
                bits = struct.pack(">d", v).hex()
                if bits != check:
                    raise SystemExit("%s: bits %s, want %s" % (name, bits, check))
            elif kind == "bool":
                v = spec == "true"
            elif kind == "map":
                if spec != MAP_SPEC:
                    raise SystemExit("%s: this script builds only the map %s" % (name, MAP_SPEC))
                v = {"a": 1, "b": [2, 3]}
            else:
                raise SystemExit("%s: unknown kind %s" % (name, kind))
            if kind in ("str", "lines"):
                sha = hashlib.sha256(v.encode("utf-8")).hexdigest()
                if sha != check:
                    raise SystemExit("%s: sha256 %s, want %s" % (name, sha, check))
            values.append((name, v))
    return values


def same(a, b):
    """Equal and of the same types, all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def describe(v, stored):
    if isinstance(v, bytes) and isinstance(stored, str) and v == stored.encode("utf-8"):
        return "bytes: the UTF-8 of the stored str"
    text = repr(v)
    if len(text) > 100:
        text = text[:100] + "... (%d chars of repr)" % len(text)
    return "%s %s" % (type(v).__name__, text)


READBACK = None  # readback mode: the set of (case, value name) memshard wrote


def readback_case(case, values, store, fetch):
    """Reads memshard's items of one case back through the client; prints a line each."""
    for name, v in values:
        if (case, name) not in READBACK:
            continue
        key = "%s:%s" % (case, name)
        own, refused = None, None
        try:
            ok = store(key, v)
            if ok:
                own = (fetch(key),)
            else:
                refused = "set() returned %r" % (ok,)
        except Exception as e:  # the client refuses the value, or cannot read its own item
            refused = "%s: %s" % (type(e).__name__, e)
        try:
            got = fetch("rb:" + key)
        except Exception as e:
            print("DIFF %s %s: get() raised %s: %s" % (case, name, type(e).__name__, e))
            continue
        if got is None:
            print("DIFF %s %s: get() found nothing" % (case, name))
        elif same(got, v):
            print("ok %s %s" % (case, name))
        elif own is not None and same(got, own[0]):
            print("same %s %s: read back as %s, as the client reads its own item"
                  % (case, name, describe(got, v)))
        elif own is None:
            print("refused %s %s: the client refuses the value itself (%s); memshard's item"
                  " read back as %s" % (case, name, refused, describe(got, v)))
        else:
            print("DIFF %s %s: read back as %s; the client's own item as %s"
                  % (case, name, describe(got, v), describe(own[0], v)))


def run_case(out, case, client_line, codec, settings, values, store, fetch):
    """store(key, value) raises or returns a false value to refuse; fetch(key)."""
    if READBACK is not None:
        readback_case(case, values, store, fetch)
        return
    out.append("case " + case)
    out.append("client " + client_line)
    out.append("codec " + codec)
    for s in settings:
        out.append("setting " + s)
    for name, v in values:
        key = "%s:%s" % (case, name)
        try:
            ok = store(key, v)
        except Exception as e:  # the client refused the value: record why
            out.append("refused %s %s: %s" % (name, type(e).__name__, e))
            continue
        if not ok:
            out.append("refused %s set() returned %r" % (name, ok))
            continue
        out.append("stored " + name)
        try:
            got = fetch(key)
        except Exception as e:  # the client cannot read what it wrote: record why
            out.append("# roundtrip %s: get() raised %s: %s" % (name, type(e).__name__, e))
            continue
        if not same(got, v):
            out.append("# roundtrip %s: read back as %s" % (name, describe(got, v)))
    out.append("end")


def write(path, lines):
    if READBACK is not None:
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main():
    global READBACK
    if sys.argv[1].startswith("--readback="):
        with open(sys.argv.pop(1).split("=", 1)[1], encoding="utf-8") as f:
            READBACK = {tuple(line.split()[:2]) for line in f if line.strip()}
    values_txt, address, draft_dir = sys.argv[1:4]
    versions = dict(arg.split("=", 1) for arg in sys.argv[4:])
    host, port = address.rsplit(":", 1)
    values = read_values(values_txt)
    footer = "# Values read back unchanged (same type, ==) unless a \"# roundtrip\" comment says otherwise."

    # python-memcache
    out = ["# python-memcache: memcache.Client(['%s']) (pickleProtocol=0, the default); every" % address,
           "# value stored with set(key, value[, min_compress_len=N]), read back with get(key).",
           footer]
    mc = memcache.Client([address])
    run_case(out, "python-memcache-default", versions["python_memcache"] + "; set(key, value)",
             "python-memcache", ["pickle_protocol=0", "min_compress_len=0"], values,
             lambda k, v: mc.set(k, v), mc.get)
    run_case(out, "python-memcache-compress1000",
             versions["python_memcache"] + "; set(key, value, min_compress_len=1000)",
             "python-memcache", ["pickle_protocol=0", "min_compress_len=1000"], values,
             lambda k, v: mc.set(k, v, min_compress_len=1000), mc.get)
    mc.disconnect_all()
    write(os.path.join(draft_dir, "python_memcache.values"), out)

    # pymemcache
    out = ["# pymemcache: pymemcache.client.base.Client(('%s', %s)[, serde=...]), otherwise" % (host, port),
           "# defaults (default_noreply=True); every value stored with set(key, value), read back",
           "# with get(key).",
           footer]
    plain = PymemcacheClient((host, int(port)))
    run_case(out, "pymemcache-default", versions["pymemcache"] + "; Client(server): no serde",
             "pymemcache", ["serde=none"], values, plain.set, plain.get)
    plain.close()
    pickled = PymemcacheClient((host, int(port)), serde=pymemcache.serde.pickle_serde)
    run_case(out, "pymemcache-pickle-serde",
             versions["pymemcache"] + "; Client(server, serde=pymemcache.serde.pickle_serde)",
             "pymemcache", ["serde=pickle_serde",
                            "pickle_protocol=%d" % pymemcache.serde.DEFAULT_PICKLE_VERSION],
             values, pickled.set, pickled.get)
    pickled.close()
    write(os.path.join(draft_dir, "pymemcache.values"), out)

    # pylibmc
    out = ["# pylibmc: pylibmc.Client(['%s']) (text protocol, no behaviors); every value" % address,
           "# stored with set(key, value[, min_compress_len=N]), read back with get(key).",
           footer]
    lc = pylibmc.Client([address])
    run_case(out, "pylibmc-default", versions["pylibmc"] + "; set(key, value)",
             "pylibmc", ["min_compress_len=0"], values, lc.set, lc.get)
    run_case(out, "pylibmc-compress1000",
             versions["pylibmc"] + "; set(key, value, min_compress_len=1000)",
             "pylibmc", ["min_compress_len=1000"], values,
             lambda k, v: lc.set(k, v, min_compress_len=1000), lc.get)
    lc.disconnect_all()
    write(os.path.join(draft_dir, "pylibmc.values"), out)


if __name__ == "__main__":
    main()
